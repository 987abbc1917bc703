"""SGLang's own command-line parser, rebuilt from a dump of its argparse actions.

``flags/v0_5_X.json`` is written by ``scripts/dump_sglang_flags.py`` from the real
``ServerArgs.add_cli_args`` of that release (``prepare_server_args`` builds
``argparse.ArgumentParser(prog="sglang serve")``: srt/server_args.py:7276 @0.5.11). Rebuilding the
same actions gives the same spelling, abbreviations, types, choices and error messages as the
engine, without importing it.
"""

from __future__ import annotations

import argparse
import copy
import json
import re
from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent


class SGLangArgError(Exception):
    """argparse rejected the flags; ``str()`` is SGLang's ``sglang serve: error: ...`` line."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # noqa: D401 - argparse API
        raise SGLangArgError(f"{self.prog}: error: {message}")

    def exit(self, status: int = 0, message: str | None = None):
        raise SGLangArgError((message or f"{self.prog}: exited").strip())


def human_readable_int(value: str) -> int:
    """srt/utils/common.py:2328-2362 @0.5.11: '25.6k' -> 25600, '1Ki' -> 1024."""
    value = value.strip()
    si = {"k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
    iec = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)", value)
    if m:
        number, suffix = m.groups()
        if suffix in iec:
            if "." in number:
                raise argparse.ArgumentTypeError(
                    f"Decimals are not allowed with IEC suffixes like '{suffix}'. "
                    f"Use an integer IEC value such as '{int(Decimal(number))}{suffix}', "
                    f"or an SI value such as '{number}{suffix[0]}'."
                )
            return int(number) * iec[suffix]
        return int(Decimal(number) * si[suffix])
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"Invalid integer value: '{value}'. "
            "Use a plain integer, SI suffixes (1k, 1M), or IEC suffixes (1Ki, 1Mi). "
            "Suffixes are case-sensitive."
        ) from None


def nullable_str(val: str):
    if not val or val == "None":
        return None
    return val


def _json_loads(value: str):
    return json.loads(value)


def json_list_type(value: str):
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        raise argparse.ArgumentTypeError(
            f"Invalid JSON list: {value}. Please provide a valid JSON list."
        ) from None


human_readable_int.__name__ = "human_readable_int"
_json_loads.__name__ = "loads"
_TYPES = {
    "str": str,
    "int": int,
    "float": float,
    "loads": _json_loads,
    "human_readable_int": human_readable_int,
    "json_list_type": json_list_type,
    "nullable_str": nullable_str,
    # 0.5.14+ CUDA-graph config parsers: kept as the raw text (the planner reads the typed flags)
    "parse_cuda_graph_config_arg": _json_loads,
    "parse_cuda_graph_backend_arg": str,
    None: None,
}

_ACTIONS = {
    "_StoreAction": "store",
    "_StoreTrueAction": "store_true",
    "_StoreFalseAction": "store_false",
    "_AppendAction": "append",
    "BooleanOptionalAction": argparse.BooleanOptionalAction,
}


class _Deprecated(argparse.Action):
    """DeprecatedAction: swallows the flag with a warning (srt/server_args.py:7433 @0.5.11)."""

    def __init__(self, option_strings, dest, nargs=0, **kw):
        super().__init__(option_strings, dest, nargs=nargs, **kw)

    def __call__(self, parser, namespace, values, option_string=None):
        namespace.__dict__.setdefault("_warnings", []).append(
            f"The command line argument '{option_string}' is deprecated and will be removed in future versions."
        )


class _DeprecatedStoreTrue(argparse.Action):
    """DeprecatedStoreTrueAction (srt/server_args.py:7445 @0.5.11)."""

    def __init__(self, option_strings, dest, nargs=0, const=True, default=False, **kw):
        super().__init__(option_strings, dest, nargs=nargs, const=const, default=default, **kw)

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, self.const)


@lru_cache(maxsize=32)
def load_flag_table(version_dir: str) -> dict[str, Any]:
    return json.loads((_HERE / "flags" / f"{version_dir}.json").read_text(encoding="utf-8"))


# 0.5.9 builds its parser with argparse.ArgumentParser() (srt/server_args.py:5579 @0.5.9): the program name
# is the script's, launch_server.py under `python -m sglang.launch_server`; 0.5.10+ name it "sglang serve"
# (srt/server_args.py:6526 @0.5.10)
_PROG = {"v0_5_9": "launch_server.py"}


@lru_cache(maxsize=32)
def build_parser(version_dir: str) -> _Parser:
    table = load_flag_table(version_dir)
    parser = _Parser(prog=_PROG.get(version_dir, table.get("prog", "sglang serve")), add_help=False)
    # add_argument builds a fresh help formatter per action only to check the metavar (half the build
    # time); one shared formatter does that check the same way. Removed after the build (help output
    # keeps argparse's own fresh formatters).
    formatter = parser._get_formatter()
    parser._get_formatter = lambda: formatter  # type: ignore[method-assign]
    for a in table["actions"]:
        kind = a["action"]
        kw: dict[str, Any] = {"dest": a["dest"]}
        if kind in ("_StoreAction", "_AppendAction", "DeprecatedAliasStoreAction"):
            kw["action"] = _ACTIONS.get(kind, "store")
            if a["nargs"] is not None:
                kw["nargs"] = a["nargs"]
            t = _TYPES.get(a["type"], str)
            if t is not None:
                kw["type"] = t
            if a["choices"] is not None:
                kw["choices"] = a["choices"]
            kw["default"] = argparse.SUPPRESS if a["default"] == "==SUPPRESS==" else a["default"]
            if kind == "DeprecatedAliasStoreAction":  # the alias must not reset its target's default
                kw["default"] = argparse.SUPPRESS
        elif kind == "DeprecatedStoreConstAction":  # 0.5.14+: e.g. --disable-piecewise-cuda-graph
            kw["action"] = "store_const"
            kw["const"] = a["const"]
            kw["default"] = argparse.SUPPRESS
        elif kind in ("_StoreTrueAction", "_StoreFalseAction"):
            kw["action"] = _ACTIONS[kind]
            kw["default"] = a["default"]
        elif kind == "BooleanOptionalAction":
            kw["action"] = argparse.BooleanOptionalAction
            kw["default"] = a["default"]
        elif kind == "DeprecatedAction":
            kw["action"] = _Deprecated
            kw["default"] = argparse.SUPPRESS
        elif kind == "DeprecatedStoreTrueAction":
            kw["action"] = _DeprecatedStoreTrue
        else:  # LoRAPathAction and other custom list actions: keep the raw strings
            kw["action"] = "store"
            kw["nargs"] = a["nargs"]
            kw["default"] = a["default"]
        parser.add_argument(*a["option_strings"], **kw)
    del parser._get_formatter
    return parser


def parse_flags(version_dir: str, argv: list[str]) -> dict[str, Any]:
    """Parse launch_server flags as that SGLang version would; raises SGLangArgError.

    ``--model-path X`` followed by flags in the plain ``--flag VALUE`` / ``--flag`` form is applied onto the
    release's defaults, parsed once per process (:func:`parse_flags_onto`'s exact path: argparse's result
    without running argparse over the ~400 actions again); anything else goes through argparse."""
    argv = list(argv)
    if len(argv) >= 2 and argv[0] == "--model-path" and not argv[1].startswith("-"):
        base, containers = _defaults(version_dir)
        out = _apply_plain(version_dir, base, argv, containers)
        if out is not None:
            return out
    return _parse_full(version_dir, argv)


def _parse_full(version_dir: str, argv: list[str]) -> dict[str, Any]:
    ns = build_parser(version_dir).parse_args(list(argv))
    out = vars(ns)
    out.pop("_warnings", None)
    return out


@lru_cache(maxsize=32)
def _defaults(version_dir: str) -> tuple[dict[str, Any], tuple[str, ...]]:
    """What argparse gives for ``--model-path`` alone (every other field its default), and its list/dict keys."""
    base = _parse_full(version_dir, ["--model-path", "model"])
    return base, container_keys(base)


def parse_flags_onto(version_dir: str, base: dict[str, Any], argv: list[str],
                     containers: tuple[str, ...] | None = None) -> dict[str, Any]:
    """Parse ``argv`` on top of an earlier :func:`parse_flags` result: the dict that parsing the earlier
    flags followed by ``argv`` gives, when ``argv`` sets only fields the earlier flags left alone (store
    actions are last-wins; argparse fills defaults only for fields not yet set). ``argv`` in the plain
    ``--flag VALUE`` / ``--flag`` form is applied action by action (type and choices as argparse checks
    them); anything else, or a value argparse would refuse, takes argparse itself on a copy, so errors keep
    SGLang's wording. ``base`` is never changed (``containers``: its keys holding lists or dicts, which are
    copied; computed when not given)."""
    if containers is None:
        containers = container_keys(base)
    out = _apply_plain(version_dir, base, argv, containers)
    if out is not None:
        return out
    ns = argparse.Namespace(**{k: copy.deepcopy(v) if isinstance(v, (list, dict)) else v for k, v in base.items()})
    out = vars(build_parser(version_dir).parse_args(list(argv), namespace=ns))
    out.pop("_warnings", None)
    return out


@lru_cache(maxsize=32)
def _plain_actions(version_dir: str) -> dict[str, argparse.Action]:
    """Option string -> action, for the actions _apply_plain can apply exactly."""
    simple = (argparse._StoreAction, argparse._StoreTrueAction, argparse._StoreFalseAction,
              argparse._StoreConstAction)
    return {o: a for a in build_parser(version_dir)._actions if type(a) in simple and a.nargs in (None, 0)
            for o in a.option_strings}


def container_keys(base: dict[str, Any]) -> tuple[str, ...]:
    return tuple(k for k, v in base.items() if isinstance(v, (list, dict)))


_SCALARS = (str, int, float, bool, type(None))


def _copy(value: list | dict) -> list | dict:
    """copy.deepcopy of a list or dict, in one shallow copy when its items are immutable scalars (what argparse
    keeps in them: the defaults are empty lists, an append action's items are strings)."""
    if isinstance(value, list) and all(isinstance(x, _SCALARS) for x in value):
        return list(value)
    if isinstance(value, dict) and all(isinstance(x, _SCALARS) for x in value.values()):
        return dict(value)
    return copy.deepcopy(value)


def _apply_plain(version_dir: str, base: dict[str, Any], argv: list[str],
                 containers: tuple[str, ...]) -> dict[str, Any] | None:
    actions = _plain_actions(version_dir)
    out = dict(base)
    for k in containers:
        out[k] = _copy(base[k])
    i = 0
    while i < len(argv):
        act = actions.get(argv[i])
        if act is None:
            return None
        if act.nargs == 0:  # store_true / store_false / store_const
            out[act.dest] = act.const
            i += 1
            continue
        if i + 1 >= len(argv) or argv[i + 1].startswith("-"):
            return None
        try:
            value = act.type(argv[i + 1]) if act.type is not None else argv[i + 1]
        except (TypeError, ValueError, argparse.ArgumentTypeError):
            return None
        if act.choices is not None and value not in act.choices:
            return None
        out[act.dest] = value
        i += 2
    return out


@lru_cache(maxsize=32)
def known_flag_names(version_dir: str) -> frozenset[str]:
    return frozenset(s for a in load_flag_table(version_dir)["actions"] for s in a["option_strings"])


# Flags renamed between releases: (old spelling, new spelling). The old names were deprecated aliases
# from 0.5.14 (srt/server_args.py:6350-6359 @0.5.14) and are gone from 0.5.20 (flags/v0_5_20.json).
RENAMED = (
    ("--mamba-scheduler-strategy", "--mamba-radix-cache-strategy"),
    ("--cuda-graph-max-bs", "--cuda-graph-max-bs-decode"),
    ("--cuda-graph-bs", "--cuda-graph-bs-decode"),
)


def translate_flags(flags: list[str], version_dir: str) -> list[str]:
    """The same launch in another release's spelling: a renamed flag that release does not know is
    replaced by the spelling it does know. Values and all other flags are kept as they are."""
    known = known_flag_names(version_dir)
    swap = {}
    for old, new in RENAMED:
        if old not in known and new in known:
            swap[old] = new
        elif new not in known and old in known:
            swap[new] = old
    out = []
    for f in flags:
        name, eq, value = f.partition("=")
        out.append(swap.get(name, name) + eq + value if name in swap else f)
    return out


def renamed_hint(flags: list[str], version_dir: str) -> str | None:
    """A one-line hint when ``flags`` use a spelling this release does not know but another one does."""
    fixed = translate_flags(flags, version_dir)
    pairs = [(a.partition("=")[0], b.partition("=")[0]) for a, b in zip(flags, fixed) if a != b]
    if not pairs:
        return None
    return "; ".join(f"{a} is spelled {b} in this release" for a, b in pairs)


def accepts(name: str, known: frozenset[str]) -> bool:
    """Whether a release's argparse takes option ``name``: spelled out, or a unique prefix (argparse's
    allow_abbrev, on in SGLang's parser)."""
    if name in known:
        return True
    return sum(1 for k in known if k.startswith(name)) == 1


def option_names(flags: list[str]) -> list[str]:
    """The ``--option`` names in a flag list (``--x=1`` -> ``--x``), in order, once each."""
    return list(dict.fromkeys(f.partition("=")[0] for f in flags if f.startswith("--") and len(f) > 2))


def release_span(versions: list[str], order: list[str]) -> str:
    """'0.5.9-0.5.19' for consecutive releases of ``order``; runs joined with ', '."""
    idx = sorted(order.index(v) for v in versions)
    runs: list[list[int]] = []
    for i in idx:
        if runs and i == runs[-1][-1] + 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    return ", ".join(order[r[0]] if len(r) == 1 else f"{order[r[0]]}-{order[r[-1]]}" for r in runs)


def accepting_releases(names: list[str], releases: dict[str, str]) -> list[str]:
    """The releases (``releases``: version -> flags table, oldest first) whose argparse takes every name."""
    return [v for v, d in releases.items() if all(accepts(n, known_flag_names(d)) for n in names)]


def _renamed_partner(name: str) -> tuple[str, str] | None:
    for old, new in RENAMED:
        if name in (old, new):
            return old, new
    return None


def flag_advice(name: str, version: str, releases: dict[str, str]) -> str:
    """What to tell a user whose release ``version`` does not take ``name``: the releases that do (an old
    spelling narrows the release: the newest that takes it is the one to plan, never a rename to a newer
    spelling), else the near matches in this release's own flag list, else in the other releases'."""
    import difflib  # noqa: PLC0415

    order = list(releases)
    known = known_flag_names(releases[version])
    have = [v for v in order if name in known_flag_names(releases[v])]
    if have:
        span = release_span(have, order)
        run = f"plan with --sglang-version {have[-1]} if you run {'it' if len(have) == 1 else span}"
        pair = _renamed_partner(name)
        if pair is not None and name == pair[0] and pair[1] in known:
            since = next(v for v in order if pair[1] in known_flag_names(releases[v]))
            return f"{name} is the {span} spelling: {run}; {since} renamed it {pair[1]}, the spelling SGLang {version} takes"
        if pair is not None and name == pair[1] and pair[0] in known:
            return f"{name} is the {span} spelling: SGLang {version} spells it {pair[0]}; {run}"
        return f"SGLang {version} has no {name}; {span} {'has' if len(have) == 1 else 'have'} it: {run}"
    if len(name) > 80:
        return ""
    near = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.75)
    if near:
        return f"did you mean {near[0]}?"
    others = sorted(set().union(*(known_flag_names(d) for d in releases.values())) - known)
    near = difflib.get_close_matches(name, others, n=1, cutoff=0.75)
    if near:
        have = [v for v in order if near[0] in known_flag_names(releases[v])]
        span = release_span(have, order)
        return (f"did you mean {near[0]}? It is a flag of SGLang {span}, not {version}: plan with --sglang-version "
                f"{have[-1]} if you run {'it' if len(have) == 1 else span}")
    return ""


__all__ = ["SGLangArgError", "parse_flags", "parse_flags_onto", "build_parser", "known_flag_names", "translate_flags", "renamed_hint",
           "accepts", "option_names", "release_span", "accepting_releases", "flag_advice"]
