"""Model-derived ServerArgs: context length, multimodality, and the per-architecture adjustments.

SGLang: ``ModelConfig`` (srt/configs/model_config.py @0.5.11) and ``_handle_model_specific_adjustments``
(srt/server_args.py:2143-2241 @0.5.11); since 0.5.19 ``srt/arg_groups/model_hook.py`` and
``srt/arg_groups/model_overrides/`` (per architecture). The mamba radix-cache strategy each architecture
resolves to is in :mod:`.mamba_hook`.
"""

from __future__ import annotations

from planner.engines.sglang.pipeline.arg_groups.attention_hook import default_attn
from planner.engines.sglang.pipeline.arg_groups.mamba_hook import mamba_radix
from planner.engines.sglang.pipeline.server_args import (
    MM_DISABLED_BY_DEFAULT,
    MULTIMODAL_ARCHS,
    ArgState,
    Rejected,
    _env_bool,
)

_QWEN_HYBRID_ARCHS = ("Qwen3NextForCausalLM", "Qwen3_5MoeForConditionalGeneration", "Qwen3_5ForConditionalGeneration")


def context_length(s: ArgState) -> None:
    """ModelConfig._derive_context_length (srt/configs/model_config.py:452-482 @0.5.11)."""
    a = s.a
    ctx = s.model.derived_context_len
    if a["context_length"] is not None:
        if a["context_length"] > ctx:
            msg = (f"Warning: User-specified context_length ({a['context_length']}) is greater than the derived "
                   f"context_length ({ctx}). This may lead to incorrect model outputs or CUDA errors. Note that "
                   "the derived context_length may differ from max_position_embeddings in the model's config.")
            if _env_bool(s.env, "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN"):
                s.warn.append(msg)
                ctx = a["context_length"]
            else:
                raise Rejected("ValueError", msg + " To allow overriding this maximum, set the env var "
                               "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1",
                               "srt/configs/model_config.py:453-476 @0.5.11")
        else:
            ctx = a["context_length"]
    else:
        s.why["context_len"] = "derived from the model config (max_position_embeddings / rope scaling)"
    s.ctx = ctx


def multimodal(s: ArgState) -> None:
    """ModelConfig.is_multimodal (srt/configs/model_config.py:184-228 @0.5.11)."""
    enable_mm = s.a.get("enable_multimodal")
    if enable_mm is None:
        enable_mm = s.arch not in MM_DISABLED_BY_DEFAULT
    s.is_mm = bool(enable_mm) and (s.arch in MULTIMODAL_ARCHS or "text_config" in s.model.raw)


def backend_inputs(s: ArgState) -> None:
    """The fields _handle_model_specific_adjustments starts from (srt/server_args.py:2143-2241 @0.5.11)."""
    a = s.a
    s.page = a["page_size"]
    s.attn = a["attention_backend"]
    if a["prefill_attention_backend"] is not None and a["prefill_attention_backend"] == a["decode_attention_backend"]:
        s.attn = a["prefill_attention_backend"]
    s.radix_off = bool(a["disable_radix_cache"])
    s.overlap_off = bool(a["disable_overlap_schedule"])
    s.strat = a["mamba_scheduler_strategy"]
    s.extra = s.strat == "extra_buffer" or (s.rules.extra_buffer_lazy and s.strat == "extra_buffer_lazy")


def pipeline_parallel_overlap(s: ArgState) -> None:
    """_handle_pipeline_parallelism (srt/server_args.py:3026, 6118-6126 @0.5.16; arg_groups/pipeline.py:302
    @0.5.23): pp > 1 turns overlap off after the model-specific adjustments and before speculative decoding, so
    a hybrid model's 'auto' mamba strategy was already resolved with overlap on (extra_buffer), and the sizing
    then runs it with overlap off (planner/engines/sglang/pp.py)."""
    if (s.a.get("pp_size") or 1) > 1 and not s.overlap_off:
        s.overlap_off = True  # _pipeline_parallel_overlap_disable (srt/arg_groups/overrides.py:2105-2110 @0.5.16)
        s.why["disable_overlap_schedule"] = "pipeline parallelism turns overlap off (arg_groups/overrides.py:2105-2110 @0.5.16)"


def _nemotron_blackwell_defaults(s: ArgState) -> None:
    """srt/arg_groups/model_overrides/nemotron_h.py:97-123 @0.5.19; the triton assert is gone."""
    a, dev = s.a, s.dev
    topk_u = a["speculative_eagle_topk"]
    if dev.blackwell and s.attn is None and a["prefill_attention_backend"] is None \
            and a["decode_attention_backend"] is None:
        if s.spec_user is not None:
            if dev.sm100 and topk_u in (None, 1):
                s.attn = "trtllm_mha"
                if s.page is None:
                    s.page = 64
                if a["mamba_scheduler_strategy"] == "auto":
                    a["mamba_scheduler_strategy"] = "extra_buffer"
            else:
                s.attn = "triton"
        elif dev.sm100:
            s.attn = "trtllm_mha"
        s.why["attention_backend"] = f"NemotronH Blackwell default (model_overrides/nemotron_h.py:97-123 @0.5.19)"


def model_specific_adjustments(s: ArgState) -> None:
    """0.5 _handle_model_specific_adjustments -> _handle_mamba_radix_cache
    (srt/server_args.py:2143-2241, 2366-2456 @0.5.11)."""
    arch, rules, a = s.arch, s.rules, s.a
    if s.model.mla is not None:  # the DeepSeek family (pipeline/mla.py)
        from planner.engines.sglang.pipeline import mla  # noqa: PLC0415

        mla.model_adjustments(s)
    elif s.model.sliding is not None:  # gpt-oss / Llama 4 (hybrid SWA pool): pipeline/swa.py
        from planner.engines.sglang.pipeline import swa  # noqa: PLC0415

        swa.adjustments(s)
    elif arch == "NemotronHForCausalLM" and rules.nemotron_blackwell_defaults:
        _nemotron_blackwell_defaults(s)
        mamba_radix(s, True, None)
    elif arch == "NemotronHForCausalLM":
        if not rules.nemotron_triton_check_first:
            mamba_radix(s, rules.nemotron_extra_buffer, "flashinfer")  # srt/arg_groups/nemotron_h_hook.py:58-62 @0.5.13
        if s.attn == "triton":
            raise Rejected("AssertionError", "NemotronHForCausalLM does not support triton attention backend,"
                           "as the first layer might not be an attention layer", "srt/server_args.py:2178-2182 @0.5.11")
        if rules.nemotron_triton_check_first:  # 0.5.15-0.5.18 (srt/server_args.py:5719-5726, 5795 @0.5.18)
            mamba_radix(s, rules.nemotron_extra_buffer, "flashinfer")
    elif arch in _QWEN_HYBRID_ARCHS:
        sm100_default = "triton"
        if s.dev.sm100 and rules.qwen_hybrid_sm100_trtllm:  # 0.5.9: always triton (srt/server_args.py:1579-1605 @0.5.9)
            if default_attn(s, s.page) == "trtllm_mha" and not (not s.extra and not s.radix_off and s.spec_user is None):
                sm100_default = "trtllm_mha"
        mamba_radix(s, True, sm100_default)
    elif arch == "FalconH1ForCausalLM":
        mamba_radix(s, False, "triton")
    elif arch in _QWEN3_VL_ARCHS:
        _qwen3vl_hopper_serving(s)
    elif rules.strategy_needs_mamba and not s.radix_off and a["mamba_scheduler_strategy"] in ("extra_buffer",
                                                                                            "extra_buffer_lazy"):
        raise Rejected("ValueError", f"--mamba-radix-cache-strategy {a['mamba_scheduler_strategy']} needs mamba "
                       f"state, got {arch}.", "srt/arg_groups/model_hook.py:947-954 @0.5.21")


_QWEN3_VL_ARCHS = ("Qwen3VLForConditionalGeneration", "Qwen3VLMoeForConditionalGeneration")


def large_hopper_qwen3_vl(s: ArgState) -> bool:
    """large_hopper_qwen3_vl_model_type (srt/arg_groups/model_overrides/qwen3_vl.py:20-31 @0.5.22): an SM90
    GPU of at least 60 GiB and a multimodal Qwen3-VL (model_type qwen3_vl / qwen3_vl_moe)."""
    return bool(s.dev.sm90 and s.dev.total_mib >= 60 * 1024 and s.is_mm
                and str(s.model.raw.get("model_type", "")) in ("qwen3_vl", "qwen3_vl_moe"))


def _qwen3vl_hopper_serving(s: ArgState) -> None:
    """0.5.20+: Qwen3-VL on a large Hopper GPU (SM90, >= 60 GiB) gets its profiled serving path, which moves
    the multimodal KV reservation: no embedding cache (SGLANG_VLM_CACHE_SIZE_MB 0 unless set), CUDA IPC
    feature transport when no cache is retained, and a 3 GiB feature pool from 400 running requests
    (srt/arg_groups/model_overrides/qwen3_vl.py:80-125 @0.5.21, :20-31 for the GPU test). The envs it sets are
    set here on the launch's env copy, which mm_reserve_gib reads, as SGLang's reservation reads them."""
    version = tuple(int(x) for x in s.rules.version.split(".")[:3])
    if version < (0, 5, 20) or not large_hopper_qwen3_vl(s):
        return
    env = dict(s.env)
    env.setdefault("SGLANG_VLM_CACHE_SIZE_MB", "0")
    try:
        vlm_mb = int(env["SGLANG_VLM_CACHE_SIZE_MB"])
    except ValueError:
        return  # SGLang's EnvInt rejects it later, in the reservation (mm_reserve_gib)
    retention = (s.raw.get("mm_preprocess_cache_size_mb") or 0) > 0 or vlm_mb > 0
    transport = s.raw.get("mm_feature_transport")
    if transport is None and not retention:  # one node (the planner sizes one node: nnodes is not read)
        transport = "cuda_ipc"
    mrr = s.a.get("max_running_requests")
    if ("SGLANG_MM_FEATURE_CACHE_MB" not in env and mrr is not None and mrr >= 400 and not retention
            and transport == "cuda_ipc"):
        env["SGLANG_MM_FEATURE_CACHE_MB"] = str(3 * 1024)
    s.env = env
    s.raw = {**s.raw, "mm_feature_transport": transport}
    s.why["mm_feature_transport"] = "Qwen3-VL large-Hopper serving overrides (model_overrides/qwen3_vl.py @0.5.21)"


def language_model_only(s: ArgState) -> None:
    """_handle_language_model_only (srt/server_args.py:7657-7686 @0.5.18)."""
    if s.rules.language_model_only_check and s.a.get("language_model_only"):
        raise Rejected("ValueError", f"--language-model-only does not support {[s.arch]}. Supported: "
                       "['MuseGlimmerForConditionalGeneration'].", "srt/server_args.py:7657-7686 @0.5.18")
