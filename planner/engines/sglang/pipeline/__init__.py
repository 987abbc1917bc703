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
from planner.engines.sglang.pipeline.arg_groups import resolve
from planner.engines.sglang.pipeline.cuda_graph import batch_sizes_to_capture
from planner.engines.sglang.pipeline.headroom import estimate_needs
from planner.engines.sglang.pipeline.mamba import MambaState, mamba_state
from planner.engines.sglang.pipeline.memory_profile import (
    Profile,
    available_gib,
    kv_dtype_name,
    profile,
)
from planner.engines.sglang.pipeline.pools import Pools, allocate, geometries, unified_pool_bytes
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
from planner.hardware.profiles import GpuProfile

VERSION = "0.5.11"
# layers/attention/attention_registry.py:233-238 @0.5.11
BLACKWELL_GDN_BACKENDS = ("triton", "trtllm_mha", "fa4", "flashinfer")

__all__ = ["VERSION", "run", "Device", "Rejected", "ResolvedArgs", "MambaState", "Profile", "Pools",
           "available_gib", "kv_dtype_name"]


class _OnGpu(Protocol):
    gpu: GpuProfile


def device_for(job: _OnGpu) -> Device:
    """What SGLang asks the device about, from the GPU profile of a job (or a plan)."""
    gpu = job.gpu
    if gpu.vendor != "nvidia" or gpu.compute_capability is None:
        raise BadInput(f"--gpu {gpu.id}: SGLang's ROCm path is not modelled yet; pick an NVIDIA GPU profile")
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
        args = res.args = server_args(job)
        state = res.state = model_config(job, args, draft)
        load_model(job)
        prof = res.profile = memory_pool_config(job, args, state, draft, res)
        init_pools(job, args, state, prof, draft, res)
        _checks_after_pools(args, job.model.spec, prof, device_for(job), res)
    except _Stop as stop:
        _reject(res, stop.exc, stop.outcome)
        return res
    needs_and_verdict(job, args, prof, draft, res)
    return res


def server_args(job: EngineInput) -> ResolvedArgs:
    """The release's argparse, the planner's scope, then ServerArgs resolution (:mod:`.arg_groups`)."""
    model = job.model.spec
    argv = ["--model-path", job.model.path or job.model.catalog_id or model.name, *job.flags]
    rules = job.rules
    try:
        raw = parse_flags(rules.flags, argv)
    except SGLangArgError as exc:
        raise _Stop(Rejected("SystemExit", str(exc), "argparse (srt/server_args.py:7276-7288 @0.5.11)"),
                    OUTCOME_REJECTED) from None
    problem = check_scope(raw, rules) or check_values(raw)
    if problem:
        raise BadInput(problem)
    dev = device_for(job)
    try:
        return resolve(raw, model, dev, job.env, rules)
    except Rejected as exc:
        raise _Stop(exc, OUTCOME_REJECTED) from None
    except _NotModelled as exc:
        raise BadInput(str(exc)) from None


def model_config(job: EngineInput, args: ResolvedArgs, draft: ModelSpec | None = None) -> MambaState | None:
    """model_config: state shapes, TP divisibility of attention heads, the draft's context length."""
    try:
        state = mamba_state(job.model.spec, args.tp_size, args.env)
        _check_heads(job.model.spec, args.tp_size)
        if draft is not None:
            _draft_context(draft, args)
    except Rejected as exc:
        raise _Stop(exc, OUTCOME_FAILED) from None
    return state


def _draft_context(draft: ModelSpec, args: ResolvedArgs) -> None:
    """The draft's ModelConfig gets the target's context length; a draft (an EAGLE3 head) derived shorter
    refuses it unless SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN is set (ModelConfig._derive_context_length,
    srt/configs/model_config.py:452-476 @0.5.11, :729-754 @0.5.16, the same words 0.5.9-0.5.23)."""
    derived = draft.derived_context_len
    if args.context_len <= derived or _env_bool(args.env, "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN"):
        return
    raise Rejected("ValueError", f"Warning: Target model's context_length ({args.context_len}) is greater than the "
                   f"derived context_length ({derived}). This may lead to incorrect model outputs or CUDA errors. "
                   "Note that the derived context_length may differ from max_position_embeddings in the model's "
                   "config. To allow overriding this maximum, set the env var "
                   "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1", "srt/configs/model_config.py:452-476 @0.5.11",
                   stage="model_config")


def load_model(job: EngineInput) -> None:
    """The weights alone do not fit: torch raises in load_model."""
    if job.free_after_bytes <= 0:
        need = job.weights_per_gpu_bytes or 0
        raise _Stop(Rejected("torch.OutOfMemoryError",
                             f"CUDA out of memory while loading the weights: they need {need / (1 << 30):.2f} GiB "
                             f"per GPU and {job.free_before_bytes / (1 << 30):.2f} GiB is free",
                             "srt/model_executor/model_runner.py:1286-1517 (load_model) @0.5.11",
                             stage="load_model"), OUTCOME_FAILED)


def memory_pool_config(job: EngineInput, args: ResolvedArgs, state: MambaState | None, draft: ModelSpec | None,
                       res: EngineResult) -> Profile:
    """resolve_memory_pool_config: the profile (M, N, R); a failure keeps the numbers computed before it."""
    try:
        return profile(args, job.model.spec, state, job.free_before_bytes, job.free_after_bytes, draft)
    except Rejected as exc:
        res.profile = getattr(exc, "profile", None)  # the numbers computed before the failure
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
    res.needs = estimate_needs(res, args, job.model.spec, prof, draft)
    res.headroom_bytes = job.free_after_bytes - res.pools.total
    used = 0
    for need in res.needs:
        used += need.bytes
        if used > res.headroom_bytes:
            res.verdict = "oom_risk"
            res.oom_allocation = need.label
            break


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
        bs = batch_sizes_to_capture(args.cuda_graph_bs, size)
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
        gdn_backend_check(args, model, dev)

    checks = [tp_worker, attention_backend, capture] if rules.tp_worker_checks_first else \
        [attention_backend, capture, tp_worker]
    for check in checks:
        check()
    if (rules.no_buffer_page1_asserted_late and model.is_mambaish and not args.disable_radix_cache and not args.extra_buffer
            and args.page_size != 1):
        # the scheduler's MambaRadixCache (srt/mem_cache/mamba_radix_cache.py:435-438 @0.5.10)
        raise Rejected("AssertionError", f"Page size must be 1 for MambaRadixCache v1, got {args.page_size}",
                       "srt/mem_cache/mamba_radix_cache.py:435-438 @0.5.10", stage="scheduler_init")


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

