"""Launches: a log's events grouped into server starts, with ranks, outcome and failure phase.

Pure functions: the only I/O is :func:`parse_file`, a convenience wrapper that reads one file and
records its modification time (for stale-log checks). Nothing here raises on odd input.

An unprefixed line that continues a multi-line log record (the traceback in ``Scheduler hit an
exception: ...``) inherits the record's rank and timestamp (``Event.inherited=True``); a bare
``Traceback (most recent call last):`` line starts an uncaught traceback of unknown origin, whose
lines get ``rank={}`` and no timestamp.
"""

from __future__ import annotations

import gzip
import os
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Iterable

from planner.logs.events import (
    _PREAMBLE_TYPES,
    _PROGRESS_TYPES,
    CudaGraphBatchSizes,
    DFlashBlockSizeMismatch,
    DFlashDraftGraphDisabled,
    DFlashDraftRunner,
    DFlashFusedKV,
    MaxRunningRequestsCapped,
    CudaGraphBegin,
    CudaGraphEnd,
    CudaOutOfMemory,
    Event,
    Failure,
    InitDistributedEnd,
    InitializationFailed,
    KVCacheAllocated,
    KVCacheDtype,
    SWAPoolAllocated,
    LoadWeightBegin,
    LoadWeightEnd,
    MambaCacheAllocated,
    MaxRunningRequestsReset,
    MaxTotalTokensClamped,
    MemoryPoolEnd,
    SchedulerException,
    SchedulerSummary,
    ServerArgsDump,
    ServerReady,
    SpecVersion,
    VersionMarker,
)
from planner.logs.lines import iter_lines
from planner.logs.messages import _parse_events

__all__ = ["RankEvents", "Launch", "ParsedLog", "parse_log", "parse_file", "interleave_reasons", "interleaved"]

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
_SPEC_TYPES = (DFlashDraftRunner, DFlashBlockSizeMismatch, DFlashFusedKV, DFlashDraftGraphDisabled,
               MaxRunningRequestsCapped)
_DRAFT_CLASS = re.compile(r"MTP$|NextN|Eagle|EAGLE|Draft|draft|DFlash|DSpark")
#: speculative algorithms that run no draft model: no second weight load, no draft pool (NGRAM drafts from a
#: trie in host memory: srt/speculative/ngram_worker.py)
_NO_DRAFT_MODEL = ("NGRAM", "LOOKAHEAD")


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
    def spec_algorithm(self) -> str | None:
        """The ServerArgs ``speculative_algorithm`` (upper case; ``SpeculativeAlgorithm.X`` reprs reduced to X),
        None when the log has no dump or the launch is not speculative."""
        sa = self.server_args
        v = sa.get("speculative_algorithm") if sa else None
        if v is None or str(v) in ("None", "NONE", ""):
            return None
        return str(v).rsplit(".", 1)[-1].strip("<>' ").split(":")[0].upper()

    @property
    def has_draft_model(self) -> bool | None:
        """Whether the launch loads a draft model (its own weights and KV pool): False for NGRAM and for a
        launch without speculative decoding, None when unknown."""
        algo = self.spec_algorithm
        if algo is not None:
            return algo not in _NO_DRAFT_MODEL
        spec = self.speculative
        return None if spec is None else (False if spec is False else None)

    @property
    def spec_events(self) -> list[Event]:
        """The DFLASH / mamba-cap lines of the launch (planner.logs.events.DFlash*, MaxRunningRequestsCapped)."""
        return [e for e in self.events if isinstance(e, _SPEC_TYPES)]

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
            elif n and (n >= 2 or cur.speculative is False or cur.has_draft_model is False
                        or self.open_lwb.get(key, False)):
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
        self._count_draft(ev, key)
        if getattr(ev, "is_draft", False) and self.cur is not None and self.cur.spec_algorithm in _NO_DRAFT_MODEL:
            ev.is_draft = False  # NGRAM loads no draft model: a repeated line is not a draft's

    def _count_draft(self, ev: Event, key: str) -> None:
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
    per_rank_max = 1 if la.has_draft_model is False else 2
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
        # a hybrid SWA pool logs one line per sub-pool (SWA, then full) before its 'SWAKVPool mem usage' line
        if len(kv) > per_rank_max * (2 if r.of(SWAPoolAllocated) else 1):
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
