"""What vLLM budgets for the KV cache: ``request_memory``, ``Worker.determine_available_memory`` and 0.34's
extensible KV cache measured after warmup. Pure arithmetic on integers (bytes); the measured inputs come in GiB
under the vLLM oracle's names and are converted once, by :func:`gib_bytes`, as the oracle converts them
(``int(round(gib * 2**30))``, ``/work/shared/tools/vllm-oracle/oracle.py:238, 610, 640-652, 757, 785-803``).

vLLM's rules (paths under ``vllm/`` of the 0.34.0 wheel; 0.33.0 where it differs):

* ``request_memory`` (``v1/worker/utils.py`` ``request_memory``; 0.33 the same without the extensible exception):
  ``requested = ceil(total x resolved_gpu_memory_utilization)``; unless the extensible KV cache is on, free memory
  at the init snapshot below it is vLLM's ``ValueError: Free memory on device ...``.
* ``determine_available_memory`` (``v1/worker/gpu_worker.py`` 0.34 ``:655-800``, 0.33 ``:641-820``):
  with ``kv_cache_memory_bytes`` that figure, no profiling; else ``total_consumed`` (weights + what stays after the
  profile run), the transient peak headroom, the CUDA-graph estimate (0 with cudagraph mode NONE), and
  ``available = requested - total_consumed - transient - cudagraph_estimate``.
* 0.34 extensible KV cache (``v1/worker/extensible_kv_cache.py``): the reserved headroom is the profiled peak
  activation (transient + graph estimate) or the warmup's allocated peak, whichever is larger (``:268-278``);
  ``measure_kv_cache_bytes`` (``:592-618``): ``min(requested - non_kv_used, free + committed - max(1 GiB,
  int(0.75 P))) - max(P, R)``, at least 0; ``blocks_within`` (``:313-318``) with each segment's physical
  footprint rounded to the VMM granule (``physical_bytes_for`` ``:305-311``; 2 MiB); one segment per layer region
  of a layer-outer block-compact layout (``_segments`` ``:134-182``); the committed prefix is the null block
  (``min_committed_blocks`` ``:184-187``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from planner.engines.vllm.inputs import GIB, MIB

VMM_GRANULE = 2 * MIB  # the oracle's simulated driver, as CUDA's minimum granularity on these GPUs
MARGIN_FLOOR = 1 << 30  # KV_CACHE_MARGIN_FLOOR_BYTES (CUDA), extensible_kv_cache.py:64
MARGIN_FRACTION = 0.75  # KV_CACHE_MARGIN_FRACTION, extensible_kv_cache.py:65


def gib_bytes(gib: float | None) -> int:
    return int(round((gib or 0.0) * GIB))


def format_gib(b: int) -> str:
    """``utils/mem_utils.py`` ``format_gib``."""
    return str(round(b / GIB, 2))


class StartupFailed(Exception):
    """vLLM's own code raised after the config was accepted: the engine would not start."""

    def __init__(self, stage: str, error_type: str, message: str):
        super().__init__(message)
        self.stage, self.error_type, self.message = stage, error_type, message


def requested_memory(total: int, init_free: int, util: float, extensible: bool) -> int:
    req = math.ceil(total * util)
    if init_free < req and not extensible:
        raise StartupFailed(
            "init_device", "ValueError",
            f"Free memory on device cuda:0 ({format_gib(init_free)}/{format_gib(total)} GiB) on startup is less "
            f"than desired GPU memory utilization ({util}, {format_gib(req)} GiB). Decrease GPU memory utilization "
            "or reduce GPU memory used by other processes.")
    return req


@dataclass(frozen=True)
class Budget:
    """``determine_available_memory``'s terms (the oracle's summary names)."""

    init_free_bytes: int
    requested_memory_bytes: int
    total_consumed_bytes: int | None
    transient_peak_headroom_bytes: int | None
    cudagraph_memory_estimate_bytes: int | None
    available_kv_bytes: int

    @property
    def peak_activation_bytes(self) -> int:
        return (self.transient_peak_headroom_bytes or 0) + (self.cudagraph_memory_estimate_bytes or 0)


def determine_available_memory(*, init_free: int, requested: int, weights: int, non_torch: int, transient: int,
                               cudagraph_estimate: int, kv_cache_memory_bytes: int | None) -> Budget:
    if kv_cache_memory_bytes:
        return Budget(init_free, requested, None, None, None, kv_cache_memory_bytes)
    consumed = weights + non_torch
    return Budget(init_free, requested, consumed, transient, cudagraph_estimate,
                  requested - consumed - transient - cudagraph_estimate)


def measure_kv_cache_bytes(*, init_free: int, free: int, committed: int, requested: int, transient_peak: int,
                           reserve_growth: int) -> int:
    """``measure_kv_cache_bytes`` (extensible_kv_cache.py:592-618)."""
    non_kv_used = init_free - free - committed
    headroom = free + committed
    margin = max(MARGIN_FLOOR, int(transient_peak * MARGIN_FRACTION))
    available = min(requested - non_kv_used, headroom - margin)
    available -= max(transient_peak, reserve_growth)
    return max(available, 0)


def physical_bytes_for(num_blocks: int, strides: list[int]) -> int:
    return sum(-(-num_blocks * s // VMM_GRANULE) * VMM_GRANULE for s in strides)


def blocks_within(num_bytes: int, strides: list[int], capacity: int) -> int:
    """``ExtensibleKVCache.blocks_within`` (extensible_kv_cache.py:313-318)."""
    n = min(num_bytes // sum(strides), capacity)
    while n > 0 and physical_bytes_for(n, strides) > num_bytes:
        n -= 1
    return n


@dataclass(frozen=True)
class Measure:
    """0.34's measurement after warmup (the oracle's ``extensible_measure``)."""

    kv_budget_after_warmup_bytes: int
    free_after_warmup_bytes: int
    committed_bytes: int
    reserved_headroom_bytes: int
    torch_reserve_growth_bytes: int
    num_kv_blocks: int
    capacity_blocks: int
    bytes_per_block: int

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def measure_after_warmup(*, budget: Budget, weights: int, non_torch: int, cudagraph_actual: int, warmup_peak: int,
                         reserve_growth: int, strides: list[int], capacity: int) -> Measure:
    """The oracle's ``compile_or_warm_up_model`` then vLLM's ``measure_kv_cache_blocks`` (extensible_kv_cache.py
    :621-715): the null block committed, the warmup's transient folded into the reserved headroom, the graphs
    captured, then the blocks that fit."""
    committed = physical_bytes_for(1, strides)
    free = budget.init_free_bytes - weights - non_torch - committed - cudagraph_actual
    peak = max(budget.peak_activation_bytes, warmup_peak)
    kv_bytes = measure_kv_cache_bytes(init_free=budget.init_free_bytes, free=free, committed=committed,
                                      requested=budget.requested_memory_bytes, transient_peak=peak,
                                      reserve_growth=reserve_growth)
    n = blocks_within(kv_bytes, strides, capacity)
    return Measure(kv_bytes, free, committed, peak, reserve_growth, n, capacity, sum(strides))
