"""What the report and the JSON say about how much of the space a pruned search evaluated: "N of S configurations
evaluated (K combinations skipped, proven unable to win)", and ``space`` / ``pruned`` in the search's JSON."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

from planner.cli import main
from planner.engines.sglang.report import evaluated_text

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


def test_weights_that_do_not_fit_are_answered_without_evaluating(capsys, monkeypatch):
    """Qwen3.6-27B's 51 GiB of bf16 weights on a 46 GiB L40S: every point fails at load, so the branch and bound
    evaluates nothing and says why (the exhaustive scan's result is the same: test_search_pruning's rtx4090 case);
    the relaxations still run, and TP 2 fits."""
    monkeypatch.setenv("COLUMNS", "400")
    argv = ["--gpu", "l40s", "--model", "qwen3.6-27b"]
    assert main([*argv, "--json"]) == 1
    search = json.loads(capsys.readouterr().out)["search"]
    assert search["evaluated"] == 0 and search["feasible"] == 0 and search["pruned"] > 0 and search["space"] > 0
    assert search["none_evaluated_because"].startswith("loading the weights leaves -")
    assert any(r.startswith("2 GPUs with --tp-size 2: ") and "still" not in r for r in search["would_fit_with"])
    assert main(argv) == 1
    text = capsys.readouterr().out
    assert f"none of {search['space']:,} configurations needed evaluating: loading the weights leaves -" in text


def test_a_closest_point_sglang_refuses_is_not_offered(capsys, monkeypatch):
    """0.5.9 cannot load a ModelOpt NVFP4 checkpoint on an RTX PRO 6000 (ModelOptFp8Config's ValueError,
    tests/golden/quant/sglang-0.5.9): the scan sizes pools for every point alike, but the closest point is planned
    in full, and the report gives SGLang's refusal instead of a concurrency SGLang would never reach."""
    monkeypatch.setenv("COLUMNS", "400")
    argv = ["--gpu", "rtxpro6000", "--model", "qwen3.6-27b-nvfp4", "--sglang-version", "0.5.9"]
    assert main([*argv, "--json"]) == 1
    search = json.loads(capsys.readouterr().out)["search"]
    assert search["closest"] is None and "ModelOptFp8Config only supports static FP8" in search["closest_refused"]
    assert main(argv) == 1
    text = capsys.readouterr().out
    assert "Closest: none SGLang accepts: it refuses the closest point, " in text and "concurrent at" not in text
