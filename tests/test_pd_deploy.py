"""A PD deployment (``--prefill-replicas P --decode-replicas D``): each role planned alone, as its own single-role
launch is (the role plans are the ones tests/test_golden_pd.py checks against SGLang's code), then the GPUs added."""
from __future__ import annotations

import json

import pytest

from planner.catalog.catalog import resolve_model
from planner.cli import main
from planner.engines.sglang.pd_deploy import plan_deployment, split_options, wants_deployment
from planner.engines.sglang.plan import make_plan
from planner.engines.sglang.report import render_report
from planner.errors import BadInput
from planner.hardware.profiles import find_profile

ARGS = ["--gpu", "h100", "--model", "qwen3-32b", "--sglang-version", "0.5.23", "--tp-size", "2"]


def test_each_role_is_its_single_role_plan_and_the_gpus_add_up(capsys):
    code = main([*ARGS, "--prefill-replicas", "1", "--decode-replicas", "3",
                 "--decode-flags", "--max-running-requests 16"])
    out = capsys.readouterr().out
    assert code == 0
    gpu, model = find_profile("h100"), resolve_model("qwen3-32b")
    pre = make_plan(gpu, model, ["--tp-size", "2", "--disaggregation-mode", "prefill"], {}, version="0.5.23")
    dec = make_plan(gpu, model, ["--tp-size", "2", "--max-running-requests", "16", "--disaggregation-mode", "decode"],
                    {}, version="0.5.23")
    assert render_report(pre, None, user_flags=True) in out
    assert render_report(dec, None, user_flags=True) in out
    # the decode role's own flag reached only the decode role: 16 requests -> 32 extra slots (pd_disaggregation_hook)
    assert dec.args.decode_extra_slots == 32 and pre.args.max_running_requests != 16
    assert out.rstrip().splitlines()[-1] == (
        "=== deployment: FITS: prefill 1 x 2 GPUs = 2 (FITS); decode 3 x 2 GPUs = 6 (FITS); total 8 x h100-sxm; "
        "every role must fit ===")


def test_json_carries_the_deployment(capsys):
    assert main([*ARGS, "--prefill-replicas", "2", "--decode-replicas", "1", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)["deployment"]
    assert d["total_gpus"] == 6 and d["verdict"] == "fits" and d["gpu"] == "h100-sxm"
    assert [(r["role"], r["replicas"], r["gpus_per_replica"], r["gpus"]) for r in d["roles"]] == [
        ("prefill", 2, 2, 4), ("decode", 1, 2, 2)]
    assert all(r["plan"]["verdict"] == r["verdict"] == "fits" for r in d["roles"])


def test_a_role_that_does_not_fit_sinks_the_deployment(capsys):
    # Qwen3-32B on one 24 GB card: neither role holds the weights
    code = main(["--gpu", "rtx4090", "--model", "qwen3-32b", "--sglang-version", "0.5.23", "--prefill-replicas", "1",
                 "--decode-replicas", "1"])
    last = capsys.readouterr().out.rstrip().splitlines()[-1]
    assert code == 1 and last.startswith("=== deployment: DOES NOT FIT:") and "total 2 x rtx4090" in last


def test_one_role_only_and_what_is_refused(capsys):
    gpu, model = find_profile("h100"), resolve_model("qwen3-32b")
    dep = plan_deployment(gpu, model, ["--tp-size", "4", "--decode-replicas", "2"], {}, None, None, "0.5.23")
    assert [r["role"] for r in dep["roles"]] == ["decode"] and dep["total_gpus"] == 8
    with pytest.raises(BadInput, match="decode role: --disaggregation-transfer-backend nixl"):
        plan_deployment(gpu, model, ["--decode-replicas", "1", "--disaggregation-transfer-backend", "nixl"], {},
                        None, None, "0.5.23")
    with pytest.raises(BadInput, match="sets each role's mode itself"):
        plan_deployment(gpu, model, ["--decode-replicas", "1", "--disaggregation-mode", "decode"], {}, None, None,
                        "0.5.23")
    with pytest.raises(BadInput, match="at least one role"):
        plan_deployment(gpu, model, ["--decode-replicas", "0"], {}, None, None, "0.5.23")
    with pytest.raises(BadInput, match="--prefill-flags: given, but --prefill-replicas is 0"):
        plan_deployment(gpu, model, ["--decode-replicas", "1", "--prefill-flags", "--tp-size 2"], {}, None, None,
                        "0.5.23")
    with pytest.raises(BadInput, match="PD disaggregation on SGLang 0.5.15 is not modelled"):
        plan_deployment(gpu, model, ["--decode-replicas", "1"], {}, None, None, "0.5.15")
    code = main([*ARGS, "--decode-replicas", "x"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "--decode-replicas 'x'" in err


def test_single_role_launches_are_not_a_deployment():
    assert not wants_deployment(["--tp-size", "2", "--disaggregation-mode", "decode"])
    assert wants_deployment(["--decode-replicas=2"])
    assert split_options(["--tp-size", "2", "--decode-replicas=2", "--prefill-flags", "--tp-size 4"]) == (
        {"--decode-replicas": "2", "--prefill-flags": "--tp-size 4"}, ["--tp-size", "2"])
