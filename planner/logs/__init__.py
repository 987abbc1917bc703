"""Reading SGLang boot logs (0.5.9 and later), one module per concern:

- :mod:`planner.logs.lines`: physical lines, the ``[timestamp ranks]`` prefix, rank keys;
- :mod:`planner.logs.events`: the event dataclasses (one per SGLang message that matters);
- :mod:`planner.logs.messages`: message text -> events (the recognisers);
- :mod:`planner.logs.server_args`: the ``server_args=ServerArgs(...)`` dump parser;
- :mod:`planner.logs.launches`: events grouped into launches and ranks, ``parse_log``/``parse_file``,
  interleaving checks;
- :mod:`planner.logs.spec`: what a launch says about its speculative decoding (draft pools, DFLASH lines);
- :mod:`planner.logs.release_hints` (evidence tables) and :mod:`planner.logs.releases` (release
  detection from that evidence).
"""

from __future__ import annotations

from planner.logs.lines import (
    LogLine,
    iter_lines,
    parse_line,
    rank_key,
)
from planner.logs.events import (
    GIB,
    GIB_RESOLUTION,
    CudaGraphBatchSizes,
    CudaGraphBegin,
    CudaGraphEnd,
    CudaOutOfMemory,
    DFlashBlockSizeMismatch,
    DFlashDraftGraphDisabled,
    DFlashDraftRunner,
    DFlashFusedKV,
    Event,
    ExceptionMessage,
    Failure,
    InitDistributedEnd,
    InitializationFailed,
    KVCacheAllocated,
    KVCacheDtype,
    LoadWeightBegin,
    LoadWeightEnd,
    MambaCacheAllocated,
    MaxRunningRequestsCapped,
    MaxRunningRequestsReset,
    MaxTotalTokensClamped,
    MemoryPoolEnd,
    SWAPoolAllocated,
    NotEnoughMemory,
    SchedulerException,
    SchedulerSummary,
    ServerArgsDump,
    ServerReady,
    SpecVersion,
    VersionMarker,
)
from planner.logs.server_args import (
    parse_dataclass_repr,
    parse_dict_repr,
)
from planner.logs.launches import (
    Launch,
    ParsedLog,
    RankEvents,
    interleave_reasons,
    interleaved,
    parse_file,
    parse_log,
)
from planner.logs.spec import spec_lines
from planner.logs.releases import (
    VersionGuess,
    VersionHint,
    detect_version,
    guess_version,
)

__all__ = [
    "GIB",
    "GIB_RESOLUTION",
    "CudaGraphBatchSizes",
    "CudaGraphBegin",
    "CudaGraphEnd",
    "CudaOutOfMemory",
    "DFlashBlockSizeMismatch",
    "DFlashDraftGraphDisabled",
    "DFlashDraftRunner",
    "DFlashFusedKV",
    "Event",
    "ExceptionMessage",
    "Failure",
    "InitDistributedEnd",
    "InitializationFailed",
    "KVCacheAllocated",
    "KVCacheDtype",
    "Launch",
    "LoadWeightBegin",
    "LoadWeightEnd",
    "LogLine",
    "MambaCacheAllocated",
    "MaxRunningRequestsCapped",
    "MaxRunningRequestsReset",
    "MaxTotalTokensClamped",
    "MemoryPoolEnd",
    "SWAPoolAllocated",
    "NotEnoughMemory",
    "ParsedLog",
    "RankEvents",
    "SchedulerException",
    "SchedulerSummary",
    "ServerArgsDump",
    "ServerReady",
    "SpecVersion",
    "VersionGuess",
    "VersionHint",
    "VersionMarker",
    "detect_version",
    "guess_version",
    "interleave_reasons",
    "interleaved",
    "iter_lines",
    "parse_dataclass_repr",
    "parse_dict_repr",
    "spec_lines",
    "parse_file",
    "parse_line",
    "parse_log",
    "rank_key",
]
