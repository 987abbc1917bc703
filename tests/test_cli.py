"""The `plan` command end to end: outputs, exit codes, paste form, batch, bad input."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys

import pytest

from planner.cli import main, run_batch

# The seed story ran SGLang 0.5.11; its rules are asked for explicitly (the default is the latest release).
V11 = ["--sglang-version", "0.5.11"]
SEED = ("--speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 1 "
        "--speculative-num-draft-tokens 4 --mamba-scheduler-strategy extra_buffer "
        "--max-mamba-cache-size 24 --mamba-full-memory-ratio 0.4").split()


def run(argv, capsys, columns="400"):
    os.environ["COLUMNS"] = columns  # wide: the assertions below match whole sentences
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_seed_case_does_not_boot_and_names_the_flag(capsys):
    code, out, _ = run(["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", *V11, *SEED, "--verbose"], capsys)
    assert code == 1
    assert "Not enough memory. Please try to increase --mem-fraction-static." in out
    assert "27.53 GiB" in out and "x 48" in out
    assert "--mamba-full-memory-ratio is silently ignored" in out
    assert "The flag that matters is --max-running-requests" in out
    assert "Fix: add --max-running-requests" in out


def test_suggested_fix_boots(capsys):
    code, out, _ = run(["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", *V11, *SEED], capsys)
    fix = next(line for line in out.splitlines() if line.startswith("Fix: add --max-running-requests"))
    value = fix.split()[3].rstrip(":")
    code, out, _ = run(["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", *V11, *SEED, "--max-running-requests",
                        value], capsys)
    assert code == 0 and "Verdict: FITS" in out


def test_default_plan_fits_and_prints_units(capsys):
    code, out, _ = run(["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--verbose"], capsys)
    assert code == 0
    assert "SGLang logs print GiB and call it 'GB'" in out
    assert "max_total_num_tokens N" in out and "Serving capacity" in out


def test_paste_form_takes_the_model_from_model_path(capsys):
    code, out, _ = run(["--gpu", "rtxpro6000", *V11, "--", "python", "-m", "sglang.launch_server", "--model-path",
                        "Qwen/Qwen3.6-27B", *SEED], capsys)
    assert code == 1 and "qwen3.6-27b" in out and "Not enough memory" in out


def test_json_summary_follows_oracle_schema(capsys):
    code, out, _ = run(["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--json", *V11, *SEED,
                        "--free-before-load-gib", "95", "--free-after-load-gib", "44"], capsys)
    d = json.loads(out)
    s = d["summary"]
    assert code == 1
    assert s["outcome"] == "startup_failed" and s["stage"] == "resolve_memory_pool_config"
    assert s["server_args_max_running_requests"] == 48
    assert s["free_before_load_gib"] == 95.0 and s["free_after_load_gib"] == 44.0
    assert s["sglang_version"] == "0.5.11"


@pytest.mark.parametrize("argv,needle", [
    (["--gpu", "rtx pro 7000", "--model", "qwen3.6-27b"], "did you mean: rtxpro6000"),
    (["--gpu", "rtxpro6000", "--model", "qwen3.6-72b"], "did you mean: qwen3.6-27b"),
    (["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--not-a-flag"], "unrecognized arguments: --not-a-flag"),
    (["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--tp-size", "two"], "invalid int value"),
    (["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--free-before-load-gib", "-3"], "out of range"),
    (["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--env", "NOEQUALS"], "KEY=VALUE"),
    (["--model", "qwen3.6-27b"], "--gpu: required"),
    (["--gpu", "rtxpro6000", "--model", "/no/such/config.json"], "no such file"),
])
def test_bad_input_is_one_line_exit_2(argv, needle, capsys):
    code, out, err = run(argv, capsys)
    assert code == 2
    assert needle in err and err.count("\n") == 1 and "Traceback" not in err


def test_malformed_config_json(tmp_path, capsys):
    p = tmp_path / "config.json"
    p.write_text("{not json")
    code, _, err = run(["--gpu", "h100", "--model", str(p)], capsys)
    assert code == 2 and "not valid JSON" in err


def test_batch_mode_keeps_ids(tmp_path):
    lines = [
        {"id": "a", "gpu": "rtxpro6000", "model": "qwen3.6-27b", "flags": SEED,
         "free_before_gib": 95.0, "free_after_gib": 44.0},
        {"id": "b", "gpu": "rtxpro6000", "model": "qwen3.6-27b", "flags": [*SEED, "--max-running-requests", "4"]},
        {"id": "c", "gpu": "nope", "model": "qwen3.6-27b"},
    ]
    f = tmp_path / "in.jsonl"
    f.write_text("\n".join(json.dumps(x) for x in lines) + "\nnot json\n")
    out = io.StringIO()
    assert run_batch(str(f), "0.5.11", out) == 0
    res = [json.loads(x) for x in out.getvalue().splitlines()]
    assert [r["id"] for r in res] == ["a", "b", "c", 4]  # a bad line is named by its line number
    assert res[0]["summary"]["outcome"] == "startup_failed"
    assert res[1]["verdict"] == "fits"
    assert "unknown GPU" in res[2]["error"] and "not JSON" in res[3]["error"]


def test_python_dash_m_planner_is_the_same_command():
    r = subprocess.run([sys.executable, "-m", "planner", "--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--json"],
                       capture_output=True, text=True, check=False)
    assert r.returncode == 0 and json.loads(r.stdout)["verdict"] == "fits"


def test_versions_decide_differently_on_the_seed_and_say_why(capsys):
    # the done-when: the seed under 0.5.11 and under 0.5.23 (where the strategy flag has its new name)
    code11, out11, _ = run(["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--no-search", "--compare-releases",
                            "--verbose", *V11, *SEED], capsys)
    seed23 = [f.replace("--mamba-scheduler-strategy", "--mamba-radix-cache-strategy") for f in SEED]
    code23, out23, _ = run(["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--no-search", "--verbose",
                            "--sglang-version", "0.5.23", *seed23], capsys)
    assert code11 == 1 and code23 == 0
    assert "SGLang 0.5.11 rules" in out11 and "SGLang 0.5.23 rules" in out23
    assert "Verdict: WILL NOT BOOT" in out11 and "Verdict: FITS" in out23
    # 0.5.11 reserves S x 48 x 4 before the split; 0.5.23 inside the mamba share, for min(48, M // ratio) + 1
    assert "speculative reservation = S x 48 x 4 = 27.527 GiB" in out11
    assert re.search(r"speculative reservation = S x \(min\(48, M // ratio\) \+ 1\) x 4", out23)
    for out in (out11, out23):  # both name the other's outcome and the rule changes in between
        assert re.search(r"^  0\.5\.11-0\.5\.12 +WILL NOT BOOT", out, re.M)
        assert re.search(r"^  0\.5\.18-0\.5\.23 +FITS: ", out, re.M)
        assert "changed in 0.5.13: the speculative intermediate states are reserved inside the mamba share" in out
        assert "changed in 0.5.17: the pools' padding rows are charged" in out
    assert re.search(r"^  0\.5\.18-0\.5\.23 +FITS: .*<- this plan$", out23, re.M)
    assert re.search(r"^  0\.5\.11-0\.5\.12 +WILL NOT BOOT.*<- this plan$", out11, re.M)


def test_renamed_flag_error_names_the_releases_that_take_the_spelling(capsys):
    # an old spelling narrows the release: the fix offered is the release that takes it, never a rename to a
    # newer spelling (that would move the user to newer rules); the new spelling is named as 0.5.23's own
    code, _, err = run(["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--no-search", "--sglang-version", "0.5.23",
                        "--mamba-scheduler-strategy", "extra_buffer"], capsys)
    assert code == 2 and "unrecognized arguments: --mamba-scheduler-strategy" in err
    assert "--mamba-scheduler-strategy is the 0.5.9-0.5.19 spelling: plan with --sglang-version 0.5.19" in err
    assert "0.5.14 renamed it --mamba-radix-cache-strategy, the spelling SGLang 0.5.23 takes" in err
    assert "rename it" not in err


def test_refusal_under_a_narrowed_release_says_why_that_release(capsys):
    # --cuda-graph-max-bs is the 0.5.9-0.5.19 spelling, so the launch is planned under 0.5.19, where SGLang's ROCm
    # path is refused: the one line must say why 0.5.19 (the user named no release)
    argv = ["--gpu", "mi300x", "--model", "llama-3.1-8b", "--no-search", "--cuda-graph-max-bs", "128"]
    code, _, err = run(argv, capsys)
    assert code == 2 and "0.5.19" in err.split("[planned under")[0]
    assert "[planned under SGLang 0.5.19: --cuda-graph-max-bs is the 0.5.9-0.5.19 spelling" in err
    assert len(err.strip().splitlines()) == 1
    # a release the user names is not explained again
    code, _, err = run(argv + ["--sglang-version", "0.5.19"], capsys)
    assert code == 2 and "planned under" not in err
    # a refusal that does not depend on the release gets no release note
    code, _, err = run(["--gpu", "h200", "--model", "tests/data/configs/nvidia__NVIDIA-Nemotron-3-Super-120B-A12B-FP8"
                        ".config.json", "--tp-size", "4", "--no-search", "--cuda-graph-max-bs", "128"], capsys)
    assert code == 2 and "moe_latent_size" in err and "planned under" not in err


def test_unmodelled_or_unknown_version_is_bad_input(capsys):
    from planner.engines.sglang.rules import KNOWN, RULES

    for v in [v for v in KNOWN if v not in RULES]:
        code, _, err = run(["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--sglang-version", v], capsys)
        assert code == 2 and "not modelled" in err
    code, _, err = run(["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--sglang-version", "9.9"], capsys)
    assert code == 2 and "unknown release" in err


def test_removed_flag_gets_that_releases_error(capsys):
    # 0.5.16 still accepts --mamba-scheduler-strategy as an alias of --mamba-radix-cache-strategy
    code, out, _ = run(["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--no-search", "--sglang-version", "0.5.16",
                        "--mamba-scheduler-strategy", "extra_buffer"], capsys)
    assert code == 0 and "extra_buffer" in out
