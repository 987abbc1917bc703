"""SGLang 0.5.11 memory profiling: from free memory to M, N and R.

Mirrors, in order and in the same floating-point operations:

* ``get_available_gpu_memory`` (srt/utils/common.py:498-613 @0.5.11): free bytes / 2^30, with a
  float32 MIN all-reduce when tp > 1;
* ``_profile_available_bytes`` (srt/model_executor/model_runner_kv_cache_mixin.py:56-70 @0.5.11);
* ``handle_max_mamba_cache`` (…kv_cache_mixin.py:72-131 @0.5.11);
* ``DefaultPoolConfigurator`` cell size and page alignment (srt/model_executor/pool_configurator.py:74-182 @0.5.11);
* ``_apply_token_constraints`` and ``_resolve_max_num_reqs`` (…kv_cache_mixin.py:669-717 @0.5.11);
* ``_calculate_mamba_ratio`` (…kv_cache_mixin.py:180-192 @0.5.11).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from planner.catalog.spec import DTYPE_BYTES, ModelSpec
from planner.engines.sglang.v0_5_11.mamba import MambaState
from planner.engines.sglang.v0_5_11.server_args import Rejected, ResolvedArgs

GIB = 1 << 30

# srt/model_executor/model_runner_kv_cache_mixin.py:44-46 @0.5.11
MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO = 3
MAMBA_CACHE_V2_ADDITIONAL_RATIO_OVERLAP = 2
MAMBA_CACHE_V2_ADDITIONAL_RATIO_NO_OVERLAP = 1


def available_gib(free_bytes: int, tp_size: int) -> float:
    """get_available_gpu_memory: ``free / (1 << 30)``; tp>1 goes through a float32 all-reduce."""
    if tp_size > 1:
        return float(np.float32(free_bytes)) / GIB
    return free_bytes / GIB


def kv_dtype_name(args: ResolvedArgs, model: ModelSpec) -> str:
    """configure_kv_cache_dtype (srt/model_executor/model_runner.py:2210-2256 @0.5.11)."""
    k = args.kv_cache_dtype
    if k == "auto":
        if model.kv_cache_quant_algo and model.kv_cache_quant_algo.upper() == "FP8":
            return "float8_e4m3fn"
        return model_dtype(model)
    return {"fp8_e5m2": "float8_e5m2", "fp8_e4m3": "float8_e4m3fn", "bf16": "bfloat16",
            "bfloat16": "bfloat16"}[k]


def model_dtype(model: ModelSpec) -> str:
    """ModelConfig dtype for ``--dtype auto``: the config dtype, float32 checkpoints served in bf16."""
    d = model.dtype.replace("torch.", "")
    if d == "float32":
        return "bfloat16"
    return d if d in DTYPE_BYTES else "bfloat16"


def num_kv_heads(model: ModelSpec, tp: int) -> int:
    """get_num_kv_heads (srt/configs/model_config.py:756-763 @0.5.11): replicated below 1 per GPU."""
    return max(1, model.num_key_value_heads // tp)


def cell_size(model: ModelSpec, args: ResolvedArgs) -> int:
    """Bytes of KV per token over the full-attention layers (pool_configurator.py:83-157 @0.5.11)."""
    n_layers = len(model.full_attention_layer_ids)
    kv_size = DTYPE_BYTES[kv_dtype_name(args, model)]
    return num_kv_heads(model, args.tp_size) * (model.head_dim + model.v_head_dim) * n_layers * kv_size


def mamba_ratio(args: ResolvedArgs) -> int:
    """_calculate_mamba_ratio (…kv_cache_mixin.py:180-192 @0.5.11)."""
    if args.disable_radix_cache:
        return 1
    extra = 0
    if args.extra_buffer:
        extra = (MAMBA_CACHE_V2_ADDITIONAL_RATIO_NO_OVERLAP if args.disable_overlap_schedule
                 else MAMBA_CACHE_V2_ADDITIONAL_RATIO_OVERLAP)
    return MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO + extra


class NotEnoughMemory(Rejected):
    """MemoryPoolConfig.__post_init__ (pool_configurator.py:39-44 @0.5.11), with the numbers so far."""

    def __init__(self, prof: "Profile"):
        super().__init__("RuntimeError", "Not enough memory. Please try to increase --mem-fraction-static.",
                         "srt/model_executor/pool_configurator.py:39-44 @0.5.11", stage="resolve_memory_pool_config")
        self.profile = prof


@dataclass
class Profile:
    pre_model_load_gib: float  # P
    post_model_load_gib: float
    rest_gib_before_mamba: float
    spec_reserved_bytes: int | None
    max_mamba_cache_size: int | None
    mamba_cache_per_req_bytes: int | None
    available_kv_bytes: int
    kv_cell_bytes_per_token: int
    max_total_num_tokens: int | None = None
    max_running_requests: int | None = None
    mamba_ratio: int | None = None
    max_mamba_cache_source: str = ""


def profile(args: ResolvedArgs, model: ModelSpec, state: MambaState | None,
            free_before_bytes: int, free_after_bytes: int) -> Profile:
    """Run the sizing chain. Raises Rejected(stage=...) where SGLang would raise."""
    tp = args.tp_size
    pre = available_gib(free_before_bytes, tp)
    post = available_gib(free_after_bytes, tp)
    # _profile_available_bytes (…kv_cache_mixin.py:56-70 @0.5.11)
    rest = post - pre * (1 - args.mem_fraction_static)
    rest_before = rest
    spec_reserved = None
    m_size = None
    per_req = None
    source = ""
    if state is not None:
        per_req = state.per_req_bytes
        # handle_max_mamba_cache (…kv_cache_mixin.py:72-131 @0.5.11)
        if args.spec_on:
            spec_reserved = per_req * args.max_running_requests * args.speculative_num_draft_tokens
            rest = rest - (spec_reserved / (1 << 30))
        if args.max_mamba_cache_size is not None:
            m_size = args.max_mamba_cache_size
            source = "--max-mamba-cache-size (explicit; --mamba-full-memory-ratio is ignored)"
        elif args.disable_radix_cache and args.max_running_requests is not None:
            m_size = args.max_running_requests
            source = "max_running_requests, because the radix cache is disabled"
        else:
            r = args.mamba_full_memory_ratio
            raw = rest * r / (1 + r)
            m_size = int((raw * (1 << 30)) // per_req)
            source = f"--mamba-full-memory-ratio {r}: rest x r/(1+r) / per-request state"
        rest = rest - m_size * per_req / (1 << 30)
    available = int(rest * (1 << 30))
    cell = cell_size(model, args)
    prof = Profile(pre, post, rest_before, spec_reserved, m_size, per_req, available, cell,
                   max_mamba_cache_source=source)
    page = args.page_size
    n = available // cell
    n = n // page * page
    if n <= 0:
        raise NotEnoughMemory(prof)
    # _apply_token_constraints (…kv_cache_mixin.py:669-696 @0.5.11)
    if args.max_total_tokens is not None:
        capped = min(n, args.max_total_tokens)
        if capped != n:
            n = capped // page * page
            if n <= 0:
                raise NotEnoughMemory(prof)
    prof.max_total_num_tokens = n
    # _resolve_max_num_reqs (…kv_cache_mixin.py:698-717 @0.5.11)
    est = int(n / args.context_len * 512)
    est = max(min(est, 4096), 2048)
    if args.max_running_requests is not None:
        r_req = min(args.max_running_requests // 1, est)
    else:
        r_req = min(est, n // 2)
    if state is not None:
        prof.mamba_ratio = mamba_ratio(args)
        r_req = min(r_req, m_size // prof.mamba_ratio)
    prof.max_running_requests = r_req
    return prof
