"""The events a boot log reports: one dataclass per SGLang message that matters for memory.

Units
-----
SGLang prints ``GB`` where it means GiB (2^30 bytes); every ``*_gib`` field is that number as
printed (2 decimals, so +-0.005 GiB: :data:`GIB_RESOLUTION`). ``*_bytes`` properties are
approximations derived from it.

A line that is recognised by its leading words but does not have the expected fields is still
returned as its event class with ``malformed=True`` and the fields that could be read (others
``None``); see :mod:`planner.logs.messages` for the recognisers. Format strings are those of
``/work/shared/reference/sglang-0.5.11-memory.md`` section 7 (L1-L20) and ``sglang-versions.md``
section 4 (per-version differences).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar

from planner.logs.lines import rank_key

__all__ = [
    "GIB",
    "GIB_RESOLUTION",
    "Event",
    "ServerArgsDump",
    "InitDistributedEnd",
    "LoadWeightBegin",
    "LoadWeightEnd",
    "KVCacheDtype",
    "MambaCacheAllocated",
    "KVCacheAllocated",
    "MemoryPoolEnd",
    "SchedulerSummary",
    "MaxTotalTokensClamped",
    "CudaGraphBatchSizes",
    "CudaGraphBegin",
    "CudaGraphEnd",
    "MaxRunningRequestsReset",
    "SpecVersion",
    "DFlashDraftRunner",
    "DFlashBlockSizeMismatch",
    "DFlashFusedKV",
    "DFlashDraftGraphDisabled",
    "MaxRunningRequestsCapped",
    "ServerReady",
    "VersionMarker",
    "Failure",
    "NotEnoughMemory",
    "CudaOutOfMemory",
    "InitializationFailed",
    "SchedulerException",
    "ExceptionMessage",
]

GIB = 2**30
#: SGLang prints GiB values with 2 decimals.
GIB_RESOLUTION = 0.005


@dataclass(kw_only=True)
class Event:
    """Base of every event. ``text`` is the message without the ``[...]`` prefix."""

    kind: ClassVar[str] = "event"
    lineno: int
    timestamp: datetime | None
    rank: dict[str, int]
    text: str
    malformed: bool = False
    #: rank/timestamp were taken from the log record this unprefixed line continues
    inherited: bool = False

    @property
    def rank_key(self) -> str:
        return rank_key(self.rank)


@dataclass(kw_only=True)
class ServerArgsDump(Event):
    """L1: ``server_args=ServerArgs(...)`` (main process). ``args`` maps field -> Python value;
    values that are not Python literals (enum reprs, ``torch.bfloat16``, nested objects) are kept
    as their raw repr text and listed in ``unparsed``. ``complete`` is False when the closing
    parenthesis is missing (a truncated line). ``form``: "dataclass" for ``server_args=ServerArgs(...)``
    (0.5.9-0.5.18), "dict" for ``server_args={...}`` (0.5.19+, ``resolved_dict()``)."""

    kind: ClassVar[str] = "server_args"
    args: dict[str, Any] = field(default_factory=dict)
    complete: bool = True
    unparsed: list[str] = field(default_factory=list)
    form: str = "dataclass"

    def get(self, name: str, default: Any = None) -> Any:
        return self.args.get(name, default)


@dataclass(kw_only=True)
class InitDistributedEnd(Event):
    """L3 ``Init torch distributed ends. elapsed=.. s, mem usage=.. GB`` (<=0.5.20) or
    ``Memory baseline taken. mem usage=.. GB`` (0.5.21+, ``variant="baseline"``)."""

    kind: ClassVar[str] = "init_distributed_end"
    elapsed_s: float | None = None
    mem_usage_gib: float | None = None
    variant: str = "init_torch_distributed"


@dataclass(kw_only=True)
class LoadWeightBegin(Event):
    """L4 ``Load weight begin. avail mem=.. GB``. The second one on a rank is the draft's."""

    kind: ClassVar[str] = "load_weight_begin"
    avail_gib: float | None = None
    is_draft: bool = False


@dataclass(kw_only=True)
class LoadWeightEnd(Event):
    """L5 ``Load weight end. elapsed=.. s, type=Cls, [dtype=..|quant=.., ]avail mem=.. GB, mem usage=.. GB.``

    ``dtype`` is the 0.5.9 form (``dtype=torch.bfloat16``); ``quant`` is the method of the
    0.5.10+ ``quant=fp8, fmt=e4m3`` form and ``quant_str`` the whole ``quant=...`` text.
    ``variant="overlap"`` is 0.5.18+'s ``Load weight end. Committed real weights after CUDA graph
    capture in X s (...)`` (only ``elapsed_s`` is set)."""

    kind: ClassVar[str] = "load_weight_end"
    elapsed_s: float | None = None
    model_class: str | None = None
    dtype: str | None = None
    quant: str | None = None
    quant_str: str | None = None
    avail_gib: float | None = None
    mem_usage_gib: float | None = None
    variant: str = "serial"
    is_draft: bool = False

    @property
    def mem_usage_bytes(self) -> int | None:
        return None if self.mem_usage_gib is None else int(round(self.mem_usage_gib * GIB))


@dataclass(kw_only=True)
class KVCacheDtype(Event):
    """L6 ``Using KV cache dtype: torch.bfloat16``."""

    kind: ClassVar[str] = "kv_cache_dtype"
    dtype: str | None = None


@dataclass(kw_only=True)
class MambaCacheAllocated(Event):
    """L7/L7' ``Mamba Cache is allocated. max_mamba_cache_size: M, conv_state size: ..GB,
    ssm_state size: ..GB[ intermediate_ssm_state_cache size: ..GB intermediate_conv_window_cache size: ..GB]``."""

    kind: ClassVar[str] = "mamba_cache"
    max_mamba_cache_size: int | None = None
    conv_gib: float | None = None
    ssm_gib: float | None = None
    intermediate_ssm_gib: float | None = None
    intermediate_conv_gib: float | None = None
    is_draft: bool = False

    @property
    def total_gib(self) -> float | None:
        parts = [self.conv_gib, self.ssm_gib]
        if None in parts:
            return None
        return sum(p for p in (self.conv_gib, self.ssm_gib, self.intermediate_ssm_gib,
                               self.intermediate_conv_gib) if p is not None)

    @property
    def total_bytes(self) -> int | None:
        t = self.total_gib
        return None if t is None else int(round(t * GIB))


@dataclass(kw_only=True)
class KVCacheAllocated(Event):
    """L8 ``KV Cache is allocated. [dtype: torch.X, ]#tokens: N, K size: .. GB, V size: .. GB``.

    Also: the MLA / single-buffer form ``KV size: .. GB`` (``kv_gib``); 0.5.17+'s
    ``{label} KV Cache is allocated`` (``label``); 0.5.18+'s ``KV Cache VA upper bound``
    (``va_upper_bound``); 0.5.16+'s ``Post-capture KV sizing: KV cache allocated. dtype: ..,
    #tokens: .., KV size: .. GB, avail mem=.. GB`` (``post_capture``, ``avail_gib``).
    The second unlabelled pool on a rank is the draft's (``is_draft``)."""

    kind: ClassVar[str] = "kv_cache"
    dtype: str | None = None
    num_tokens: int | None = None
    k_gib: float | None = None
    v_gib: float | None = None
    kv_gib: float | None = None
    label: str | None = None
    va_upper_bound: bool = False
    post_capture: bool = False
    avail_gib: float | None = None
    is_draft: bool = False

    @property
    def total_gib(self) -> float | None:
        if self.kv_gib is not None:
            return self.kv_gib
        if self.k_gib is None and self.v_gib is None:
            return None
        return (self.k_gib or 0.0) + (self.v_gib or 0.0)

    @property
    def total_bytes(self) -> int | None:
        t = self.total_gib
        return None if t is None else int(round(t * GIB))


@dataclass(kw_only=True)
class SWAPoolAllocated(Event):
    """``SWAKVPool mem usage: X GB, swa size: S, full size: N`` (srt/mem_cache/swa_memory_pool.py:95-98 @0.5.11;
    0.5.23 also ``SWAKVPool VA upper bound: ...``): a hybrid sliding-window model's pool, whose two sub-pools each log
    a 'KV Cache is allocated' line just before it."""

    kind: ClassVar[str] = "swa_pool"
    gib: float | None = None
    swa_size: int | None = None
    full_size: int | None = None


@dataclass(kw_only=True)
class MemoryPoolEnd(Event):
    """L9 ``Memory pool end. avail mem=.. GB`` (local to the rank). Under spec the second is the draft's."""

    kind: ClassVar[str] = "memory_pool_end"
    avail_gib: float | None = None
    is_draft: bool = False


@dataclass(kw_only=True)
class SchedulerSummary(Event):
    """L16 ``max_total_num_tokens=N, chunked_prefill_size=c, max_prefill_tokens=p,
    max_running_requests=R, context_len=L, available_gpu_mem=x GB`` (tp_rank 0, end of init)."""

    kind: ClassVar[str] = "scheduler_summary"
    max_total_num_tokens: int | None = None
    chunked_prefill_size: int | None = None
    max_prefill_tokens: int | None = None
    max_running_requests: int | None = None
    context_len: int | None = None
    available_gpu_mem_gib: float | None = None
    available_cpu_mem_gib: float | None = None
    extra: dict[str, float] = field(default_factory=dict)


@dataclass(kw_only=True)
class MaxTotalTokensClamped(Event):
    """L17 ``max_total_tokens=T is larger than the profiled value N. Use the profiled value instead.``"""

    kind: ClassVar[str] = "max_total_tokens_clamped"
    requested: int | None = None
    profiled: int | None = None


@dataclass(kw_only=True)
class CudaGraphBatchSizes(Event):
    """L10 ``Capture cuda graph bs [1, 2, ...]``."""

    kind: ClassVar[str] = "cuda_graph_bs"
    graph: str = "decode"
    batch_sizes: list[int] | None = None


@dataclass(kw_only=True)
class CudaGraphBegin(Event):
    """L11/L13/L14/L15 ``Capture {cuda graph|piecewise CUDA graph|draft cuda graph|draft extend cuda graph} begin. ... avail mem=.. GB``."""

    kind: ClassVar[str] = "cuda_graph_begin"
    graph: str = "decode"
    avail_gib: float | None = None


@dataclass(kw_only=True)
class CudaGraphEnd(Event):
    """L12-L15 ``Capture ... end. Time elapsed: t s. mem usage=.. GB. avail mem=.. GB.``"""

    kind: ClassVar[str] = "cuda_graph_end"
    graph: str = "decode"
    elapsed_s: float | None = None
    mem_usage_gib: float | None = None
    avail_gib: float | None = None


@dataclass(kw_only=True)
class MaxRunningRequestsReset(Event):
    """L19 ``Max running requests is reset to 48 for speculative decoding. ...`` (main process,
    logged in ``ServerArgs.__post_init__``, i.e. before the server_args dump)."""

    kind: ClassVar[str] = "max_running_requests_reset"
    value: int | None = None


@dataclass(kw_only=True)
class SpecVersion(Event):
    """L20 ``Spec v1 is used for ... because X.`` (``version=1``, ``reason="X"``) or
    ``Spec v2 is enabled by default for ...`` (``version=2``)."""

    kind: ClassVar[str] = "spec_version"
    version: int | None = None
    reason: str | None = None


@dataclass(kw_only=True)
class DFlashDraftRunner(Event):
    """``Initialized DFLASH draft runner. attention_backend=X, model=Y, block_size=N, draft_window_size=W,
    compact_cache=B`` (TP0; srt/speculative/dflash_worker.py @0.5.11, dflash_worker_v2.py:547 @0.5.23; the
    first form had only attention_backend, model, block_size). ``block_size`` is the number of draft tokens D
    the worker runs with (``speculative_num_draft_tokens``); ``model`` the draft's class. Other ``key=value``
    fields (forks print more) are kept in ``extra``."""

    kind: ClassVar[str] = "dflash_draft_runner"
    attention_backend: str | None = None
    model_class: str | None = None
    block_size: int | None = None
    draft_window_size: int | None = None
    compact_cache: bool | None = None
    extra: dict[str, str] = field(default_factory=dict)


@dataclass(kw_only=True)
class DFlashBlockSizeMismatch(Event):
    """``DFLASH block size mismatch: using speculative_num_draft_tokens=N but draft config block_size=M.``
    (srt/speculative/dflash_worker_v2.py @0.5.16-0.5.23): the launch's D differs from the draft's own."""

    kind: ClassVar[str] = "dflash_block_size_mismatch"
    num_draft_tokens: int | None = None
    config_block_size: int | None = None


@dataclass(kw_only=True)
class DFlashFusedKV(Event):
    """``DFLASH fused KV materialization enabled. n_layers=L, num_kv_heads=H, head_dim=D``: the draft's own KV
    geometry as the worker sees it (per rank), the figures its KV pool is built from."""

    kind: ClassVar[str] = "dflash_fused_kv"
    n_layers: int | None = None
    num_kv_heads: int | None = None
    head_dim: int | None = None


@dataclass(kw_only=True)
class DFlashDraftGraphDisabled(Event):
    """``Disable DFLASH draft cuda graph because only X GB GPU memory is available after target backend
    initialization.`` (0.5.16+), or ``... because dp attention is enabled`` (``avail_gib`` None)."""

    kind: ClassVar[str] = "dflash_draft_graph_disabled"
    avail_gib: float | None = None
    reason: str = ""


@dataclass(kw_only=True)
class MaxRunningRequestsCapped(Event):
    """``max_running_requests is capped to N by the mamba state cache (max_mamba_cache_size=M, S state slots
    per request). ...`` (srt/mem_cache/kv_cache_configurator.py:3141-3148 @0.5.23, from 0.5.20): the mamba pool
    holds M slots and each request takes S (5 under extra_buffer with DFLASH), so N = M // S."""

    kind: ClassVar[str] = "max_running_requests_capped"
    value: int | None = None
    max_mamba_cache_size: int | None = None
    slots_per_request: int | None = None


@dataclass(kw_only=True)
class ServerReady(Event):
    """``The server is fired up and ready to roll!`` (``how="fired_up"``) or ``Uvicorn running on URL``."""

    kind: ClassVar[str] = "server_ready"
    how: str = "fired_up"
    url: str | None = None


@dataclass(kw_only=True)
class VersionMarker(Event):
    """A line whose mere presence bounds the SGLang version (see :data:`_TEXT_HINTS`)."""

    kind: ClassVar[str] = "version_marker"
    key: str = ""
    lo: str | None = None
    hi: str | None = None
    source: str = ""


@dataclass(kw_only=True)
class Failure(Event):
    """Base of failure events. ``exc_type`` is the exception class printed before ``:`` (if any)."""

    kind: ClassVar[str] = "failure"
    exc_type: str | None = None
    message: str = ""


@dataclass(kw_only=True)
class NotEnoughMemory(Failure):
    """``RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.`` (check 15)."""

    kind: ClassVar[str] = "not_enough_memory"
    mem_fraction_static: float | None = None  # from an optional " Current value: mem_fraction_static=..."


_UNIT_GIB = {"B": 1 / GIB, "bytes": 1 / GIB, "KiB": 1 / 2**20, "KB": 1 / 2**20, "MiB": 1 / 1024,
             "MB": 1 / 1024, "GiB": 1.0, "GB": 1.0, "TiB": 1024.0, "TB": 1024.0}


@dataclass(kw_only=True)
class CudaOutOfMemory(Failure):
    """``torch.OutOfMemoryError: CUDA out of memory. Tried to allocate X GiB. GPU 0 has a total
    capacity of Y GiB of which Z MiB is free. ...`` (also the older ``(GPU 0; Y GiB total
    capacity; ...)`` text, ``CUDA error: out of memory``, and ``Exception: Capture cuda graph
    failed: CUDA out of memory...`` which sets ``during_capture``)."""

    kind: ClassVar[str] = "cuda_oom"
    tried_amount: float | None = None
    tried_unit: str | None = None
    gpu_index: int | None = None
    total_capacity_gib: float | None = None
    free_gib: float | None = None
    during_capture: bool = False

    @property
    def tried_gib(self) -> float | None:
        if self.tried_amount is None or self.tried_unit not in _UNIT_GIB:
            return None
        return self.tried_amount * _UNIT_GIB[self.tried_unit]

    @property
    def tried_bytes(self) -> int | None:
        g = self.tried_gib
        return None if g is None else int(round(g * GIB))


@dataclass(kw_only=True)
class InitializationFailed(Failure):
    """Main process: ``RuntimeError: Initialization failed. Please see the error messages above.``"""

    kind: ClassVar[str] = "initialization_failed"


@dataclass(kw_only=True)
class SchedulerException(Failure):
    """Scheduler: ``Scheduler hit an exception: {traceback}`` (the cause follows on later lines)."""

    kind: ClassVar[str] = "scheduler_exception"


@dataclass(kw_only=True)
class ExceptionMessage(Failure):
    """A ``ValueError: ...`` / ``AssertionError: ...`` / ``RuntimeError: ...`` / ``Exception: ...`` line."""

    kind: ClassVar[str] = "exception"


_PROGRESS_TYPES = (InitDistributedEnd, LoadWeightBegin, LoadWeightEnd, KVCacheDtype, MambaCacheAllocated,
                   KVCacheAllocated, MemoryPoolEnd, SchedulerSummary, MaxTotalTokensClamped,
                   CudaGraphBatchSizes, CudaGraphBegin, CudaGraphEnd, ServerReady)
_PREAMBLE_TYPES = (MaxRunningRequestsReset, SpecVersion)
