"""Physical log lines: the ``[timestamp ranks]`` prefix SGLang puts on every record.

Line format
-----------
SGLang's log format is ``[%(asctime)s{.%(msecs)03d if SGLANG_LOG_MS}{prefix}] %(message)s`` with the
date format ``%Y-%m-%d %H:%M:%S`` (``utils/common.py:1206-1224`` in 0.5.11). The scheduler prefix is
built from `` DP{r}``, `` PP{r}``, `` ATTN_CP{r}``, `` MOE_DP{r}``, `` TP{r}`` (only if tp>1) and
`` EP{r}`` (``scheduler.py:3845-3857``); the main process has no prefix, so at tp=1 the scheduler's
lines have no rank either. Lines without that prefix (tracebacks, ``#`` comments, other programs'
output) are kept as :class:`LogLine` with ``timestamp=None``. ANSI colour codes are stripped, and a
leading ``container | `` style prefix is tolerated. How unprefixed continuation lines inherit a
record's rank is decided in :func:`planner.logs.launches.parse_log`.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Iterable, Iterator

__all__ = ["LogLine", "rank_key", "parse_line", "iter_lines"]

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
