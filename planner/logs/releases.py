"""Release detection: which SGLang release wrote a launch, from its lines and its ServerArgs dump."""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from typing import Any

from planner.logs.events import InitDistributedEnd, KVCacheAllocated, LoadWeightEnd, VersionMarker
from planner.logs.launches import Launch, ParsedLog
from planner.logs.release_hints import _FIELD_HINTS, _SPEC_ALGO_HINTS, _VERSIONS_MD

__all__ = ["VersionHint", "VersionGuess", "guess_version", "detect_version"]

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
        if sa_ev.form == "dict":
            add("server_args_dict", "0.5.19", None, "entrypoints/engine.py:265 @0.5.19 logs "
                "server_args={server_args.resolved_dict()} (f'{server_args=}' at :253 @0.5.18)", sa_ev.lineno)
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
