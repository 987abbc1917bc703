"""The per-release table of rule switches: what changed in each SGLang release, and where it is read.

    python -m planner.engines.sglang.rules.table > docs/release-rules.md

Each switch's description is the comment above it in :class:`~planner.engines.sglang.rules.Rules` (it names
the release and the SGLang line); where the pipeline reads it is found in the source
(``rules.<switch>``). tests/test_release_table.py checks that docs/release-rules.md is this output.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import fields
from pathlib import Path

from planner.engines.sglang.rules import RULES, Rules

_FIELD = re.compile(r"^    (\w+): ")
_SKIP = ("version", "flags")
_REFERENCE = "0.5.11"  # the release the pipeline is written against: every switch at its default


def switch_docs() -> dict[str, str]:
    """switch -> the comment above it in Rules (a switch under the same comment as the one before it
    shares that comment)."""
    out: dict[str, str] = {}
    pending: list[str] = []
    last = ""
    for line in inspect.getsource(Rules).splitlines():
        text = line.strip()
        if text.startswith("# ---"):
            pending = []
            continue
        if text.startswith("#"):
            pending.append(text.lstrip("#").strip())
            continue
        m = _FIELD.match(line)
        if m:
            last = " ".join(pending) if pending else last
            out[m.group(1)] = last
            pending = []
    return out


def switch_readers() -> dict[str, list[str]]:
    """switch -> the planner modules that read it (``rules.<switch>``), relative to the repository."""
    root = Path(__file__).resolve().parents[4]
    pkg = root / "planner"
    names = [f.name for f in fields(Rules) if f.name not in _SKIP]
    out: dict[str, list[str]] = {n: [] for n in names}
    for path in sorted(pkg.rglob("*.py")):
        if path.parent == Path(__file__).parent:
            continue  # the rules themselves
        src = path.read_text()
        rel = path.relative_to(root).as_posix()
        for n in names:
            if re.search(rf"\brules\.{n}\b", src):
                out[n].append(rel)
    return out


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _val(v: object) -> str:
    return f"`{v!r}`"


def _ordered() -> list[str]:
    return sorted(RULES, key=lambda v: tuple(int(p) for p in v.split(".")))


def release_table() -> str:
    docs, readers = switch_docs(), switch_readers()
    names = [f.name for f in fields(Rules) if f.name not in _SKIP]
    versions = _ordered()
    out = [
        "# What changed in each SGLang release",
        "",
        "Generated from the switches in `planner/engines/sglang/rules/` by",
        "`python -m planner.engines.sglang.rules.table > docs/release-rules.md` (`tests/test_release_table.py`",
        "checks this file is its output). A release is the one before it plus the switches listed under it; each",
        "switch says what it decides and cites the SGLang line (`srt/...py:LINE @release`); the last column is",
        "where the pipeline reads it. The pipeline is written against 0.5.11, the reference: every switch at its",
        "default there. Flag spellings are each release's own argparse (`planner/engines/sglang/flags/`), not",
        "switches.",
        "",
    ]
    prev = None
    for v in versions:
        if prev is None:
            base, head = RULES[_REFERENCE], f"## {v} (the oldest modelled; how it differs from the {_REFERENCE} reference)"
        else:
            base, head = RULES[prev], f"## {v} (vs {prev})"
        changed = [n for n in names if getattr(RULES[v], n) != getattr(base, n)]
        out += [head, ""]
        if not changed:
            out += ["No switch changes (the sizing rules the planner models are the release before's).", ""]
        else:
            out += [f"| switch | {prev or _REFERENCE} -> {v} | what it decides (source) | read in |", "|---|---|---|---|"]
            for n in changed:
                where = ", ".join(f"`{p.removeprefix('planner/engines/sglang/')}`" for p in readers[n]) or "-"
                out.append(f"| `{n}` | {_val(getattr(base, n))} -> {_val(getattr(RULES[v], n))} | "
                           f"{_cell(docs.get(n, ''))} | {where} |")
            out.append("")
        prev = v
    return "\n".join(out)


if __name__ == "__main__":
    print(release_table())
