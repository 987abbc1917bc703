"""One result per object, for the frozen inputs the pipeline sees again and again (a GPU profile, a model spec)
whose list fields keep them from being hashed."""

from __future__ import annotations

from functools import wraps
from typing import Callable, TypeVar

T = TypeVar("T")
R = TypeVar("R")

_MAX = 256  # entries kept before the memo starts over (a batch sees a handful of profiles and specs)


def per_object(fn: Callable[[T], R]) -> Callable[[T], R]:
    """``fn(obj)`` computed once per object, keyed by identity; the object is kept beside its result, so its id
    cannot be reused by another object while the entry lives. Only for objects that are never mutated."""
    memo: dict[int, tuple[T, R]] = {}

    @wraps(fn)
    def once(obj: T) -> R:
        hit = memo.get(id(obj))
        if hit is not None and hit[0] is obj:
            return hit[1]
        out = fn(obj)
        if len(memo) > _MAX:
            memo.clear()
        memo[id(obj)] = (obj, out)
        return out

    return once
