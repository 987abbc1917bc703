"""Dump the argparse actions of an installed vLLM's `vllm serve` parser, as JSON.

Run with the python of a venv that has that vLLM release installed (the vLLM oracle's, which also has the
CPU shim vLLM needs to import without a GPU):

    PY=~/.cache/vllm-oracle/0.34.0/venv/bin/python
    $PY scripts/dump_vllm_flags.py > planner/engines/vllm/flags/v0_34_0.json

(VLLM_ORACLE_SHIM names the oracle's shim/ folder when ../shared is not beside the repository.)
It builds the parser exactly as `vllm serve` does (`FlexibleArgumentParser(prog="vllm serve")` +
`vllm/entrypoints/common/cli_args.py make_arg_parser`) and records every action: option strings, dest,
default, type (its function's name), choices, nargs, action class, const, and the first line of its help.
planner/engines/vllm/flags.py rebuilds an argparse parser from this file, so option spelling, choices and
argparse's error lines are vLLM's own.
"""

import argparse
import contextlib
import io
import json
import os
import sys

_SHIM = os.environ.get("VLLM_ORACLE_SHIM", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                                        "shared", "tools", "vllm-oracle", "shim"))
if os.path.isdir(_SHIM):  # vLLM's import chain asks for a device: the oracle's simulated one
    sys.path.insert(0, _SHIM)
    import cpu_shim  # noqa: F401,E402

import logging  # noqa: E402

# vLLM writes each flag's help only when the command line asks for it (engine/arg_utils.py NEEDS_HELP)
sys.argv = [sys.argv[0], "serve", "--help"]

logging.disable(logging.WARNING)

with contextlib.redirect_stdout(io.StringIO()):
    import vllm  # noqa: E402
    from vllm.entrypoints.common import cli_args  # noqa: E402
    from vllm.utils.argparse_utils import FlexibleArgumentParser  # noqa: E402


def _jsonable(v):
    try:
        json.dumps(v)
        return v
    except TypeError:
        return repr(v)


def _type_name(t):
    """The type callable's name; a closure (vLLM's optional_type(int), parse_type(json.loads), ...) adds the
    names of the callables it wraps: "_optional_type(int)"; a lambda is "<lambda>"."""
    if t is None:
        return None
    func = getattr(t, "func", None)  # functools.partial
    if func is not None:
        return f"partial({_type_name(func)})"
    name = getattr(t, "__name__", None) or type(t).__name__
    inner = [c.cell_contents for c in (getattr(t, "__closure__", None) or ())
             if callable(getattr(c, "cell_contents", None))]
    if inner:
        name += "(" + ",".join(_type_name(i) for i in inner) + ")"
    return name


def main():
    parser = FlexibleArgumentParser(prog="vllm serve")
    parser = cli_args.make_arg_parser(parser)
    out = []
    for a in parser._actions:
        if isinstance(a, argparse._HelpAction):
            continue
        choices = [_jsonable(c) for c in a.choices] if a.choices is not None else None
        help_line = (a.help or "").strip().split("\n")[0][:200] if a.help not in (None, argparse.SUPPRESS) else ""
        row = {
            "option_strings": list(a.option_strings),
            "dest": a.dest,
            "action": type(a).__name__,
            "nargs": a.nargs,
            "const": _jsonable(a.const),
            "type": _type_name(a.type),
            "choices": choices,
            "default": _jsonable(a.default),
            "required": a.required,
            "deprecated": a in getattr(parser, "_deprecated", set()),
            "help": help_line,
        }
        neg = getattr(a, "negative_option_strings", None)
        if neg:
            row["negative_option_strings"] = sorted(neg)
        out.append(row)
    json.dump({"vllm_version": vllm.__version__, "prog": parser.prog, "allow_abbrev": parser.allow_abbrev,
               "actions": out}, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
