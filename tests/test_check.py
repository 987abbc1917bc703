"""plan check: predicted vs actual on boot logs, and stale logs reported first."""

from __future__ import annotations

import datetime as dt
import io
import os
import shutil
from pathlib import Path

from planner.check import check
from planner.cli import check_main
from planner.hardware.profiles import find_profile
from planner.logs import parse_file

LOGS = Path(__file__).parent / "data" / "logs"
SPEC = LOGS / "synthetic-0.5.11-tp1-spec.log"


def run(argv):
    out = io.StringIO()
    code = check_main(argv, out=out)
    return code, out.getvalue()


def test_synthetic_spec_log_agrees_pool_by_pool():
    res = check(parse_file(SPEC), find_profile("rtxpro6000"), None, [])
    assert not res.stale
    assert res.rows and all(r.agrees for r in res.rows), [(r.what, r.predicted, r.actual) for r in res.rows]
    whats = {r.what for r in res.rows}
    assert {"mamba ssm state", "spec intermediate ssm", "KV K", "draft KV K", "max_running_requests"} <= whats


def test_real_0_5_9_log_mamba_pools_agree():
    # github.com/kvcache-ai/ktransformers/issues/1870 (tests/data/logs header); flags from the issue
    flags = ("--tp-size 2 --mem-fraction-static 0.85 --context-length 8192 --quantization fp8 --cpu-offload-gb 400 "
             "--max-running-requests 1 --chunked-prefill-size 2048 --attention-backend flashinfer "
             "--disable-cuda-graph").split()
    res = check(parse_file(LOGS / "sglang-0.5.9-qwen3.5-397b-tp2-rtx4090.log"), find_profile("rtx4090"),
                "qwen3.5-397b-a17b", flags)
    rows = {r.what: r for r in res.rows}
    assert rows["max_mamba_cache_size"].predicted == rows["max_mamba_cache_size"].actual == 82
    assert rows["mamba conv state"].agrees and rows["mamba ssm state"].agrees
    # the KV pool is within 0.3 % (the log rounds its inputs and prints only one rank)
    kv = rows["KV #tokens (max_total_num_tokens)"]
    assert abs(kv.diff) / kv.actual < 0.003
    assert any("0.5.9" in n for n in res.notes)


def test_launched_after_the_log_was_written_is_stale_first(tmp_path):
    copy = tmp_path / "boot.log"
    shutil.copy(SPEC, copy)
    old = dt.datetime(2026, 5, 1, 12, 30).timestamp()
    os.utime(copy, (old, old))
    code, out = run([str(copy), "--gpu", "rtxpro6000", "--launched-at", "2026-05-01 13:00:00"])
    assert code == 1
    assert out.startswith("STALE LOG?")
    assert "before your launch at 2026-05-01 13:00:00" in out


def test_flags_that_differ_from_the_log_are_stale():
    code, out = run([str(SPEC), "--gpu", "rtxpro6000", "--max-running-requests", "8"])
    assert out.startswith("STALE LOG?") and "--max-running-requests 8 (yours) vs 4 (log)" in out


def test_interleaved_launches_are_stale():
    code, out = run([str(LOGS / "synthetic-0.5.11-interleaved.log"), "--gpu", "rtxpro6000"])
    assert out.startswith("STALE LOG?") and "interleaved" in out


def test_two_launches_checks_the_newest_failure_and_explains_it():
    code, out = run([str(LOGS / "synthetic-0.5.11-two-launches.log"), "--gpu", "rtxpro6000"])
    assert "2 launch(es); checking the newest" in out
    assert "Not enough memory" in out
    assert "WILL NOT BOOT" in out  # the planner reaches the same verdict from the same inputs


def test_unreadable_log_is_bad_input(capsys):
    from planner.cli import main

    assert main(["check", "/no/such.log", "--gpu", "rtxpro6000"]) == 2
    assert "cannot read" in capsys.readouterr().err
