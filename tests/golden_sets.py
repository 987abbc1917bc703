"""Reading the committed golden sets: tests/golden/<kind>/sglang-<release>/{cases,results}.jsonl, a case paired
with the oracle's ``summary`` by id (the READMEs beside the data say how each set was made)."""

from __future__ import annotations

import json
from pathlib import Path


def releases(folder: Path) -> list[str]:
    """The releases with results under ``folder``, oldest first."""
    return sorted((p.name.split("-", 1)[1] for p in folder.glob("sglang-*") if (p / "results.jsonl").exists()),
                  key=lambda v: tuple(int(x) for x in v.split(".")))


def read_pairs(folder: Path, version: str, *, skip_missing: bool = False, cases: str = "cases.jsonl",
               results: str = "results.jsonl") -> list[tuple[dict, dict]]:
    """(case with its "version", expected summary) for every case of ``folder/sglang-<version>/<cases>``, its
    summary from ``<results>``; a case the results lack is a KeyError unless ``skip_missing`` (a set whose
    dropped cases stay in cases.jsonl)."""
    d = folder / f"sglang-{version}"
    res = {r["id"]: r["summary"] for r in (json.loads(x) for x in (d / results).read_text().splitlines() if x.strip())}
    out = []
    for c in (json.loads(x) for x in (d / cases).read_text().splitlines() if x.strip()):
        if skip_missing and c["id"] not in res:
            continue
        out.append(({**c, "version": version}, res[c["id"]]))
    return out
