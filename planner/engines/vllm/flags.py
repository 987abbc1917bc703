"""vLLM's own `vllm serve` parser, rebuilt from a dump of its argparse actions, and the flag audit.

``flags/v0_3X_0.json`` is written by ``scripts/dump_vllm_flags.py`` from the release's real parser
(``FlexibleArgumentParser(prog="vllm serve")`` + ``make_arg_parser``: vllm/entrypoints/common/cli_args.py,
vllm/engine/arg_utils.py ``EngineArgs.add_cli_args`` @0.33.0 / @0.34.0). Rebuilding the same actions gives the
same spelling, abbreviations (``allow_abbrev``), types, choices and argparse error lines as vLLM, without
importing it. :func:`parse_serve_flags` also applies ``FlexibleArgumentParser.parse_args``'s rewriting first
(vllm/utils/argparse_utils.py:313-502 @0.34.0: ``_`` -> ``-`` in option names, ``-O3``, dotted JSON keys
``--compilation-config.mode 3`` merged into one JSON argument).

``flag_audit.toml`` classifies every dest of both releases (modelled / no_effect / refused);
:func:`refused_flags` names the refused ones a launch sets away from their default.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import tomllib
from collections import defaultdict
from functools import lru_cache
from pathlib import Path
from typing import Any

from planner.errors import BadInput

_HERE = Path(__file__).resolve().parent
MODEL_PLACEHOLDER = "MODEL"


def _table_name(version: str) -> str:
    return "v" + version.replace(".", "_")


@lru_cache(maxsize=8)
def load_flag_table(version: str) -> dict[str, Any]:
    path = _HERE / "flags" / f"{_table_name(version)}.json"
    if not path.is_file():
        raise BadInput(f"vLLM {version} is not modelled (flag tables: 0.33.0, 0.34.0)")
    return json.loads(path.read_text(encoding="utf-8"))


class VllmRejected(Exception):
    """vLLM refused the flags (its argparse line or its ValueError), with vLLM's own message. Defined here,
    re-exported by config.py (where the contract names it), so that config imports flags and not the reverse."""

    def __init__(self, stage: str, error_type: str, message: str, rule: str = ""):
        super().__init__(message)
        self.stage, self.error_type, self.message, self.rule = stage, error_type, message, rule


class _ServeError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # noqa: D401 - argparse API
        raise _ServeError(f"{self.prog}: error: {message}")

    def exit(self, status: int = 0, message: str | None = None):
        raise _ServeError((message or f"{self.prog}: exited").strip())


# --- the type callables of vLLM's parser, by the name the dump records (vllm/engine/arg_utils.py:161-190,
#     vllm/utils/argparse_utils.py:30-94 @0.34.0; identical @0.33.0) ---

def human_readable_int(value: str) -> int:
    value = value.strip()
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([kKmMgGtT])", value)
    if m:
        number, suffix = m.groups()
        dec = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
        if suffix in dec:
            return int(float(number) * dec[suffix])
        try:
            return int(number) * {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}[suffix]
        except ValueError as e:
            raise argparse.ArgumentTypeError(
                f"Decimals are not allowed with binary suffixes like {suffix}. Did you mean to use "
                f"{number}{suffix.lower()} instead?") from e
    return int(value)


def human_readable_int_or_auto(value: str) -> int:
    value = value.strip()
    if value == "-1" or value.lower() == "auto":
        return -1
    return human_readable_int(value)


def loads(value: str):
    return json.loads(value)


def _parse_type(inner):
    def _p(val: str):
        try:
            return inner(val)
        except ValueError as e:
            raise argparse.ArgumentTypeError(f"Value {val} cannot be converted to {_repr_type(inner)}.") from e
    _p.__name__ = "_parse_type"
    return _p


def _repr_type(t) -> str:
    return {int: "<class 'int'>", float: "<class 'float'>", str: "<class 'str'>"}.get(t, f"<function {t.__name__}>")


def _optional_type(inner):
    parse = _parse_type(inner)

    def _o(val: str):
        if val == "" or val == "None":
            return None
        return parse(val)
    _o.__name__ = "_optional_type"
    return _o


def union_dict_and_str(val: str):
    if not re.match(r"(?s)^\s*{.*}\s*$", val):
        return str(val)
    return _optional_type(loads)(val)


def parse_dataclass(val: str):
    """A config-class JSON argument (--compilation-config, ...): kept as the parsed dict; resolve() reads the
    keys it models and refuses the others by name."""
    try:
        out = json.loads(val)
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"invalid JSON: {e}") from e
    if not isinstance(out, dict):
        raise argparse.ArgumentTypeError(f"expected a JSON object, got {val!r}")
    return out


def parse_reasoning_parser(val: str) -> str:
    return "" if val.lower() == "none" else val


_BASE = {"str": str, "int": int, "float": float, "loads": loads, "human_readable_int": human_readable_int,
         "human_readable_int_or_auto": human_readable_int_or_auto, "union_dict_and_str": union_dict_and_str,
         "parse_dataclass": parse_dataclass, "parse_reasoning_parser": parse_reasoning_parser,
         "<lambda>": str, None: None}


def _type_for(name: str | None):
    """'_optional_type(_parse_type(loads))' -> the same composition of the functions above."""
    if name in _BASE:
        return _BASE[name]
    m = re.fullmatch(r"(_optional_type|_parse_type)\((.*)\)", name or "")
    if not m:
        return str
    inner = _type_for(m.group(2))
    return _optional_type(inner) if m.group(1) == "_optional_type" else _parse_type(inner)


class _EnableDisable(argparse.Action):
    """EnableDisableAction (vllm/utils/argparse_utils.py:125-146 @0.34.0): True unless a negative spelling."""

    def __init__(self, option_strings, dest, negative=(), **kw):
        self.negative = frozenset(negative)
        super().__init__(option_strings, dest, nargs=0, **kw)

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, option_string not in self.negative)


class _StoreRaw(argparse.Action):
    """Custom list actions (LoRAParserAction, DeprecatedLogConfigFileAction): the raw strings."""

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, values)


@lru_cache(maxsize=8)
def build_parser(version: str) -> _Parser:
    table = load_flag_table(version)
    parser = _Parser(prog=table.get("prog", "vllm serve"), allow_abbrev=table.get("allow_abbrev", True),
                     add_help=False)
    formatter = parser._get_formatter()
    parser._get_formatter = lambda: formatter  # type: ignore[method-assign]  # one formatter: faster build
    for a in table["actions"]:
        kind = a["action"]
        # defaults are filled in after parsing (parse_serve_flags): argparse would run the type over string
        # defaults, and the dump keeps some (config objects) only as their repr
        kw: dict[str, Any] = {"dest": a["dest"], "default": argparse.SUPPRESS}
        if not a["option_strings"]:  # the positional model tag
            parser.add_argument(a["dest"], nargs=a["nargs"], default=None)
            continue
        if kind == "EnableDisableAction":
            kw["action"] = _EnableDisable
            kw["negative"] = a.get("negative_option_strings", ())
        elif kind == "_StoreTrueAction":
            kw["action"] = "store_true"
        elif kind == "_StoreFalseAction":
            kw["action"] = "store_false"
        elif kind in ("_StoreAction", "_AppendAction"):
            kw["action"] = "append" if kind == "_AppendAction" else "store"
            if a["nargs"] is not None:
                kw["nargs"] = a["nargs"]
                if a["nargs"] == "?":
                    kw["const"] = a["const"]
            t = _type_for(a["type"])
            if t is not None:
                kw["type"] = t
            if a["choices"] is not None:
                kw["choices"] = a["choices"]
        else:
            kw["action"] = _StoreRaw
            kw["nargs"] = a["nargs"]
        # EnableDisableAction registers its hidden spellings (--no-enable-x) too (argparse_utils.py:148-153)
        names = list(dict.fromkeys([*a["option_strings"], *a.get("negative_option_strings", ())]))
        parser.add_argument(*names, **kw)
    del parser._get_formatter
    return parser


def _rewrite(args: list[str]) -> list[str]:
    """FlexibleArgumentParser.parse_args's rewriting (vllm/utils/argparse_utils.py:364-502 @0.34.0)."""
    if "--config" in args or any(a.startswith("--config=") for a in args):
        raise BadInput("vllm serve --config (a YAML file of flags) is not modelled: give its flags on the command line")
    pattern = re.compile(r"(?<=--)[^\.]*")
    out: list[str] = []
    for i, arg in enumerate(args):
        if arg.startswith("--"):
            if "=" in arg:
                key, value = arg.split("=", 1)
                out.append(f"{pattern.sub(lambda m: m.group(0).replace('_', '-'), key, count=1)}={value}")
            else:
                out.append(pattern.sub(lambda m: m.group(0).replace("_", "-"), arg, count=1))
        elif arg.startswith("-O") and arg != "-O":
            out += ["--optimization-level", arg[3:] if arg[2] == "=" else arg[2:]]
        elif arg == "-O" and i + 1 < len(args) and args[i + 1] in {"0", "1", "2", "3"}:
            out.append("--optimization-level")
        else:
            out.append(arg)
    delete: set[int] = set()
    dict_args: dict[str, dict[str, Any]] = defaultdict(dict)

    def update(orig: dict, new: dict) -> None:
        for k, v in new.items():
            if isinstance(v, dict) and isinstance(orig.get(k), dict):
                update(orig[k], v)
            elif isinstance(v, list) and isinstance(orig.get(k), list):
                orig[k] += v
            else:
                orig[k] = v

    for i, arg in enumerate(out):
        if i in delete or not (arg.startswith("-") and "." in arg) or (arg.startswith("--") and "." not in arg):
            continue
        if "=" in arg:
            arg, value_str = arg.split("=", 1)
            if "." not in arg:
                continue
        else:
            if i + 1 >= len(out):
                continue
            value_str = out[i + 1]
            delete.add(i + 1)
        if arg.endswith("+"):
            arg = arg[:-1]
            value_str = json.dumps(value_str.split(","))
        key, *keys = arg.split(".")
        try:
            value: Any = json.loads(value_str)
        except json.JSONDecodeError:
            try:
                value = human_readable_int(value_str)
            except (ValueError, argparse.ArgumentTypeError):
                value = value_str
        for k in reversed(keys):
            value = {k: value}
        update(dict_args[key], value)
        delete.add(i)
    out = [a for i, a in enumerate(out) if i not in delete]
    for key, value in dict_args.items():
        out += [key, json.dumps(value)]
    return out


def parse_serve_flags(version: str, flags: list[str] | tuple[str, ...]) -> dict[str, Any]:
    """The namespace `vllm serve MODEL <flags>` gives on this release (a dict: dest -> value).

    Raises :class:`VllmRejected` (stage ``serve_args``, vLLM's ``vllm serve: error: ...`` line; ``rule`` holds a
    near match for a misspelt option) as vLLM's parser would."""
    args = [MODEL_PLACEHOLDER, *flags]
    parser = build_parser(version)
    try:
        ns = parser.parse_args(_rewrite(args))
    except _ServeError as e:
        msg = str(e)
        raise VllmRejected("serve_args", "SystemExit", msg, rule=near_match_hint(version, msg)) from None
    out = dict(_defaults(version))
    out.update(vars(ns))
    return out


@lru_cache(maxsize=8)
def _defaults(version: str) -> dict[str, Any]:
    return {a["dest"]: a["default"] for a in load_flag_table(version)["actions"]}


def given_dests(version: str, parsed: dict[str, Any]) -> list[str]:
    """The dests a parse set away from the release's default."""
    d = _defaults(version)
    return [k for k, v in parsed.items() if k != "model_tag" and v != d.get(k)]


@lru_cache(maxsize=8)
def known_options(version: str) -> tuple[str, ...]:
    return tuple(sorted({o for a in load_flag_table(version)["actions"]
                         for o in [*a["option_strings"], *a.get("negative_option_strings", ())]}))


def near_match_hint(version: str, message: str) -> str:
    """'did you mean --gpu-memory-utilization?' for each unknown option of an argparse error line."""
    m = re.search(r"unrecognized arguments: (.*)$", message)
    if not m:
        return ""
    hints = []
    for tok in m.group(1).split():
        if not tok.startswith("--"):
            continue
        name = tok.split("=", 1)[0]
        near = difflib.get_close_matches(name, known_options(version), n=1, cutoff=0.75)
        if near:
            hints.append(f"{name}: did you mean {near[0]}?")
        else:
            other = [v for v in ("0.33.0", "0.34.0") if v != version and name in known_options(v)]
            if other:
                hints.append(f"{name} is a flag of vLLM {other[0]}, not {version}")
    return "; ".join(hints)


# --- the audit ---

@lru_cache(maxsize=1)
def load_audit() -> dict[str, dict[str, Any]]:
    """dest -> {"class", "group", "why"} from flag_audit.toml."""
    data = tomllib.loads((_HERE / "flag_audit.toml").read_text(encoding="utf-8"))
    out: dict[str, dict[str, Any]] = {}
    for g in data["group"]:
        for dest in g["flags"]:
            if dest in out:
                raise ValueError(f"flag_audit.toml: {dest} is listed twice")
            out[dest] = {"class": g["class"], "group": g["name"], "why": g["why"], "allow": g.get("allow", [])}
    return out


def _option_for(version: str, dest: str) -> str:
    for a in load_flag_table(version)["actions"]:
        if a["dest"] == dest and a["option_strings"]:
            return a["option_strings"][0]
    return dest


def refused_flags(version: str, parsed: dict[str, Any]) -> list[str]:
    """The options a launch sets away from the release's default whose memory effect is not modelled."""
    audit = load_audit()
    defaults = {a["dest"]: a["default"] for a in load_flag_table(version)["actions"]}
    out = []
    for dest, value in parsed.items():
        if dest == "model_tag" or value == defaults.get(dest):
            continue
        entry = audit.get(dest)
        if entry is None or (entry["class"] == "refused" and value not in entry["allow"]):
            out.append(_option_for(version, dest))
    return out


def check_modelled(version: str, parsed: dict[str, Any]) -> None:
    """BadInput naming every refused flag the launch sets (one line: the options and their audit group)."""
    bad = refused_flags(version, parsed)
    if bad:
        audit = load_audit()
        by_opt = {o: a["dest"] for a in load_flag_table(version)["actions"] for o in a["option_strings"]}
        named = [f"{opt} ({audit.get(by_opt.get(opt, opt), {}).get('group', 'not audited')})" for opt in bad]
        raise BadInput(f"vLLM {version}: flag(s) not modelled: {', '.join(named)}")


__all__ = ["parse_serve_flags", "build_parser", "load_flag_table", "known_options", "near_match_hint",
           "load_audit", "refused_flags", "check_modelled", "human_readable_int", "human_readable_int_or_auto"]
