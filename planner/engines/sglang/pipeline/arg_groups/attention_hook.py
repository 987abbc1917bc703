"""Attention backends, the linear-attention (GDN) backends and the page size they imply.

SGLang: ``_get_default_attn_backend``, ``_handle_attention_backend_compatibility``,
``_handle_linear_attn_backend`` and ``_handle_page_size`` (srt/server_args.py:2464-2888 @0.5.11); since
0.5.19 ``srt/arg_groups/attention_hook.py``. The Blackwell hybrid-GDN backend check that runs when the
backend is built (attention_registry.py) is in the pipeline's post-pool checks.
"""

from __future__ import annotations

from typing import Any

from planner.catalog.spec import ModelSpec
from planner.engines.sglang.pipeline.server_args import ArgState, Rejected, _NotModelled


def default_attn(s: ArgState, page_now: int | None) -> str:
    """_get_default_attn_backend, MHA branch (srt/server_args.py:2464-2520 @0.5.11)."""
    dev = s.dev
    if dev.hip:  # ROCm: aiter, or triton for MLA at other head counts (pipeline/rocm.py)
        from planner.engines.sglang.pipeline import rocm  # noqa: PLC0415

        return rocm.default_backend(s)
    if s.model.mla is not None:  # the MLA branch (pipeline/mla.py)
        from planner.engines.sglang.pipeline import mla  # noqa: PLC0415

        return mla.default_backend(s)
    topk = s.a["speculative_eagle_topk"]
    no_spec_or_topk1 = topk is None or (topk == 1 and page_now in (1, None))
    if dev.hopper_cuda_12_3 and no_spec_or_topk1:
        return "fa3"
    dflash_topk1 = s.rules.dflash_sm100_trtllm_default and str(s.spec_user).upper() == "DFLASH"  # @0.5.23
    if dev.sm100 and no_spec_or_topk1 and (s.spec_user is None or topk is not None or dflash_topk1):
        if s.rules.asym_kv_fa4 and s.model.head_dim != s.model.v_head_dim:
            return "fa4"  # srt/server_args.py:5697-5701 @0.5.17
        return "trtllm_mha"
    return "flashinfer"


def _trtllm_mha_checks(s: ArgState) -> None:
    """trtllm_mha's device and page constraints (srt/server_args.py:2620-2651 @0.5.11)."""
    a, dev, rules = s.a, s.dev, s.rules
    prefill = a["prefill_attention_backend"] or s.attn
    decode = a["decode_attention_backend"] or s.attn
    if rules.trtllm_mha_sm100_only:  # srt/server_args.py:1894-1908 @0.5.9
        if not dev.sm100:
            raise Rejected("ValueError", "TRTLLM MHA backend is only supported on Blackwell GPUs (SM100). Please "
                           "use a different backend.", "srt/server_args.py:1894-1908 @0.5.9")
    elif rules.trtllm_prefill_sm90_sm120:  # srt/arg_groups/attention_hook.py:131-157 @0.5.19
        if prefill == "trtllm_mha" and not (dev.sm90 or dev.sm100 or dev.sm120):
            raise Rejected("ValueError", "TRTLLM MHA backend for prefill requires Hopper (SM90), Blackwell (SM100), "
                           "or SM120 GPUs. Please use a different prefill backend.",
                           "srt/arg_groups/attention_hook.py:131-157 @0.5.19")
        if prefill == "trtllm_mha" and dev.sm120 and a["kv_cache_dtype"] == "fp8_e4m3":
            raise Rejected("ValueError", "TRTLLM FMHAv2 prefill on SM120 does not support fp8_e4m3 KV cache or "
                           "skip-softmax.", "srt/arg_groups/attention_hook.py:131-157 @0.5.19")
    elif prefill == "trtllm_mha" and not dev.sm100 and not rules.trtllm_mha_sm100_only:
        raise Rejected("ValueError", "TRTLLM MHA backend for prefill is only supported on Blackwell GPUs (SM100). "
                       "Please use a different prefill backend.", "srt/server_args.py:2629-2632 @0.5.11")
    if decode == "trtllm_mha" and not (dev.sm90 or dev.sm100 or dev.sm120) and not rules.trtllm_mha_sm100_only:
        raise Rejected("ValueError", "TRTLLM MHA backend for decode is only supported on Hopper (SM90), Blackwell "
                       "(SM100) and (SM120) GPUs. Please use a different decode backend.",
                       "srt/server_args.py:2640-2645 @0.5.11")
    if s.page not in ((16, 32, 64, 128) if rules.trtllm_page128 else (16, 32, 64)):
        s.page = 64
        s.why["page_size"] = "trtllm_mha supports 16/32/64 only, so 64 (server_args.py:2647-2651 @0.5.11)"


def attention_backend_compatibility(s: ArgState) -> None:
    """0.6 _handle_attention_backend_compatibility (srt/server_args.py:2533-2734 @0.5.11)."""
    a, dev, rules = s.a, s.dev, s.rules
    if s.attn is None:
        s.attn = default_attn(s, s.page)
        s.why["attention_backend"] = f"default for SM{dev.sm_major}{dev.sm_minor} (server_args.py:2464-2545 @0.5.11)"
    s.disable_graph = not s.decode_graph_on
    if s.attn == "torch_native":
        s.disable_graph = True
    if s.attn == "trtllm_mha" or a["decode_attention_backend"] == "trtllm_mha" \
            or a["prefill_attention_backend"] == "trtllm_mha":
        _trtllm_mha_checks(s)
    if s.attn == "fa3" and a["kv_cache_dtype"] == "fp8_e5m2":
        s.attn = "triton"
    if s.model.mla is not None:  # flashmla / cutlass_mla / trtllm_mla pages (pipeline/mla.py)
        from planner.engines.sglang.pipeline import mla  # noqa: PLC0415

        mla.page_constraints(s)
    fa4_roles = (s.attn, a["decode_attention_backend"], a["prefill_attention_backend"]) if rules.fa4_page_any \
        else (a["prefill_attention_backend"],)
    fa4_topk_ok = not rules.fa4_page_any or (a["speculative_eagle_topk"] or 0) <= 1
    if "fa4" in fa4_roles and (dev.sm100 or rules.fa4_page_without_sm100) and fa4_topk_ok:  # 0.5.9: no SM100 check (:1917-1921)  # _fa4_page_constraint (overrides.py:1675-1693 @0.5.15)
        s.page = 128
        s.why["page_size"] = "fa4 prefill on SM100 needs page_size 128 (server_args.py:2661-2669 @0.5.11)"
    if dev.hip:  # "AMD platforms backends": aiter's x 0.85 past an 8k context (pipeline/rocm.py)
        from planner.engines.sglang.pipeline import rocm  # noqa: PLC0415

        rocm.aiter_fraction(s)


def linear_attn_backend(s: ArgState) -> None:
    """0.7 _handle_linear_attn_backend (srt/server_args.py:2855-2888 @0.5.11), ReplaySSM and the verify backend."""
    a, dev, rules = s.a, s.dev, s.rules
    lin_decode = a["linear_attn_decode_backend"]
    if lin_decode is None and dev.sm100 and a["mamba_ssm_dtype"] == "bfloat16" and s.spec_user is None \
            and rules.sm100_auto_flashinfer_linear_decode:  # the auto default is new in 0.5.11 (srt/server_args.py:2864-2874 @0.5.11)
        lin_decode = "flashinfer"
    s.lin_decode = lin_decode
    if (lin_decode or a["linear_attn_backend"]) == "flashinfer" and a["mamba_ssm_dtype"] != "bfloat16" \
            and dev.sm_major >= 10:
        raise Rejected("ValueError", "--linear-attn-decode-backend flashinfer on SM100+ requires "
                       f"--mamba-ssm-dtype bfloat16, got {a['mamba_ssm_dtype']!r}",
                       "srt/server_args.py:2876-2888 @0.5.11")
    if rules.replayssm and (a.get("enable_linear_replayssm") or a.get("enable_linear_replayssm_spec")):
        _replayssm_checks(a, lin_decode or a["linear_attn_backend"], s.radix_off, a["mamba_scheduler_strategy"], s.model)
    if rules.verify_backend_check:  # srt/server_args.py:6083-6096 @0.5.17
        verify = a.get("linear_attn_verify_backend")
        if verify is None and (lin_decode or a["linear_attn_backend"]) == "flashinfer":
            verify = "flashinfer"
        if verify == "flashinfer" and a["mamba_ssm_dtype"] != "bfloat16" and dev.sm_major >= 10:
            raise Rejected("ValueError", "--linear-attn-verify-backend flashinfer on SM100+ requires "
                           f"--mamba-ssm-dtype bfloat16, got {a['mamba_ssm_dtype']!r}",
                           "srt/server_args.py:6083-6096 @0.5.17")


def page_size(s: ArgState) -> None:
    """0.8 _handle_page_size (srt/server_args.py:2815-2820 @0.5.11)."""
    if s.page is None:
        s.page = 1
        s.why.setdefault("page_size", "default 1 (server_args.py:2815-2820 @0.5.11)")


def _replayssm_checks(a: dict[str, Any], decode: str, radix_off: bool, strat: str, model: ModelSpec) -> None:
    """ReplaySSM validation (srt/arg_groups/attention_hook.py:342-460 @0.5.19; srt/server_args.py:6172-6245 @0.5.17)."""
    rule = "srt/arg_groups/attention_hook.py:342-460 @0.5.19"
    if model.hybrid != "gdn":
        raise _NotModelled("--enable-linear-replayssm[-spec]: modelled for GDN models (Qwen3.5/3.6, Qwen3-Next) only")
    if a.get("enable_linear_replayssm"):
        if decode not in ("triton", "helion"):
            raise Rejected("ValueError", "--enable-linear-replayssm requires Triton, or Helion for KDA, as the "
                           f"linear-attn decode backend; got --linear-attn-decode-backend={decode!r}.", rule)
        if not radix_off and strat in ("extra_buffer", "extra_buffer_lazy"):
            raise Rejected("ValueError", "--enable-linear-replayssm requires --mamba-radix-cache-strategy no_buffer "
                           "(the default); the extra_buffer ping-pong donation path is not yet supported (follow-up). "
                           f"Got --mamba-radix-cache-strategy={strat!r}.", rule)
        if a.get("linear_replayssm_cache_len", 16) < 1:
            raise Rejected("ValueError", "--linear-replayssm-cache-len must be >= 1, got "
                           f"{a['linear_replayssm_cache_len']}.", rule)
    if a.get("enable_linear_replayssm_spec"):
        topk = a["speculative_eagle_topk"]
        if topk not in (None, 1):
            raise Rejected("ValueError", "--enable-linear-replayssm-spec requires a linear draft chain "
                           "(--speculative-eagle-topk in {None, 1}); the chunked verify kernel uses a strictly-lower "
                           f"causal mask and is invalid for EAGLE tree verify. Got --speculative-eagle-topk={topk!r}.", rule)
        if decode not in ("triton", "flashinfer"):
            raise Rejected("ValueError", "--enable-linear-replayssm-spec requires the triton or flashinfer "
                           f"linear-attn decode backend, got --linear-attn-decode-backend={decode!r}.", rule)
        if a.get("enable_linear_replayssm"):
            raise Rejected("ValueError", "--enable-linear-replayssm-spec and --enable-linear-replayssm are mutually "
                           "exclusive: they share the ring storage but drive it with incompatible cursor protocols "
                           "(per-decode-forward vs per-verify-commit advance).", rule)
        if a["mamba_ssm_dtype"] is None:  # the verify ring folds in float32 (attention_hook.py:439-450 @0.5.19)
            a["mamba_ssm_dtype"] = "float32"


