"""The default report fits one screen (README: at most 40 lines at 100 columns) on the launches users run, the
seed's failing launch (its report and the recommendation) and the speculative ones included; what it shortens
to fit (the runner-up, the DFLASH cost line) is named with the flag that shows it."""

from __future__ import annotations

import pytest

from planner.cli import main

SEED = ["--sglang-version", "0.5.11", "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3",
        "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4",
        "--mamba-scheduler-strategy", "extra_buffer"]
LAUNCHES = [
    ["--gpu", "rtxpro6000", "--model", "qwen3.6-27b"],
    ["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", *SEED],
    ["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--speculative", "DFLASH"],
    ["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--speculative", "DSPARK"],
    ["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--speculative", "NGRAM"],
    ["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--sglang-version", "0.5.16", "--speculative-algorithm", "EAGLE"],
    ["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--need-context", "131072", "--need-concurrency", "2",
     "--speculative", "EAGLE"],
    ["--gpu", "rtx4090", "--model", "qwen3-8b"],
    ["--gpu", "b200", "--model", "nemotron-3-nano-30b-a3b"],
    ["--gpu", "h100", "--model", "qwen3.5-9b", "--speculative", "EAGLE"],
]


@pytest.mark.parametrize("argv", LAUNCHES, ids=lambda a: " ".join(a[1::2][:4]))
def test_default_report_fits_one_screen(argv, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    assert main(argv) in (0, 1)
    lines = capsys.readouterr().out.rstrip("\n").split("\n")
    assert len(lines) <= 40, "\n".join(lines)
    assert max(map(len, lines)) <= 100


def test_what_the_report_shortens_names_its_flag(capsys, monkeypatch):
    """At 100 columns the DFLASH report is over a screen with its runner-up: it names --top 2 instead; at 400
    columns (fewer wrapped lines) the runner-up is printed."""
    argv = ["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--speculative", "DFLASH"]
    monkeypatch.setenv("COLUMNS", "100")
    main(argv)
    narrow = capsys.readouterr().out
    monkeypatch.setenv("COLUMNS", "400")
    main(argv)
    wide = capsys.readouterr().out
    assert "Runner-up: --top 2 lists it" in narrow and "Runner-up (" not in narrow
    assert "Runner-up (" in wide
    monkeypatch.setenv("COLUMNS", "100")
    main([*argv, "--top", "2"])
    assert "Top 2:" in capsys.readouterr().out  # what the shortened line points at
