"""plan check: predicted vs actual on boot logs, and stale logs reported first."""

from __future__ import annotations

import datetime as dt
import io
import os
import shutil
from pathlib import Path

from planner.engines.sglang.check import check
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


# ------------------------------------------------------------------ the release: reproduced from the log's evidence
NEM = LOGS / "synthetic-0.5.11-not-enough-memory.log"  # the seed launch failing under 0.5.11, no version line


def _plan_under(version, log_path=NEM):
    """The log's own inputs planned under one release (independently of check's choice)."""
    from planner.catalog.catalog import resolve_model
    from planner.engines.sglang.check import flags_from_server_args
    from planner.engines.sglang.plan import make_plan

    la = parse_file(log_path).latest
    rank = next(iter(la.ranks.values()))
    return make_plan(find_profile("rtxpro6000"), resolve_model("qwen3.6-27b"), flags_from_server_args(la.server_args),
                     None, rank.load_begin.avail_gib, rank.load_end.avail_gib, version=version)


def test_failed_seed_log_without_version_line_is_planned_under_a_release_that_reproduces_it():
    text = NEM.read_text()
    assert "SGLang version" not in text and "sglang==" not in text  # the log does not print its release
    code, out = run([str(NEM), "--gpu", "rtxpro6000"])
    assert code == 1  # the log shows a failed launch
    res = check(parse_file(NEM), find_profile("rtxpro6000"), None, [])
    assert res.release in ("0.5.9", "0.5.10", "0.5.11", "0.5.12", "0.5.13")
    assert res.plan.verdict == "rejected" and "Not enough memory" in res.plan.error_message
    assert f"Using {res.release}" in out
    # every candidate's verdict is what that release's rules give, and the kept ones reproduce the failure
    for c in res.candidates:
        p = _plan_under(c.version)
        assert c.verdict == ("startup_failed" if p.outcome == "startup_failed" else p.verdict)
        assert c.reproduces == (p.verdict == "rejected" and "Not enough memory" in (p.error_message or ""))
    assert res.release == max((c for c in res.candidates if c.reproduces), key=lambda c: tuple(map(int, c.version.split(".")))).version
    # 0.5.13 sizes the speculative states inside the mamba share: it boots, so it is not the release used
    assert _plan_under("0.5.13").verdict == "fits" and res.release != "0.5.13"
    assert "0.5.13 does not (predicts FITS)" in out
    fixes = [ln for ln in out.splitlines() if ln.startswith("Fix: ")]
    assert fixes and fixes[0].startswith("Fix: add --max-running-requests ")
    # the value offered boots under the release used
    r = int(fixes[0].split()[3].rstrip(":"))
    from planner.catalog.catalog import resolve_model
    from planner.engines.sglang.plan import make_plan
    rank = next(iter(res.launch.ranks.values()))
    fixed = [*res.flags[:res.flags.index("--max-running-requests")],
             *res.flags[res.flags.index("--max-running-requests") + 2:], "--max-running-requests", str(r)]
    p = make_plan(find_profile("rtxpro6000"), resolve_model("qwen3.6-27b"), fixed, None,
                  rank.load_begin.avail_gib, rank.load_end.avail_gib, version=res.release)
    assert p.verdict != "rejected"


def test_release_choice_without_the_spec_v2_line_still_reproduces_the_failure(tmp_path):
    """Without the 'Spec v2' line (>= 0.5.11) the range opens to 0.5.10: the release used still fails the same way."""
    p = tmp_path / "boot.log"
    p.write_text("\n".join(x for x in NEM.read_text().splitlines() if "Spec v2" not in x) + "\n")
    res = check(parse_file(p), find_profile("rtxpro6000"), None, [])
    assert [c.version for c in res.candidates][0] == "0.5.10"
    assert res.release != "0.5.13" and res.plan.verdict == "rejected"


def test_given_release_wins_and_is_named():
    res = check(parse_file(NEM), find_profile("rtxpro6000"), None, [], version="0.5.13")
    assert res.release == "0.5.13" and not res.candidates
    assert "--sglang-version (given)" in res.release_why


def test_failed_launch_the_plan_says_fits_names_what_the_planner_cannot_see(tmp_path):
    """A launch that booted in the planner's eyes but failed in the log (here: the fitting A' launch, cut after its
    target pools by a CUDA out-of-memory error) is never answered FITS alone, and exits 1."""
    lines = SPEC.read_text().splitlines()
    cut = next(i for i, x in enumerate(lines) if "Memory pool end" in x)
    lines = lines[:cut + 1] + ["[2026-05-01 12:01:42] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
                               "2.00 GiB. GPU 0 has a total capacity of 94.97 GiB of which 1.20 GiB is free."]
    p = tmp_path / "boot.log"
    p.write_text("\n".join(lines) + "\n")
    code, out = run([str(p), "--gpu", "rtxpro6000"])
    assert code == 1
    assert "Planner verdict for the same inputs: FITS" in out
    but = next(x for x in out.splitlines() if x.startswith("But: "))
    for cause in ("other processes", "WSL2", "fragmentation"):
        assert cause in but


def test_booted_log_keeps_exit_0_and_a_release_whose_pools_agree():
    code, out = run([str(SPEC), "--gpu", "rtxpro6000"])
    res = check(parse_file(SPEC), find_profile("rtxpro6000"), None, [])
    assert code == 0
    assert res.candidates and all(c.reproduces for c in res.candidates if c.version == res.release)
    assert all(r.agrees is not False for r in res.rows)


def test_a_readme_is_not_a_log(capsys):
    from planner.cli import main

    code = main(["check", str(Path(__file__).parent.parent / "README.md"), "--gpu", "rtxpro6000"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "not a server log" in err
