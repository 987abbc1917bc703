"""What the report and the JSON say about how much of the space a pruned search evaluated: "N of S configurations
evaluated (K combinations skipped, proven unable to win)", and ``space`` / ``pruned`` in the search's JSON."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

from planner.cli import main
from planner.report import evaluated_text

SEED = ["--gpu", "rtxpro6000", "--model", "qwen3.6-27b"]


def test_evaluated_text_names_the_skipped_combinations_only_when_there_are_some():
    assert evaluated_text(SimpleNamespace(evaluated=1296, space=1728, pruned=16)) == (
        "1,296 of 1,728 configurations evaluated (16 combinations skipped, proven unable to win)")
    assert evaluated_text(SimpleNamespace(evaluated=1296, space=1728, pruned=1)).endswith(
        "(1 combination skipped, proven unable to win)")
    assert evaluated_text(SimpleNamespace(evaluated=1728, space=1728, pruned=0)) == "1,728 configurations evaluated"


def test_cli_report_and_json_carry_the_same_counts(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")
    assert main([*SEED, "--json"]) == 0
    search = json.loads(capsys.readouterr().out)["search"]
    assert search["pruned"] > 0 and search["evaluated"] < search["space"]
    assert main(SEED) == 0
    text = capsys.readouterr().out
    m = re.search(r"Search: ([\d,]+) of ([\d,]+) configurations evaluated \((\d+) combinations skipped, "
                  r"proven unable to win\), ([\d,]+) feasible", text)
    assert m, text
    n, s, k, f = (int(g.replace(",", "")) for g in m.groups())
    assert (n, s, k, f) == (search["evaluated"], search["space"], search["pruned"], search["feasible"])
