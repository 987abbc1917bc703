"""Write planner/engines/sglang/env_names.json: the environment variables each SGLang release's code reads.

    python scripts/dump_sglang_env.py sglang-0.5.9-*.whl sglang-0.5.10-*.whl ...

Reads every ``.py`` file of each wheel (``sglang/test/`` left out) and collects
* every ``SGLANG_*`` / ``SGL_*`` name in a string literal or declared in ``srt/environ.py``'s ``Envs`` class
  (``SGLANG_X = EnvBool(...)``: the descriptor reads ``os.getenv(name)``);
* every other name read through ``os.environ.get("X")``, ``os.getenv("X")``, ``os.environ["X"]``,
  ``"X" in os.environ`` or ``get_{bool,int,float}_env_var("X")``.
A name seen in no file of a release is a name that release does not read (the planner names it as ignored).
"""

from __future__ import annotations

import json
import re
import sys
import zipfile
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "planner" / "engines" / "sglang" / "env_names.json"
_SGLANG = re.compile(r"""["']((?:SGLANG|SGL)_[A-Z0-9_]+)["']""")
_ENVS = re.compile(r"^\s+((?:SGLANG|SGL)_[A-Z0-9_]+)\s*(?::[^=]+)?=\s*Env", re.M)
_READ = re.compile(
    r"""(?:os\.environ\.get|os\.getenv|environ\.get|getenv|get_bool_env_var|get_int_env_var|get_float_env_var)"""
    r"""\(\s*["']([A-Z][A-Z0-9_]+)["']"""
    r"""|os\.environ\[\s*["']([A-Z][A-Z0-9_]+)["']\s*\]"""
    r"""|["']([A-Z][A-Z0-9_]+)["']\s+(?:not\s+)?in\s+os\.environ""")


def names_in(wheel: Path) -> set[str]:
    out: set[str] = set()
    with zipfile.ZipFile(wheel) as z:
        for info in z.infolist():
            n = info.filename
            if not n.endswith(".py") or not n.startswith("sglang/") or n.startswith("sglang/test/"):
                continue
            text = z.read(info).decode("utf-8", "replace")
            out.update(_SGLANG.findall(text))
            out.update(_ENVS.findall(text))
            out.update(x for m in _READ.findall(text) for x in m if x)
    return out


def version_of(wheel: Path) -> str:
    return wheel.name.split("-")[1]


def main(wheels: list[str]) -> None:
    paths = sorted((Path(w) for w in wheels), key=lambda p: tuple(int(x) for x in version_of(p).split(".")))
    releases = [version_of(p) for p in paths]
    per = {v: names_in(p) for v, p in zip(releases, paths)}
    names: dict[str, list[str]] = {}
    for name in sorted(set().union(*per.values())):
        names[name] = [v for v in releases if name in per[v]]
    table = {"source": "scripts/dump_sglang_env.py over the sglang wheels " + ", ".join(p.name for p in paths),
             "releases": releases,
             # name -> the releases whose code reads it, as index ranges [first, last] into "releases"
             "names": {n: _ranges([releases.index(v) for v in vs]) for n, vs in names.items()}}
    # one name per line: a new release's dump reads as a diff of names
    body = ",\n".join(f"{json.dumps(n)}: {json.dumps(r)}" for n, r in table["names"].items())
    OUT.write_text(f'{{"source": {json.dumps(table["source"])},\n"releases": {json.dumps(releases)},\n'
                   f'"names": {{\n{body}\n}}}}\n', encoding="utf-8")
    print(f"{OUT}: {len(names)} names over {len(releases)} releases")


def _ranges(idx: list[int]) -> list[list[int]]:
    runs: list[list[int]] = []
    for i in idx:
        if runs and i == runs[-1][1] + 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return runs


if __name__ == "__main__":
    main(sys.argv[1:])
