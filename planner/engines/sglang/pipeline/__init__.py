"""SGLang's startup sizing pipeline, every release: flags -> ServerArgs -> model config -> profile -> pools -> checks.

Stages, in the engine's order (names follow the oracle's ``stage`` field): ``server_args`` (the release's
argparse, then ``__post_init__`` and ``check_server_args``: :mod:`.arg_groups`) -> ``model_config`` (state
shapes, TP divisibility: :mod:`.mamba`) -> ``load_model`` -> ``resolve_memory_pool_config`` (profiling: M, N,
R: :mod:`.memory_profile`, SGLang's kv_cache_configurator.py / pool_configurator.py) -> ``init_pools``
(:mod:`.pools`) -> the post-pool checks (tp_worker, attention backend, ``cuda_graph_batch_sizes``:
:mod:`.cuda_graph`). After that, what SGLang does not budget for (draft weights, attention workspace, CUDA
graphs, activations) is estimated against what is left, for the out-of-memory verdict (:mod:`.headroom`).
The code is written against 0.5.11 (its citations say so); what later releases change is a switch of
:mod:`planner.engines.sglang.rules`. The interface to the core is :mod:`planner.engines.interface`.
"""

from __future__ import annotations

from typing import Protocol

from planner.catalog.spec import ModelSpec
from planner.engines.interface import OUTCOME_FAILED, OUTCOME_REJECTED, EngineInput, EngineResult
from planner.engines.sglang.cli_flags import SGLangArgError, parse_flags
from planner.engines.sglang.memo import per_object
from planner.engines.sglang.pipeline.arg_groups import resolve
from planner.engines.sglang.pipeline.dflash import check_target_layer_ids, unrecorded_draft_context
from planner.engines.sglang.pipeline.cuda_graph import batch_sizes_to_capture, capture_mul
from planner.engines.sglang.pipeline.headroom import estimate_needs
from planner.engines.sglang.pipeline.mamba import MambaState, mamba_state
from planner.engines.sglang.pipeline.memory_profile import (
    Profile,
    available_gib,
    kv_dtype_name,
    profile,
)
from planner.engines.sglang.pipeline.pools import Pools, allocate, geometries, unified_pool_bytes
from planner.engines.sglang.pipeline.post_capture import refusal as post_capture_refusal
from planner.engines.sglang.pipeline.quant_method import W4AFp8Dispatch, check_quant_method
from planner.engines.sglang.pipeline.server_args import (
    Device,
    Rejected,
    ResolvedArgs,
    _env_bool,
    _NotModelled,
    check_scope,
    check_values,
)
from planner.errors import BadInput
from planner.hardware.amdsmi import ROCM_NOT_MODELLED
from planner.hardware.profiles import GpuProfile

VERSION = "0.5.11"
# layers/attention/attention_registry.py:233-238 @0.5.11
BLACKWELL_GDN_BACKENDS = ("triton", "trtllm_mha", "fa4", "flashinfer")

__all__ = ["VERSION", "run", "Device", "Rejected", "ResolvedArgs", "MambaState", "Profile", "Pools",
           "available_gib", "kv_dtype_name"]


class _OnGpu(Protocol):
    gpu: GpuProfile


def device_for(job: _OnGpu) -> Device:
    """What SGLang asks the device about, from the GPU profile of a job (or a plan); built once per profile
    (both are frozen)."""
    return _device(job.gpu)


@per_object
def _device(gpu: GpuProfile) -> Device:
    if gpu.vendor == "amd":  # ROCm: modelled for the gfx targets pipeline/rocm.py checked, refused for the rest
        from planner.engines.sglang.pipeline.rocm import GFX_CAPABILITY  # noqa: PLC0415

        if gpu.gfx_arch not in GFX_CAPABILITY:
            raise BadInput(f"--gpu {gpu.id}: {ROCM_NOT_MODELLED} for {gpu.gfx_arch or 'an unknown gfx target'}; "
                           f"modelled for {', '.join(GFX_CAPABILITY)}")
        major, minor = GFX_CAPABILITY[gpu.gfx_arch]
        # rocminfo's Pool 1 size (get_amdgpu_memory_capacity, srt/utils/common.py:1522-1552 @0.5.11)
        return Device(total_mib=float(gpu.capacity_mib), sm_major=major, sm_minor=minor, hip=True)
    if gpu.compute_capability is None:
        raise BadInput(f"--gpu {gpu.id}: no compute capability in its profile; pick an NVIDIA GPU profile")
    major, minor = (int(x) for x in gpu.compute_capability.split("."))
    return Device(total_mib=float(gpu.capacity_mib), sm_major=major, sm_minor=minor)


class _Stop(Exception):
    """A stage raised: SGLang's exception and whether it refused the flags or failed starting up."""

    def __init__(self, exc: Rejected, outcome: str):
        super().__init__(exc.message)
        self.exc, self.outcome = exc, outcome


def _reject(res: EngineResult, exc: Rejected, outcome: str) -> None:
    res.outcome = outcome
    res.stage = exc.stage
    res.error_type = exc.error_type
    res.error_message = exc.message
    res.rule = exc.rule
    res.verdict = "rejected"


def run(job: EngineInput, draft: ModelSpec | None = None) -> EngineResult:
    """One launch through every stage: resolved args, profile, pools, needs, verdict."""
    res = EngineResult()
    try:
        args = res.args = server_args(job, draft)
        _dflash_target_layers(job, args, draft, res)
        state = res.state = model_config(job, args, draft)
        standalone_draft_config(args, draft)  # --- STANDALONE ---
        quant_config(job, args, res)
        load_model(job)
        _dspark_draft_config_check(args, draft)
        prof = res.profile = memory_pool_config(job, args, state, draft, res)
        init_pools(job, args, state, prof, draft, res)
        _checks_after_pools(args, job.model.spec, prof, device_for(job), res)
    except _Stop as stop:
        _reject(res, stop.exc, stop.outcome)
        return res
    needs_and_verdict(job, args, prof, draft, res)
    return res


def server_args(job: EngineInput, draft: ModelSpec | None = None) -> ResolvedArgs:
    """The release's argparse, the planner's scope, then ServerArgs resolution (:mod:`.arg_groups`)."""
    model = job.model.spec
    argv = ["--model-path", job.model.path or job.model.catalog_id or model.name, *job.flags]
    rules = job.rules
    try:
        raw = parse_flags(rules.flags, argv)
    except SGLangArgError as exc:
        raise _Stop(Rejected("SystemExit", str(exc), "argparse (srt/server_args.py:7276-7288 @0.5.11)"),
                    OUTCOME_REJECTED) from None
    scope_raw = {**raw, "pp_size": 1} if job.pp_stage is not None else raw  # one rank (planner/engines/sglang/pp.py)
    problem = check_scope(scope_raw, rules) or check_values(raw) or post_capture_refusal(job.env, rules.version)
    if problem:
        raise BadInput(problem)
    dev = device_for(job)
    if dev.hip:  # the ROCm scope: releases, families and flags checked against SGLang's ROCm code (pipeline/rocm.py)
        from planner.engines.sglang.pipeline.rocm import refusal as rocm_refusal  # noqa: PLC0415

        problem = rocm_refusal(raw, model, rules.version, job.env, job.gpu.id)
        if problem:
            raise BadInput(problem)
    try:
        return resolve(raw, model, dev, job.env, rules, draft)
    except Rejected as exc:
        raise _Stop(exc, OUTCOME_REJECTED) from None
    except _NotModelled as exc:
        raise BadInput(str(exc)) from None


def model_config(job: EngineInput, args: ResolvedArgs, draft: ModelSpec | None = None) -> MambaState | None:
    """model_config: state shapes, TP divisibility of attention heads, the draft's context length."""
    try:
        # the mamba heads are split over the attention-TP group (configs/qwen3_next.py:291-301 @0.5.16)
        state = mamba_state(job.model.spec, args.tp_size // args.attn_dp_size, args.env)
        if state is not None and job.pp_stage is not None and len(job.pp_stage) > 3 and job.pp_stage[3]:
            from dataclasses import replace  # noqa: PLC0415

            # one pp rank: its own layers' pools, the model's per-request state, the charged share (pp.py)
            state = replace(state, total_layers=job.pp_stage[3][0], budget_layers=job.pp_stage[3][1])
        _check_heads(job.model.spec, args.tp_size)
        if draft is not None:
            _draft_context(draft, args)
    except Rejected as exc:
        raise _Stop(exc, OUTCOME_FAILED) from None
    return state


def _dflash_target_layers(job: EngineInput, args: ResolvedArgs, draft: ModelSpec | None, res: EngineResult) -> None:
    """DFLASH: the draft's target_layer_ids must name target layers (ModelRunner.__init__, after
    init_torch_distributed measured the free memory: only that is known when it raises)."""
    if args.speculative_algorithm == "DFLASH" and draft is not None:
        try:
            check_target_layer_ids(job.model.spec, draft)
        except Rejected as exc:
            if args.rules.dflash_layer_check_after_pre_load:
                res.profile = Profile(available_gib(job.free_before_bytes, args.tp_size), None, None, None, None,
                                      None, None, None)
            raise _Stop(exc, OUTCOME_FAILED) from None
def standalone_draft_config(args: ResolvedArgs, draft: ModelSpec | None) -> None:
    """The STANDALONE draft's ModelConfig, built with the target's context length (standalone_worker_v2.py:93
    @0.5.23, :157-160 @0.5.16): a draft whose derived context is shorter raises in _derive_context_length
    (srt/configs/model_config.py:1291-1316 @0.5.23, :729-760 @0.5.16) unless the override env is set."""
    from planner.engines.sglang.pipeline.server_args import _env_bool  # noqa: PLC0415

    if args.speculative_algorithm != "STANDALONE" or draft is None:
        return
    # 0.5.17: the draft's ModelConfig sees only --context-length (standalone_worker_v2.py:70-78 @0.5.17)
    ctx = args.context_len if args.rules.draft_context_is_targets else args.raw.get("context_length")
    if ctx is None or ctx <= draft.derived_context_len:
        return
    if _env_bool(args.env, "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN"):
        return
    raise _Stop(Rejected(
        "ValueError", f"Warning: Target model's context_length ({ctx}) is greater than the derived "
        f"context_length ({draft.derived_context_len}). This may lead to incorrect model outputs or CUDA errors. Note "
        "that the derived context_length may differ from max_position_embeddings in the model's config. To allow "
        "overriding this maximum, set the env var SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1",
        "srt/configs/model_config.py:1291-1316 @0.5.23 (the draft's ModelConfig)", stage="model_config"),
        OUTCOME_FAILED)


def _draft_context(draft: ModelSpec, args: ResolvedArgs) -> None:
    """The draft's ModelConfig gets the target's context length; a draft (an EAGLE3 head) derived shorter
    refuses it unless SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN is set (ModelConfig._derive_context_length,
    srt/configs/model_config.py:452-476 @0.5.11, :729-754 @0.5.16, the same words 0.5.9-0.5.23)."""
    if args.speculative_algorithm == "STANDALONE":
        return  # its own rule, with 0.5.17's exception (standalone_draft_config)
    derived = draft.derived_context_len
    # 0.5.17: only the DFLASH / DSPARK draft gets the target's (srt/speculative/draft_worker_common.py:119 @0.5.17);
    # the EAGLE worker passes none, so the draft's ModelConfig sees --context-length
    # (srt/speculative/eagle_worker_v2.py:165-172, srt/configs/model_config.py:553-557 @0.5.17)
    ctx = args.context_len if args.rules.draft_context_is_targets or args.speculative_algorithm in ("DFLASH", "DSPARK") \
        else args.raw.get("context_length")
    if ctx is None or ctx <= derived or _env_bool(args.env, "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN"):
        return
    published = unrecorded_draft_context(draft)  # a reconstructed catalog config that does not record the key
    if published is not None:
        note = (f"planner assumption: the catalog's {draft.name} config (reconstructed) records no "
                f"max_position_embeddings: taken as the published head's {published[0]:,} ({published[1]}); a "
                f"config.json without it gets {derived:,}, and SGLang refuses a longer target context "
                "(srt/configs/model_config.py:1291-1316 @0.5.23)")
        if note not in args.warnings:  # the resolved args may be shared by plans of one launch
            args.warnings.append(note)
        if ctx <= published[0]:
            return
        derived = published[0]
    raise Rejected("ValueError", f"Warning: Target model's context_length ({ctx}) is greater than the "
                   f"derived context_length ({derived}). This may lead to incorrect model outputs or CUDA errors. "
                   "Note that the derived context_length may differ from max_position_embeddings in the model's "
                   "config. To allow overriding this maximum, set the env var "
                   "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1", "srt/configs/model_config.py:452-476 @0.5.11",
                   stage="model_config")


def quant_config(job: EngineInput, args: ResolvedArgs, res: EngineResult) -> None:
    """load_model's quant config for a ModelOpt config.json checkpoint (:mod:`.quant_method`): SGLang's ValueError,
    or a refusal where the release serves it with a method the planner does not size. load_model has read the
    free memory by then (``before_avail_memory``, srt/model_executor/model_runner.py:895-897 @0.5.9)."""
    _measured_method_capability(job)
    try:
        check_quant_method(args, job.model.spec, device_for(job).sm100)
    except W4AFp8Dispatch as exc:  # measured weights: W4AFp8Config's pools are modelled (bf16 KV), on SM >= 9.0
        if job.weights_per_gpu_bytes is not None or args.speculative_algorithm or device_for(job).sm_major < 9:
            raise BadInput(str(exc)) from None  # (its get_min_capability 90: srt/layers/quantization/w4afp8.py:68-70)
    except Rejected as exc:
        res.profile = Profile(available_gib(job.free_before_bytes, args.tp_size), None, None, None, None,
                              None, None, None)
        raise _Stop(exc, OUTCOME_FAILED) from None
    except _NotModelled as exc:
        raise BadInput(str(exc)) from None


def _measured_method_capability(job: EngineInput) -> None:
    """A checkpoint planned only with measured weights (quant_support.MEASURED_WEIGHTS_METHODS) on a GPU below its
    quant config's minimum capability: SGLang's loader raises there (srt/model_loader/loader.py:238-250 @0.5.11);
    not what the planner checks against SGLang's code, so refused by name."""
    from planner.catalog.quant_support import MEASURED_WEIGHTS_METHODS  # noqa: PLC0415

    method = str(job.model.spec.quant_method or "").strip().lower()
    need = MEASURED_WEIGHTS_METHODS.get(method)
    dev = device_for(job)
    if need is not None and dev.sm_major * 10 + dev.sm_minor < need:
        raise BadInput(f"quantization_config.quant_method '{method}' needs compute capability {need} "
                       f"(its get_min_capability; SGLang's loader stops below it: srt/model_loader/loader.py:238-250 "
                       f"@0.5.11) and --gpu {job.gpu.id} has {dev.sm_major}.{dev.sm_minor}; not modelled by this planner")


def load_model(job: EngineInput) -> None:
    """The weights alone do not fit: torch raises in load_model."""
    if job.free_after_bytes <= 0:
        need = job.weights_per_gpu_bytes or 0
        raise _Stop(Rejected("torch.OutOfMemoryError",
                             f"CUDA out of memory while loading the weights: they need {need / (1 << 30):.2f} GiB "
                             f"per GPU and {job.free_before_bytes / (1 << 30):.2f} GiB is free",
                             "srt/model_executor/model_runner.py:1286-1517 (load_model) @0.5.11",
                             stage="load_model"), OUTCOME_FAILED)


def _dspark_draft_config_check(args: ResolvedArgs, draft: ModelSpec | None) -> None:
    """The target ModelRunner reads the DSpark draft config (resolve_spec_aux_hidden_state_config ->
    parse_dspark_draft_config; srt/model_executor/model_runner_components/spec_aux_hidden_state.py:147-161,
    srt/speculative/dspark_components/dspark_config.py:213-265 @0.5.16): a Markov head is required."""
    if args.speculative_algorithm != "DSPARK" or draft is None:
        return
    cfg, text = draft.raw, draft.text
    dsp = cfg.get("dspark_config") or {}
    prefixed = any(cfg.get(k) is not None for k in ("dspark_block_size", "dspark_markov_rank", "dspark_noise_token_id",
                                                     "dspark_target_layer_ids"))
    rank = cfg.get("dspark_markov_rank")
    rank = int(rank if rank is not None else dsp.get("markov_rank", text.get("markov_rank", cfg.get("markov_rank", 0))) or 0)
    kind = cfg.get("dspark_markov_head_type")
    kind = kind if kind is not None else dsp.get("markov_head_type", text.get("markov_head_type", cfg.get("markov_head_type")))
    where = "srt/speculative/dspark_components/dspark_config.py:213-265 @0.5.16"
    if rank < 0:
        msg = f"DSpark markov_rank must be >= 0, got {rank}."
    elif rank > 0 and kind is None and not prefixed:
        msg = "DSpark requires markov_head_type when markov_rank > 0, got None."
    elif kind is not None and str(kind).lower() not in ("vanilla", "gated", "rnn"):
        msg = f"Unsupported DSpark markov_head_type={str(kind).lower()!r}. Supported: ('vanilla', 'gated', 'rnn')."
    elif rank == 0:
        msg, where = (f"DSPARK requires markov_rank > 0 in the draft config, got markov_rank={rank}.",
                      "srt/model_executor/model_runner_components/spec_aux_hidden_state.py:147-159 @0.5.16")
    else:
        return
    raise _Stop(Rejected("ValueError", msg, where, stage="runner_setup"), OUTCOME_FAILED)


def memory_pool_config(job: EngineInput, args: ResolvedArgs, state: MambaState | None, draft: ModelSpec | None,
                       res: EngineResult) -> Profile:
    """resolve_memory_pool_config: the profile (M, N, R); a failure keeps the numbers computed before it."""
    if job.pp_stage is not None and job.pp_stage[2] is not None:
        # the pp group's MIN all-reduce of the token capacity after the user cap (KVCacheConfigurator.
        # _apply_token_constraints, mem_cache/kv_cache_configurator.py:1593-1620 @0.5.16), re-aligned to the page
        cap = job.pp_stage[2] if args.max_total_tokens is None else min(args.max_total_tokens, job.pp_stage[2])
        from dataclasses import replace  # noqa: PLC0415

        args = replace(args, max_total_tokens=cap)
    try:
        if job.pp_stage is not None and not job.model.spec.full_attention_layer_ids and job.model.spec.mla is None:
            import numpy as np  # noqa: PLC0415

            with np.errstate(divide="ignore"):  # a KV-less pp rank's zero cell: the failure below names it
                return profile(args, job.model.spec, state, job.free_before_bytes, job.free_after_bytes, draft)
        return profile(args, job.model.spec, state, job.free_before_bytes, job.free_after_bytes, draft)
    except Rejected as exc:
        res.profile = getattr(exc, "profile", None)  # the numbers computed before the failure
        if job.pp_stage is not None and res.profile is not None and res.profile.kv_cell_bytes_per_token == 0:
            # a pp rank holding no attention layer (a hybrid model's stage of GDN layers only): SGLang divides
            # by its zero KV cell (pool_configurator.py:225 @0.5.14, :273 @0.5.15, :290 @0.5.16); 0.5.17+ never get
            # here (pp.py)
            exc = Rejected("ZeroDivisionError", "integer division or modulo by zero",
                           "srt/model_executor/pool_configurator.py:290 @0.5.16", stage="resolve_memory_pool_config")
        raise _Stop(exc, OUTCOME_FAILED) from None


def init_pools(job: EngineInput, args: ResolvedArgs, state: MambaState | None, prof: Profile,
               draft: ModelSpec | None, res: EngineResult) -> None:
    """_init_pools: every tensor (``res.pools``), and the checks SGLang makes while building them."""
    model = job.model.spec
    if args.unified_memory and args.rules.unified_init_typeerror:
        # SGLang 0.5.16's own code: HybridReqToTokenPool passes a keyword the unified pool does not take
        raise _Stop(Rejected("TypeError", "UnifiedHybridReqToTokenPool._init_mamba_pool() got an unexpected keyword "
                             "argument 'enable_gdn_replayssm_spec'",
                             "srt/mem_cache/memory_pool.py:1154 and unified_memory_pool.py:746 @0.5.16",
                             stage="init_pools"), OUTCOME_FAILED)
    if args.rules.dspark_replayssm_kda_check and args.speculative_algorithm == "DSPARK" and state is not None \
            and args.raw.get("enable_linear_replayssm_spec"):  # no KDA (kimi_linear) model is modelled
        kda = "KDA (kimi_linear)" if args.rules.dspark_replayssm_kda_check == "kimi_linear" else "KDA"
        raise _Stop(Rejected("ValueError", f"--enable-linear-replayssm-spec with DSPARK/DFLASH requires a {kda} "
                             "model; got a non-KDA model.",
                             "srt/mem_cache/kv_cache_configurator.py:759-776 @0.5.17, :1700-1717 @0.5.23",
                             stage="init_pools"), OUTCOME_FAILED)
    pools = res.pools = allocate(args, model, state, prof, draft)
    if args.unified_memory and args.rules.unified_budget_total:
        _unified_floor(args, model, state, prof, draft)
    if pools.get("mamba_int8_checkpoint"):
        _int8_checkpoint_fits(job, args, prof, pools)


def _unified_floor(args: ResolvedArgs, model: ModelSpec, state: MambaState, prof: Profile,
                   draft: ModelSpec | None) -> None:
    """bs=1 floor: one request's state slots (1 active + 2 radix checkpoints) and the slot-0 sink
    (srt/mem_cache/unified_memory_pool.py:1134-1156, 1254-1261 @0.5.19)."""
    g, _ = geometries(args, model, state, draft)
    f = g.token_bytes
    total = int(unified_pool_bytes(args, state, g, prof.max_total_num_tokens, prof.max_running_requests,
                                   prof.max_mamba_cache_size, prof.available_kv_bytes)["_unified_total"])
    slots, sink = 3 * state.per_req_bytes, max(f, state.per_req_bytes, args.page_size * f)
    if total < slots + sink:
        raise _Stop(Rejected("RuntimeError", f"[unified-memory-pool] init_unified_mamba_pools: byte budget {total} "
                             f"cannot fit ONE worst-case request (bs=1 floor {slots + sink} = bs1_state_slots="
                             f"{slots} + sink={sink}). A pool this size retract-livelocks at runtime. Raise "
                             "--mem-fraction-static, lower the model context length, or reduce reserved memory.",
                             "srt/mem_cache/unified_memory_pool.py:1134-1156 @0.5.19", stage="init_pools"),
                    OUTCOME_FAILED)


def _int8_checkpoint_fits(job: EngineInput, args: ResolvedArgs, prof: Profile, pools: Pools) -> None:
    """The free-memory check before the int8 checkpoint pool, built inside HybridReqToTokenPool after
    req_to_token and the mamba states (srt/mem_cache/mamba_checkpoint_pool.py:336-352 @0.5.19)."""
    ckpt = pools.get("mamba_int8_checkpoint")
    before = sum(pools.get(k) for k in ("req_to_token", "mamba_conv", "mamba_ssm", "mamba_intermediate_ssm",
                                        "mamba_intermediate_conv"))
    free = job.free_after_bytes - before
    if ckpt >= free:
        slots = args.raw.get("int8_mamba_ckpt_size") or 2 * prof.max_mamba_cache_size
        raise _Stop(Rejected("RuntimeError", f"int8 mamba checkpoint pool needs ~{ckpt / (1 << 30):.2f}GB but "
                             f"only {free / (1 << 30):.2f}GB HBM is free. Lower --int8-mamba-ckpt-size "
                             f"(currently {slots}) or --mem-fraction-static.",
                             "srt/mem_cache/mamba_checkpoint_pool.py:336-352 @0.5.19", stage="init_pools"),
                    OUTCOME_FAILED)


def needs_and_verdict(job: EngineInput, args: ResolvedArgs, prof: Profile, draft: ModelSpec | None,
                      res: EngineResult) -> None:
    """What must still fit after the pools, in startup order; the first that does not is the OOM risk."""
    res.needs = estimate_needs(res, args, job.model.spec, prof, draft, draft_checkpoint=job.draft_checkpoint)
    if args.post_capture_kv:
        try:
            _post_capture_resize(job, args, prof, draft, res)
        except Rejected as exc:
            _reject(res, exc, OUTCOME_FAILED)
            return
    res.headroom_bytes = job.free_after_bytes - res.pools.total
    if args.disaggregation_mode == "decode":  # PD decode: pools beyond what the budget charged (disaggregation.py)
        from planner.engines.sglang.pipeline.pools import beyond_budget_bytes  # noqa: PLC0415

        extra = beyond_budget_bytes(args, job.model.spec, res.state, prof, draft, res.pools.total)
        if extra:
            args.warnings.append(f"decode role: its pools take {extra / (1 << 30):.2f} GiB beyond what the KV budget "
                                 f"charged ({args.decode_extra_slots} extra request slots), out of the headroom")
    if res.headroom_bytes < 0:
        # the pools alone exceed what the weights leave: the tables allocated beside the KV budget (req_to_token
        # grows with the context: Llama 4's 10M-token default makes it tens of GiB) fail their own allocation
        res.verdict = "oom_risk"
        beside = max((x for x in res.pools.lines if not x.key.startswith(("kv_", "draft_kv_"))),
                     key=lambda x: x.bytes, default=None)
        res.oom_allocation = (f"the pools themselves ({res.pools.total / (1 << 30):.2f} GiB; "
                              + (f"{beside.label} {beside.bytes / (1 << 30):.2f} GiB is allocated beside the KV "
                                 "budget" if beside is not None else "") + ")")
        return
    used = 0
    for need in res.needs:
        used += need.bytes
        if used > res.headroom_bytes:
            res.verdict = "oom_risk"
            res.oom_allocation = need.label
            break


def _post_capture_resize(job: EngineInput, args: ResolvedArgs, prof: Profile, draft: ModelSpec | None,
                         res: EngineResult) -> None:
    """SGLANG_ENABLE_POST_CAPTURE_KV_SIZING (:mod:`.post_capture`): the pools so far hold the KV pool's virtual
    upper bound; after the graphs are captured it is backed from what the planner estimates is then free. The
    profile and the pools become the resized ones; the upper bound is kept in ``res.post_capture``."""
    from dataclasses import replace  # noqa: PLC0415

    from planner.engines.sglang.pipeline.memory_profile import mm_reserve_gib  # noqa: PLC0415
    from planner.engines.sglang.pipeline.post_capture import resize  # noqa: PLC0415

    state = res.state
    out = resize(args, prof, res.pools, res.needs, job.free_after_bytes, state is not None, device_for(job).total_mib,
                 mm_reserve_gib(args), prof.mamba_ratio)
    if out["tokens"] <= 0:  # MemoryPoolConfig.__post_init__ on the post-capture budget
        res.post_capture = out
        raise Rejected("RuntimeError", "Not enough memory. Please try to increase --mem-fraction-static.",
                       "srt/model_executor/pool_configurator.py:94-99 via kv_pool_runtime.py:135-138 @0.5.23",
                       stage="post_capture_kv_resize")
    out["va_pools_total"] = res.pools.total
    out["va_kv_bytes"] = res.pools.get("kv_k") + res.pools.get("kv_v")
    post = replace(prof, max_total_num_tokens=out["tokens"], max_running_requests=out["running"])
    resized = allocate(args, job.model.spec, state, post, draft)
    keep = {line.key: line for line in resized.lines if line.key in ("kv_k", "kv_v")}
    res.pools = Pools([keep.get(line.key, line) for line in res.pools.lines], res.pools.draft_kv_known)
    out["kv_bytes"] = res.pools.get("kv_k") + res.pools.get("kv_v")
    res.profile = post
    res.post_capture = out


def _checks_after_pools(args: ResolvedArgs, model: ModelSpec, prof: Profile, dev: Device, res: EngineResult) -> None:
    try:
        _post_pool_checks(args, model, prof, dev, res)
    except Rejected as exc:
        raise _Stop(exc, OUTCOME_FAILED) from None


def _post_pool_checks(args: ResolvedArgs, model: ModelSpec, prof: Profile, dev: Device, res: EngineResult) -> None:
    """What SGLang checks once the pools exist, in its order.

    0.5.11-0.5.13: the attention backend is built (srt/model_executor/model_runner.py:768 @0.5.11), then the
    CUDA graphs (capture list), then tp_worker's asserts (srt/managers/tp_worker.py:297-309 @0.5.11).
    0.5.14+: tp_worker's asserts run in alloc_memory_pool first (srt/managers/tp_worker.py:336-341 @0.5.14),
    without the ``- 5``.
    """
    rules = args.rules
    # the list SGLang would capture, for the request pool's size: R, or 0.5.9's R_pool
    # (srt/model_executor/cuda_graph_runner.py:190-222 @0.5.9); recorded before the checks when valid
    bs = None
    if not args.disable_cuda_graph:
        size = prof.pool_requests if prof.pool_requests is not None else prof.max_running_requests
        bs = batch_sizes_to_capture(args.cuda_graph_bs, size, capture_mul(args))
        if bs and bs[0] > 0:
            res.capture_bs = bs

    def capture() -> None:
        if bs is None:
            return
        res.capture_bs = bs
        if not (len(bs) > 0 and bs[0] > 0):
            raise Rejected("AssertionError", f"capture_bs={bs}", "srt/model_executor/cuda_graph_runner.py:524 @0.5.11",
                           stage="cuda_graph_batch_sizes")

    def tp_worker() -> None:
        _tp_worker(args, prof)

    def attention_backend() -> None:
        _dspark_capture_check(args, model)  # configure_aux_hidden_state_capture runs first (model_runner.py:819-830 @0.5.16)
        gdn_backend_check(args, model, dev)

    def deepep_capture() -> None:  # DeepEP's low-latency dispatch limit at the graph captures (expert_parallel.py)
        if args.raw.get("moe_a2a_backend") != "deepep":
            return
        from planner.engines.sglang.pipeline.expert_parallel import capture_failure  # noqa: PLC0415
        from planner.engines.sglang.pipeline.headroom import prefill_captured  # noqa: PLC0415

        fail = capture_failure(args, list(args.piecewise_cuda_graph_tokens) if prefill_captured(args, model) else None,
                               res.capture_bs if bs and bs[0] > 0 else None,
                               prof.pool_requests if prof.pool_requests is not None else prof.max_running_requests)
        if fail:
            raise Rejected("RuntimeError", fail[0], fail[1], stage="cuda_graph_capture")

    checks = [tp_worker, attention_backend, capture, deepep_capture] if rules.tp_worker_checks_first else \
        [attention_backend, capture, deepep_capture, tp_worker]
    for check in checks:
        check()
    if (rules.no_buffer_page1_asserted_late and model.is_mambaish and not args.disable_radix_cache and not args.extra_buffer
            and args.page_size != 1):
        # the scheduler's MambaRadixCache (srt/mem_cache/mamba_radix_cache.py:435-438 @0.5.10)
        raise Rejected("AssertionError", f"Page size must be 1 for MambaRadixCache v1, got {args.page_size}",
                       "srt/mem_cache/mamba_radix_cache.py:435-438 @0.5.10", stage="scheduler_init")


def _dspark_capture_check(args: ResolvedArgs, model: ModelSpec) -> None:
    """DSPARK's target captures the draft's layers: every modelled target class has the hook except NemotronH before
    0.5.19 (srt/model_executor/model_runner_components/attention_backend_setup.py:55-65 @0.5.16)."""
    if args.speculative_algorithm == "DSPARK" and model.architecture == "NemotronHForCausalLM" \
            and not args.rules.dspark_nemotron_capture:
        raise Rejected("ValueError", f"Model {model.architecture} implements neither set_dspark_layers_to_capture nor "
                       "set_dflash_layers_to_capture, one of which is required for DFLASH/DSPARK.",
                       "srt/model_executor/model_runner_components/attention_backend_setup.py:55-65 @0.5.16",
                       stage="init_attention_backend")


def _tp_worker(args: ResolvedArgs, prof: Profile) -> None:
    if prof.max_running_requests <= 0:
        raise Rejected("AssertionError", "max_running_request is zero",
                       "srt/managers/tp_worker.py:297 @0.5.11", stage="tp_worker")
    slack = 0 if args.rules.tp_worker_checks_first else 5
    if min(args.context_len - 1, prof.max_total_num_tokens - 1) - slack <= 0:
        raise Rejected("AssertionError", "Memory pool size is too small",
                       "srt/managers/tp_worker.py:301-309 @0.5.11, :336-341 @0.5.14", stage="tp_worker")


def gdn_backend_check(args: ResolvedArgs, model: ModelSpec, dev: Device) -> None:
    """The hybrid-GDN backend check on Blackwell (srt/layers/attention/attention_registry.py), per release."""
    if not (dev.blackwell and model.hybrid == "gdn"):
        return
    mode = args.rules.gdn_blackwell
    attn = args.attention_backend
    if mode == "v0_5_9":
        if attn not in ("triton", "trtllm_mha"):
            raise Rejected("AssertionError", "triton or trtllm_mha backend are the only supported backends on "
                           "Blackwell GPUs for hybrid GDN models, use --attention-backend triton or "
                           "--attention-backend trtllm_mha to specify the backend.",
                           "srt/layers/attention/attention_registry.py:201-206 @0.5.9", stage="init_attention_backend")
        return
    if mode == "v0_5_11":
        if attn not in BLACKWELL_GDN_BACKENDS:
            raise Rejected("AssertionError", "triton, trtllm_mha, fa4, or flashinfer backend are the only "
                           "supported backends on Blackwell GPUs for hybrid GDN models, use --attention-backend "
                           "to specify the backend.", "srt/layers/attention/attention_registry.py:233-238 @0.5.11",
                           stage="init_attention_backend")
        return
    if dev.sm100:
        allowed = {"triton", "trtllm_mha", "fa4"} | ({"flashinfer"} if mode == "v0_5_21" else set())
    else:
        allowed = {"triton", "trtllm_mha", "flashinfer"}
    prefill = args.raw.get("prefill_attention_backend") or attn
    decode = args.raw.get("decode_attention_backend") or attn
    if prefill in allowed and decode in allowed:
        return
    # SGLang prints the Python set as it iterates (hash order); sorted here
    shown = "{" + ", ".join(repr(b) for b in sorted(allowed)) + "}"
    got = f"attention_backend={attn}" if mode == "v0_5_16" else f"prefill={prefill}, decode={decode}"
    raise Rejected("AssertionError", f"Only {shown} backends are supported on Blackwell GPUs for hybrid GDN models. "
                   f"Got {got}.", "srt/layers/attention/attention_registry.py:333-351 @0.5.16, :462-476 @0.5.23",
                   stage="init_attention_backend")


def _check_heads(model: ModelSpec, tp: int) -> None:
    """Attention heads must split over TP (models/qwen3_5.py:678 @0.5.11 and the generic layers)."""
    if model.num_attention_heads % tp != 0:
        raise Rejected("AssertionError", f"{model.num_attention_heads} is not divisible by {tp}",
                       "srt/distributed/utils.py:57-68 @0.5.11", stage="model_config")
    kv = model.num_key_value_heads
    if kv >= tp and kv % tp != 0:
        raise Rejected("AssertionError", f"{kv} is not divisible by {tp}",
                       "srt/layers/linear.py (QKVParallelLinear) @0.5.11", stage="model_config")
    if kv < tp and tp % kv != 0:
        raise Rejected("AssertionError", f"{tp} is not divisible by {kv}",
                       "srt/layers/linear.py (QKVParallelLinear) @0.5.11", stage="model_config")

