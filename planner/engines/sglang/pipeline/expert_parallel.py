"""Expert parallel: ``--ep-size E``, the DeepEP all-to-all backend (``--moe-a2a-backend deepep``, ``--deepep-mode``)
and ``--ep-num-redundant-experts``, as SGLang sizes them.

Verified against SGLang's own code (tests/golden/dp_ep/: ``cases`` / ``random`` for --ep-size, ``deepep_*`` for
DeepEP and redundant experts) for MLA models (DeepSeek-V3 / R1, Kimi-K2) on one node (the EP group = the TP group of
at most 8 GPUs): --ep-size on 0.5.16 / 0.5.23, DeepEP on 0.5.16 and 0.5.20-0.5.23 (0.5.20-0.5.22 take 0.5.23's
rules: ``BCG_KEEPS_DEEPEP``), DeepEP with NEXTN / EAGLE on DeepSeek-V3's own MTP layer on 0.5.16, 0.5.22, 0.5.23
(``deepep_spec*``: the verify and draft graphs' dispatch, :func:`decode_dispatches`; the draft's unsplit shared
experts, :func:`draft_weight_terms`; the draft shares the target's process-wide DeepEP buffer,
``DeepEPBuffer._state``, token_dispatcher/deepep.py:161-182 @0.5.16, :182-201 @0.5.23, so it adds none); every
other combination is refused by name.

What ``--moe-a2a-backend deepep`` changes (each line cites the rule):
- ep_size = tp_size (``_a2a_ep_size``: every A2A backend spans the TP group, srt/arg_groups/overrides.py:2071-2102
  @0.5.16; arg_groups/moe_hook.py @0.5.23), so each GPU holds E / tp whole experts: the same routed-expert bytes as
  the plain 1/tp split;
- the shared experts are built unsplit on every GPU (``_shared_expert_use_tp1``, models/deepseek_v2.py:709-733
  @0.5.16; shared-expert fusion is off by default for DeepEP, :2761-2790): planner/catalog/weights.py
  a2a_shared_expert_bytes;
- mem_fraction_static reserves 2048 MiB more when the decode CUDA graph is on and the role is not a PD prefill
  worker (``reserve_for_deepep_a2a_mb``, added after the 10 GiB floor, srt/server_args.py:4083, 4198-4210 @0.5.16;
  arg_groups/memory_hook.py:317, 402-414 @0.5.23); ``--deepep-mode normal`` turns the decode and prefill graphs
  off only after the fraction was computed (``_handle_a2a_moe``, srt/server_args.py:5836-5843 @0.5.16;
  arg_groups/moe_hook.py:383-397 @0.5.23), so its fraction still carries the 2 GiB;
- the piecewise / breakable prefill graph is off for any A2A backend (srt/server_args.py:3712-3715, 3794-3797
  @0.5.16; pipeline/arg_groups/cuda_graph_hook.py already applies it);
- DeepEP's communication buffer (:func:`buffer_needs`): allocated at the first MoE dispatch
  (``_get_buffer`` -> ``DeepEPBuffer.get_deepep_buffer``, layers/moe/token_dispatcher/deepep.py:185-284, 645-653,
  845-853 @0.5.16), i.e. during the decode-graph capture or the first request, AFTER the KV pool was sized
  (managers/scheduler.py:820-841 @0.5.16, 1090-1124 @0.5.23: alloc_memory_pool, then init_cuda_graphs). So it is a
  post-pool need, which only the 2 GiB reserve above budgets for.
"""

from __future__ import annotations

from typing import Any

from planner.engines.interface import NeedLine

VERIFIED = ("0.5.16", "0.5.23")  # --ep-size and redundant experts without DeepEP
# DeepEP: the deepep_* golden sets agree on these (0.5.20-0.5.22 as 0.5.23 by the named rule BCG_KEEPS_DEEPEP)
DEEPEP_VERIFIED = ("0.5.16", "0.5.20", "0.5.21", "0.5.22", "0.5.23")
MODES = ("auto", "normal", "low_latency")
MIB = 1 << 20

# --- DeepEP's own size hints, ported from deepseek-ai/DeepEP @ dd758caf451848bd150e1046af3d0a73e5fff38d
# (csrc/legacy/config.hpp; the same formulas in csrc/config.hpp @567632dd59810d77b3cc05553df953cc0f779799, the
# last commit before EPv2). The constants: csrc/kernels/legacy/compiled.cuh:5-9 (NUM_MAX_NVL_PEERS 8,
# NUM_WORKSPACE_BYTES 32 MiB, NUM_BUFFER_ALIGNMENT_BYTES 128), sizeof(SourceMeta) = 2 ints
# (csrc/kernels/legacy/internode.cu:22-45), topk_idx_t = int64 (EP_NUM_TOPK_IDX_BITS 64 by default,
# deep_ep/include/deep_ep/common/compiled.cuh:54-72).
NUM_MAX_NVL_PEERS = 8
NUM_WORKSPACE_BYTES = 32 * MIB
NUM_BUFFER_ALIGNMENT_BYTES = 128
SOURCE_META_BYTES = 8
TOPK_IDX_BYTES = 8
BUFFER_NUM_SMS = 20  # Buffer.num_sms (deep_ep/buffers/legacy.py:31); SGLang's DeepEPConfig takes it without
#                      --deepep-config (token_dispatcher/deepep.py:335-338 @0.5.16)
# Buffer.get_dispatch_config / get_combine_config (deep_ep/buffers/legacy.py:233-290): Config(Buffer.num_sms, nvl send,
# nvl recv, rdma send, rdma recv) per EP width, without the num_sms; one node uses the entries up to 8
DISPATCH_CONFIG = {2: (24, 256, 6, 128), 4: (6, 256, 6, 128), 8: (6, 256, 6, 128)}
COMBINE_CONFIG = {2: (10, 256, 6, 128), 4: (9, 256, 6, 128), 8: (4, 256, 6, 128)}
NVSHMEM_CUMEM_GRANULARITY = 1 << 29  # DeepEP sets it (deep_ep/buffers/legacy.py:121-122: "NVSHMEM initialization
#                                      requires at least 256 MiB")
# The estimate for the low-latency buffer: NVSHMEM's symmetric heap is dynamic on x86 with CUDA >= 11.3 (CUDA VMM: it
# maps what is allocated instead of reserving NVSHMEM_SYMMETRIC_SIZE up front; NVSHMEM 2.4.1 release notes,
# https://docs.nvidia.com/hpc-sdk/archive/22.2/nvshmem/release-notes/release-241.html), in steps of the granularity
# above; NVSHMEM's own device state (IBGDA queue pairs for num_qps_per_rank x ranks, proxy, teams) is not bounded
# from a source here and is not counted.


def nvl_buffer_size_hint(hidden_bytes: int, num_ranks: int, num_sms: int, nvl_recv_tokens: int) -> int:
    """Config::get_nvl_buffer_size_hint (csrc/legacy/config.hpp:53-73 @dd758ca)."""
    k_max_topk = k_max_scales = 128
    num_rdma_ranks = max(num_ranks // NUM_MAX_NVL_PEERS, 1)
    num_nvl_ranks = min(num_ranks, NUM_MAX_NVL_PEERS)
    ch = num_sms // 2
    n = ch * num_nvl_ranks * (2 * num_rdma_ranks + 3) * 4
    n += ch * num_nvl_ranks * nvl_recv_tokens * hidden_bytes
    n += ch * num_nvl_ranks * nvl_recv_tokens * SOURCE_META_BYTES
    n += ch * num_nvl_ranks * nvl_recv_tokens * k_max_topk * TOPK_IDX_BYTES
    n += ch * num_nvl_ranks * nvl_recv_tokens * k_max_topk * 4
    n += ch * num_nvl_ranks * nvl_recv_tokens * k_max_scales * 4
    return (n + 127) // 128 * 128


def rdma_buffer_size_hint(hidden_bytes: int, num_ranks: int) -> int:
    """Config::get_rdma_buffer_size_hint (csrc/legacy/config.hpp:75-99 @dd758ca): 0 within one node (<= 8 ranks);
    the internode sizes are not ported (multi-node DeepEP is refused)."""
    if num_ranks <= NUM_MAX_NVL_PEERS:
        return 0
    raise ValueError("internode DeepEP buffers are not modelled")


def low_latency_rdma_size_hint(num_max_dispatch_tokens_per_rank: int, hidden: int, num_ranks: int,
                               num_experts: int) -> int:
    """get_low_latency_rdma_size_hint / LowLatencyLayout (csrc/legacy/config.hpp:131-188 @dd758ca): two
    odd/even send, receive and signalling buffers; ``num_ranks`` does not enter the layout."""
    num_scales = hidden // 128
    per_dispatch_msg = 16 + max(hidden * 2, hidden + num_scales * 4)  # int4 + bf16 row or fp8 row + scales
    per_combine_msg = num_scales * 4 + hidden * 2  # nv_bfloat162 per 128 channels + bf16 row
    send = max(num_max_dispatch_tokens_per_rank * per_dispatch_msg,
               num_experts * num_max_dispatch_tokens_per_rank * per_combine_msg)
    recv = max(num_experts * num_max_dispatch_tokens_per_rank * per_dispatch_msg,
               num_experts * num_max_dispatch_tokens_per_rank * per_combine_msg)
    signal = -(-(num_experts * 4) // 128) * 128
    total = 2 * send + 2 * recv + 2 * signal
    return (total + NUM_BUFFER_ALIGNMENT_BYTES) // NUM_BUFFER_ALIGNMENT_BYTES * NUM_BUFFER_ALIGNMENT_BYTES


# --- SGLang's side ---------------------------------------------------------------------------------------------


def backend(raw: dict[str, Any]) -> str:
    return str(raw.get("moe_a2a_backend") or "none")


def mode(raw: dict[str, Any]) -> str:
    return str(raw.get("deepep_mode") or "auto")


def _tp(raw: dict[str, Any]) -> int:
    return int(raw.get("tp_size") or raw.get("tensor_parallel_size") or 1)


def redundant(raw: dict[str, Any]) -> int:
    return int(raw.get("ep_num_redundant_experts") or 0)


def ep_width(raw: dict[str, Any]) -> int:
    """The EP width SGLang runs: tp under DeepEP (``_a2a_ep_size``), else --ep-size."""
    if backend(raw) == "deepep":
        return _tp(raw)
    return int(raw.get("ep_size") or raw.get("expert_parallel_size") or 1)


def scope_refusal(raw: dict[str, Any], rules) -> str | None:
    """check_scope's part (no model needed): the A2A backends other than DeepEP, DeepEP outside the verified
    scope, --ep-num-redundant-experts without expert parallelism."""
    a2a = backend(raw)
    version = getattr(rules, "version", None)
    if a2a not in ("none", "deepep"):
        return (f"--moe-a2a-backend {a2a}: its all-to-all buffers are not modelled by this planner yet "
                "(modelled: none, deepep)")
    if a2a == "deepep":
        tp = _tp(raw)
        if version not in DEEPEP_VERIFIED:
            return (f"--moe-a2a-backend deepep on SGLang {version} is not modelled by this planner yet; modelled: "
                    f"{', '.join(DEEPEP_VERIFIED)}")
        if tp not in DISPATCH_CONFIG:  # one node: EP group of 2, 4 or 8 GPUs
            return (f"--moe-a2a-backend deepep at tp {tp}: only one node's EP group (tp 2, 4 or 8) is modelled "
                    "(DeepEP's internode RDMA buffers are not)")
        if mode(raw) not in MODES:
            return f"--deepep-mode {mode(raw)}: not modelled (modelled: {', '.join(MODES)})"
        if raw.get("deepep_config"):
            return "--deepep-config: a custom DeepEP config changes its buffer sizes; not modelled by this planner yet"
        if raw.get("enable_waterfill") or raw.get("enforce_shared_experts_fusion"):
            return ("--enable-waterfill / --enforce-shared-experts-fusion with DeepEP: the fused shared-expert slots "
                    "are not modelled by this planner yet")
        why = _spec_scope(raw, version)
        if why:
            return why
        if raw.get("disaggregation_mode", "null") not in ("null", None):
            return "--moe-a2a-backend deepep with PD disaggregation is not modelled by this planner yet"
        if raw.get("enable_two_batch_overlap") or raw.get("enable_single_batch_overlap"):
            return "--moe-a2a-backend deepep with two- / single-batch overlap is not modelled by this planner yet"
    n = redundant(raw)
    if n:
        ok = DEEPEP_VERIFIED if a2a == "deepep" else VERIFIED
        if version not in ok:
            return (f"--ep-num-redundant-experts {n} on SGLang {version} is not modelled by this planner yet; "
                    f"modelled: {', '.join(ok)}" + (" (0.5.20-0.5.22 with --moe-a2a-backend deepep)"
                                                   if a2a != "deepep" else ""))
        ep = ep_width(raw)
        if ep <= 1:
            return (f"--ep-num-redundant-experts {n} without expert parallelism (--ep-size > 1 or "
                    "--moe-a2a-backend deepep) is not modelled by this planner")
    return None


SPEC = ("NEXTN", "EAGLE")  # on the checkpoint's own MTP layer (no --speculative-draft-model-path)
SPEC_VERIFIED = ("0.5.16", "0.5.22", "0.5.23")  # DeepEP with NEXTN / EAGLE: tests/golden/dp_ep/sglang-*/deepep_spec*.jsonl


def _spec_scope(raw: dict[str, Any], version: str | None) -> str | None:
    """DeepEP with speculative decoding: NEXTN / EAGLE on the checkpoint's own MTP layer, on SPEC_VERIFIED. The
    draft worker is built and run inside ``speculative_moe_a2a_backend_context`` (speculative/eagle_worker_v2.py:
    157-160 @0.5.16, :215-224 @0.5.23), whose backend is --speculative-moe-a2a-backend or, unset, the target's
    (initialize_moe_config, layers/moe/utils.py:297-301 @0.5.16; :497-502 @0.5.23): the MTP layer's MoE runs on
    DeepEP too. Setting --speculative-moe-a2a-backend is refused by the flag audit (flag_audit.toml)."""
    algo = str(raw.get("speculative_algorithm") or "").upper()
    if not algo:
        return None
    if algo not in SPEC or raw.get("speculative_draft_model_path"):
        return (f"--moe-a2a-backend deepep with --speculative-algorithm {algo}"
                + (" and a separate draft model" if raw.get("speculative_draft_model_path") else "")
                + " is not modelled by this planner yet; modelled: NEXTN / EAGLE on the checkpoint's own MTP layer")
    if version not in SPEC_VERIFIED:
        return (f"--moe-a2a-backend deepep with --speculative-algorithm {algo} on SGLang {version} is not modelled by "
                f"this planner yet; modelled: {', '.join(SPEC_VERIFIED)}")
    if redundant(raw):
        return (f"--ep-num-redundant-experts {redundant(raw)} with --speculative-algorithm {algo}: the MTP layer's "
                "redundant experts are not modelled by this planner yet")
    return None


def ep_refusal(raw: dict[str, Any], model, version: str) -> str | None:
    """--ep-size E (--moe-a2a-backend none): the experts are sharded E ways and each shard TP-split tp // E ways
    (moe_tp_size = tp // ep // moe_dp, srt/server_args.py:5567-5580 @0.5.16), so each GPU holds the same expert
    bytes as the plain 1/tp split, and SGLang's sizing does not read the width (tests/golden/dp_ep: equal
    summaries with and without --ep-size). Verified for MLA models on 0.5.16 / 0.5.23 only. DeepEP and
    --ep-num-redundant-experts: the same models (:func:`scope_refusal` checked the rest)."""
    ep = int(raw.get("ep_size") or raw.get("expert_parallel_size") or 1)
    what = None
    if backend(raw) == "deepep":
        what = "--moe-a2a-backend deepep"
    elif ep > 1:
        what = f"--ep-size {ep}"
    elif redundant(raw):
        what = f"--ep-num-redundant-experts {redundant(raw)}"
    if what is None:
        return None
    ok = DEEPEP_VERIFIED if backend(raw) == "deepep" else VERIFIED
    if version not in ok:
        return (f"{what}: expert parallelism on SGLang {version} is not modelled yet; modelled: "
                f"{', '.join(ok)}")
    if model.mla is None or model.mla.dsa:
        return (f"{what}: expert parallelism for {model.name} is not modelled yet; modelled: MLA models "
                "without the DSA indexer (DeepSeek-V3 / R1, Kimi-K2)")
    if backend(raw) == "deepep" and raw.get("speculative_algorithm") and not model.mtp_layers:
        return (f"--moe-a2a-backend deepep with --speculative-algorithm {raw['speculative_algorithm']}: {model.name} "
                "has no MTP layer of its own; only NEXTN / EAGLE on the checkpoint's own MTP layer is modelled")
    n = redundant(raw)
    if n and (model.num_experts + n) % ep_width(raw):
        return (f"--ep-num-redundant-experts {n}: {model.num_experts} + {n} experts do not divide over "
                f"{ep_width(raw)} EP ranks; not modelled")
    return None


def reserve_mib(s) -> float:
    """``reserve_for_deepep_a2a_mb``: 2048 MiB on top of the floor when DeepEP is on, the decode graph is on at
    the time the fraction is computed, and the role is not a PD prefill worker (srt/server_args.py:4198-4210
    @0.5.16; arg_groups/memory_hook.py:402-414 @0.5.23)."""
    if backend(s.a) == "deepep" and s.decode_graph_on and s.pd_mode != "prefill":
        return 2 * 1024.0
    return 0.0


# The releases whose breakable prefill graph stays on under DeepEP ("unvalidated a2a backend" lists none / deepep /
# megamoe / flashinfer as validated: arg_groups/cuda_graph_hook.py:312-317 @0.5.20, :320-325 @0.5.21, :186-190
# @0.5.22, :222-227 @0.5.23) and whose reserve_for_graph_mb adds the 1024 MiB "Prefill-BCG DeepEP delta"
# (arg_groups/memory_hook.py:384-390 @0.5.20 / 0.5.21, :393-399 @0.5.22, :391-395 @0.5.23). 0.5.16 has neither.
BCG_KEEPS_DEEPEP = ("0.5.20", "0.5.21", "0.5.22", "0.5.23")


def a2a_blocks_breakable(a: dict[str, Any], rules) -> bool:
    """Whether the A2A backend turns the breakable prefill graph off: any backend on 0.5.16 ("MoE A2A backend",
    srt/server_args.py:3794-3797 @0.5.16); on 0.5.20-0.5.23 (``BCG_KEEPS_DEEPEP``) only those outside none / deepep /
    megamoe / flashinfer ("unvalidated a2a backend", arg_groups/cuda_graph_hook.py:222-227 @0.5.23)."""
    a2a = str(a.get("moe_a2a_backend") or "none")
    if getattr(rules, "version", None) in BCG_KEEPS_DEEPEP:
        return a2a not in ("none", "deepep", "megamoe", "flashinfer")
    return a2a != "none"


def breakable_prefill_reserve_mib(s) -> float:
    """0.5.20-0.5.23's "Prefill-BCG DeepEP delta" (``BCG_KEEPS_DEEPEP``): 1024 MiB inside reserve_for_graph_mb
    (before the 10 GiB floor) when the prefill graph is breakable and DeepEP is on (arg_groups/memory_hook.py:391-395
    @0.5.23; 0.5.16 has no such term, srt/server_args.py:4164-4196)."""
    if (s.rules.version in BCG_KEEPS_DEEPEP and backend(s.a) == "deepep" and s.prefill_graph_on and s.pd_mode != "decode"
            and (s.a.get("cuda_graph_backend_prefill") or "breakable") == "breakable"):
        return 1024.0
    return 0.0


TOKENS_ENV = "SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK"


def dispatch_tokens(env: dict[str, str]) -> int | str:
    """SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK (default 128, srt/environ.py:688 @0.5.16, :1439 @0.5.23), or
    the reason it is not planned: SGLang asserts <= 1024 when it builds the dispatcher
    (token_dispatcher/deepep.py:375-381 @0.5.16)."""
    raw = (env or {}).get(TOKENS_ENV)
    if raw is None:
        return 128
    try:
        n = int(raw)
    except ValueError:
        return f"{TOKENS_ENV}={raw}: not an integer; not modelled"
    if not 1 <= n <= 1024:
        return f"{TOKENS_ENV}={raw}: outside 1..1024 (SGLang asserts <= 1024 at the dispatcher); not modelled"
    return n


def buffer_needs(raw: dict[str, Any], model, tp: int, env: dict[str, str] | None = None) -> list[NeedLine]:
    """DeepEP's buffer per GPU, after the pools (the module docstring says why), as
    ``DeepEPBuffer.get_deepep_buffer`` asks the library for it (token_dispatcher/deepep.py:202-230, 283 @0.5.16;
    :221-304 @0.5.23): hidden_bytes = hidden_size x 2 (params_bytes = 2, :374), the group = the TP group
    (_get_deepep_comm_group, layers/moe/fused_moe_triton/layer.py:93-101 @0.5.16, :163-172 @0.5.23), num_experts =
    routed + redundant (shared-expert fusion off), num_max_dispatch_tokens_per_rank =
    SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK (128, srt/environ.py:688 @0.5.16)."""
    if backend(raw) != "deepep":
        return []
    m = mode(raw)
    hidden = model.hidden_size
    experts = (model.num_experts or 0) + redundant(raw)
    out = []
    if m in ("normal", "auto"):
        nvl = 0
        for table in (DISPATCH_CONFIG, COMBINE_CONFIG):
            _, recv, _, _ = table[tp]
            nvl = max(nvl, nvl_buffer_size_hint(hidden * 2, tp, BUFFER_NUM_SMS, recv))
        meta = NUM_MAX_NVL_PEERS * (4 + 8 + 8)  # barrier signals + buffer / signal pointer tables (buffer.hpp:101-135)
        out.append(NeedLine(
            "DeepEP NVLink buffer", nvl + meta,
            f"exact: Config.get_nvl_buffer_size_hint(hidden {hidden} x 2 B, {tp} ranks) with Buffer.num_sms "
            f"{BUFFER_NUM_SMS}, max over the dispatch / combine configs (deepseek-ai/DeepEP csrc/legacy/"
            "config.hpp:53-73, deep_ep/buffers/legacy.py:233-290 @dd758ca) + its 160 B of peer tables "
            "(csrc/legacy/buffer.hpp:101-135); allocated at the first MoE dispatch, after the KV pool "
            "(token_dispatcher/deepep.py:185-284)"))
    out.append(NeedLine("DeepEP workspace", NUM_WORKSPACE_BYTES,
                        "exact: cudaMalloc(NUM_WORKSPACE_BYTES = 32 MiB) in DeepEP's Buffer (csrc/legacy/"
                        "buffer.hpp:148-150 @dd758ca)"))
    if m in ("low_latency", "auto"):
        tokens = dispatch_tokens(env or {})
        tokens = 128 if isinstance(tokens, str) else tokens  # the hook refused a bad value already
        rdma = low_latency_rdma_size_hint(tokens, hidden, tp, experts)
        mapped = -(-rdma // NVSHMEM_CUMEM_GRANULARITY) * NVSHMEM_CUMEM_GRANULARITY
        out.append(NeedLine(
            "DeepEP low-latency RDMA buffer (NVSHMEM)", mapped,
            f"estimate: Buffer.get_low_latency_rdma_size_hint({tokens} tokens per rank, hidden {hidden}, {tp} ranks, "
            f"{experts} experts) = {rdma:,} B exact (csrc/legacy/config.hpp:131-188 @dd758ca), rounded up to "
            "NVSHMEM's 512 MiB mapping granularity (NVSHMEM_CUMEM_GRANULARITY, set by deep_ep/buffers/legacy.py:"
            "121-122); NVSHMEM's own state beside its heap (IBGDA queue pairs, proxy, teams) is not counted"))
    return out


def rank_note(raw: dict[str, Any], model, env: dict[str, str], attn_dp: int = 1,
              chunk: int | None = None) -> str | None:
    """The per-rank line of the report for DeepEP: the EP width, the buffers' total, low_latency's prefill limit."""
    if backend(raw) != "deepep":
        return None
    tp = _tp(raw)
    total = sum(n.bytes for n in buffer_needs(raw, model, tp, env))
    n = redundant(raw)
    return (f"per rank: DeepEP ({mode(raw)} mode), EP over the TP group of {tp} GPUs (ep_size = tp_size); each GPU "
            f"holds {'(E + ' + str(n) + ') / ' if n else 'E / '}{tp} routed experts and the shared experts whole; "
            f"its DeepEP buffers ({total / MIB:,.0f} MiB, listed with what must still fit) come after the KV pool, "
            "which only SGLang's 2 GiB reserve (decode graphs on) budgets for"
            + ("; the MTP draft's MoE dispatches through the same process-wide DeepEP buffer (no second one), its "
               "shared experts whole too, and the verify graphs dispatch batch x num_draft_tokens tokens per rank"
               if str(raw.get("speculative_algorithm") or "").upper() in SPEC else "")
            + "".join(f"; {x}" for x in [prefill_note(raw, env, chunk,
                                                      max(1, tp // max(1, attn_dp)))] if x))


def _flag_value(flags: list[str], name: str) -> str | None:
    """A flag's value read leniently (the engine parses the flags for real)."""
    for i, f in enumerate(flags):
        if f == name and i + 1 < len(flags):
            return flags[i + 1]
        if f.startswith(name + "="):
            return f.split("=", 1)[1]
    return None


def weight_terms(spec, flags: list[str], tp: int) -> list[tuple[int, str]]:
    """(bytes per GPU above the even 1/tp split, why) for DeepEP's unsplit shared experts and the redundant
    experts (planner/catalog/weights.py a2a_shared_expert_bytes, redundant_expert_bytes)."""
    from planner.catalog.weights import a2a_shared_expert_bytes, redundant_expert_bytes  # noqa: PLC0415

    out = []
    if _flag_value(flags, "--moe-a2a-backend") == "deepep":
        b = a2a_shared_expert_bytes(spec, tp)
        if b:
            out.append((b, "DeepEP builds the shared experts unsplit on every GPU (tp_size 1, models/deepseek_v2.py:"
                           "709-733 @0.5.16)"))
    try:
        n = int(_flag_value(flags, "--ep-num-redundant-experts") or 0)
    except ValueError:
        n = 0
    if n > 0:
        b = redundant_expert_bytes(spec, tp, n)
        if b:
            out.append((b, f"{n} redundant experts: (E + {n}) / tp {tp} expert-equivalents per GPU "
                           "(models/deepseek_v2.py:631-633, eplb/expert_location.py:229-232 @0.5.16)"))
    return out


def draft_weight_terms(spec, flags: list[str], tp: int) -> list[tuple[int, str]]:
    """(bytes per GPU above the even 1/tp split, why) for the MTP draft under DeepEP: its MoE layer is built inside
    ``speculative_moe_a2a_backend_context`` (speculative/eagle_worker_v2.py:157-160 @0.5.16, :215-224 @0.5.23), so
    its shared experts are unsplit too (``_shared_expert_use_tp1``, models/deepseek_v2.py:709-733 @0.5.16). An
    estimate: one main MoE layer's shared-expert bytes per MTP layer (planner/catalog/weights.py
    a2a_shared_expert_bytes over the MoE layers outside the NextN layers)."""
    from planner.catalog.weights import a2a_shared_expert_bytes  # noqa: PLC0415

    if _flag_value(flags, "--moe-a2a-backend") != "deepep" or not spec.mtp_layers or spec.mla is None:
        return []
    first_dense = int(spec.raw.get("first_k_dense_replace") or spec.text.get("first_k_dense_replace") or 0)
    moe_layers = max(1, spec.num_hidden_layers - first_dense)
    b = spec.mtp_layers * (a2a_shared_expert_bytes(spec, tp) // moe_layers)
    if not b:
        return []
    return [(b, f"DeepEP builds the MTP draft layer's shared experts unsplit too (estimate: one MoE layer's "
                f"{b // spec.mtp_layers:,} B above 1/tp {tp} per MTP layer; the draft's MoE runs under "
                "speculative_moe_a2a_backend_context, speculative/eagle_worker_v2.py:157-160 @0.5.16)")]


def capture_mul_base(args) -> int:
    """get_batch_sizes_to_capture's ``mul_base`` under an A2A backend: require_attn_tp_gather is true (without DP
    attention, or with dp < tp; utils/common.py:3524-3543 @0.5.16), so the captured sizes are multiples of
    attn_tp_size and the request count is padded up to one (model_executor/runner/base_cuda_graph_runner.py:71-95
    @0.5.16). The oracle leaves SGLang's MoE globals unset (no initialize_moe_config, managers/scheduler.py:745),
    so its capture list misses this for DeepEP without DP attention."""
    return max(1, args.tp_size // max(1, args.attn_dp_size))


ASSERT_TEXT = ("Failed: Assertion error deep_ep.cpp 'x.size(0) == topk_idx.size(0) and x.size(0) <= "
               "num_max_dispatch_tokens_per_rank'")
ASSERT_CITE = ("DeepEP csrc/legacy/buffer.hpp:1481 @dd758ca (low_latency_dispatch); SGLang dispatches in low-latency mode "
               "in the decode graphs under auto and in every graph under low_latency (DeepEPMode.resolve, "
               "layers/moe/utils.py:181-188; runner_utils/deepep_adapter.py @0.5.16) and caps no capture list at "
               "the dispatch limit (0.5.16, 0.5.23)")


def _verify_bs(args, decode_bs: list[int], pool_requests: int | None, width: int) -> int:
    """The largest batch of the target's verify graphs: get_batch_sizes_to_capture(model_runner, num_tokens_per_req)
    keeps the sizes whose bs x num_draft_tokens is a multiple of mul_base (base_cuda_graph_runner.py:58-95 @0.5.16;
    cuda_graph_setup.py:300-309 @0.5.16), not bs itself, so with attn_tp > 1 it can keep a size the width-1 list
    (``decode_bs``, the draft's graphs) drops."""
    mul = capture_mul_base(args)
    if mul <= 1 or pool_requests is None:
        return max(decode_bs)
    padded = -(-pool_requests // mul) * mul
    sizes = list(args.cuda_graph_bs or decode_bs)
    if max(sizes) > padded:
        sizes.append(padded)
    kept = [b for b in sizes if b * width % mul == 0 and b <= padded]
    return max(kept) if kept else max(decode_bs)


def decode_dispatches(args, decode_bs: list[int] | None, pool_requests: int | None = None) -> list[tuple[str, int, int]]:
    """(graph, captured batch, tokens it dispatches on the rank's MoE) for the decode-side graphs SGLang captures in
    DeepEP's low-latency mode (DeepEPCudaGraphRunnerAdapter.capture(is_extend_in_batch=False) resolves auto to
    low_latency, runner_utils/deepep_adapter.py:29-35 @0.5.16): without speculative decoding the decode graph
    (bs tokens); with NEXTN / EAGLE the target's verify graph (bs x num_draft_tokens tokens:
    decode_cuda_graph_runner.py:272-279, 991 @0.5.16, :1473 @0.5.23) and, when num_steps > 1, the draft's decode
    graph (bs x topk tokens per step: eagle_worker_v2.py:392-405 @0.5.16, :495-507 @0.5.23;
    eagle_draft_cuda_graph_runner.py:473 @0.5.16, :537 @0.5.23). The draft-extend graph captures with
    is_extend_in_batch=True (eagle_draft_extend_cuda_graph_runner.py:459 @0.5.16, :491 @0.5.23): normal mode under
    auto; under low_latency its bs x num_draft_tokens on the width-1 list never exceeds the verify graph's."""
    if not decode_bs:
        return []
    bs = max(decode_bs)
    if not getattr(args, "spec_on", False) or str(args.speculative_algorithm).upper() not in SPEC:
        return [("decode", bs, bs)]
    width = int(args.speculative_num_draft_tokens or 1)
    vbs = _verify_bs(args, decode_bs, pool_requests, width)
    out = [("target verify", vbs, vbs * width)]
    if int(args.speculative_num_steps or 1) > 1:
        topk = int(args.speculative_eagle_topk or 1)
        out.append(("draft decode", bs, bs * topk))
    return out


def capture_failure(args, prefill_tokens: list[int] | None, decode_bs: list[int] | None,
                    pool_requests: int | None = None) -> tuple[str, str] | None:
    """(message, rule) when a CUDA-graph capture dispatches more tokens per rank than DeepEP's low-latency buffer
    takes (SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK): the decode-side graphs in auto / low_latency mode
    (:func:`decode_dispatches`: with NEXTN / EAGLE the verify graph's bs x num_draft_tokens and the draft decode
    graph's bs x topk), the breakable prefill graph (0.5.23 keeps it for DeepEP; captured before the decode graphs)
    in low_latency mode. The MoE input is split over the attention-TP group (ScatterMode.SCATTERED for an A2A
    backend, layers/communicator.py:385-392 @0.5.16), so a rank dispatches ceil(tokens / attn_tp) of a captured
    batch. ``pool_requests``: the request pool's size the capture lists are clamped to."""
    raw = args.raw
    if backend(raw) != "deepep" or mode(raw) == "normal":
        return None
    limit = dispatch_tokens(args.env)
    if isinstance(limit, str):
        return None
    attn_tp = max(1, args.tp_size // max(1, args.attn_dp_size))
    graphs = []
    if prefill_tokens and mode(raw) == "low_latency":
        graphs.append(("prefill", max(prefill_tokens), max(prefill_tokens)))
    graphs += decode_dispatches(args, decode_bs, pool_requests)
    for what, bs, tokens in graphs:
        per_rank = -(-tokens // attn_tp)
        if per_rank > limit:
            flag = ("--" + str(getattr(args.rules, "graph_max_bs_key", "cuda_graph_max_bs")).replace("_", "-")
                    if what != "prefill" else "--cuda-graph-max-bs-prefill")
            per_req = tokens // bs if bs else 1
            at = (f"captured at {tokens} tokens" if per_req == 1 else
                  f"captured at batch {bs} x {per_req} tokens = {tokens}")
            return (f"{ASSERT_TEXT} (the {what} CUDA graph {at} dispatches {per_rank} per rank, above {TOKENS_ENV} = "
                    f"{limit}: lower {flag} to {limit * attn_tp // per_req} or raise the variable, at most 1024)"), \
                ASSERT_CITE
    return None


def prefill_note(raw: dict[str, Any], env: dict[str, str], chunk: int | None, attn_tp: int) -> str | None:
    """--deepep-mode low_latency dispatches prefill chunks in low-latency mode too (DeepEPMode.resolve keeps it):
    a chunk above the limit per rank trips the same assertion at runtime, not at startup."""
    if backend(raw) != "deepep" or mode(raw) != "low_latency":
        return None
    limit = dispatch_tokens(env)
    if isinstance(limit, str) or not chunk or -(-chunk // attn_tp) <= limit:
        return None
    return (f"--deepep-mode low_latency dispatches prefill in low-latency mode too: a prefill chunk of up to {chunk} "
            f"tokens ({-(-chunk // attn_tp)} per rank) exceeds {TOKENS_ENV} = {limit}, so the first long prompt trips "
            "DeepEP's assertion at runtime (this verdict covers startup only); low_latency is meant for PD decode")
