"""KV-cache compatibility: the SWA ratio and, from 0.5.15, the unified memory pool / page-major layout.

SGLang: ``_handle_cache_compatibility`` (srt/server_args.py:3946-3964 @0.5.11); ``_handle_page_major_kv_layout``
and ``_handle_unified_memory_pool`` (srt/server_args.py:6819-6895 @0.5.16, 8313-8402 @0.5.18); since 0.5.19
``srt/arg_groups/kv_cache_hook.py``.
"""

from __future__ import annotations

from typing import Any

from planner.catalog.spec import ModelSpec
from planner.engines.sglang.pipeline.server_args import ArgState, Rejected, _NotModelled
from planner.engines.sglang.rules import Rules


def cache_compatibility(s: ArgState) -> None:
    """_handle_cache_compatibility (srt/server_args.py:3946-3964 @0.5.11), then the unified pool's checks."""
    a = s.a
    if not (0 < a["swa_full_tokens_ratio"] <= 1.0):
        raise Rejected("ValueError", "--swa-full-tokens-ratio should be in range (0, 1.0].",
                       "srt/server_args.py:3963-3964 @0.5.11")
    s.unified = False
    if s.rules.cuda_graph_config and (a.get("enable_unified_memory") or a.get("enable_page_major_kv_layout")):
        s.unified = _unified_memory_checks(a, s.attn, s.algo, s.rules, s.model)


def _page_major_mamba_backend(a: dict[str, Any], mode: str) -> None:
    """The page-major layout's stride check of the Mamba kernels (--mamba-backend: only triton reads the strided
    state). 0.5.15-0.5.16 check the linear-attention backends and --mamba-backend in one assertion
    (srt/server_args.py:6877-6890 @0.5.16); from 0.5.17 --mamba-backend has its own, the last of the page-major
    checks (srt/server_args.py:7997-8001 @0.5.17, :8436-8440 @0.5.18, srt/arg_groups/kv_cache_hook.py:858-862
    @0.5.23; the linear-attention decode / prefill allow-lists before it are not mirrored here)."""
    if mode == "v0_5_15":
        linear = {a.get(k) for k in ("linear_attn_backend", "linear_attn_decode_backend", "linear_attn_prefill_backend",
                                     "mamba_backend")} - {None}
        if not linear <= {"triton"}:
            raise Rejected("AssertionError", "--enable-page-major-kv-layout requires the Triton linear-attention / "
                           f"Mamba kernels for the strided conv/SSM state; got {sorted(linear)}. Pass "
                           "--linear-attn-backend triton and --mamba-backend triton.",
                           "srt/server_args.py:6877-6890 @0.5.16")
    elif a.get("mamba_backend") not in (None, "triton"):
        raise Rejected("AssertionError", "--enable-page-major-kv-layout requires the Triton Mamba kernels for the "
                       f"strided conv/SSM state; got {a['mamba_backend']!r}. Pass --mamba-backend triton.",
                       "srt/server_args.py:7997-8001 @0.5.17, :8436-8440 @0.5.18, "
                       "srt/arg_groups/kv_cache_hook.py:858-862 @0.5.23")


def _unified_memory_checks(a: dict[str, Any], attn: str, algo: str | None, rules: Rules, model: ModelSpec) -> bool:
    """_handle_page_major_kv_layout then _handle_unified_memory_pool, per release. True when the launch runs
    with the unified pool the planner models (a hybrid mamba model, no speculative decoding); a launch SGLang
    accepts outside that is refused as not modelled."""
    mode = rules.unified_mode
    unified = bool(a.get("enable_unified_memory"))
    if mode in ("v0_5_19", "v0_5_22"):
        if not unified:  # srt/arg_groups/kv_cache_hook.py:297-303 @0.5.19
            raise Rejected("AssertionError", "--enable-page-major-kv-layout without --enable-unified-memory is "
                           "temporarily unsupported: the strided MHA K/V views were removed and the static-pool "
                           "page-major layout awaits its per-layer-view reimplementation. Run with "
                           "--enable-unified-memory, or drop --enable-page-major-kv-layout.",
                           "srt/arg_groups/kv_cache_hook.py:297-303 @0.5.19")
    else:
        backends = {b for b in (a["prefill_attention_backend"] or attn, a["decode_attention_backend"] or attn) if b}
        if not backends <= {"triton"}:
            if mode == "v0_5_15":  # srt/server_args.py:6866-6876 @0.5.16
                msg = ("--enable-page-major-kv-layout requires the Triton attention backend for the full-attention "
                       f"layers; got {sorted(backends)}. Pass --attention-backend triton.")
            else:  # srt/server_args.py:8364-8402 @0.5.18
                msg = ("--enable-page-major-kv-layout requires the Triton attention backend for the full-attention "
                       "layers (unified-memory MLA also allows the paged MLA backends); got "
                       f"{sorted(backends)}, allowed ['triton']. Pass a compatible --attention-backend.")
            raise Rejected("AssertionError", msg, "srt/server_args.py:6866-6876 @0.5.16, :8397-8402 @0.5.18")
    _page_major_mamba_backend(a, mode)
    if unified and algo is not None:
        if mode in ("v0_5_15", "v0_5_17"):
            raise Rejected("AssertionError", "--enable-unified-memory is not yet compatible with speculative "
                           "decoding.", "srt/server_args.py:6829-6832 @0.5.16")
        if mode in ("v0_5_18", "v0_5_19") and algo != "DSPARK":
            tail = ("virtual/dense loc translation" if mode == "v0_5_18"
                    else "virtual/kernel-facing loc translation")
            raise Rejected("AssertionError", "--enable-unified-memory only supports --speculative-algorithm DSPARK "
                           "(chain draft); other speculative algorithms are not yet audited for the unified pool's "
                           f"{tail}. Got --speculative-algorithm={algo!r}.",
                           "srt/server_args.py:8313-8318 @0.5.18, srt/arg_groups/kv_cache_hook.py:224-229 @0.5.19")
        if mode in ("v0_5_18", "v0_5_19") and algo == "DSPARK":  # DSPARK: topk is 1 already (_handle_dspark)
            allowed = ["cutedsl_mla", "tokenspeed_mla", "triton", "trtllm_mla"]
            used = sorted({b for b in (a["prefill_attention_backend"] or attn, a["decode_attention_backend"] or attn) if b})
            if not set(used) <= set(allowed):
                space = "dense" if mode == "v0_5_18" else "kernel-facing"
                raise Rejected("AssertionError", "--enable-unified-memory + DSPARK requires spec-verify-audited "
                               f"attention backends {allowed} for both prefill and decode; got {used}. flashinfer / "
                               "fa3 do not translate speculative verify indices to the unified pool's "
                               f"{space} space yet.",
                               "srt/server_args.py:8325-8336 @0.5.18, srt/arg_groups/kv_cache_hook.py:551-569 @0.5.21")
    if unified and rules.unified_refuses_prefill_graph and a.get("cuda_graph_backend_prefill") not in (None, "disabled"):
        # 0.5.19: prefill capture is not wired for the unified pool (srt/arg_groups/kv_cache_hook.py:265-283 @0.5.19)
        raise Rejected("ValueError", "--enable-unified-memory supports decode cuda-graph capture only; prefill capture "
                       "is not wired (the prefill graph runner bypasses the unified virtual->physical loc rebind). Got "
                       f"--cuda-graph-backend-prefill={a['cuda_graph_backend_prefill']!r}; pass "
                       "--cuda-graph-backend-prefill=disabled.", "srt/arg_groups/kv_cache_hook.py:265-283 @0.5.19")
    modelled = (unified and algo is None and model.is_mambaish and model.head_dim == model.v_head_dim
                and not a.get("enable_int8_mamba_checkpoint")
                and a.get("cuda_graph_backend_prefill") != "tc_piecewise")
    if not modelled:
        raise _NotModelled("--enable-unified-memory / --enable-page-major-kv-layout: SGLang accepts this, but it is "
                           "not modelled by this planner yet (the unified pool is, for hybrid mamba models without "
                           "speculative decoding; the page-major layout on its own is not)")
    return True


