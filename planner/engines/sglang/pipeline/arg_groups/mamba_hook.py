"""The mamba radix-cache strategy and the mamba checks of ServerArgs.

SGLang: ``_handle_missing_default_values`` and ``_handle_mamba_radix_cache`` (srt/server_args.py:1060-1082,
2366-2456 @0.5.11); ``_mamba_radix_cache_resolution`` (srt/arg_groups/overrides.py:1159-1200 @0.5.16);
since 0.5.19 ``srt/arg_groups/mamba_hook.py``. Which architecture calls :func:`mamba_radix` with which
defaults is in :mod:`.model_hook`.
"""

from __future__ import annotations

from planner.engines.sglang.pipeline.server_args import (
    FLA_CHUNK_SIZE,
    MAMBA_EXTRA_BUFFER_ARCHS_V0_5_16,
    ArgState,
    Rejected,
    mamba_chunk_size,
)


def missing_default_strategy(s: ArgState) -> None:
    """0.1 _handle_missing_default_values (srt/server_args.py:1060-1082 @0.5.11): before 0.5.14 'auto' is no_buffer."""
    if s.a["mamba_scheduler_strategy"] == "auto" and not s.rules.auto_extra_buffer:
        s.a["mamba_scheduler_strategy"] = "no_buffer"
        s.why["mamba_scheduler_strategy"] = "'auto' means no_buffer in 0.5.11 (server_args.py:1079-1082 @0.5.11)"


def mamba_radix_v0_5_16(s: ArgState) -> None:
    """_mamba_radix_cache_resolution + validations (srt/arg_groups/overrides.py:1159-1200,
    srt/server_args.py:4822-4864 @0.5.16)."""
    a, arch, page = s.a, s.arch, s.page
    strategy = a["mamba_scheduler_strategy"]
    if s.radix_off:
        return
    supports = arch in MAMBA_EXTRA_BUFFER_ARCHS_V0_5_16 and a["linear_attn_backend"] == "triton"
    if strategy == "auto":
        if (not s.overlap_off or (page is not None and page > 1)) and supports:
            strategy = "extra_buffer"
        else:
            strategy = "no_buffer"
            s.overlap_off = True
            s.why["disable_overlap_schedule"] = "auto resolved to no_buffer, which turns overlap off (overrides.py:1190-1199 @0.5.16)"
        s.why["mamba_scheduler_strategy"] = (f"'auto' -> {strategy}: overlap {'off' if s.overlap_off else 'on'}, "
                                             f"page {page} (overrides.py:1190-1199 @0.5.16)")
    a["mamba_scheduler_strategy"] = strategy
    rule = "srt/server_args.py:4822-4864 @0.5.16"
    if strategy in ("extra_buffer", "extra_buffer_lazy"):
        if not supports:
            raise Rejected("AssertionError", f"extra_buffer is not supported for {arch}; use no_buffer.", rule)
        d = a["speculative_num_draft_tokens"]
        if d is not None:
            if strategy == "extra_buffer_lazy" and not s.rules.lazy_with_spec:  # allowed from 0.5.17
                raise Rejected("AssertionError", "extra_buffer_lazy unsupported with spec.", rule)
            if not a["mamba_track_interval"] >= d:
                raise Rejected("AssertionError", "", rule)
        if page is not None and a["mamba_track_interval"] % page != 0:
            raise Rejected("AssertionError", "", rule)
    else:
        if page not in (1, None):
            raise Rejected("AssertionError", "no_buffer only supports page_size=1.", rule)
        if not s.overlap_off:
            raise Rejected("AssertionError", "no_buffer do not support overlap schedule. Try to set "
                           "disable_overlap_schedule=True.", rule)
        if s.attn == "trtllm_mha":
            raise Rejected("AssertionError", "no_buffer do not support trtllm_mha attention backend.", rule)


def mamba_radix(s: ArgState, support_extra: bool, sm100_default: str | None) -> None:
    """_handle_mamba_radix_cache (srt/server_args.py:2366-2456 @0.5.11), or 0.5.14+'s resolution."""
    sm100_set = s.dev.sm100 and s.attn is None and sm100_default is not None
    if sm100_set:
        s.attn = sm100_default
    if s.rules.auto_extra_buffer:
        if sm100_set and s.arch in ("Qwen3NextForCausalLM", "Qwen3_5MoeForConditionalGeneration",
                                    "Qwen3_5ForConditionalGeneration"):
            # _qwen3_5_hybrid_overrides sets the page size too, over the user's
            # (srt/arg_groups/overrides.py:937-960 @0.5.16)
            s.page = 64 if sm100_default == "trtllm_mha" else 1
            s.why["page_size"] = f"SM100 {sm100_default} default for {s.arch} (overrides.py:937-960 @0.5.16)"
        mamba_radix_v0_5_16(s)
        return
    if not support_extra and s.extra:
        raise Rejected("AssertionError", f"mamba extra_buffer is not supported for {s.arch} model",
                       "srt/server_args.py:2389-2391 @0.5.11")
    if s.rules.flashinfer_gdn_no_buffer_error and s.a["linear_attn_decode_backend"] == "flashinfer" and s.strat == "no_buffer":
        raise Rejected("ValueError", "FlashInfer GDN decode (--linear-attn-decode-backend flashinfer) is not "
                       "compatible with --mamba-scheduler-strategy no_buffer. Please use "
                       "--mamba-scheduler-strategy extra_buffer instead. See "
                       "https://github.com/sgl-project/sglang/issues/20791", "srt/server_args.py:2152-2163 @0.5.10")
    if s.extra:
        _extra_buffer_checks(s)
    elif not s.radix_off:  # no_buffer
        _no_buffer_with_radix(s)


def _extra_buffer_checks(s: ArgState) -> None:
    """extra_buffer's constraints (srt/server_args.py:2393-2418 @0.5.11, :2697-2711, 7389-7400 @0.5.13)."""
    a, rules, page = s.a, s.rules, s.page
    if s.radix_off and rules.extra_buffer_needs_radix:  # 0.5.9 accepts it (srt/server_args.py:1728-1745 @0.5.9)
        raise Rejected("ValueError",
                       "mamba extra_buffer is not compatible with --disable-radix-cache"
                       + ("." if rules.radix_off_message_period else "") + " "
                       "Overlap scheduling is already supported with no_buffer + disable_radix_cache. "
                       "Please use --mamba-scheduler-strategy no_buffer instead.",
                       "srt/server_args.py:2393-2399 @0.5.11, :2697-2702 @0.5.13")
    d = a["speculative_num_draft_tokens"]
    interval = a["mamba_track_interval"]
    if d is not None and s.strat == "extra_buffer_lazy":
        raise Rejected("AssertionError", "extra_buffer_lazy is not yet supported with speculative decoding. "
                       "Use --mamba-scheduler-strategy extra_buffer instead.", "srt/server_args.py:2707-2711 @0.5.13")
    if d is not None and not interval >= d:
        raise Rejected("AssertionError", f"mamba_track_interval {interval} must be greater than or "
                       f"equal to speculative_num_draft_tokens {d}", "srt/server_args.py:2404-2407 @0.5.11")
    if page is not None:
        if interval % page != 0:
            raise Rejected("AssertionError", f"mamba_track_interval {interval} must be divisible by "
                           f"page_size {page}", "srt/server_args.py:2409-2412 @0.5.11")
        if rules.chunk_size_from_model:
            # mamba_cache_chunk_size (srt/server_args.py:7389-7400 @0.5.13)
            chunk = mamba_chunk_size(s.model)
            if max(chunk, page) % min(chunk, page) != 0:
                raise Rejected("AssertionError", "For SSM models, either chunk_size or page_size must be "
                               f"divisible by the other, got chunk_size={chunk}, self.page_size={page}",
                               "srt/server_args.py:7389-7400 @0.5.13")
        elif max(FLA_CHUNK_SIZE, page) % min(FLA_CHUNK_SIZE, page) != 0:
            raise Rejected("AssertionError", "For SSM models with extra buffer, either FLA_CHUNK_SIZE or "
                           f"page_size must be divisible by the other, got FLA_CHUNK_SIZE={FLA_CHUNK_SIZE}, "
                           f"self.page_size={page}", "srt/server_args.py:2413-2418 @0.5.11")


def _no_buffer_with_radix(s: ArgState) -> None:
    """no_buffer with the radix cache on (srt/server_args.py:2420-2456 @0.5.11, :1760-1764 @0.5.9)."""
    rules, arch = s.rules, s.arch
    if s.page is not None and s.page != 1 and not rules.no_buffer_page1_asserted_late:  # 0.5.10 keeps it (asserted at scheduler start)
        s.warn.append(f"{arch} with radix cache requires page_size=1 in no_buffer mode; page_size set to 1")
        s.page = 1
        s.why["page_size"] = "no_buffer + radix cache forces page_size=1 (server_args.py:2420-2426 @0.5.11)"
    if s.spec_user is None:
        s.overlap_off = True
        s.why["disable_overlap_schedule"] = ("mamba no_buffer + radix cache disables the overlap "
                                             "schedule (server_args.py:2427-2432 @0.5.11)")
        if s.attn == "trtllm_mha":
            s.radix_off = True
            s.overlap_off = False
            s.why["disable_radix_cache"] = "trtllm_mha cannot use page_size=1 (server_args.py:2433-2440 @0.5.11)"
    elif rules.spec_no_buffer_disables_radix:  # srt/server_args.py:1760-1764 @0.5.9
        s.warn.append(f"Disabling radix cache since speculative decoding for {arch} is not supported with "
                      "radix cache yet.")
        s.radix_off = True
        s.why["disable_radix_cache"] = ("speculative decoding with no_buffer turns the radix cache off "
                                        "(server_args.py:1760-1764 @0.5.9)")
    else:
        raise Rejected("ValueError",
                       f"Speculative decoding for {arch} is not compatible with radix cache when using "
                       "--mamba-scheduler-strategy no_buffer.To use radix cache with speculative decoding, "
                       "please use --mamba-scheduler-strategy extra_buffer and set SGLANG_ENABLE_SPEC_V2=1.",
                       "srt/server_args.py:2452-2456 @0.5.11")


def mamba_backend(s: ArgState) -> None:
    """_handle_mamba_backend (srt/server_args.py:5951-5959 @0.5.17), for every model."""
    if s.rules.max_states_per_path_check:
        mmsp = s.a.get("mamba_max_states_per_path", -1)
        if mmsp == 0 or mmsp < -1:
            raise Rejected("ValueError", "--mamba-max-states-per-path must be -1 (unlimited) or a positive "
                           f"integer, got {mmsp}.", "srt/server_args.py:5955-5959 @0.5.17")


def mamba_backend_tree(s: ArgState) -> None:
    """--mamba-backend flashinfer on a Mamba2 model with a speculative tree (EAGLE / NGRAM topk > 1): the verify
    metadata passes retrieve_parent_token (layers/attention/hybrid_linear_attn_backend.py:487-497 @0.5.11, :728-735
    @0.5.23; in eager verify :189-196 @0.5.11), which FlashInfer's selective-state-update raises on
    (layers/attention/mamba/ops/ssu_dispatch.py:135-139 @0.5.11, sglang/kernels/ops/mamba/triton_ops/
    ssu_dispatch.py:151-155 @0.5.23): at the target-verify CUDA-graph capture, or without graphs at the first
    verify. GDN models do not use this kernel."""
    if s.model.hybrid != "mamba2" or s.a.get("mamba_backend") != "flashinfer" or s.algo is None:
        return
    if (s.topk or 0) > 1:
        raise Rejected("ValueError", "FlashInfer backend does not support retrieve_parent_token. Use --mamba-backend "
                       "triton for EAGLE tree attention.",
                       "srt/layers/attention/mamba/ops/ssu_dispatch.py:135-139 @0.5.11, "
                       "sglang/kernels/ops/mamba/triton_ops/ssu_dispatch.py:151-155 @0.5.23, on the verify metadata "
                       "of hybrid_linear_attn_backend.py:487-497 @0.5.11, :728-735 @0.5.23",
                       stage="cuda_graph_capture" if s.decode_graph_on and not s.a.get("disable_cuda_graph")
                       else "target_verify")


def int8_checkpoint(s: ArgState) -> None:
    """srt/arg_groups/mamba_hook.py:78-96 @0.5.19."""
    a = s.a
    if a.get("enable_int8_mamba_checkpoint") and a.get("radix_cache_backend") is not None:
        raise Rejected("ValueError", "--enable-int8-mamba-checkpoint only supports the built-in mamba radix cache; "
                       f"--radix-cache-backend={a['radix_cache_backend']!r} is not int8-aware. Omit "
                       "--radix-cache-backend.", "srt/arg_groups/mamba_hook.py:78-96 @0.5.19")
