"""The engines the core knows, by name: the one place outside ``planner/engines/`` reaches an engine's front end.

Each engine is a module path and the name of its :class:`planner.engines.interface.EngineFrontend` object, loaded
with :mod:`importlib` on first use, so importing the core (``plan --help``, the SGLang path) never imports an engine's
internals, and an engine whose front end is not in this build is refused by name (one line, exit 2), never guessed.
"""

from __future__ import annotations

import difflib
import importlib
from functools import lru_cache

from planner.errors import BadInput

# where each engine's releases are listed (module, the tuple of releases, the latest), read without its front end
_RELEASES = {"vllm": ("planner.engines.vllm.inputs", "VERSIONS", "LATEST"),
             "sglang": ("planner.engines.sglang.rules", "RULES", "LATEST")}
# name -> (module path, attribute, title); the order is the paste detection's: an engine whose launcher must be
# recognised first (``vllm serve``), the default (SGLang, which also takes a paste of bare flags) last
_ENGINES: dict[str, tuple[str, str, str]] = {
    "vllm": ("planner.engines.vllm.frontend", "FRONTEND", "vLLM"),
    "sglang": ("planner.engines.sglang.frontend", "FRONTEND", "SGLang"),
}
DEFAULT = "sglang"


def names() -> tuple[str, ...]:
    """The registered engines, the default first."""
    return (DEFAULT, *(n for n in _ENGINES if n != DEFAULT))


def title(name: str) -> str:
    """The engine's display name ("vLLM"), without loading it."""
    _check_name(name)
    return _ENGINES[name][2]


def _check_name(name: object) -> str:
    if not isinstance(name, str) or name not in _ENGINES:
        near = difflib.get_close_matches(str(name).lower(), list(_ENGINES), n=1, cutoff=0.5)
        hint = f"did you mean '{near[0]}'? " if near else ""
        raise BadInput(f"--engine: unknown engine {str(name)[:60]!r}; {hint}known: {', '.join(names())}")
    return name


def available(name: str) -> bool:
    """Whether the engine's front end is in this build (its module can be found), without importing it."""
    import importlib.util  # noqa: PLC0415

    import sys  # noqa: PLC0415

    module = _ENGINES[_check_name(name)][0]
    if module in sys.modules:
        return True
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package is missing
        return False


@lru_cache(maxsize=None)
def engine(name: str):
    """The engine's front end (an :class:`~planner.engines.interface.EngineFrontend`); an unknown name, or an
    engine whose front end this build lacks, is one-line bad input."""
    module, attr, label = _ENGINES[_check_name(name)]
    if not available(name):
        raise BadInput(f"{label} engine: not available in this build ({module} is missing)")
    return getattr(importlib.import_module(module), attr)


def releases(name: str) -> tuple[tuple[str, ...], str]:
    """(the releases modelled, oldest first; the latest) of an engine, from its own table."""
    module, table, latest = _RELEASES[_check_name(name)]
    mod = importlib.import_module(module)
    return tuple(getattr(mod, table)), getattr(mod, latest)


def optional(name: str, module: str, attr: str):
    """``planner.engines.<name>.<module>.<attr>`` when this build has that module, else None (a part of an engine
    that lands on its own, e.g. vLLM's log check)."""
    import importlib.util  # noqa: PLC0415

    path = f"{_ENGINES[_check_name(name)][0].rpartition('.')[0]}.{module}"
    try:
        if importlib.util.find_spec(path) is None:
            return None
    except ModuleNotFoundError:
        return None
    return getattr(importlib.import_module(path), attr)


def detect_paste(tokens: list[str]) -> tuple[str, str | None, list[str], dict[str, str]] | None:
    """A pasted launch command -> (engine name, model, flags, env), asking each engine's ``paste()`` in turn
    (the default engine last: it also takes a paste of bare flags); None when no engine takes it. An engine
    whose front end is absent is asked through the core's own reading of its launcher (:mod:`planner.paste`),
    so its paste is recognised and then refused by name rather than read as another engine's flags."""
    for name in _ENGINES:
        if available(name):
            got = engine(name).paste(list(tokens))
        else:
            from planner.paste import paste_for  # noqa: PLC0415

            got = paste_for(name, list(tokens))
        if got is not None:
            model, flags, env = got
            return name, model, list(flags), dict(env)
    return None


__all__ = ["DEFAULT", "available", "detect_paste", "engine", "names", "optional", "releases", "title"]
