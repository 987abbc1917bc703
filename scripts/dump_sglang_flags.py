"""Dump the argparse flags of an installed SGLang's launch_server, as JSON.

Run with the python of a venv that has sglang installed (e.g. the oracle's):
    $PY scripts/dump_sglang_flags.py > planner/engines/sglang/v0_5_11/flags.json
(with SGLANG_ORACLE_SHIM pointing at the oracle's shim/ folder when ../shared is not beside the repo)
It imports only ``sglang.srt.server_args`` and walks ``ServerArgs.add_cli_args``'s parser;
the planner rebuilds an identical argparse parser from this file, so flag spelling, types,
choices and error messages are SGLang's own.
"""

import argparse
import json
import sys

import os

# SGLang imports need a (simulated) CUDA: reuse the oracle's CPU shim when it is at hand.
_SHIM = os.environ.get("SGLANG_ORACLE_SHIM", os.path.join(os.path.dirname(__file__), "..", "..",
                                                          "shared", "tools", "sglang-oracle", "shim"))
if os.path.isdir(_SHIM):
    os.environ.setdefault("ORACLE_GPU_TOTAL_MIB", "97887")
    os.environ.setdefault("ORACLE_GPU_SM", "12.0")
    os.environ.setdefault("ORACLE_GPU_NAME", "NVIDIA RTX PRO 6000 Blackwell Workstation Edition")
    os.environ.setdefault("ORACLE_CUDA_VERSION", "12.9")
    sys.path.insert(0, _SHIM)
    import cpu_shim  # noqa: F401,E402

from sglang.srt.server_args import ServerArgs  # noqa: E402
import sglang  # noqa: E402


def type_name(t):
    if t is None:
        return None
    name = getattr(t, "__name__", repr(t))
    return name


def main():
    parser = argparse.ArgumentParser(prog="sglang serve")
    ServerArgs.add_cli_args(parser)
    out = []
    for a in parser._actions:
        if isinstance(a, argparse._HelpAction):
            continue
        kind = type(a).__name__
        default = a.default
        try:
            json.dumps(default)
        except TypeError:
            default = repr(default)
        choices = list(a.choices) if a.choices is not None else None
        out.append({
            "option_strings": a.option_strings,
            "dest": a.dest,
            "action": kind,
            "nargs": a.nargs,
            "const": a.const if isinstance(a.const, (int, float, str, bool, type(None))) else repr(a.const),
            "type": type_name(a.type),
            "choices": choices,
            "default": default,
            "required": a.required,
        })
        cv = getattr(a, "const_value", None)
        if cv is not None:  # DeprecatedStoreConstAction (0.5.14+): the value it stores
            out[-1]["const"] = getattr(cv, "value", str(cv))
        nf = getattr(a, "new_flag", None)
        if nf:
            out[-1]["new_flag"] = nf
    json.dump({"sglang_version": sglang.__version__, "prog": "sglang serve", "actions": out},
              sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
