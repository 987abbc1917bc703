"""ServerArgs resolution, by concern, in SGLang's order: ``ServerArgs.__post_init__`` + ``check_server_args``.

Only the steps that touch memory sizing or reject a configuration are mirrored (srt/server_args.py:782-900
@0.5.11). Since 0.5.19 SGLang keeps these steps in ``srt/arg_groups/*_hook.py``; the modules here are named
after those files, so a rule is found by the file SGLang keeps it in:

============================  ===============================================================
``model_hook.py``             context length, multimodality, per-architecture adjustments
``cuda_graph_hook.py``        piecewise / prefill CUDA graph, the 0.5.14+ CudaGraphConfig
``memory_hook.py``            chunked prefill and graph batch-size tiers, mem_fraction_static
``mamba_hook.py``             the mamba radix-cache strategy (no_buffer / extra_buffer) and its checks
``attention_hook.py``         attention and linear-attention backends, the page size they imply, ReplaySSM
``speculative_hook.py``       speculative algorithm, steps / topk / draft tokens, overlap schedule
``kv_cache_hook.py``          SWA ratio, unified memory pool / page-major layout
``validation.py``             environment variables the flags set, ``check_server_args``
============================  ===============================================================

Each hook is a function of the :class:`ArgState` the previous hooks left: it reads their fields and sets
its own (or raises :class:`Rejected` with SGLang's message and line).
"""

from __future__ import annotations

from typing import Any

from planner.catalog.spec import ModelSpec
from planner.engines.sglang.pipeline.arg_groups import (
    attention_hook,
    cuda_graph_hook,
    kv_cache_hook,
    mamba_hook,
    memory_hook,
    model_hook,
    moe_hook,
    pd_disaggregation_hook,
    speculative_hook,
    validation,
)
from planner.engines.sglang.pipeline import disaggregation, dp_attention
from planner.engines.sglang.pipeline.post_capture import activation_reserve_mib
from planner.engines.sglang.pipeline.server_args import ArgState, Device, ResolvedArgs, normalize
from planner.engines.sglang.rules import RULES, Rules

# ServerArgs.__post_init__'s order (srt/server_args.py:782-900 @0.5.11); the numbers are its step numbers
HOOKS = (
    model_hook.context_length,  # ModelConfig
    model_hook.multimodal,
    mamba_hook.missing_default_strategy,  # 0.1
    pd_disaggregation_hook.pd_hook,  # _handle_pd_disaggregation (srt/server_args.py:2938 @0.5.16, arg_groups/pipeline.py:147 @0.5.23)
    cuda_graph_hook.piecewise_cuda_graph,  # 0.2
    memory_hook.gpu_memory_defaults,  # 0.3 / 0.4
    cuda_graph_hook.graph_backends,
    memory_hook.mem_fraction_static,
    memory_hook.dp_attention_chunked_prefill,
    moe_hook.a2a_moe,  # _handle_a2a_moe's DeepEP part, after the fraction (pipeline/expert_parallel.py)
    model_hook.backend_inputs,  # 0.5
    model_hook.model_specific_adjustments,
    attention_hook.attention_backend_compatibility,  # 0.6
    mamba_hook.mamba_backend,
    attention_hook.linear_attn_backend,  # 0.7
    attention_hook.page_size,  # 0.8
    model_hook.pipeline_parallel_overlap,  # _handle_pipeline_parallelism, before speculative decoding
    speculative_hook.speculative_decoding,  # 0.9
    mamba_hook.mamba_backend_tree,  # raised at the verify graphs' capture: needs the resolved topk
    mamba_hook.int8_checkpoint,
    model_hook.language_model_only,
    validation.environment_variables,  # 0.10
    kv_cache_hook.cache_compatibility,
    validation.check_server_args,
)


def resolve(raw: dict[str, Any], model: ModelSpec, dev: Device, env: dict[str, str],
            rules: Rules = RULES["0.5.11"], draft: ModelSpec | None = None) -> ResolvedArgs:
    """Run the memory-relevant parts of ``ServerArgs.__post_init__`` and ``check_server_args``."""
    s = ArgState(raw=raw, a=normalize(raw, rules), model=model, dev=dev, env=env, rules=rules, draft=draft)
    for hook in HOOKS:
        hook(s)
    return resolved(s)


# the hooks that run before mem_fraction_static is set, and that one: no later hook sets it
_UP_TO_FRACTION = HOOKS[:HOOKS.index(memory_hook.mem_fraction_static) + 1]


def resolve_fraction(raw: dict[str, Any], model: ModelSpec, dev: Device, env: dict[str, str],
                     rules: Rules = RULES["0.5.11"], draft: ModelSpec | None = None) -> float:
    """The mem_fraction_static :func:`resolve` gives, from the hooks up to the one that sets it (the only one
    that does); a later hook may still refuse the launch, which this does not tell (a Rejected it raises is
    one :func:`resolve` raises too). For an upper bound on the fraction, where a refusal counts for nothing."""
    s = ArgState(raw=raw, a=normalize(raw, rules), model=model, dev=dev, env=env, rules=rules, draft=draft)
    for hook in _UP_TO_FRACTION:
        hook(s)
    return s.mfs


def resolved(s: ArgState) -> ResolvedArgs:
    """The ServerArgs fields the sizing reads, once every hook has run."""
    a = s.a
    _post_capture_unchanged(s)
    args = ResolvedArgs(
        raw=s.raw, tp_size=s.tp, attn_dp_size=dp_attention.width(s.raw), mem_fraction_static=s.mfs, mem_fraction_static_user=s.mfs_user,
        chunked_prefill_size=s.cps, max_prefill_tokens=a["max_prefill_tokens"], cuda_graph_max_bs=s.gmax,
        cuda_graph_bs=s.graph_bs, disable_cuda_graph=s.disable_graph, page_size=s.page, attention_backend=s.attn,
        mamba_scheduler_strategy=a["mamba_scheduler_strategy"], disable_radix_cache=s.radix_off,
        disable_overlap_schedule=s.overlap_off, speculative_algorithm=s.algo, speculative_num_steps=s.steps,
        speculative_eagle_topk=s.topk, speculative_num_draft_tokens=s.ndraft,
        speculative_draft_model_path=a["speculative_draft_model_path"], max_running_requests=s.mrr,
        max_running_requests_user=s.mrr_user, max_mamba_cache_size=a["max_mamba_cache_size"],
        mamba_full_memory_ratio=a["mamba_full_memory_ratio"], mamba_ssm_dtype_flag=a["mamba_ssm_dtype"],
        max_total_tokens=a["max_total_tokens"], kv_cache_dtype=a["kv_cache_dtype"], context_len=s.ctx,
        is_multimodal=s.is_mm, disable_piecewise_cuda_graph=s.pcg_off, piecewise_cuda_graph_tokens=s.pcg_tokens,
        env=s.env, rules=s.rules, defaulted=s.why, warnings=s.warn, unified_memory=s.unified,
        dflash_draft_backend=s.dflash_draft_backend, prefill_graph_on=bool(s.prefill_graph_on),
        gpu_sm=(s.dev.sm_major, s.dev.sm_minor), post_capture_kv=s.post_capture_kv,
        post_capture_reserve_mib=activation_reserve_mib(s.cps, a["max_prefill_tokens"], s.tp, s.dev.total_mib)
        if s.post_capture_kv else 0.0,
        disaggregation_mode=s.pd_mode, decode_extra_slots=s.pd_extra, hip=s.dev.hip,
    )
    args.warnings.extend(disaggregation.notes(args))
    return args


__all__ = ["HOOKS", "resolve", "resolve_fraction", "resolved"]


def _post_capture_unchanged(s: ArgState) -> None:
    """SGLang asks post_capture_kv_sizing_planned twice: for the fraction, then at runtime on the final ServerArgs
    (model_runner_components/kv_pool_runtime.py:34-48 @0.5.23). Where a later hook changes the answer the fraction
    and the runtime disagree, which the planner does not model: refused by name."""
    from planner.engines.sglang.pipeline.post_capture import ENV, gate  # noqa: PLC0415
    from planner.engines.sglang.pipeline.server_args import _NotModelled  # noqa: PLC0415

    if not s.post_capture_kv:
        return
    try:
        again, why = gate(s)
    except ValueError as exc:
        raise _NotModelled(str(exc)) from None
    if not again:
        raise _NotModelled(f"--env {ENV}=1: its gate holds when the fraction is set but not at runtime ({why}); "
                           "that mix is not modelled by this planner yet")
