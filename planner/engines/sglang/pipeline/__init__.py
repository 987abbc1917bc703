"""SGLang 0.5.11: the whole startup sizing pipeline, in the engine's order.

Stages (names follow the oracle's ``stage`` field): ``server_args`` (argparse, ``__post_init__``,
``check_server_args``) -> ``model_config`` (state shapes, TP divisibility) ->
``resolve_memory_pool_config`` (profiling: M, N, R) -> ``init_pools`` -> ``cuda_graph_batch_sizes``.
After that, what SGLang does not budget for (draft weights, attention workspace, CUDA graphs,
activations) is estimated against what is left, for the out-of-memory verdict.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from planner.catalog.spec import ModelSpec
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
from planner.engines.sglang.pipeline.pools import Pools, allocate
from planner.engines.sglang.pipeline.server_args import (
    Device,
    Rejected,
    ResolvedArgs,
    _NotModelled,
    check_scope,
    check_values,
)
from planner.errors import BadInput

if TYPE_CHECKING:
    from planner.plan import Plan

VERSION = "0.5.11"
# layers/attention/attention_registry.py:233-238 @0.5.11
BLACKWELL_GDN_BACKENDS = ("triton", "trtllm_mha", "fa4", "flashinfer")

__all__ = ["VERSION", "run", "Device", "Rejected", "ResolvedArgs", "MambaState", "Profile", "Pools",
           "available_gib", "kv_dtype_name"]


def device_for(plan: "Plan") -> Device:
    gpu = plan.gpu
    if gpu.vendor != "nvidia" or gpu.compute_capability is None:
        raise BadInput(f"--gpu {gpu.id}: SGLang's ROCm path is not modelled yet; pick an NVIDIA GPU profile")
    major, minor = (int(x) for x in gpu.compute_capability.split("."))
    return Device(total_mib=float(gpu.capacity_mib), sm_major=major, sm_minor=minor)


def _reject(plan: "Plan", exc: Rejected, outcome: str) -> None:
    plan.outcome = outcome
    plan.stage = exc.stage
    plan.error_type = exc.error_type
    plan.error_message = exc.message
    plan.rule = exc.rule
    plan.verdict = "rejected"


def run(plan: "Plan", draft: ModelSpec | None = None) -> None:
    """Fill ``plan`` in place: resolved args, profile, pools, verdict."""
    model = plan.model.spec
    argv = ["--model-path", plan.model.path or plan.model.catalog_id or model.name, *plan.flags]
    rules = plan.rules
    try:
        raw = parse_flags(rules.flags, argv)
    except SGLangArgError as exc:
        _reject(plan, Rejected("SystemExit", str(exc), "argparse (srt/server_args.py:7276-7288 @0.5.11)"),
                "rejected")
        return
    problem = check_scope(raw, rules) or check_values(raw)
    if problem:
        raise BadInput(problem)
    dev = device_for(plan)
    try:
        args = resolve(raw, model, dev, plan.env, rules)
    except Rejected as exc:
        _reject(plan, exc, "rejected")
        return
    except _NotModelled as exc:
        raise BadInput(str(exc)) from None
    plan.args = args

    # model_config: state shapes and TP divisibility of attention heads
    try:
        state = mamba_state(model, args.tp_size, args.env)
        _check_heads(model, args.tp_size)
    except Rejected as exc:
        _reject(plan, exc, "startup_failed")
        return
    plan.state = state

    if plan.free_after_bytes <= 0:  # the weights alone do not fit: torch raises in load_model
        need = plan.weights_per_gpu_bytes or 0
        _reject(plan, Rejected("torch.OutOfMemoryError",
                               f"CUDA out of memory while loading the weights: they need {need / (1 << 30):.2f} GiB "
                               f"per GPU and {plan.free_before_bytes / (1 << 30):.2f} GiB is free",
                               "srt/model_executor/model_runner.py:1286-1517 (load_model) @0.5.11",
                               stage="load_model"), "startup_failed")
        return

    try:
        prof = profile(args, model, state, plan.free_before_bytes, plan.free_after_bytes, draft)
    except Rejected as exc:
        plan.profile = getattr(exc, "profile", None)  # the numbers computed before the failure
        _reject(plan, exc, "startup_failed")
        return
    plan.profile = prof
    if args.unified_memory and args.rules.unified_init_typeerror:
        # SGLang 0.5.16's own code: HybridReqToTokenPool passes a keyword the unified pool does not take
        _reject(plan, Rejected("TypeError", "UnifiedHybridReqToTokenPool._init_mamba_pool() got an unexpected keyword "
                               "argument 'enable_gdn_replayssm_spec'",
                               "srt/mem_cache/memory_pool.py:1154 and unified_memory_pool.py:746 @0.5.16",
                               stage="init_pools"), "startup_failed")
        return
    plan.pools = allocate(args, model, state, prof, draft)
    if args.unified_memory and args.rules.unified_budget_total:
        # bs=1 floor: one request's state slots (1 active + 2 radix checkpoints) and the slot-0 sink
        # (srt/mem_cache/unified_memory_pool.py:1134-1156, 1254-1261 @0.5.19)
        from planner.engines.sglang.pipeline.pools import geometries, unified_pool_bytes  # noqa: PLC0415

        g, _ = geometries(args, model, state, draft)
        f = g.token_bytes
        total = int(unified_pool_bytes(args, state, g, prof.max_total_num_tokens, prof.max_running_requests,
                                       prof.max_mamba_cache_size, prof.available_kv_bytes)["_unified_total"])
        slots, sink = 3 * state.per_req_bytes, max(f, state.per_req_bytes, args.page_size * f)
        if total < slots + sink:
            _reject(plan, Rejected("RuntimeError", f"[unified-memory-pool] init_unified_mamba_pools: byte budget {total} "
                                   f"cannot fit ONE worst-case request (bs=1 floor {slots + sink} = bs1_state_slots="
                                   f"{slots} + sink={sink}). A pool this size retract-livelocks at runtime. Raise "
                                   "--mem-fraction-static, lower the model context length, or reduce reserved memory.",
                                   "srt/mem_cache/unified_memory_pool.py:1134-1156 @0.5.19", stage="init_pools"),
                    "startup_failed")
            return
    ckpt = plan.pools.get("mamba_int8_checkpoint")
    if ckpt:
        # the free-memory check before the int8 checkpoint pool, built inside HybridReqToTokenPool after
        # req_to_token and the mamba states (srt/mem_cache/mamba_checkpoint_pool.py:336-352 @0.5.19)
        before = sum(plan.pools.get(k) for k in ("req_to_token", "mamba_conv", "mamba_ssm", "mamba_intermediate_ssm",
                                                 "mamba_intermediate_conv"))
        free = plan.free_after_bytes - before
        if ckpt >= free:
            slots = args.raw.get("int8_mamba_ckpt_size") or 2 * prof.max_mamba_cache_size
            _reject(plan, Rejected("RuntimeError", f"int8 mamba checkpoint pool needs ~{ckpt / (1 << 30):.2f}GB but "
                                   f"only {free / (1 << 30):.2f}GB HBM is free. Lower --int8-mamba-ckpt-size "
                                   f"(currently {slots}) or --mem-fraction-static.",
                                   "srt/mem_cache/mamba_checkpoint_pool.py:336-352 @0.5.19", stage="init_pools"),
                    "startup_failed")
            return

    try:
        _post_pool_checks(args, model, prof, dev, plan)
    except Rejected as exc:
        _reject(plan, exc, "startup_failed")
        return

    plan.needs = estimate_needs(plan, args, model, prof, draft)
    plan.headroom_bytes = plan.free_after_bytes - plan.pools.total
    used = 0
    for need in plan.needs:
        used += need.bytes
        if used > plan.headroom_bytes:
            plan.verdict = "oom_risk"
            plan.oom_allocation = need.label
            break


def _post_pool_checks(args: ResolvedArgs, model: ModelSpec, prof: Profile, dev: Device, plan: "Plan") -> None:
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
            plan.capture_bs = bs

    def capture() -> None:
        if bs is None:
            return
        plan.capture_bs = bs
        if not (len(bs) > 0 and bs[0] > 0):
            raise Rejected("AssertionError", f"capture_bs={bs}", "srt/model_executor/cuda_graph_runner.py:524 @0.5.11",
                           stage="cuda_graph_batch_sizes")

    def tp_worker() -> None:
        _tp_worker(args, prof)

    def attention_backend() -> None:
        gdn_backend_check(args, model, dev)

    checks = [tp_worker, attention_backend, capture] if rules.tp_worker_v0_5_14 else \
        [attention_backend, capture, tp_worker]
    for check in checks:
        check()
    if (rules.v0_5_10 and model.is_mambaish and not args.disable_radix_cache and not args.extra_buffer
            and args.page_size != 1):
        # the scheduler's MambaRadixCache (srt/mem_cache/mamba_radix_cache.py:435-438 @0.5.10)
        raise Rejected("AssertionError", f"Page size must be 1 for MambaRadixCache v1, got {args.page_size}",
                       "srt/mem_cache/mamba_radix_cache.py:435-438 @0.5.10", stage="scheduler_init")


def _tp_worker(args: ResolvedArgs, prof: Profile) -> None:
    if prof.max_running_requests <= 0:
        raise Rejected("AssertionError", "max_running_request is zero",
                       "srt/managers/tp_worker.py:297 @0.5.11", stage="tp_worker")
    slack = 0 if args.rules.tp_worker_v0_5_14 else 5
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

