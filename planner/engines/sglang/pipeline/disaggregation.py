"""PD disaggregation (``--disaggregation-mode prefill|decode``): each role is its own ``sglang serve``, planned
alone with its own verdict, as SGLang sizes it.

What a role changes, by SGLang's code (0.5.16-0.5.23, the releases in :data:`VERIFIED`, each checked against its
own code; the differences between them are the named rules below; 0.5.9-0.5.15 are refused by name):

* ``handle_pd_disaggregation`` (srt/arg_groups/pd_disaggregation_hook.py:15-96 @0.5.16, :39-200 @0.5.23), run
  right after the missing-default step: the decode role turns the radix cache off ("KV cache is forced as chunk
  cache for decode server") unless ``--disaggregation-decode-enable-radix-cache``; its
  ``--disaggregation-decode-extra-slots`` defaults to 2 x the per-worker ``--max-running-requests`` when that is
  given and at most 32, else 0; the prefill role refuses the ``fake`` transfer backend.
* the CUDA-graph roles (``_apply_cuda_graph_disaggregation_roles``, srt/server_args.py:3680-3686 @0.5.16,
  arg_groups/cuda_graph_hook.py:557-576 @0.5.23): prefill captures no decode graph, decode no prefill graph,
  unless that phase's backend was set on the command line.
* ``mem_fraction_static``'s reserve (srt/server_args.py:4055-4080, reserve_for_graph_mb 4164-4196 @0.5.16;
  arg_groups/memory_hook.py:281-330, 359-403 @0.5.23): on decode the activation term is
  ``max(R x draft tokens, 2048) x 1.5`` MiB (R = ``--max-running-requests``, else the decode graph's max bs);
  the decode-graph term counts only off the prefill role, the prefill-graph term only off the decode role; 0.5.23
  skips the multimodal adjustment on decode (memory_hook.py:283-288 @0.5.23), 0.5.16 does not (:4089-4092).
* the decode role's request pool (``_build_req_to_token_pool``, mem_cache/kv_cache_configurator.py:614-700
  @0.5.16, :1571-1680 @0.5.23; disaggregation/decode.py:109-258 @0.5.16, :188-358 @0.5.23):
  ``DecodeReqToTokenPool`` holds R + extra slots + 1 rows, and for a hybrid (mamba) model
  ``HybridMambaDecodeReqToTokenPool`` raises the mamba pool to max(M, (R + extra) x slots per request) and
  sizes the speculative intermediate states for R + extra requests. The KV budget charged only M and R: the
  difference is allocated beyond the budget, out of the ``1 - mem_fraction_static`` headroom, which the
  verdict counts (the pools' total is what the headroom is measured from).
* the transfer backend: with ``mooncake`` (the default) and ``fake`` SGLang's own code allocates no GPU buffer
  (mooncake registers the existing KV / mamba buffers in place, disaggregation/mooncake/conn.py:244-262
  @0.5.16; the metadata buffers are on the CPU, disaggregation/utils.py:249-259 @0.5.16); ``nixl`` (UCX may
  stage transfers through device buffers of its own size), ``mori``, ``ascend`` and the staging buffer
  (``SGLANG_DISAGG_STAGING_BUFFER``) are refused by name.
* decode host receive: ``--disaggregation-decode-host-receive-threshold`` (0.5.21+) is refused where it turns
  host receive on: above 0 on 0.5.21 (default 0.0, disaggregation/decode.py:663 @0.5.21), below 1 from 0.5.22
  (default 1.0, disaggregation/decode.py:683 @0.5.23).
* MLA: DeepSeek-V3 / R1 (``DeepseekV3ForCausalLM``) roles are checked (TP, FP8, EAGLE-MTP on decode); their
  decode pools are the plain ``DecodeReqToTokenPool`` rows over the MLA KV pool.

* DP attention (``--dp-size D --enable-dp-attention``, 0.5.23's ``--attn-dp-size D``) on DeepSeek-V3 / R1 /
  Kimi-K2 and, without speculative decoding, the GQA MoE / hybrid GDN MoE models DP attention models (Qwen3-MoE,
  GLM-4.x MoE, MiniMax-M2, Qwen3-Next; pd_disaggregation_hook.DP_ARCHS), 0.5.16 and 0.5.20-0.5.23
  (:data:`DP_VERIFIED`): each role is planned per attention-DP worker (pipeline/dp_attention.py) with the role's
  rules on top, which SGLang's code composes without a DP-specific PD branch: the decode role's
  default extra slots count per worker (:func:`extra_slots_default`), its request pool holds R // D + extra + 1
  rows per worker (the KV configurator divides R before ``_build_req_to_token_pool``; a hybrid model's mamba
  slots are raised per worker to max(M, (R // D + extra) x slots per request)), the decode reserve's
  activation term reads the undivided R (memory_hook.py:297-303 @0.5.23, srt/server_args.py:4062-4069 @0.5.16)
  beside DP attention's max_bs x D term; the prefill role divides its chunk by D. NEXTN / EAGLE on the decode
  role's own MTP layer where DP attention models it (not on 0.5.20 / 0.5.21, whose NextN draft the planner
  refuses), ``--ep-size`` with ``--moe-a2a-backend none`` on 0.5.16 / 0.5.23. Checked: tests/golden/pp_pd/*/pd_dp_*.

Not modelled, refused by name: DP attention on other models or releases, ``--dp-size`` replicas, DeepEP with a
role (pipeline/expert_parallel.py), pipeline parallelism, sliding-window, MLA models
other than DeepSeek-V3 / R1 (DSA among them), the decode radix cache on a hybrid (mamba) model, PD role switching, decode KV offload, host receive,
``SGLANG_ENABLE_POST_CAPTURE_KV_SIZING`` with a role, and on 0.5.23 a prefill role with speculative decoding (its
pool and budget drop the speculative mamba states, ``_pd_prefill_skips_mamba_spec_state``,
mem_cache/kv_cache_configurator.py:172-181 @0.5.23; 0.5.16 sizes them as a plain launch, which the oracle
confirms).
"""

from __future__ import annotations

from typing import Any


# each release's roles checked against its own code (tests/golden/pp_pd/sglang-<release>/pd_*); 0.5.9-0.5.15
# are refused: not checked (0.5.9-0.5.13 have no decode extra slots at all)
VERIFIED = frozenset({"0.5.16", "0.5.17", "0.5.18", "0.5.19", "0.5.20", "0.5.21", "0.5.22", "0.5.23"})
MODELLED_BACKENDS = ("mooncake", "mooncake_tcp", "fake")
# a role with DP attention (one attention-DP worker per oracle rank): the releases where both the roles and DP
# attention are checked against SGLang's code (tests/golden/pp_pd/sglang-<release>/pd_dp_*); the models in
# arg_groups/pd_disaggregation_hook.py DP_ARCHS, --moe-a2a-backend none (DeepEP with a role is refused in
# pipeline/expert_parallel.py)
DP_VERIFIED = ("0.5.16", "0.5.20", "0.5.21", "0.5.22", "0.5.23")


def role(raw: dict[str, Any]) -> str:
    """``null``, ``prefill`` or ``decode``."""
    return str(raw.get("disaggregation_mode") or "null")


def scope_refusal(raw: dict[str, Any], version: str | None) -> str | None:
    """One line naming what is not modelled for a PD role, else None (the flags alone; the model is checked in
    ``arg_groups/pd_disaggregation_hook.py``). This module imports nothing of the pipeline (it is read by
    server_args, the hooks and the pools alike)."""
    mode = role(raw)
    if mode == "null":
        return None
    head = f"--disaggregation-mode {mode}"
    if version not in VERIFIED:
        return (f"{head}: PD disaggregation on SGLang {version} is not modelled (verified: "
                f"{', '.join(sorted(VERIFIED, key=lambda v: tuple(map(int, v.split('.')))))})")
    backend = raw.get("disaggregation_transfer_backend") or "mooncake"
    if backend not in MODELLED_BACKENDS:
        why = {"nixl": "NIXL / UCX may stage transfers through device buffers sized by those libraries, which the "
                       "planner cannot read"}.get(backend, "not a CUDA transfer path this planner models")
        return f"--disaggregation-transfer-backend {backend}: not modelled ({why}); modelled: mooncake, fake"
    dp = raw.get("data_parallel_size") or raw.get("dp_size") or 1
    if raw.get("enable_dp_attention") or (raw.get("attn_dp_size") or 1) > 1:
        if version not in DP_VERIFIED:
            return (f"{head} with DP attention on SGLang {version}: not modelled by this planner yet (verified: "
                    f"{', '.join(DP_VERIFIED)})")
    elif dp > 1:
        return f"{head} with --dp-size (data-parallel replicas): not modelled by this planner yet"
    if (raw.get("pipeline_parallel_size") or raw.get("pp_size") or 1) > 1:
        return f"{head} with --pp-size: not modelled by this planner yet"
    for key, what in (("enable_pd_role_switch", "PD role switching"),
                      ("disaggregation_decode_enable_offload_kvcache", "decode KV offload"),
                      ("enable_hisparse", "HiSparse")):
        if raw.get(key):
            return f"--{key.replace('_', '-')}: {what} with {head} is not modelled by this planner yet"
    threshold = raw.get("disaggregation_decode_host_receive_threshold")
    if version == "0.5.21":  # default 0.0, on above 0 (disaggregation/decode.py:663 @0.5.21); 0.5.22+: 1.0, on below 1
        if threshold:
            return "--disaggregation-decode-host-receive-threshold above 0: decode host receive is not modelled yet"
    elif threshold is not None and threshold != 1 and threshold != 1.0:
        return "--disaggregation-decode-host-receive-threshold below 1: decode host receive is not modelled yet"
    return None


def extra_slots_default(mrr: int | None, d: int, version: str) -> int:
    """The decode role's default --disaggregation-decode-extra-slots: 2 x the per-worker request cap when it is given
    and at most 32, else 0. Per worker = R // the DP ranks (D attention-DP workers under DP attention):
    ``R // max(1, dp_size)`` (srt/arg_groups/pd_disaggregation_hook.py:64-71 @0.5.16, :120-125 @0.5.20, :128-133
    @0.5.21: --dp-size D is still the attention-DP width there), ``R // num_dp_ranks_of(cfg)`` (:141-145 @0.5.22,
    after handle_deprecated_dp_attention moved D into attn_dp_size), ``max(1, R // num_dp_ranks_of(cfg))``
    (:132-138 @0.5.23; num_dp_ranks_of = dp_size x attn_dp_size, runtime_context.py:202-207 @0.5.23). So R < D
    gets 0 extra slots up to 0.5.22 and 2 on 0.5.23."""
    if mrr is None:
        return 0
    per_worker = mrr // max(1, d)
    if version == "0.5.23":
        per_worker = max(1, per_worker)
    return per_worker * 2 if per_worker <= 32 else 0


def graph_roles(s: Any) -> None:
    """_apply_cuda_graph_disaggregation_roles: the other role's graph is off unless its backend was given."""
    if s.pd_mode == "prefill" and s.a.get("cuda_graph_backend_decode") is None:
        s.decode_graph_on = False
    elif s.pd_mode == "decode" and s.a.get("cuda_graph_backend_prefill") is None:
        s.prefill_graph_on = False


def decode_activation_tokens(s: Any) -> int | None:
    """The decode role's activation tokens in the fraction's reserve (srt/server_args.py:4062-4069 @0.5.16,
    arg_groups/memory_hook.py:298-303 @0.5.23); None off the decode role."""
    if s.pd_mode != "decode":
        return None
    running = s.a.get("max_running_requests") or s.gmax or 1
    return max(running * (s.a.get("speculative_num_draft_tokens") or 1), 2048)


def dp_reserve_width(s: Any, d: int) -> int:
    """The attention-DP width DP attention's max_bs x D reserve counts with: none on a prefill role
    (``enable_dp_attention and disaggregation_mode != "prefill"``, reserve_for_graph_mb, srt/server_args.py:4175-4183
    @0.5.16; arg_groups/memory_hook.py:363-370 @0.5.20 / 0.5.21, :372-379 @0.5.22, :369-378 @0.5.23)."""
    return 1 if s.pd_mode == "prefill" else d


def vlm_factor_applies(s: Any) -> bool:
    """0.5.23 leaves the decode role's fraction alone for a multimodal model (memory_hook.py:283-288 @0.5.23)."""
    return not (s.pd_mode == "decode" and s.rules.version != "0.5.16")


def decode_pool_sizes(args: Any, r, m, mamba: bool):
    """The decode role's request rows and mamba slots as allocated (disaggregation/decode.py:133-146, 219-253
    @0.5.16; :198-206, 308-340 @0.5.23): R + extra, and max(M, (R + extra) x (1 + tracking slots)). ``r`` and
    ``m`` may be numpy arrays."""
    extra = getattr(args, "decode_extra_slots", 0)
    rows = r + extra
    if not mamba:
        return rows, m
    tracking = (1 if args.disable_overlap_schedule else 2) if args.extra_buffer else 0
    need = rows * (1 + tracking)
    diff = need - m
    return rows, m + diff * (diff > 0)


def notes(args: Any) -> list[str]:
    """What the role changes, in words, for the plan's warnings."""
    mode = getattr(args, "disaggregation_mode", "null")
    if mode == "null":
        return []
    backend = args.raw.get("disaggregation_transfer_backend") or "mooncake"
    out = [f"PD {mode} role: planned alone (each role is its own server and verdict); transfer backend {backend}: "
           "no GPU buffer from SGLang's code (the pools are registered in place); the transfer library's own "
           "memory, if any, is not in this plan"]
    d = getattr(args, "attn_dp_size", 1)
    if d > 1 and mode == "prefill":
        out.append(f"PD prefill role with DP attention ({d} workers): SGLang's fraction holds back no max_bs x D "
                   "term on a prefill role (reserve_for_graph_mb skips it, srt/server_args.py:4175-4183 @0.5.16, "
                   "arg_groups/memory_hook.py:369-378 @0.5.23), so the per-rank note's held-back amount does not "
                   f"apply; the chunk is divided by {d} per worker")
    elif d > 1:
        out.append(f"PD decode role with DP attention ({d} workers): --max-running-requests and the default extra "
                   f"slots count per worker (R // {d}); the request pool holds R // {d} + "
                   f"{getattr(args, 'decode_extra_slots', 0)} extra + 1 rows on each worker")
    return out

