"""Parse SGLang boot logs (0.5.9 and later) into memory events, launches and failures.

Pure functions: the only I/O is :func:`parse_file`, a convenience wrapper that reads one file and
records its modification time (for stale-log checks).

Line format
-----------
SGLang's log format is ``[%(asctime)s{.%(msecs)03d if SGLANG_LOG_MS}{prefix}] %(message)s`` with the
date format ``%Y-%m-%d %H:%M:%S`` (``utils/common.py:1206-1224`` in 0.5.11). The scheduler prefix is
built from `` DP{r}``, `` PP{r}``, `` ATTN_CP{r}``, `` MOE_DP{r}``, `` TP{r}`` (only if tp>1) and
`` EP{r}`` (``scheduler.py:3845-3857``); the main process has no prefix, so at tp=1 the scheduler's
lines have no rank either. Lines without that prefix (tracebacks, ``#`` comments, other programs'
output) are kept as :class:`LogLine` with ``timestamp=None``. An unprefixed line that continues a
multi-line log record (the traceback in ``Scheduler hit an exception: ...``) inherits the record's
rank and timestamp (``Event.inherited=True``); a bare ``Traceback (most recent call last):`` line
starts an uncaught traceback of unknown origin, whose lines get ``rank={}`` and no timestamp.
ANSI colour codes are stripped, and a leading ``container | `` style prefix is tolerated.

Units
-----
SGLang prints ``GB`` where it means GiB (2^30 bytes); every ``*_gib`` field is that number as
printed (2 decimals, so +-0.005 GiB: :data:`GIB_RESOLUTION`). ``*_bytes`` properties are
approximations derived from it.

Robustness
----------
Nothing here raises on odd input. Unknown lines are ignored. A line that is recognised by its
leading words but does not have the expected fields is still returned as its event class with
``malformed=True`` and the fields that could be read (others ``None``).

Format strings are those of ``/work/shared/reference/sglang-0.5.11-memory.md`` section 7 (L1-L20)
and ``sglang-versions.md`` section 4 (per-version differences).
"""

from __future__ import annotations

import ast
import functools
import gzip
import math
import os
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar, Iterable, Iterator

__all__ = [
    "GIB",
    "GIB_RESOLUTION",
    "LogLine",
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
    "ServerReady",
    "VersionMarker",
    "Failure",
    "NotEnoughMemory",
    "CudaOutOfMemory",
    "InitializationFailed",
    "SchedulerException",
    "ExceptionMessage",
    "RankEvents",
    "Launch",
    "ParsedLog",
    "VersionHint",
    "VersionGuess",
    "rank_key",
    "parse_line",
    "iter_lines",
    "parse_dataclass_repr",
    "parse_log",
    "parse_file",
    "guess_version",
    "detect_version",
    "interleave_reasons",
    "interleaved",
]

GIB = 2**30
#: SGLang prints GiB values with 2 decimals.
GIB_RESOLUTION = 0.005

# --------------------------------------------------------------------------------------------
# Lines
# --------------------------------------------------------------------------------------------

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_PREFIX = re.compile(
    r"\[(?P<ts>\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2})(?:[.,](?P<frac>\d{1,6}))?"
    r"(?P<ranks>(?: +[A-Z][A-Z_]*\d+)*)\] ?"
)
_RANK_TOKEN = re.compile(r"([A-Z][A-Z_]*?)(\d+)$")


@dataclass
class LogLine:
    """One physical line. ``timestamp``/``rank`` come from the ``[...]`` prefix (None/{} without)."""

    lineno: int  # 1-based
    timestamp: datetime | None
    rank: dict[str, int]
    text: str  # the message after the prefix (the whole line when there is no prefix)
    prefixed: bool = False

    @property
    def rank_key(self) -> str:
        return rank_key(self.rank)


def rank_key(rank: dict[str, int]) -> str:
    """``{"DP": 1, "TP": 3}`` -> ``"DP1 TP3"``; ``{}`` (main process, or any process at tp=1) -> ``""``."""
    return " ".join(f"{k}{v}" for k, v in rank.items())


@functools.lru_cache(maxsize=4096)
def _timestamp(s: str) -> datetime | None:
    try:  # "YYYY-mm-dd HH:MM:SS" (fixed width); much faster than strptime
        return datetime(int(s[0:4]), int(s[5:7]), int(s[8:10]), int(s[11:13]), int(s[14:16]), int(s[17:19]))
    except ValueError:
        return None


def parse_line(raw: str, lineno: int = 0) -> LogLine:
    """Split one line into timestamp, rank prefix and message. Never raises."""
    s = (_ANSI.sub("", raw) if "\x1b" in raw else raw).rstrip("\r\n")
    m = _PREFIX.match(s)
    if m is None:
        m2 = _PREFIX.search(s)
        # "container-1  | [2026-...] msg" (docker compose), "host python[12]: [2026-...] msg"
        if m2 is not None and m2.start() > 0 and s[m2.start() - 1] in " \t|:":
            m = m2
    if m is None:
        return LogLine(lineno, None, {}, s, False)
    ts = _timestamp(m.group("ts"))
    frac = m.group("frac")
    if ts is not None and frac:
        ts = ts.replace(microsecond=int(frac.ljust(6, "0")[:6]))
    rank: dict[str, int] = {}
    for tok in m.group("ranks").split():
        t = _RANK_TOKEN.match(tok)
        if t:
            rank[t.group(1)] = int(t.group(2))
    return LogLine(lineno, ts, rank, s[m.end():], True)


def iter_lines(text: str | Iterable[str]) -> Iterator[LogLine]:
    """Yield a :class:`LogLine` per physical line of ``text`` (a string or an iterable of lines)."""
    lines = text.splitlines() if isinstance(text, str) else text
    for i, raw in enumerate(lines, 1):
        yield parse_line(raw, i)


# --------------------------------------------------------------------------------------------
# Events
# --------------------------------------------------------------------------------------------


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
    parenthesis is missing (a truncated line)."""

    kind: ClassVar[str] = "server_args"
    args: dict[str, Any] = field(default_factory=dict)
    complete: bool = True
    unparsed: list[str] = field(default_factory=list)

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


#: graph kinds: "decode" (``Capture cuda graph``), "draft", "draft_extend", "piecewise"
_GRAPH_KINDS = {
    "cuda graph": "decode",
    "draft cuda graph": "draft",
    "draft extend cuda graph": "draft_extend",
    "piecewise cuda graph": "piecewise",
}


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

# --------------------------------------------------------------------------------------------
# Line -> events
# --------------------------------------------------------------------------------------------

_NUM = r"(-?\d+(?:\.\d+)?|-?inf|nan)"


def _num(pattern: str, text: str) -> float | None:
    m = re.search(pattern, text)
    if m is None:
        return None
    try:
        return float(m.group(1))
    except (TypeError, ValueError):
        return None


def _int(pattern: str, text: str) -> int | None:
    m = re.search(pattern, text)
    if m is None:
        return None
    try:
        return int(m.group(1))
    except (TypeError, ValueError):
        return None


_AVAIL = r"avail mem=" + _NUM + r"\s*GB"
_MEM_USAGE = r"mem usage=" + _NUM + r"\s*GB"
_GRAPH_RE = re.compile(r"^Capture (draft extend cuda graph|draft cuda graph|piecewise cuda graph|cuda graph) (begin|end)\b",
                       re.I)
_GRAPH_BS_RE = re.compile(r"^Capture (?:(draft extend|draft|piecewise) )?cuda graph (?:bs|num tokens)\s*(.*)$", re.I)
_KV_RE = re.compile(r"^(?:(?P<label>\S.*?) )?KV Cache (?P<verb>is allocated|VA upper bound)\b")
_EXC_RE = re.compile(
    r"^(?P<type>(?:[A-Za-z_]\w*\.)*(?:ValueError|AssertionError|RuntimeError|Exception))(?::\s?(?P<msg>.*))?$")
_EXC_PREFIX_RE = re.compile(r"^((?:[A-Za-z_]\w*\.)*\w*(?:Error|Exception)):\s?")
_OOM_RE = re.compile(r"CUDA out of memory|CUDA error: out of memory")
_UNIT = r"\s*([KMGT]i?B|B|bytes)"


def _split_exc(text: str) -> tuple[str | None, str]:
    m = _EXC_PREFIX_RE.match(text)
    if m:
        return m.group(1), text[m.end():]
    return None, text


@functools.lru_cache(maxsize=1)
def _text_hint_re() -> re.Pattern:
    return re.compile("|".join(re.escape(needle) for _, needle, _, _, _ in _TEXT_HINTS))


def _hints_for_line(ln: LogLine, base: dict) -> list[Event]:
    out: list[Event] = []
    for key, needle, lo, hi, source in _TEXT_HINTS:
        if needle in ln.text:
            out.append(VersionMarker(**base, key=key, lo=lo, hi=hi, source=source))
    return out


def _parse_events(ln: LogLine, base: dict) -> list[Event]:
    """Events for one line (usually 0 or 1; a version marker may come in addition)."""
    t = ln.text
    ts = t.strip()
    if not ts:
        return []
    evs: list[Event] = []
    ev = _parse_event(ts, base)
    if ev is not None:
        evs.append(ev)
    if _text_hint_re().search(ts):
        evs.extend(_hints_for_line(ln, base))
    return evs


def _parse_event(t: str, base: dict) -> Event | None:  # noqa: C901 - a flat dispatch is clearest
    # ---- server args dump (L1)
    i = t.find("server_args=ServerArgs(")
    if i >= 0 or t.startswith("ServerArgs("):
        body = t[i + len("server_args="):] if i >= 0 else t
        try:
            args, complete, unparsed = parse_dataclass_repr(body)
        except Exception:  # pragma: no cover - parse_dataclass_repr does not raise
            args, complete, unparsed = {}, False, []
        return ServerArgsDump(**base, args=args, complete=complete, unparsed=unparsed,
                              malformed=not args)

    # ---- failures
    if "Not enough memory. Please try to increase --mem-fraction-static" in t:
        exc, msg = _split_exc(t)
        return NotEnoughMemory(**base, exc_type=exc, message=msg,
                               mem_fraction_static=_num(r"mem_fraction_static=" + _NUM, t))
    if _OOM_RE.search(t):
        exc, msg = _split_exc(t)
        tried = re.search(r"Tried to allocate " + _NUM + _UNIT, t)
        total = re.search(r"total capacity of " + _NUM + _UNIT, t) or re.search(_NUM + _UNIT + r" total capacity", t)
        free = re.search(r"of which " + _NUM + _UNIT + r" is free", t) or re.search(_NUM + _UNIT + r" free\b", t)

        def gib(m: re.Match | None) -> float | None:
            if m is None or m.group(2) not in _UNIT_GIB:
                return None
            try:
                return float(m.group(1)) * _UNIT_GIB[m.group(2)]
            except ValueError:
                return None

        return CudaOutOfMemory(
            **base, exc_type=exc, message=msg,
            tried_amount=float(tried.group(1)) if tried else None,
            tried_unit=tried.group(2) if tried else None,
            gpu_index=_int(r"GPU (\d+)", t),
            total_capacity_gib=gib(total), free_gib=gib(free),
            during_capture="capture" in t.lower() and "graph" in t.lower(),
        )
    if "Initialization failed" in t:
        exc, msg = _split_exc(t)
        return InitializationFailed(**base, exc_type=exc, message=msg)
    if "Scheduler hit an exception" in t:
        j = t.find("Scheduler hit an exception")
        msg = t[j + len("Scheduler hit an exception"):].lstrip(": ").strip()
        return SchedulerException(**base, exc_type=None, message=msg)
    m = _EXC_RE.match(t)
    if m:
        return ExceptionMessage(**base, exc_type=m.group("type"), message=(m.group("msg") or "").strip())

    # ---- memory lines
    if t.startswith("Load weight begin"):
        avail = _num(_AVAIL, t)
        return LoadWeightBegin(**base, avail_gib=avail, malformed=avail is None)
    if t.startswith("Load weight end"):
        if "Committed real weights" in t:
            el = _num(r"\bin " + _NUM + r"\s*s\b", t)
            return LoadWeightEnd(**base, elapsed_s=el, variant="overlap", malformed=el is None)
        elapsed = _num(r"elapsed=" + _NUM + r"\s*s\b", t)
        mc = re.search(r"type=([\w.]+)", t)
        dt = re.search(r"(?:^|[ ,])dtype=([\w.]+)", t)
        qs = re.search(r"type=[\w.]+, (quant=.*?), avail mem=", t)
        quant_str = qs.group(1) if qs else None
        quant = None
        if quant_str:
            qm = re.match(r"quant=([^,\s]+)", quant_str)
            quant = qm.group(1) if qm else None
        avail = _num(_AVAIL, t)
        usage = _num(_MEM_USAGE, t)
        return LoadWeightEnd(**base, elapsed_s=elapsed, model_class=mc.group(1) if mc else None,
                             dtype=dt.group(1) if dt else None, quant=quant, quant_str=quant_str,
                             avail_gib=avail, mem_usage_gib=usage,
                             malformed=None in (elapsed, avail, usage) or mc is None)
    if t.startswith("Using KV cache dtype"):
        m2 = re.match(r"Using KV cache dtype:\s*(\S+)", t)
        return KVCacheDtype(**base, dtype=m2.group(1) if m2 else None, malformed=m2 is None)
    if "Mamba Cache is allocated" in t:
        size = _int(r"max_mamba_cache_size:\s*(\d+)", t)
        conv = _num(r"(?<!_)conv_state size:\s*" + _NUM + r"\s*GB", t)
        ssm = _num(r"(?<!_)ssm_state size:\s*" + _NUM + r"\s*GB", t)
        iss = _num(r"intermediate_ssm_state_cache size:\s*" + _NUM + r"\s*GB", t)
        icw = _num(r"intermediate_conv_window_cache size:\s*" + _NUM + r"\s*GB", t)
        return MambaCacheAllocated(**base, max_mamba_cache_size=size, conv_gib=conv, ssm_gib=ssm,
                                   intermediate_ssm_gib=iss, intermediate_conv_gib=icw,
                                   malformed=None in (size, conv, ssm) or ((iss is None) != (icw is None)))
    if t.startswith("Post-capture KV sizing: KV cache allocated"):
        dtm = re.search(r"dtype:\s*([\w.]+)", t)
        n = _int(r"#tokens:\s*(\d+)", t)
        kv = _num(r"KV size:\s*" + _NUM + r"\s*GB", t)
        return KVCacheAllocated(**base, dtype=dtm.group(1) if dtm else None, num_tokens=n, kv_gib=kv,
                                avail_gib=_num(_AVAIL, t), post_capture=True, malformed=None in (n, kv))
    km = _KV_RE.match(t)
    if km:
        label = km.group("label")
        dtm = re.search(r"dtype:\s*([\w.]+)", t)
        n = _int(r"#tokens:\s*(\d+)", t)
        k = _num(r"(?<![A-Za-z])K size:\s*" + _NUM + r"\s*GB", t)
        v = _num(r"(?<![A-Za-z])V size:\s*" + _NUM + r"\s*GB", t)
        kv = _num(r"KV size:\s*" + _NUM + r"\s*GB", t)
        ok = n is not None and (kv is not None or (k is not None and v is not None))
        return KVCacheAllocated(**base, dtype=dtm.group(1) if dtm else None, num_tokens=n, k_gib=k, v_gib=v,
                                kv_gib=kv, label=label, va_upper_bound=km.group("verb") == "VA upper bound",
                                malformed=not ok)
    if t.startswith("Memory pool end"):
        avail = _num(_AVAIL, t)
        return MemoryPoolEnd(**base, avail_gib=avail, malformed=avail is None)
    if t.startswith("max_total_num_tokens="):
        vals: dict[str, float] = {}
        for k_, v_ in re.findall(r"(\w+)=" + _NUM, t):
            try:
                vals[k_] = float(v_)
            except ValueError:
                pass

        def iv(name: str) -> int | None:
            x = vals.pop(name, None)
            return None if x is None or not math.isfinite(x) else int(x)

        ev = SchedulerSummary(
            **base,
            max_total_num_tokens=iv("max_total_num_tokens"),
            chunked_prefill_size=iv("chunked_prefill_size"),
            max_prefill_tokens=iv("max_prefill_tokens"),
            max_running_requests=iv("max_running_requests"),
            context_len=iv("context_len"),
            available_gpu_mem_gib=vals.pop("available_gpu_mem", None),
            available_cpu_mem_gib=vals.pop("available_cpu_mem", None),
        )
        ev.extra = vals
        ev.malformed = ev.max_total_num_tokens is None or ev.max_running_requests is None
        return ev
    if t.startswith("max_total_tokens=") and "profiled value" in t:
        req = _int(r"max_total_tokens=(\d+)", t)
        prof = _int(r"profiled value (\d+)", t)
        return MaxTotalTokensClamped(**base, requested=req, profiled=prof, malformed=None in (req, prof))
    if t[:8].lower() == "capture ":
        gm = _GRAPH_RE.match(t)
        if gm:
            graph = _GRAPH_KINDS[gm.group(1).lower()]
            avail = _num(_AVAIL, t)
            if gm.group(2).lower() == "begin":
                return CudaGraphBegin(**base, graph=graph, avail_gib=avail, malformed=avail is None)
            el = _num(r"Time elapsed:\s*" + _NUM + r"\s*s\b", t)
            usage = _num(_MEM_USAGE, t)
            return CudaGraphEnd(**base, graph=graph, elapsed_s=el, mem_usage_gib=usage, avail_gib=avail,
                                malformed=None in (el, usage, avail))
        bm = _GRAPH_BS_RE.match(t)
        if bm:
            graph = {"draft extend": "draft_extend", "draft": "draft", "piecewise": "piecewise"}.get(
                (bm.group(1) or "").lower(), "decode")
            bs: list[int] | None = None
            try:
                val = ast.literal_eval(bm.group(2).strip())
                if isinstance(val, (list, tuple)) and all(isinstance(x, int) for x in val):
                    bs = list(val)
            except Exception:
                bs = None
            return CudaGraphBatchSizes(**base, graph=graph, batch_sizes=bs, malformed=bs is None)
    if t.startswith("Init torch distributed ends"):
        el = _num(r"elapsed=" + _NUM + r"\s*s\b", t)
        usage = _num(_MEM_USAGE, t)
        return InitDistributedEnd(**base, elapsed_s=el, mem_usage_gib=usage, malformed=usage is None)
    if t.startswith("Memory baseline taken"):
        usage = _num(_MEM_USAGE, t)
        return InitDistributedEnd(**base, mem_usage_gib=usage, variant="baseline", malformed=usage is None)

    # ---- warnings / milestones
    if "Max running requests is reset to" in t:
        val = _int(r"Max running requests is reset to (\d+)", t)
        return MaxRunningRequestsReset(**base, value=val, malformed=val is None)
    if "Spec v1 is used" in t:
        m3 = re.search(r"Spec v1 is used\b.*?\bbecause (.*?)\.?\s*$", t)
        return SpecVersion(**base, version=1, reason=m3.group(1) if m3 else None)
    if "Spec v2 is enabled" in t:
        return SpecVersion(**base, version=2)
    if "The server is fired up and ready to roll" in t:
        return ServerReady(**base, how="fired_up")
    if "Uvicorn running on" in t:
        m4 = re.search(r"Uvicorn running on (\S+)", t)
        return ServerReady(**base, how="uvicorn", url=m4.group(1) if m4 else None)
    return None


# --------------------------------------------------------------------------------------------
# Dataclass repr (ServerArgs) parsing
# --------------------------------------------------------------------------------------------

_FIELD_NAME = re.compile(r"\s*([A-Za-z_]\w*)\s*=")
_CLOSERS = {"(": ")", "[": "]", "{": "}"}


def _skip_string(s: str, i: int) -> int:
    """``s[i]`` is a quote; return the index after the closing quote (or len(s) if unterminated)."""
    q = s[i]
    n = len(s)
    if s.startswith(q * 3, i):
        j = s.find(q * 3, i + 3)
        return n if j < 0 else j + 3
    i += 1
    while i < n:
        c = s[i]
        if c == "\\":
            i += 2
            continue
        if c == q:
            return i + 1
        i += 1
    return n


def _convert_value(raw: str) -> tuple[Any, bool]:
    s = raw.strip()
    try:
        return ast.literal_eval(s), True
    except Exception:
        pass
    low = s.lower()
    if low in ("inf", "+inf", "-inf", "nan"):
        return float(low), True
    return s, False


def parse_dataclass_repr(text: str) -> tuple[dict[str, Any], bool, list[str]]:
    """Parse a dataclass repr such as ``ServerArgs(model_path='m', tp_size=2, ...)``.

    Returns ``(fields, complete, unparsed)``: field -> Python value (``ast.literal_eval``; nested
    lists/dicts/tuples/strings/None/bools/floats work, ``inf``/``nan`` too); values that are not
    literals are kept as their raw text and their names listed in ``unparsed``. ``complete`` is
    False when the text ends before the closing parenthesis (a truncated line). Commas, ``=`` and
    brackets inside quoted strings are handled; never raises.
    """
    s = text.strip()
    m = re.match(r"[A-Za-z_][\w.]*\(", s)
    if m:
        s = s[m.end():]
    fields: dict[str, Any] = {}
    unparsed: list[str] = []
    n = len(s)
    i = 0
    complete = False

    def add(name: str, raw: str) -> None:
        val, ok = _convert_value(raw)
        fields[name] = val
        if not ok and name not in unparsed:
            unparsed.append(name)

    while i < n:
        fm = _FIELD_NAME.match(s, i)
        if fm is None:
            if s[i:].strip().startswith(")"):
                complete = True
            break
        name = fm.group(1)
        i = start = fm.end()
        stack: list[str] = []
        ended = False
        while i < n:
            c = s[i]
            if c in "'\"":
                i = _skip_string(s, i)
                continue
            if c == "<" and not stack and not s[start:i].strip():
                j = s.find(">", i)  # <Enum.MEMBER: 1>, <function f at 0x..>
                i = n if j < 0 else j + 1
                continue
            if c in _CLOSERS:
                stack.append(_CLOSERS[c])
            elif c in ")]}":
                if not stack:  # the dataclass's own closing parenthesis
                    add(name, s[start:i])
                    complete = True
                    ended = True
                    i = n
                    break
                stack.pop()
            elif c == "," and not stack:
                add(name, s[start:i])
                i += 1
                ended = True
                break
            i += 1
        if not ended:  # ran off the end: truncated value
            add(name, s[start:n])
            if name not in unparsed and stack:
                unparsed.append(name)
            break
    return fields, complete, unparsed


# --------------------------------------------------------------------------------------------
# Launches
# --------------------------------------------------------------------------------------------


@dataclass
class RankEvents:
    """Events of one rank prefix within a launch (``key`` "" = main process and/or tp=1 scheduler)."""

    key: str
    rank: dict[str, int]
    events: list[Event] = field(default_factory=list)

    def of(self, cls: type, *, draft: bool | None = None) -> list:
        return [e for e in self.events if isinstance(e, cls)
                and (draft is None or getattr(e, "is_draft", False) == draft)]

    def _first(self, cls: type, draft: bool | None = False) -> Any:
        xs = self.of(cls, draft=draft)
        return xs[0] if xs else None

    @property
    def load_begin(self) -> LoadWeightBegin | None:
        return self._first(LoadWeightBegin)

    @property
    def load_end(self) -> LoadWeightEnd | None:
        return self._first(LoadWeightEnd)

    @property
    def draft_load_end(self) -> LoadWeightEnd | None:
        return self._first(LoadWeightEnd, True)

    @property
    def mamba_cache(self) -> MambaCacheAllocated | None:
        return self._first(MambaCacheAllocated)

    @property
    def kv_cache(self) -> KVCacheAllocated | None:
        return self._first(KVCacheAllocated)

    @property
    def draft_kv_cache(self) -> KVCacheAllocated | None:
        return self._first(KVCacheAllocated, True)

    @property
    def memory_pool_end(self) -> MemoryPoolEnd | None:
        return self._first(MemoryPoolEnd)

    @property
    def draft_memory_pool_end(self) -> MemoryPoolEnd | None:
        return self._first(MemoryPoolEnd, True)

    @property
    def cuda_graph_ends(self) -> list[CudaGraphEnd]:
        return self.of(CudaGraphEnd)

    @property
    def failures(self) -> list[Failure]:
        return self.of(Failure)


_GENERIC_FAILURES = (SchedulerException, InitializationFailed)
_DRAFT_CLASS = re.compile(r"MTP$|NextN|Eagle|EAGLE|Draft|draft")


@dataclass
class Launch:
    """One server start. ``start_reason``: "first_event", "server_args", "load_after_done"
    (a ``Load weight begin`` on a rank whose earlier sequence completed or failed), "reload"
    (a ``Load weight begin`` that cannot be a draft load), "failure_after_completed" (an
    uncaught traceback of unknown origin after a completed launch)."""

    index: int
    start_reason: str
    events: list[Event] = field(default_factory=list)
    server_args_event: ServerArgsDump | None = None
    ranks: dict[str, RankEvents] = field(default_factory=dict)
    #: single-run impossibilities (a sign that two runs' lines are mixed), filled at the end
    anomalies: list[str] = field(default_factory=list)

    # ---- basic
    @property
    def server_args(self) -> dict[str, Any] | None:
        return None if self.server_args_event is None else self.server_args_event.args

    @property
    def start_lineno(self) -> int | None:
        return self.events[0].lineno if self.events else None

    @property
    def end_lineno(self) -> int | None:
        return self.events[-1].lineno if self.events else None

    @property
    def first_timestamp(self) -> datetime | None:
        ts = [e.timestamp for e in self.events if e.timestamp is not None]
        return min(ts) if ts else None

    @property
    def last_timestamp(self) -> datetime | None:
        ts = [e.timestamp for e in self.events if e.timestamp is not None]
        return max(ts) if ts else None

    def of(self, cls: type, *, rank: str | None = None, draft: bool | None = None) -> list:
        """Events of class ``cls`` (optionally of one rank key, and draft or not)."""
        return [e for e in self.events if isinstance(e, cls)
                and (rank is None or e.rank_key == rank)
                and (draft is None or getattr(e, "is_draft", False) == draft)]

    # ---- outcome
    @property
    def failures(self) -> list[Failure]:
        return self.of(Failure)

    @property
    def failure(self) -> Failure | None:
        """The first failure, preferring a specific cause (NotEnoughMemory, CudaOutOfMemory, an
        exception message) over the generic SchedulerException / InitializationFailed wrappers."""
        fs = self.failures
        for f in fs:
            if not isinstance(f, _GENERIC_FAILURES):
                return f
        return fs[0] if fs else None

    @property
    def failed(self) -> bool:
        return bool(self.failures)

    @property
    def summary(self) -> SchedulerSummary | None:
        xs = self.of(SchedulerSummary)
        return xs[0] if xs else None

    @property
    def completed(self) -> bool:
        """Reached the ``max_total_num_tokens=`` line or a server-ready line."""
        return any(isinstance(e, (SchedulerSummary, ServerReady)) for e in self.events)

    @property
    def outcome(self) -> str:
        """"completed", "failed", "failed_after_start" (a failure after the server came up) or "incomplete"."""
        if not self.completed:
            return "failed" if self.failed else "incomplete"
        if not self.failed:
            return "completed"
        done = next(e.lineno for e in self.events if isinstance(e, (SchedulerSummary, ServerReady)))
        return "failed_after_start" if all(f.lineno > done for f in self.failures) else "failed"

    @property
    def speculative(self) -> bool | None:
        """True/False from the ServerArgs dump or the spec warnings; None when unknown."""
        if any(isinstance(e, (SpecVersion, MaxRunningRequestsReset)) for e in self.events):
            return True
        sa = self.server_args
        if sa is None or "speculative_algorithm" not in sa:
            return None
        v = sa["speculative_algorithm"]
        return bool(v) and str(v) not in ("None", "NONE")

    @property
    def failure_phase(self) -> str | None:
        """Where the (first specific) failure happened, from the last progress line before it
        (on the failing rank when it has any): "server_args", "init", "load_weights",
        "memory_pool", "after_memory_pool", "cuda_graph", "piecewise_cuda_graph",
        "after_cuda_graph", "serving"; draft stages are prefixed "draft_"."""
        f = self.failure
        if f is None:
            return None
        before = [e for e in self.events if e.lineno < f.lineno and isinstance(e, _PROGRESS_TYPES)]
        mine = [e for e in before if e.rank_key == f.rank_key] if f.rank else []
        last = (mine or before or [None])[-1]
        phase = _phase_of(last)
        if isinstance(f, CudaOutOfMemory) and f.during_capture and "cuda_graph" not in phase:
            phase = "cuda_graph"
        return phase


def _phase_of(e: Event | None) -> str:
    if e is None:
        return "server_args"
    draft = "draft_" if getattr(e, "is_draft", False) else ""
    if isinstance(e, InitDistributedEnd):
        return "init"
    if isinstance(e, LoadWeightBegin):
        return draft + "load_weights"
    if isinstance(e, (LoadWeightEnd, KVCacheDtype, MambaCacheAllocated, KVCacheAllocated)):
        return draft + "memory_pool"
    if isinstance(e, MemoryPoolEnd):
        return draft + "after_memory_pool"
    if isinstance(e, (CudaGraphBatchSizes, CudaGraphBegin)):
        return {"decode": "cuda_graph"}.get(e.graph, e.graph + "_cuda_graph")
    if isinstance(e, CudaGraphEnd):
        return "after_cuda_graph"
    if isinstance(e, MaxTotalTokensClamped):
        return "memory_pool"
    return "serving"


@dataclass
class ParsedLog:
    """Result of :func:`parse_log`. ``path``/``mtime`` (epoch seconds) are set by :func:`parse_file`."""

    launches: list[Launch] = field(default_factory=list)
    num_lines: int = 0
    path: str | None = None
    mtime: float | None = None

    @property
    def events(self) -> list[Event]:
        return [e for la in self.launches for e in la.events]

    @property
    def latest(self) -> Launch | None:
        return self.launches[-1] if self.launches else None

    @property
    def first_timestamp(self) -> datetime | None:
        ts = [t for la in self.launches if (t := la.first_timestamp) is not None]
        return min(ts) if ts else None

    @property
    def last_timestamp(self) -> datetime | None:
        ts = [t for la in self.launches if (t := la.last_timestamp) is not None]
        return max(ts) if ts else None

    @property
    def mtime_datetime(self) -> datetime | None:
        """The file's mtime as a naive local datetime (comparable with log timestamps, which
        SGLang writes in the server's local time)."""
        return None if self.mtime is None else datetime.fromtimestamp(self.mtime)


class _Builder:
    def __init__(self) -> None:
        self.launches: list[Launch] = []
        self.cur: Launch | None = None
        self.counts: dict[tuple, int] = {}
        self.open_lwb: dict[str, bool] = {}  # rank key -> last LWB still waiting for its LWE

    def new(self, reason: str) -> Launch:
        la = Launch(index=len(self.launches), start_reason=reason)
        self.launches.append(la)
        self.cur = la
        self.counts = {}
        self.open_lwb = {}
        return la

    def _has_progress(self, la: Launch) -> bool:
        return any(isinstance(e, _PROGRESS_TYPES + (Failure,)) for e in la.events)

    def _rank_done(self, la: Launch, key: str) -> bool:
        if la.completed:
            return True
        for f in la.failures:
            if isinstance(f, InitializationFailed) or not f.rank or f.rank_key == key:
                return True
        return False

    def add(self, ev: Event) -> None:
        cur = self.cur
        if isinstance(ev, ServerArgsDump):
            if cur is not None and not self._has_progress(cur):
                if cur.server_args_event is None:
                    cur.server_args_event = ev
                    cur.events.append(ev)
                    return
                if cur.server_args_event.args == ev.args:  # Engine logs it at :188 and :679
                    cur.events.append(ev)
                    return
            carried: list[Event] = []
            if cur is not None:
                # warnings logged in ServerArgs.__post_init__ precede the dump: move the trailing
                # ones (with their version markers) from the previous launch into the new one
                evs = cur.events
                k = len(evs)
                while k > 0:
                    j = k
                    while j > 0 and evs[j - 1].lineno == evs[k - 1].lineno:
                        j -= 1
                    block = evs[j:k]
                    if all(isinstance(e, _PREAMBLE_TYPES + (VersionMarker,)) and not e.rank for e in block) \
                            and any(isinstance(e, _PREAMBLE_TYPES) for e in block):
                        k = j
                    else:
                        break
                carried = evs[k:]
                del evs[k:]
            la = self.new("server_args")
            la.server_args_event = ev
            la.events.extend(carried)
            la.events.append(ev)
            return
        if cur is None:
            cur = self.new("first_event")
        elif isinstance(ev, LoadWeightBegin):
            key = ev.rank_key
            n = self.counts.get(("lwb", key), 0)
            if self._rank_done(cur, key):
                cur = self.new("load_after_done")
            elif n and (n >= 2 or cur.speculative is False or self.open_lwb.get(key, False)):
                cur = self.new("reload")
        elif isinstance(ev, Failure) and ev.timestamp is None and not ev.inherited and cur.completed:
            cur = self.new("failure_after_completed")
        self._mark_draft(ev)
        cur.events.append(ev)

    def _bump(self, *key: Any) -> int:
        n = self.counts.get(key, 0)
        self.counts[key] = n + 1
        return n

    def _mark_draft(self, ev: Event) -> None:
        key = ev.rank_key
        if isinstance(ev, LoadWeightBegin):
            ev.is_draft = self._bump("lwb", key) > 0
            self.open_lwb[key] = True
        elif isinstance(ev, LoadWeightEnd):
            n = self._bump("lwe", key)
            ev.is_draft = n > 0 or bool(ev.model_class and _DRAFT_CLASS.search(ev.model_class))
            self.open_lwb[key] = False
        elif isinstance(ev, KVCacheAllocated):
            n = self._bump("kv", key, ev.label, ev.post_capture, ev.va_upper_bound)
            ev.is_draft = n > 0 and self.cur is not None and self.cur.speculative is not False
        elif isinstance(ev, MemoryPoolEnd):
            n = self._bump("mpe", key)
            ev.is_draft = n > 0 and self.cur is not None and self.cur.speculative is not False
        elif isinstance(ev, MambaCacheAllocated):
            n = self._bump("mamba", key)
            ev.is_draft = n > 0 and self.cur is not None and self.cur.speculative is not False

    def finish(self) -> list[Launch]:
        for la in self.launches:
            for e in la.events:
                k = e.rank_key
                if k not in la.ranks:
                    la.ranks[k] = RankEvents(k, dict(e.rank))
                la.ranks[k].events.append(e)
            la.anomalies = _anomalies(la)
        return self.launches


def _anomalies(la: Launch) -> list[str]:
    out: list[str] = []
    spec = la.speculative
    per_rank_max = 1 if spec is False else 2
    for key, r in la.ranks.items():
        name = key or "(no rank prefix)"
        lwb, lwe = len(r.of(LoadWeightBegin)), len(r.of(LoadWeightEnd))
        if lwb and lwe > lwb:
            out.append(f"{name}: {lwe} 'Load weight end' lines for {lwb} 'Load weight begin'")
        for cls, what in ((LoadWeightBegin, "Load weight begin"), (MemoryPoolEnd, "Memory pool end")):
            c = len(r.of(cls))
            if c > per_rank_max:
                out.append(f"{name}: {c} '{what}' lines in one launch")
        kv = [e for e in r.of(KVCacheAllocated) if e.label is None and not e.post_capture and not e.va_upper_bound]
        if len(kv) > per_rank_max:
            out.append(f"{name}: {len(kv)} 'KV Cache is allocated' lines in one launch")
        if len(r.of(SchedulerSummary)) > 1:
            out.append(f"{name}: {len(r.of(SchedulerSummary))} 'max_total_num_tokens=' lines in one launch")
    prev: datetime | None = None
    for e in la.events:
        if e.timestamp is None or e.inherited:
            continue
        if prev is not None and (prev - e.timestamp).total_seconds() > 2:
            out.append(f"line {e.lineno}: timestamp goes back {(prev - e.timestamp).total_seconds():.0f} s")
            break
        prev = e.timestamp if prev is None else max(prev, e.timestamp)
    return out


_OTHER_LOGGER = re.compile(r"^(?:INFO|WARNING|ERROR|DEBUG|CRITICAL)(?::|\s)")
_CONT_MARKERS = ("During handling of the above exception", "The above exception was the direct cause")


def parse_log(text: str | Iterable[str]) -> ParsedLog:
    """Parse a whole log (a string, or an iterable of lines). Never raises on content."""
    b = _Builder()
    ctx_rank: dict[str, int] = {}
    ctx_ts: datetime | None = None
    ctx_cont = False
    last_unprefixed = ""
    n = 0
    for ln in iter_lines(text):
        n = ln.lineno
        if ln.prefixed:
            ctx_rank, ctx_ts, ctx_cont = ln.rank, ln.timestamp, True
            base = dict(lineno=ln.lineno, timestamp=ln.timestamp, rank=dict(ln.rank), text=ln.text)
        else:
            s = ln.text.strip()
            if s == "Traceback (most recent call last):" and not last_unprefixed.startswith(_CONT_MARKERS):
                ctx_cont = False  # an uncaught traceback printed straight to stderr
            elif _OTHER_LOGGER.match(ln.text):
                ctx_cont = False  # "INFO:     Uvicorn running on ..." and other loggers' lines
            if s:
                last_unprefixed = s
            if ctx_cont:
                base = dict(lineno=ln.lineno, timestamp=ctx_ts, rank=dict(ctx_rank), text=ln.text, inherited=True)
            else:
                base = dict(lineno=ln.lineno, timestamp=None, rank={}, text=ln.text)
        for ev in _parse_events(ln, base):
            b.add(ev)
    return ParsedLog(launches=b.finish(), num_lines=n)


def parse_file(path: str | os.PathLike) -> ParsedLog:
    """Read ``path`` (``.gz`` is decompressed; undecodable bytes replaced) and parse it.
    The result carries ``path`` and ``mtime`` (``os.stat().st_mtime``)."""
    p = os.fspath(path)
    st = os.stat(p)
    if p.endswith(".gz"):
        with gzip.open(p, "rt", encoding="utf-8", errors="replace") as fh:
            parsed = parse_log(fh)
    else:
        with open(p, encoding="utf-8", errors="replace") as fh:
            parsed = parse_log(fh)
    parsed.path = p
    parsed.mtime = st.st_mtime
    return parsed


# --------------------------------------------------------------------------------------------
# Version detection
# --------------------------------------------------------------------------------------------

_VERSIONS_MD = "sglang-versions.md"

#: (key, substring, lo, hi, citation). The presence of the substring on a line bounds the version.
_TEXT_HINTS: list[tuple[str, str, str | None, str | None, str]] = [
    ("memory_baseline_line", "Memory baseline taken", "0.5.21", None,
     f"{_VERSIONS_MD} §4 'dist-init memory' row and §3 0.5.21: 'Init torch distributed ends' replaced by 'Memory baseline taken'"),
    ("load_weight_overlap", "Committed real weights after CUDA graph capture", "0.5.18", None,
     f"{_VERSIONS_MD} §4 'Load weight end' 0.5.17-0.5.23 row (overlap startup mode from 0.5.18)"),
    ("max_concurrent_requests_log", "Max concurrent requests (per dp worker)", "0.5.13", "0.5.13",
     f"{_VERSIONS_MD} §3: 'one-off log Max concurrent requests (per dp worker) ... (only 0.5.13)'"),
    ("mm_kv_reserve", "of the KV budget for post-sizing multimodal allocations", "0.5.18", None,
     f"{_VERSIONS_MD} §2 'Other' and §4 'multimodal reserve' row [0.5.18]"),
    ("capped_by_mamba", "max_running_requests is capped to", "0.5.17", None,
     f"{_VERSIONS_MD} §2: warning [0.5.17] 'max_running_requests is capped to %d by the mamba state cache'"),
    ("reduced_warning", "max_running_requests was reduced from the requested", "0.5.14", None,
     f"{_VERSIONS_MD} §2: warning [0.5.14] 'max_running_requests was reduced from the requested'"),
    ("weights_leave_no_memory", "Loaded weights leave no GPU memory for the KV cache", "0.5.14", None,
     f"{_VERSIONS_MD} §2: ValueError [0.5.14] 'Loaded weights leave no GPU memory ...'"),
    ("hybrid_state_error", "Not enough GPU memory for hybrid (mamba/linear-attention) state cache", "0.5.13", None,
     f"{_VERSIONS_MD} §2: RuntimeError [0.5.13]"),
    ("hybrid_state_too_small", "Hybrid (mamba/linear-attention) state cache is too small", "0.5.13", None,
     f"{_VERSIONS_MD} §2: RuntimeError [0.5.13]"),
    ("replayssm_ring_L", "GDN ReplaySSM ring buffers allocated (L=", "0.5.15", "0.5.16",
     f"{_VERSIONS_MD} §4 'ReplaySSM rings' rows (0.5.15-0.5.16 form)"),
    # the map says 0.5.19; the format string is already in 0.5.17 (srt/mem_cache/memory_pool.py:817 @0.5.17)
    ("replayssm_ring_record_len", "GDN ReplaySSM ring buffers allocated (record_len=", "0.5.17", None,
     "srt/mem_cache/memory_pool.py:817 @0.5.17 (the 'record_len=' form of the ReplaySSM rings line)"),
    ("unified_memory_pool", "[unified-memory-pool]", "0.5.15", None,
     f"{_VERSIONS_MD} §4: unified memory pool lines only with --enable-unified-memory, 0.5.15+"),
    ("extra_buffer_disable_radix_error", "mamba extra_buffer is not compatible with --disable-radix-cache",
     "0.5.10", "0.5.13", f"{_VERSIONS_MD} §3 0.5.10 (new ValueError) and §2 'Removed since 0.5.11' (gone in 0.5.14)"),
    ("spec_no_buffer_radix_error", "is not compatible with radix cache when using --mamba-scheduler-strategy no_buffer",
     "0.5.10", "0.5.13", f"{_VERSIONS_MD} §3 0.5.10 (radix auto-disable -> ValueError) and §2 'Removed since 0.5.11' (gone in 0.5.14)"),
    ("spec_v2_default", "Spec v2 is enabled by default", "0.5.11", None,
     f"{_VERSIONS_MD} §1 table, SGLANG_ENABLE_SPEC_V2 default False in 0.5.9/0.5.10, True from 0.5.11 (§3 0.5.11)"),
]

#: (field present in the ServerArgs dump, lo, hi, citation)
_FIELD_HINTS: list[tuple[str, str | None, str | None, str]] = [
    ("mamba_radix_cache_strategy", "0.5.14", None,
     f"{_VERSIONS_MD} §1 'mamba strategy flag' row and §3 0.5.14: flag renamed to --mamba-radix-cache-strategy"),
    ("mamba_scheduler_strategy", None, "0.5.13",
     f"{_VERSIONS_MD} §3 0.5.14: renamed to --mamba-radix-cache-strategy (the old spelling is only an alias "
     f"of the new field; flags/v0_5_14.json has no mamba_scheduler_strategy dest)"),
    ("cuda_graph_max_bs", None, "0.5.13",
     f"{_VERSIONS_MD} §3 0.5.14: --cuda-graph-max-bs -> --cuda-graph-max-bs-decode (alias of the new field)"),
    ("cuda_graph_max_bs_decode", "0.5.14", None,
     f"{_VERSIONS_MD} §3 0.5.14: --cuda-graph-max-bs -> --cuda-graph-max-bs-decode"),
    ("cuda_graph_backend_prefill", "0.5.14", None,
     f"{_VERSIONS_MD} §1 'prefill graph' row: --cuda-graph-backend-prefill from 0.5.14"),
    ("enable_int8_mamba_checkpoint", "0.5.14", None,
     f"{_VERSIONS_MD} §1 '--enable-int8-mamba-checkpoint' row and §3 0.5.14"),
    ("enable_unified_memory", "0.5.15", None,
     f"{_VERSIONS_MD} §1 '--enable-unified-memory' row (added 0.5.15)"),
    ("enable_page_major_kv_layout", "0.5.15", None,
     f"{_VERSIONS_MD} §1 '--enable-page-major-kv-layout' row (0.5.15+)"),
    ("enable_linear_replayssm", "0.5.15", None,
     f"{_VERSIONS_MD} §1 '--enable-linear-replayssm' row (n/a up to 0.5.14) and §4 ReplaySSM rings 0.5.15+"),
    ("enable_linear_replayssm_spec", "0.5.17", None,
     f"{_VERSIONS_MD} §1 '--enable-linear-replayssm-spec' row (0.5.17+)"),
    ("mamba_max_states_per_path", "0.5.17", None,
     f"{_VERSIONS_MD} §1 '--mamba-max-states-per-path' row (0.5.17+)"),
    ("linear_attn_backend", "0.5.10", None,
     f"{_VERSIONS_MD} §1 '--linear-attn-backend' row (n/a in 0.5.9)"),
    ("disable_piecewise_cuda_graph", None, "0.5.13",
     f"{_VERSIONS_MD} §1 'prefill graph' row: --cuda-graph-backend-prefill from 0.5.14 "
     f"(flags/v0_5_9..13.json all have disable_piecewise_cuda_graph)"),
]

_FLAGS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "engines", "sglang", "flags")


@functools.lru_cache(maxsize=1)
def _flag_ranges() -> tuple[tuple[str, str], dict[str, tuple[str | None, str | None]]]:
    """From the per-release argparse dumps ``planner/engines/sglang/flags/v0_5_*.json`` (package
    data): ((oldest, newest) dumped version, dest -> (first, last)), where ``first``/``last`` are
    the first/last release whose parser has that dest (for dests present in a contiguous run of
    releases), or None where that end says nothing. ``ServerArgs.from_cli_args`` builds the
    dataclass from the parsed namespace, so a dumped field exists only where its dest exists;
    the exception is a renamed dest (``--tp-size`` had dest ``tensor_parallel_size`` up to 0.5.13
    and was copied into the ``tp_size`` field), so a dest whose option strings already existed in
    the previous release gets no lower bound. Read lazily, once; empty when the files are missing."""
    import json

    versions: list[tuple[tuple[int, ...], dict[str, set[str]]]] = []
    try:
        names = os.listdir(_FLAGS_DIR)
    except OSError:
        return ("", ""), {}
    for name in names:
        m = re.fullmatch(r"v(\d+)_(\d+)_(\d+)\.json", name)
        if not m:
            continue
        try:
            with open(os.path.join(_FLAGS_DIR, name), encoding="utf-8") as fh:
                data = json.load(fh)
            dests: dict[str, set[str]] = {}
            for a in data.get("actions", []):
                if isinstance(a, dict) and a.get("dest") and a["dest"] != "help":
                    dests.setdefault(a["dest"], set()).update(a.get("option_strings") or ())
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            continue
        versions.append((tuple(int(x) for x in m.groups()), dests))
    if len(versions) < 2:
        return ("", ""), {}
    versions.sort()
    order = [v for v, _ in versions]
    present: dict[str, list[int]] = {}
    for i, (_, dests) in enumerate(versions):
        for d in dests:
            present.setdefault(d, []).append(i)
    fmt = lambda t: ".".join(map(str, t))  # noqa: E731
    ranges: dict[str, tuple[str | None, str | None]] = {}
    for d, ix in present.items():
        if ix != list(range(ix[0], ix[-1] + 1)):
            continue
        first: str | None = None
        last: str | None = None
        if ix[0] > 0:
            prev_opts = set().union(*versions[ix[0] - 1][1].values())
            if not (versions[ix[0]][1][d] & prev_opts):
                first = fmt(order[ix[0]])
        if ix[-1] < len(order) - 1:
            last = fmt(order[ix[-1]])
        if first or last:
            ranges[d] = (first, last)
    return (fmt(order[0]), fmt(order[-1])), ranges


def _dump_field_hints(args: dict[str, Any], lineno: int) -> list[VersionHint]:
    """At most two hints from the dump's field names and the argparse dumps: the newest
    first-appearance and the oldest last-appearance among its fields."""
    _, ranges = _flag_ranges()
    best_lo: tuple[tuple[int, ...], str] | None = None
    best_hi: tuple[tuple[int, ...], str] | None = None
    for name in args:
        r = ranges.get(name)
        if r is None:
            continue
        first, last = r
        if first and (best_lo is None or _v(first) > best_lo[0]):
            best_lo = (_v(first), name)
        if last and (best_hi is None or _v(last) < best_hi[0]):
            best_hi = (_v(last), name)
    out = []
    src = "planner/engines/sglang/flags/v{X}.json argparse dumps (ServerArgs fields are argparse dests)"
    if best_lo:
        first = ranges[best_lo[1]][0]
        out.append(VersionHint(f"server_args.fields: {best_lo[1]} (first in {first})", first, None,
                               src, lineno))
    if best_hi:
        last = ranges[best_hi[1]][1]
        out.append(VersionHint(f"server_args.fields: {best_hi[1]} (last in {last})", None, last, src, lineno))
    return out

#: (speculative_algorithm value, lo, citation)
_SPEC_ALGO_HINTS = [
    ("DFLASH", "0.5.11", f"{_VERSIONS_MD} §1 '--speculative-algorithm' row: + DFLASH in 0.5.11"),
    ("DSPARK", "0.5.18", f"{_VERSIONS_MD} §1 '--speculative-algorithm' row (+ DSPARK) and §2 unified memory (DSPARK in 0.5.18-0.5.21)"),
    ("UNO", "0.5.20", f"{_VERSIONS_MD} §1 '--speculative-algorithm' row: + UNO after 0.5.19 (listed for 0.5.23)"),
]


def _v(s: str) -> tuple[int, ...]:
    return tuple(int(x) for x in s.split("."))


@dataclass(frozen=True)
class VersionHint:
    """One piece of evidence: this log is from a version in [lo, hi] (None = unbounded)."""

    key: str
    lo: str | None
    hi: str | None
    source: str  # citation in sglang-versions.md
    lineno: int | None = None


@dataclass
class VersionGuess:
    """Combined evidence. ``lo`` defaults to "0.5.9" (the oldest version this parser supports)."""

    lo: str | None
    hi: str | None
    hints: list[VersionHint]
    contradictory: bool = False

    @property
    def exact(self) -> str | None:
        return self.lo if self.lo is not None and self.lo == self.hi and not self.contradictory else None

    def contains(self, version: str) -> bool:
        """True when ``version`` is consistent with the evidence (always True without evidence)."""
        if self.contradictory:
            return False
        v = _v(version)
        return (self.lo is None or _v(self.lo) <= v) and (self.hi is None or v <= _v(self.hi))

    def __str__(self) -> str:
        if self.contradictory or not self.hints:
            return "unknown"
        if self.exact:
            return self.exact
        if self.hi is None:
            return f">={self.lo}"
        return f"{self.lo}-{self.hi}"


def _launch_hints(la: Launch) -> list[VersionHint]:
    hints: list[VersionHint] = []
    seen: set[str] = set()

    def add(key: str, lo: str | None, hi: str | None, source: str, lineno: int | None) -> None:
        if key not in seen:
            seen.add(key)
            hints.append(VersionHint(key, lo, hi, source, lineno))

    for e in la.events:
        if isinstance(e, VersionMarker):
            add(e.key, e.lo, e.hi, e.source, e.lineno)
        elif isinstance(e, LoadWeightEnd) and not e.malformed and e.variant == "serial":
            if e.dtype is not None:
                add("load_weight_end_dtype", None, "0.5.9",
                    f"{_VERSIONS_MD} §4 'Load weight end' 0.5.9 row; §3 0.5.10: drops dtype=... and adds quant=...",
                    e.lineno)
            else:
                add("load_weight_end_no_dtype", "0.5.10", None,
                    f"{_VERSIONS_MD} §4 'Load weight end' 0.5.10-0.5.16 row; §3 0.5.10: drops dtype=...", e.lineno)
        elif isinstance(e, KVCacheAllocated) and not e.malformed and not e.post_capture:
            if e.va_upper_bound:
                add("kv_va_upper_bound", "0.5.18", None, f"{_VERSIONS_MD} §4 'KV Cache' 0.5.18-0.5.23 row", e.lineno)
            if e.label is not None:
                add("kv_labelled", "0.5.17", None,
                    f"{_VERSIONS_MD} §4 'KV Cache' 0.5.17 row ({{cache_name}} is allocated)", e.lineno)
            if e.dtype is not None:
                add("kv_dtype", "0.5.13", None,
                    f"{_VERSIONS_MD} §4 'KV Cache' 0.5.13-0.5.16 row; §3 0.5.13: 'KV Cache is allocated' gains dtype:",
                    e.lineno)
            else:
                add("kv_no_dtype", None, "0.5.12", f"{_VERSIONS_MD} §4 'KV Cache' 0.5.9-0.5.12 row (no dtype:)",
                    e.lineno)
        elif isinstance(e, KVCacheAllocated) and e.post_capture:
            add("post_capture_kv", "0.5.16", None, f"{_VERSIONS_MD} §4 'post-capture' row (0.5.16+)", e.lineno)
        elif isinstance(e, InitDistributedEnd) and e.variant == "init_torch_distributed":
            add("init_torch_distributed_line", None, "0.5.20",
                f"{_VERSIONS_MD} §4 'dist-init memory' rows (0.5.9-0.5.20)", e.lineno)
    sa_ev = la.server_args_event
    if sa_ev is not None:
        args = sa_ev.args
        for name, lo, hi, source in _FIELD_HINTS:
            if name in args:
                add(f"server_args.{name}", lo, hi, source, sa_ev.lineno)
        if "mamba_full_memory_ratio" in args and args["mamba_full_memory_ratio"] is None:
            add("server_args.mamba_full_memory_ratio=None", "0.5.20", None,
                f"{_VERSIONS_MD} §1 '--mamba-full-memory-ratio' row and §3 0.5.20: becomes Optional", sa_ev.lineno)
        for h in _dump_field_hints(args, sa_ev.lineno):
            add(h.key, h.lo, h.hi, h.source, h.lineno)
        algo = str(args.get("speculative_algorithm") or "")
        for name, lo, source in _SPEC_ALGO_HINTS:
            if algo.upper().endswith(name):
                add(f"server_args.speculative_algorithm={name}", lo, None, source, sa_ev.lineno)
    return hints


def _combine(hints: list[VersionHint]) -> VersionGuess:
    if not hints:
        return VersionGuess(None, None, [])
    los = [_v(h.lo) for h in hints if h.lo]
    his = [_v(h.hi) for h in hints if h.hi]
    lo = max(los) if los else _v("0.5.9")
    hi = min(his) if his else None
    contradictory = hi is not None and lo > hi
    fmt = lambda t: ".".join(map(str, t))  # noqa: E731
    return VersionGuess(fmt(lo), fmt(hi) if hi else None, hints, contradictory)


def guess_version(parsed: ParsedLog | Launch) -> VersionGuess:
    """Version evidence for a launch, or for a log: its latest launch that has any evidence
    (launches of one file may come from different SGLang versions)."""
    if isinstance(parsed, Launch):
        return _combine(_launch_hints(parsed))
    for la in reversed(parsed.launches):
        g = _combine(_launch_hints(la))
        if g.hints:
            return g
    return VersionGuess(None, None, [])


def detect_version(parsed: ParsedLog | Launch) -> str | None:
    """Best-effort SGLang version of the log's latest launch with evidence (or of one launch).

    Returns an exact version ("0.5.9", "0.5.13") when the evidence pins it, else a range:
    ">=0.5.13" (only a lower bound) or "0.5.10-0.5.12" (both bounds; the lower bound defaults to
    0.5.9, the oldest version this parser handles, so anything older reads as 0.5.9). Returns None
    with no evidence or contradicting evidence. Hints (each cited from sglang-versions.md) are in
    :data:`_TEXT_HINTS`, :data:`_FIELD_HINTS`, :data:`_SPEC_ALGO_HINTS` and :func:`_launch_hints`:
    e.g. ``Load weight end ... dtype=`` -> 0.5.9; ``KV Cache is allocated`` without ``dtype:`` ->
    <=0.5.12, with it -> >=0.5.13; a ``mamba_radix_cache_strategy`` field -> >=0.5.14;
    ``Spec v2 is enabled by default`` -> >=0.5.11. A ServerArgs dump is also checked against the
    per-release argparse dumps in ``planner/engines/sglang/flags/`` (:func:`_flag_ranges`): a field
    first added in release X gives >=X, a field last present in release Y gives <=Y, so a complete
    dump usually pins the release. Use :func:`guess_version` for the evidence.
    """
    g = guess_version(parsed)
    if g.contradictory or not g.hints:
        return None
    return str(g)


# --------------------------------------------------------------------------------------------
# Interleaving
# --------------------------------------------------------------------------------------------


def interleave_reasons(parsed: ParsedLog) -> list[str]:
    """Why the log looks like several runs writing into one file at the same time: launches
    whose [first, last] timestamp ranges overlap, or a launch whose rank sequence is impossible
    for a single run (see ``Launch.anomalies``). Empty when it looks clean."""
    out: list[str] = []
    las = [la for la in parsed.launches if la.first_timestamp is not None]
    for i, a in enumerate(las):
        for b in las[i + 1:]:
            if a.first_timestamp < b.last_timestamp and b.first_timestamp < a.last_timestamp:
                out.append(f"launches {a.index} and {b.index} overlap in time "
                           f"({a.first_timestamp}..{a.last_timestamp} vs {b.first_timestamp}..{b.last_timestamp})")
    for la in parsed.launches:
        out.extend(f"launch {la.index}: {x}" for x in la.anomalies)
    return out


def interleaved(parsed: ParsedLog) -> bool:
    """True when two launches' timestamp ranges overlap or a rank sequence interleaves."""
    return bool(interleave_reasons(parsed))
