"""SGLang's opt-in post-capture KV sizing (env ``SGLANG_ENABLE_POST_CAPTURE_KV_SIZING``, 0.5.16+, default off:
srt/environ.py:337 @0.5.16, :640 @0.5.23), modelled for every release in :data:`MODELLED` (0.5.16-0.5.23), each
checked against its own oracle (tests/golden/post_capture/oracle-<release>.json).

What SGLang does when the gate (:func:`gate`, post_capture_kv_sizing_planned, :data:`GATE_CITE`) holds:

1. mem_fraction_static's default skips the activation / CUDA-graph reserve: ``reserved = FLOOR + tp*pp/8*1024``
   MiB, FLOOR 512 in 0.5.16-0.5.17 and 1536 from 0.5.18 (:data:`MODELLED`). A multimodal model keeps the ViT factor
   in 0.5.16-0.5.19 and takes ``8192 / gpu_mem`` off instead from 0.5.20 (:func:`vlm_fixed_reserve`).
2. The pools are sized as usual from that fraction, with the slack floored for a hybrid (mamba) model at
   ``512 + max(chunk, 2048)*1.5 + tp*pp/8*1024``, at least 10240 on a GPU over 60 GiB (mamba_pre_capture_reserve_mb,
   srt/server_args.py:4143-4162 and srt/mem_cache/kv_cache_configurator.py:1539-1546 @0.5.16;
   pre_capture_activation_reserve_mb, srt/server_args.py:4861-4880 and kv_cache_configurator.py:1626-1634 @0.5.17;
   the runtime copy runtime_context.py:1436-1466 @0.5.18; srt/arg_groups/overrides.py:194-210 and kv_cache_configurator.py:
   3007-3032 @0.5.23, the runtime's copy runtime_context.py:1797-1819):
   the mamba states are a fixed allocation; the KV pool is only a CUDA-VMM *virtual* reservation of that size
   (0.5.18+ log it as ``VA upper bound``, srt/mem_cache/memory_pool.py:1685-1693 @0.5.18, :2088 @0.5.23; 0.5.16-0.5.17
   as ``KV Cache is allocated``: :func:`va_log_words`).
3. After the CUDA graphs are captured the KV pool is backed from what is then free
   (srt/model_executor/model_runner_components/kv_pool_runtime.py:39-104 @0.5.16, :59-140 @0.5.23):
   ``budget = int(max(0, free - headroom - mm) * 2^30)`` with ``headroom = P*(1-f)``, floored at the same
   activation reserve for a hybrid model or when the decode graph's max batch is under max_running_requests,
   ``mm`` the multimodal reserve from 0.5.18 (kv_pool_runtime.py:81-86 @0.5.18; 0 before), and
   ``tokens = min(budget // cell, page-aligned, the pre-capture tokens)`` (config_from_budget,
   kv_cache_configurator.py:1679-1701 @0.5.16, :3192-3227 @0.5.23); max_running_requests is re-capped for the
   smaller pool (kv_pool_runtime.py:89-104 @0.5.16, :162-177 @0.5.23).

The planner cannot measure the free memory after capture: it takes its own post-pool estimate (the attention
workspace and the prefill + decode CUDA graphs, :mod:`.headroom`), so the post-capture pool rests on that
estimate and on its error on the launch's GPU class (:func:`planner.engines.sglang.calibration.class_info`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from planner.engines.sglang.pipeline.server_args import _env_bool
from planner.engines.sglang.rules import version_key

ENV = "SGLANG_ENABLE_POST_CAPTURE_KV_SIZING"
GIB = 1 << 30

#: release -> the fraction's floor in MiB under post-capture sizing: ``reserved_mem = FLOOR + tp*pp/8*1024``
#: (srt/server_args.py:4055-4059 @0.5.16, :4754-4758 @0.5.17, :4949-4953 @0.5.18; srt/arg_groups/memory_hook.py:232-236
#: @0.5.19, :284-288 @0.5.20, :284-288 @0.5.21, :293-297 @0.5.22, :291-295 @0.5.23). Each release's gate, fraction and
#: VA upper bound are checked against its own oracle (tests/golden/post_capture/oracle-<release>.json).
MODELLED = {"0.5.16": 512, "0.5.17": 512, "0.5.18": 1536, "0.5.19": 1536, "0.5.20": 1536, "0.5.21": 1536,
            "0.5.22": 1536, "0.5.23": 1536}

#: where each release's gate lives (post_capture_kv_sizing_planned)
GATE_CITE = {"0.5.16": "srt/server_args.py:4105-4141 @0.5.16", "0.5.17": "srt/server_args.py:4810-4859 @0.5.17",
             "0.5.18": "srt/server_args.py:5006-5055 @0.5.18",
             "0.5.19": "srt/arg_groups/overrides.py:1750-1797 @0.5.19",
             "0.5.20": "srt/arg_groups/overrides.py:1803-1850 @0.5.20",
             "0.5.21": "srt/arg_groups/overrides.py:1695-1750 @0.5.21",
             "0.5.22": "srt/arg_groups/overrides.py:1738-1809 @0.5.22",
             "0.5.23": "srt/arg_groups/overrides.py:1791-1862 @0.5.23"}


def vlm_fixed_reserve(version: str) -> bool:
    """0.5.20+: a multimodal model takes a fixed ``8192 / gpu_mem`` off the post-capture fraction
    (adjust_mem_fraction_for_vlm(..., post_capture_kv_sizing, gpu_mem), srt/arg_groups/memory_hook.py:410-424
    @0.5.20, :417-428 @0.5.23). 0.5.16-0.5.19 apply the ViT factor as without it (srt/server_args.py:4090-4095
    @0.5.16, :4795-4800 @0.5.17, :4991-4996 @0.5.18; arg_groups/memory_hook.py:270-282, 352-395 @0.5.19)."""
    return version_key(version) >= (0, 5, 20)


def va_log_words(version: str) -> str:
    """How the pool's pre-capture reservation is logged: 0.5.18+ ``KV Cache VA upper bound``
    (srt/mem_cache/memory_pool.py:1685-1693 @0.5.18, :2088-2096 @0.5.23); 0.5.16-0.5.17 log it as
    ``KV Cache is allocated`` although it is only reserved (memory_pool.py:1616-1622 @0.5.16, :1670-1678 @0.5.17)."""
    return "VA upper bound" if version_key(version) >= (0, 5, 18) else "KV Cache is allocated"

# the architectures whose gate is off (is_deepseek_v4 / is_minimax_sparse, srt/configs/model_config.py @0.5.23)
_GATED_OFF_ARCHS = ("DeepseekV4ForCausalLM", "MiniMaxM3ForCausalLM", "MiniMaxSparseForCausalLM")


def requested(env: dict[str, str], version: str) -> bool:
    """The env var is set true in a release that reads it (0.5.16+; EnvBool: true/1/yes/y)."""
    return version_key(version) >= (0, 5, 16) and _env_bool(env, ENV)


def refusal(env: dict[str, str], version: str) -> str | None:
    """The one line refusing a release the planner does not model the feature for (every release 0.5.16-0.5.23
    is in :data:`MODELLED`; a later one is refused until checked against its own oracle)."""
    from planner.engines.sglang.pipeline.server_args import Rejected  # noqa: PLC0415

    try:
        if not requested(env, version) or version in MODELLED:
            return None
    except Rejected:  # not a boolean: SGLang's own ValueError, raised where the flags resolve
        return None
    return (f"--env {ENV}=1: post-capture KV sizing is modelled for SGLang {', '.join(MODELLED)} only (SGLang "
            f"{version} is not checked against its own code); plan without it or with one of those releases")


def max_prefill_buffer_tokens(cps: int) -> int:
    """srt/arg_groups/overrides.py max_prefill_buffer_tokens @0.5.23 without PP (not modelled): the chunk."""
    return cps if cps and cps > 0 else 0


def gate(s: Any) -> tuple[bool, str]:
    """post_capture_kv_sizing_planned on an ArgState, as the launch's release has it (:data:`GATE_CITE`): (on, why).
    Conditions the planner refuses elsewhere (KV-cache sharding, device, DCP, disaggregation, PP, the mooncake pool,
    --kv-cache-dtype fp4_e2m1, which 0.5.16-0.5.20 gate off) never reach here. Raises ValueError (a one-line
    refusal) for a condition it does not model."""
    a, v = s.a, s.rules.version
    k = version_key(v)
    unified = bool(a.get("enable_unified_memory"))  # the flag, as the gate reads it (cfg.enable_unified_memory)
    if not requested(s.env, v):
        return False, f"{ENV} is not set"
    if (a.get("dcp_size") or 1) != 1:
        raise ValueError("--dcp-size: decode context parallelism turns post-capture KV sizing off, and it is not "
                         "modelled by this planner yet")
    if s.model.raw.get("kv_lora_rank") is not None:
        return False, "an MLA model (use_mla_backend) keeps the heuristic reserve"
    if a.get("enable_memory_saver"):
        return False, "--enable-memory-saver keeps the heuristic reserve"
    if a.get("prefill_only_disable_kv_cache"):
        return False, "--prefill-only-disable-kv-cache keeps the heuristic reserve"
    if unified and k >= (0, 5, 21):
        if k < (0, 5, 22):  # unified arenas cannot resize (overrides.py:1703-1705 @0.5.21)
            return False, "--enable-unified-memory keeps the heuristic reserve (its arena is backed before capture)"
        if s.model.is_mambaish:  # only the hybrid-SWA byte pool resizes (overrides.py:1774-1785 @0.5.22)
            return False, "--enable-unified-memory with a hybrid (mamba) model keeps the heuristic reserve"
        raise ValueError(f"--env {ENV}=1 with --enable-unified-memory on a model without mamba layers is not "
                         "modelled by this planner yet")
    if k < (0, 5, 17) and a.get("enable_dp_attention"):  # srt/server_args.py:4126 @0.5.16
        return False, "--enable-dp-attention keeps the heuristic reserve (its prefill runs eager)"
    if str(a.get("speculative_algorithm") or "").upper() in ("DFLASH", "DSPARK"):
        raise ValueError(f"--env {ENV}=1 with --speculative-algorithm {a['speculative_algorithm']}: the draft pool "
                         "and the sampling headroom after capture are not modelled by this planner yet "
                         "(kv_pool_runtime.py:34-48, 114-120 @0.5.23; the draft is a real allocation before 0.5.22)")
    if not s.decode_graph_on or s.disable_graph:
        return False, "the decode CUDA graph is disabled (eager decode keeps the heuristic reserve)"
    if k < (0, 5, 17):  # 0.5.16 asks only that the prefill graph is on (srt/server_args.py:4127-4134 @0.5.16)
        if not s.prefill_graph_on:
            return False, "the prefill CUDA graph is disabled (eager prefill keeps the heuristic reserve)"
    elif not s.prefill_graph_on or s.cps <= 0 or max_prefill_buffer_tokens(s.cps) > max(s.pcg_tokens or [0]):
        return False, ("the prefill CUDA graph does not cover the largest prefill chunk (off, or its largest captured "
                       "size is under --chunked-prefill-size), so eager prefill keeps the heuristic reserve")
    if s.arch in _GATED_OFF_ARCHS:
        return False, f"{s.arch} keeps the heuristic reserve"
    if unified:  # 0.5.16-0.5.20 do not gate the unified arena: it would be sized before capture, unmodelled
        raise ValueError(f"--env {ENV}=1 with --enable-unified-memory on SGLang {v} (its gate does not turn it off "
                         "for the unified arena) is not modelled by this planner yet")
    return True, "on"


def fraction_reserve_mib(tp: int, version: str) -> float:
    """The fraction's reserve under post-capture sizing: the release's floor (:data:`MODELLED`) + tp*pp/8*1024
    (pp = 1)."""
    return float(MODELLED[version]) + tp * 1 / 8 * 1024


def activation_reserve_mib(cps: int, max_prefill_tokens: int, tp: int, gpu_mem_mib: float) -> float:
    """pre_capture_activation_reserve_mb (srt/arg_groups/overrides.py:194-210 @0.5.23; the runtime calls its copy
    in runtime_context.py:1797-1819), not a decode-disagg node."""
    tokens = max(cps, 2048) if cps > 0 else max(max_prefill_tokens, 2048)
    reserved = 512 + tokens * 1.5 + tp * 1 / 8 * 1024
    if gpu_mem_mib > 60 * 1024:
        reserved = max(reserved, 10 * 1024)
    return reserved


def slack_floor_gib(args: Any, mambaish: bool) -> float:
    """The pre-capture slack floor (srt/mem_cache/kv_cache_configurator.py:3020-3032 @0.5.23): a hybrid model's
    mamba states are fixed before capture, so the slack is at least the activation reserve; 0 otherwise."""
    if not getattr(args, "post_capture_kv", False) or not mambaish:
        return 0.0
    return args.post_capture_reserve_mib / 1024


SEARCH_SKIPPED = (f"no flag search under {ENV}=1: the search sizes the KV pool before capture, so only the flags "
                  "given are planned (unset it to search)")

def search_requested(env: dict[str, str], version: str) -> bool:
    """The variable is set on a release that models it: a searched point may pass the gate where the launch does
    not (another chunk size), and the grid would size it before capture, so the search is skipped."""
    from planner.engines.sglang.pipeline.server_args import Rejected  # noqa: PLC0415

    try:
        return version in MODELLED and requested(env, version)
    except Rejected:
        return False


HYBRID_DP_SEARCH_SKIPPED = ("no flag search under DP attention on a hybrid (mamba) model: the search's grid does not "
                            "divide the mamba slots per DP shard yet, so only the flags given are planned (per rank)")


def hybrid_dp(plan: Any) -> bool:
    """DP attention on a model with mamba state: SGLang gives each DP shard max_mamba_cache_size // attn_dp slots
    (pipeline/dp_attention.py), which the search's grid does not follow (its running requests came out D times the
    plan's), so the search is skipped there rather than rank numbers the plan does not give."""
    args = getattr(plan, "args", None)
    return args is not None and args.attn_dp_size > 1 and plan.model.spec.is_mambaish


def search_skipped(plan: Any) -> bool:
    """The flag search sizes the KV pool before capture; under post-capture sizing it would rank numbers SGLang does
    not use, so only the given flags are planned, and the plan says so (the CLI and --batch ask here). The same for
    DP attention on a hybrid model (:func:`hybrid_dp`)."""
    if hybrid_dp(plan):
        if HYBRID_DP_SEARCH_SKIPPED not in plan.notes:
            plan.notes.append(HYBRID_DP_SEARCH_SKIPPED)
        return True
    if getattr(plan, "post_capture", None) is None and not search_requested(plan.env, plan.sglang_version):
        return False
    if SEARCH_SKIPPED not in plan.notes:
        plan.notes.append(SEARCH_SKIPPED)
    return True


#: the post-pool needs captured (or held) before the resize: everything but the prefill chunk's activations
_AFTER_RESIZE = ("activations (prefill chunk)",)
_TARGET_KV = ("kv_k", "kv_v")


def resize(args: Any, prof: Any, pools: Any, needs: list, free_after_bytes: int, mambaish: bool,
           gpu_mem_mib: float, mm_gib: float, mamba_ratio: int | None) -> dict:
    """compute_post_capture_kv_resize (kv_pool_runtime.py:59-189 @0.5.23) with the planner's estimate of what the
    capture took: the pools minus the target KV pool (a virtual reservation until then; a draft pool other than
    DFLASH's is a real allocation, :34-46) and every post-pool need but the prefill chunk's activations.

    Returns the resized numbers: ``tokens`` (min of the page-aligned budget // cell, --max-total-tokens and the
    pre-capture tokens, config_from_budget :3192-3227), ``running`` (max_running_requests re-capped, :173-185),
    and what they came from."""
    physical = pools.total - sum(pools.get(k) for k in _TARGET_KV)
    captured = [n for n in needs if n.label not in _AFTER_RESIZE]
    free_bytes = free_after_bytes - physical - sum(n.bytes for n in captured)
    # get_available_gpu_memory (memory_profile.available_gib): tp > 1 goes through a float32 all-reduce
    free_gb = float(np.float32(free_bytes)) / GIB if args.tp_size > 1 else free_bytes / GIB
    headroom_gb = prof.pre_model_load_gib * (1 - args.mem_fraction_static)
    decode_max_bs = int(args.cuda_graph_max_bs or 0)
    running = int(prof.max_running_requests or decode_max_bs or 1)
    eager_decode_gap = not args.disable_cuda_graph and decode_max_bs < running
    floored = eager_decode_gap or mambaish
    if floored:
        headroom_gb = max(headroom_gb, args.post_capture_reserve_mib / 1024)
    budget = int(max(0.0, free_gb - headroom_gb - mm_gib) * GIB)
    cell, page = prof.kv_cell_bytes_per_token, args.page_size
    n = budget // cell // page * page
    mtt = args.max_total_tokens
    if mtt is not None and 0 <= mtt < n:
        n = mtt // page * page
    n = min(n, prof.max_total_num_tokens)
    r = min(prof.max_running_requests, resolve_max_num_reqs(args, n, prof.max_mamba_cache_size, mamba_ratio))
    return {"tokens": int(n), "running": int(r), "va_tokens": int(prof.max_total_num_tokens),
            "eager_decode_gap": (decode_max_bs, running) if eager_decode_gap else None,
            "va_running": int(prof.max_running_requests), "budget_bytes": budget, "free_after_capture_bytes": free_bytes,
            "headroom_gib": headroom_gb, "headroom_floored": floored, "mm_gib": mm_gib,
            "captured_bytes": sum(n_.bytes for n_ in captured), "captured": [n_.label for n_ in captured],
            "cell": cell}


def resolve_max_num_reqs(args: Any, n: int, m: int | None, mamba_ratio: int | None) -> int:
    """resolve_max_num_reqs on the resized token count (srt/mem_cache/kv_cache_configurator.py @0.5.23, the same
    formula as the pre-capture profile: pipeline/memory_profile.py _scalar_chain)."""
    ctx = args.context_len
    est = max(min(int(n / ctx * 512), 4096), 2048)
    r_args = args.max_running_requests
    if r_args is not None:
        if args.rules.min_one_running:
            r_args = max(r_args, 1)
        r = min(r_args, est) if args.rules.cap_running_by_estimate else min(r_args, n // 2)
    else:
        r = min(est, n // 2)
    if m is not None and mamba_ratio:
        r = min(r, m // mamba_ratio)
    return r


def note(plan: Any) -> str:
    """The report's line: the pool is sized after capture, from the planner's estimate, and how far that estimate
    was off on the launch's GPU class."""
    from planner.engines.sglang.calibration import class_info, gpu_class  # noqa: PLC0415

    pc = plan.post_capture
    cls = gpu_class(getattr(plan.args, "gpu_sm", None))
    i = class_info(cls)
    graphs = [n for n in plan.needs if "CUDA graph" in n.label]
    est = sum(n.bytes for n in graphs) / GIB
    where = (f"on the {i['logs']} public logs of {i['label']} ({cls}) the graphs' estimate was at most "
             f"{i['under_max_pct']:.0f}% under and {i['over_max_pct']:.0f}% over what they measured" if i["own"] else
             f"{i['label']} has no public capture log: the largest error of any class, at most "
             f"{i['under_max_pct']:.0f}% under")
    if pc["eager_decode_gap"]:
        floor = (f" (the activation reserve: SGLang warns 'Post-capture KV sizing: decode CUDA graph max_bs="
                 f"{pc['eager_decode_gap'][0]} < max_running_requests={pc['eager_decode_gap'][1]}; reserving activation "
                 "headroom')")
    elif pc["headroom_floored"]:
        floor = " (the activation reserve: a hybrid model's mamba states are fixed before capture)"
    else:
        floor = " (the fraction's slack, P x (1 - f))"
    mm = f" and {pc['mm_gib']:.2f} GiB multimodal reserve" if pc["mm_gib"] else ""
    return (f"{ENV}=1: the KV pool is sized after the CUDA graphs are captured. SGLang reserves "
            f"{pc['va_tokens']:,} tokens of virtual memory first (its log: '{va_log_words(plan.sglang_version)}'), then backs "
            f"{pc['tokens']:,} from what is free after capture less {pc['headroom_gib']:.2f} GiB headroom{floor}"
            f"{mm}. "
            f"The planner cannot measure that free memory: the pool rests on its estimate of what the capture "
            f"takes, {pc['captured_bytes'] / GIB:.2f} GiB ({', '.join(pc['captured'])}; CUDA graphs {est:.2f} GiB), and "
            f"{where}")
