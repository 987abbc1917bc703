"""The README's command-output excerpts, made by running the commands they show.

An excerpt is a fenced ``text`` block right after an HTML comment ``<!-- output: SPEC -->``. The block
opens with the command as a user types it (``$ plan ...``, continued with `` \\``), then the output.
SPEC is JSON: ``{"ranges": [[FROM, TO], ...], "columns": 100}``. Each range keeps the output lines from
the first line that starts with FROM (at or after the previous range) through the first line from there
that starts with TO (``null``: through the end; FROM ``null``: from the first line); a stretch of lines
left out is shown as one ``...`` line. The command runs in process, with ``COLUMNS`` set, exactly as
tests/test_readme.py runs the README's commands.

    python scripts/readme_outputs.py           # rewrite the excerpts in README.md from today's output
    python scripts/readme_outputs.py --check   # exit 1 and show the first difference if any is stale

tests/test_readme.py::test_readme_outputs_are_current runs ``--check``'s comparison, so an excerpt cannot
drift from what the command prints.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"

_BLOCK = re.compile(r"<!-- output: (?P<spec>\{.*?\}) -->\n```text\n(?P<body>.*?)```\n", re.S)


@dataclass(frozen=True)
class Excerpt:
    spec: dict
    command_lines: list[str]  # as shown, "$ plan ..." with its continuations
    shown: str  # the block's text after the command lines
    start: int  # offsets of the block's body in the README
    end: int

    @property
    def argv(self) -> list[str]:
        text = " ".join(line.rstrip("\\").strip() for line in self.command_lines)
        words = shlex.split(text[2:] if text.startswith("$ ") else text)
        if not words or words[0] != "plan":
            raise ValueError(f"an output excerpt must start with '$ plan ...': {self.command_lines[0]!r}")
        return words[1:]


def excerpts(readme: str) -> list[Excerpt]:
    found = []
    for m in _BLOCK.finditer(readme):
        lines = m.group("body").splitlines(keepends=True)
        n = 1
        while n < len(lines) and lines[n - 1].rstrip("\n").endswith("\\"):
            n += 1
        found.append(Excerpt(json.loads(m.group("spec")), [ln.rstrip("\n") for ln in lines[:n]],
                             "".join(lines[n:]), m.start("body"), m.end("body")))
    return found


def run_command(argv: list[str], columns: int) -> tuple[int, str]:
    """``plan ARGV`` in process, as a terminal COLUMNS wide: (exit code, stdout)."""
    from planner.cli import main

    out = io.StringIO()
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(columns)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            code = main(argv)
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old
    return code, out.getvalue()


def select(output: str, ranges: list[list[str | None]]) -> str:
    """The lines SPEC's ranges keep, with one ``...`` line for each stretch left out."""
    lines = output.rstrip("\n").splitlines()
    keep: list[tuple[int, int]] = []
    at = 0
    for start, stop in ranges:
        i = at if start is None else next((k for k in range(at, len(lines)) if lines[k].startswith(start)), None)
        if i is None:
            raise ValueError(f"no output line starts with {start!r} (after line {at + 1})")
        j = len(lines) - 1 if stop is None else next(
            (k for k in range(i, len(lines)) if lines[k].startswith(stop)), None)
        if j is None:
            raise ValueError(f"no output line starts with {stop!r} (after line {i + 1})")
        keep.append((i, j))
        at = j + 1
    shown: list[str] = []
    prev = 0
    for i, j in keep:
        if i > prev:
            shown.append("...")
        shown.extend(lines[i:j + 1])
        prev = j + 1
    if prev < len(lines):
        shown.append("...")
    return "\n".join(shown) + "\n"


def render(ex: Excerpt) -> str:
    columns = int(ex.spec.get("columns", 100))
    _code, output = run_command(ex.argv, columns)
    return select(output, ex.spec.get("ranges", [[None, None]]))


def regenerate(readme: str) -> str:
    parts, at = [], 0
    for ex in excerpts(readme):
        head = "\n".join(ex.command_lines) + "\n"
        parts += [readme[at:ex.start], head, render(ex)]
        at = ex.end
    parts.append(readme[at:])
    return "".join(parts)


def main(argv: list[str]) -> int:
    readme = README.read_text(encoding="utf-8")
    fresh = regenerate(readme)
    if "--check" in argv:
        if fresh == readme:
            print(f"{len(excerpts(readme))} README output excerpts are current")
            return 0
        import difflib

        sys.stdout.writelines(difflib.unified_diff(readme.splitlines(True), fresh.splitlines(True),
                                                   "README.md", "README.md (today's output)", n=1))
        return 1
    README.write_text(fresh, encoding="utf-8")
    print(f"{len(excerpts(fresh))} README output excerpts written")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main(sys.argv[1:]))
