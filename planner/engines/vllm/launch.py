"""The recommended ``vllm serve`` line, runnable as printed, and the flag-list edits the search makes.

vLLM 0.33 / 0.34's ``vllm serve`` takes the model as its one positional argument (``model_tag``,
``vllm/entrypoints/cli/serve.py`` ``ServeSubcommand.cmd``: ``args.model = args.model_tag``) and every other
setting as ``--flag value`` / ``--flag=value`` / a boolean ``--flag`` / ``--no-flag`` (``BooleanOptionalAction``
in ``vllm/engine/arg_utils.py``). The line is built from the Hugging Face id (a local checkpoint directory when the
user gave one), so it runs as printed; ``tests/test_vllm_frontend.py`` checks every line the tests recommend
against vLLM's own parser's outcome (the oracle's ``serve_args`` stage, results committed under
``tests/data/vllm_frontend/``).
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Sequence
from pathlib import Path

from planner.catalog.catalog import ResolvedModel, load_catalog

# boolean flags vLLM spells as a BooleanOptionalAction pair (``--x`` / ``--no-x``): an edit of one removes both
_BOOL_PAIRS = ("--enable-prefix-caching", "--enforce-eager", "--enable-chunked-prefill")


def model_arg(model: ResolvedModel) -> str:
    """What ``vllm serve`` loads: the local checkpoint directory given, else the catalog's Hugging Face id."""
    if model.path:
        p = Path(model.path)
        return str(p.parent) if p.name == "config.json" else str(p)
    for e in load_catalog():
        if e.id == model.catalog_id:
            return e.hf_id
    return model.spec.name


def serve_line(model: str, flags: Sequence[str], env: dict[str, str] | None = None) -> str:
    """``[K=V ...] vllm serve MODEL FLAGS``, shell-quoted (a ``--speculative-config`` JSON stays one word)."""
    envs = [f"{k}={shlex.quote(v)}" for k, v in sorted((env or {}).items())]
    return " ".join([*envs, shlex.join(["vllm", "serve", model, *flags])])


def _split(flags: Sequence[str]) -> list[tuple[str, str | None]]:
    """The flag list as (option, value or None) pairs, in order. A token after an option is its value unless it
    is itself an option (``--x`` or ``-x``); negative numbers (``--max-model-len -1``) are values."""
    out: list[tuple[str, str | None]] = []
    i = 0
    while i < len(flags):
        t = flags[i]
        if t.startswith("--") and "=" in t:
            k, v = t.split("=", 1)
            out.append((k, v))
            i += 1
            continue
        nxt = flags[i + 1] if i + 1 < len(flags) else None
        if nxt is not None and not (nxt.startswith("-") and not _is_number(nxt)):
            out.append((t, nxt))
            i += 2
        else:
            out.append((t, None))
            i += 1
    return out


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def _base(opt: str) -> str:
    """``--no-enable-prefix-caching`` -> ``--enable-prefix-caching`` for the boolean pairs; else the option."""
    if opt.startswith("--no-") and "--" + opt[5:] in _BOOL_PAIRS:
        return "--" + opt[5:]
    return opt.replace("_", "-")


def flag_value(flags: Sequence[str], opt: str) -> str | None:
    """The last value given for ``opt`` (``""`` for a bare boolean), or None when absent."""
    got = None
    for k, v in _split(flags):
        if _base(k) == _base(opt):
            got = "" if v is None else v
            if k.startswith("--no-"):
                got = "false"
    return got


def has_flag(flags: Sequence[str], opt: str) -> bool:
    return flag_value(flags, opt) is not None


def edit(flags: Sequence[str], changes: Iterable[tuple[str, str | None]]) -> list[str]:
    """``flags`` with each (option, value) set: an option already present is replaced in place, a new one is
    appended; value None writes a bare boolean (``--enforce-eager``), value ``"-"`` removes the option."""
    pairs = _split(flags)
    for opt, val in changes:
        base = _base(opt)
        idx = [i for i, (k, _) in enumerate(pairs) if _base(k) == base]
        new = None if val == "-" else (opt, val)
        if idx:
            first = idx[0]
            pairs = [p for i, p in enumerate(pairs) if i not in idx[1:]]
            if new is None:
                del pairs[first]
            else:
                pairs[first] = new
        elif new is not None:
            pairs.append(new)
    out: list[str] = []
    for k, v in pairs:
        out += [k] if v is None else [k, v]
    return out


def describe(changes: Iterable[tuple[str, str | None]]) -> list[str]:
    """The changes as the user types them (``--max-num-seqs 780``, ``--enforce-eager``, ``drop --speculative-config``)."""
    out = []
    for opt, val in changes:
        out.append(f"drop {opt}" if val == "-" else (opt if val is None else shlex.join([opt, val])))
    return out


__all__ = ["describe", "edit", "flag_value", "has_flag", "model_arg", "serve_line"]
