"""vLLM's front end (planner/engines/vllm/frontend.py, report.py, launch.py): verdicts, the report, the JSON, the
recommended ``vllm serve`` line, the device mapping, the release, the paste forms.

Two kinds of checks: (1) the scenarios of ``tests/vllm_scenarios.py`` answered by the vLLM oracle's committed
results (``tests/vllm_fixture.py``; every number is vLLM's own code's), (2) the whole chain here (config.resolve,
estimates, sizing.size) on the issue's first command, Qwen3.6-27B on an RTX PRO 6000.
"""

from __future__ import annotations

import json
import shlex
import time

import pytest
import vllm_scenarios as S
from vllm_fixture import OracleSizer, case_of, key_of

from planner.engines.interface import PlanRequest
from planner.engines.vllm import launch as L
from planner.engines.vllm.frontend import (CUDA_TOTAL_READINGS, FRONTEND, device_of, verdict_of, version_of)
from planner.engines.vllm.inputs import GIB, Measured
from planner.errors import BadInput
from planner.hardware.profiles import find_profile


@pytest.fixture(scope="module")
def sizer():
    return OracleSizer()


# ---- verdicts on the oracle's answers ------------------------------------------------------------------------

def test_defaults_034_rejected_by_the_mamba_check_and_fixed_by_max_num_seqs(sizer):
    o = S.q36_defaults_034(sizer)
    assert (o.engine, o.version, o.verdict, o.exit_code) == ("vllm", "0.34.0", "rejected", 1)
    assert "max_num_seqs (1024) exceeds available Mamba cache blocks (780)" in o.json["why"]
    r = o.json["recommendation"]
    assert r["found"] and r["changes"] == ["--max-num-seqs 780"]
    # 0.34 checks the 780-block capacity; after warmup it measures 697 (the oracle's figure)
    assert (r["num_gpu_blocks"], r["max_num_seqs"]) == (697, 780)
    assert o.launch == "vllm serve Qwen/Qwen3.6-27B --max-num-seqs 780"
    assert "Recommended launch:\n  vllm serve Qwen/Qwen3.6-27B --max-num-seqs 780" in o.text
    assert "780 reserved from the profile -> vLLM stopped before measuring" in o.text
    assert o.capacity["max_concurrency"] is None and o.capacity["verdict"] == "rejected"


def test_defaults_033_rejected_at_631_blocks(sizer):
    o = S.q36_defaults_033(sizer)
    assert (o.version, o.verdict) == ("0.33.0", "rejected")
    assert "Mamba cache blocks (631)" in o.json["why"]
    assert o.json["recommendation"]["changes"] == ["--max-num-seqs 631"]
    assert o.json["summary"]["gpu_memory_utilization"] == 0.92  # 0.33's default
    assert "requested = ceil(T x 0.92) = 87.37 GiB  [v1/worker/utils.py:724 @0.33.0]" in o.text


def test_mtp_launch_fits_with_capacity_and_measured_blocks(sizer):
    o = S.q36_mtp3_034(sizer)
    assert (o.verdict, o.exit_code) == ("fits", 0)
    s = o.json["summary"]
    assert (s["num_gpu_blocks_capacity"], s["num_gpu_blocks"], s["block_size"]) == (720, 642, 832)
    assert round(s["max_concurrency"], 2) == 1.92
    assert "720 reserved from the profile -> 642 measured after warmup and graph capture" in o.text
    assert "3: FullAttentionSpec, 17 layers, 1 draft" in o.text
    assert o.json["recommendation"] is None  # it fits and no need was given: no search
    assert o.capacity == {"kv_tokens": 503881, "context_len": 262144, "max_running_requests": 32,
                          "concurrency_context": 262144, "max_concurrency": 1, "max_concurrency_x": s["max_concurrency"],
                          "kv_bytes": 37193515008, "num_gpu_blocks": 642, "verdict": "fits"}
    # the line runs as printed: the speculative JSON stays one word
    assert shlex.split(o.launch)[3:] == ["--max-model-len", "262144", "--max-num-seqs", "32", *S.MTP3]


def test_json_carries_the_oracle_summary_and_the_inputs(sizer):
    o = S.q36_mtp3_034(sizer)
    d = o.json
    assert d["engine"] == "vllm" and d["vllm_version"] == "0.34.0"
    assert d["measured"] == S.Q36_MEASURED and d["estimated"] == {}
    assert d["summary"]["summary_version"] == 1 and "available_kv_bytes" in d["summary"]
    assert d["confidence"]["level"] == "measured"
    json.dumps(d)  # serialisable


def test_max_model_len_rejection_keeps_the_asked_context(sizer):
    o = S.q36_too_long_034(sizer)
    assert o.verdict == "rejected" and "To serve at least one request" in o.json["why"]
    r = o.json["recommendation"]
    # the explicit --max-model-len 262144 is what the user asked: the fix raises the utilization instead
    assert r["changes"] == ["--gpu-memory-utilization 0.80"] and r["max_model_len"] == 262144
    assert "--max-model-len 262144" in o.launch


def test_need_concurrency_not_met_searches(sizer):
    o = S.q36_need_concurrency_034(sizer)
    assert o.verdict == "fits" and o.exit_code == 1 and o.json["needs"]["met"] is False
    r = o.json["recommendation"]
    assert r["found"] and r["max_model_len"] == 262144
    assert min(r["max_num_seqs"], int(r["max_concurrency"])) >= 3
    assert "needs (3 requests at once): NOT met" in o.text


def test_dense_h100_profile_cuda_total(sizer):
    o = S.llama8b_h100_034(sizer)
    assert o.verdict == "fits"
    assert o.json["gpu"]["cuda_total_bytes"] == int(round(81105 / 1024 * GIB))
    assert o.capacity["max_concurrency"] == 14 and o.json["summary"]["num_gpu_blocks"] == 7656
    assert o.launch == "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 32768"


def test_every_recommended_line_passed_vllms_own_parser(sizer):
    """Each line the scenarios recommend was run through the vLLM oracle, whose first stage is vLLM's own `vllm
    serve` parser (make_arg_parser + validate_parsed_serve_args): it got past it and vLLM started."""
    seen = 0
    for run in S.SCENARIOS:
        o = run(sizer)
        r = o.json.get("recommendation")
        if not r or not r.get("found"):
            continue
        words = shlex.split(o.launch)
        assert words[:2] == ["vllm", "serve"]
        flags = words[3:]
        assert flags == r["flags"]
        answered = [x["summary"] for x in sizer.results.values() if x["flags"] == flags
                    and x["summary"]["vllm_version"] == o.version]
        assert answered and all(a["validated"] and a["outcome"] == "ok" for a in answered)
        seen += 1
    assert seen >= 4


# ---- units ---------------------------------------------------------------------------------------------------

def test_version_of():
    assert version_of("0.34")[0] == "0.34.0" and version_of("v0.33.0")[0] == "0.33.0"
    with pytest.raises(BadInput, match="not modelled"):
        version_of("0.35")


def test_device_of_reads_and_refuses():
    d, src = device_of(find_profile("rtxpro6000"), {})
    assert d.cuda_total_bytes == int(round(94.97 * GIB)) and d.sm == "12.0" and "94.97" in src
    assert "rtxpro6000" in CUDA_TOTAL_READINGS
    d, src = device_of(find_profile("rtxpro6000"), {"cuda_total_mib": 97000})
    assert d.cuda_total_bytes == 97000 * (1 << 20) and src.startswith("measured")
    with pytest.raises(BadInput, match="ROCm"):
        device_of(find_profile("mi300x"), {})
    # NVML less the profile's driver reserve is cudaMemGetInfo's total on every profile holding both
    from planner.hardware.profiles import load_profiles  # noqa: PLC0415

    both = [p for p in load_profiles() if p.cuda_total_mib and p.driver_reserved_mib and p.memory_total_mib]
    assert len(both) >= 6 and all(abs(p.memory_total_mib - p.driver_reserved_mib - p.cuda_total_mib) <= 1
                                  for p in both)
    d, src = device_of(find_profile("h200"), {})
    assert d.cuda_total_bytes == int(round((143771 - 700) / 1024 * GIB)) and "driver reserve 700" in src
    d, src = device_of(find_profile("rtx5090"), {})  # no reading at all: estimated, and said so
    assert src.startswith("estimated") and d.cuda_total_bytes == int(round((32607 - 500) / 1024 * GIB))
    with pytest.raises(BadInput, match="unified memory"):
        device_of(find_profile("dgx-spark"), {})


def test_verdict_oom_risk_when_measured_graphs_exceed_the_033_budget():
    s = {"outcome": "ok", "enable_extensible_kv_cache": False, "cudagraph_memory_estimate_bytes": GIB,
         "init_free_bytes": 90 * GIB, "requested_memory_bytes": 88 * GIB}
    assert verdict_of(s, Measured(cudagraph_actual_gib=2.5))[0] == "fits"  # 1.5 GiB over, 2 GiB left free
    v, code, why = verdict_of(s, Measured(cudagraph_actual_gib=3.5))
    assert (v, code) == ("oom_risk", 1) and "0.50 GiB" in why
    assert verdict_of({**s, "enable_extensible_kv_cache": True}, Measured(cudagraph_actual_gib=9.0))[0] == "fits"
    assert verdict_of({"outcome": "rejected", "error_type": "SystemExit", "error_message": "x"})[:2] == ("rejected", 1)


def test_launch_edits():
    base = ["--max-num-seqs", "1024", "--enable-prefix-caching", "--max-model-len=8192", "--speculative-config",
            '{"method": "mtp"}']
    assert L.edit(base, [("--max-num-seqs", "780")])[:2] == ["--max-num-seqs", "780"]
    out = L.edit(base, [("--no-enable-prefix-caching", None), ("--speculative-config", "-"), ("--max-model-len", "-1")])
    assert out == ["--max-num-seqs", "1024", "--no-enable-prefix-caching", "--max-model-len", "-1"]
    assert L.flag_value(out, "--max-model-len") == "-1" and L.flag_value(out, "--enable-prefix-caching") == "false"
    assert L.describe([("--enforce-eager", None), ("--speculative-config", "-")]) == ["--enforce-eager",
                                                                                     "drop --speculative-config"]
    line = L.serve_line("Qwen/Qwen3.6-27B", base, {"VLLM_X": "a b"})
    assert shlex.split(line) == ["VLLM_X=a b", "vllm", "serve", "Qwen/Qwen3.6-27B", *base]


@pytest.mark.parametrize("cmd,model,flags,env", [
    ("vllm serve Qwen/Qwen3.6-27B --max-num-seqs 8", "Qwen/Qwen3.6-27B", ["--max-num-seqs", "8"], {}),
    ("VLLM_USE_V2_MODEL_RUNNER=1 vllm serve M --max-model-len 4096", "M", ["--max-model-len", "4096"],
     {"VLLM_USE_V2_MODEL_RUNNER": "1"}),
    ("python -m vllm.entrypoints.openai.api_server --model M --tensor-parallel-size 2", "M",
     ["--tensor-parallel-size", "2"], {}),
    ("docker run --gpus all -p 8000:8000 vllm/vllm-openai:v0.34.0 --model M --max-num-seqs 4", "M",
     ["--max-num-seqs", "4"], {}),
])
def test_paste_forms(cmd, model, flags, env):
    assert FRONTEND.paste([cmd]) == (model, flags, env)


def test_paste_leaves_other_engines():
    assert FRONTEND.paste(["python -m sglang.launch_server --model-path M"]) is None


def test_fixture_keys_cover_the_measured_inputs():
    from planner.catalog.catalog import resolve_model  # noqa: PLC0415
    from planner.engines.vllm.inputs import VllmLaunch  # noqa: PLC0415

    d, _ = device_of(find_profile("rtxpro6000"), {})
    spec = resolve_model("qwen3.6-27b").spec
    a = case_of(VllmLaunch("0.34.0", spec, (), d, Measured(non_torch_gib=0.6, peak_activation_gib=2.84)))
    b = case_of(VllmLaunch("0.34.0", spec, (), d, Measured(non_torch_gib=0.7, peak_activation_gib=2.84)))
    assert key_of("0.34.0", a) != key_of("0.34.0", b) != key_of("0.33.0", b)


# ---- the whole chain here (config.resolve, estimates, sizing.size) ---------------------------------------------

def _real(flags=(), version="0.34", measured=None, **kw):
    from planner.catalog.catalog import resolve_model  # noqa: PLC0415

    return FRONTEND.plan(PlanRequest(find_profile("rtxpro6000"), resolve_model("qwen3.6-27b"), tuple(flags), {},
                                     version, dict(measured or {}), **kw))


@pytest.mark.parametrize("version", ["0.34", "0.33"])
def test_issue_command_gives_verdict_blocks_and_a_line_vllm_accepts(version):
    from planner.engines.vllm.flags import parse_serve_flags  # noqa: PLC0415

    t = time.perf_counter()
    o = _real(version=version)
    assert time.perf_counter() - t < 5
    assert o.verdict == "rejected" and "exceeds available Mamba cache blocks" in o.json["why"]
    blocks = int(o.json["why"].split("Mamba cache blocks (")[1].split(")")[0])
    r = o.json["recommendation"]
    assert r["found"] and len(r["changes"]) == 1 and r["changes"][0].startswith("--max-num-seqs ")
    seqs = int(r["changes"][0].split()[1])
    assert 256 <= seqs < 1024 and r["num_gpu_blocks"] > 0 and r["max_concurrency"] > 1
    assert "holds with every estimate raised by its residual" in r["checked"]
    # the printed line, re-planned as is, starts
    words = shlex.split(o.launch)
    assert words[:3] == ["vllm", "serve", "Qwen/Qwen3.6-27B"]
    again = _real(words[3:], version=version)
    assert again.verdict == "fits" and again.json["summary"]["max_num_seqs"] == seqs
    # and vLLM's own parser (vcfg's rebuild of the release's argparse) takes it
    assert parse_serve_flags(o.version, words[3:])["max_num_seqs"] == seqs
    assert blocks >= 1  # vLLM's own figure, reported


def test_estimates_are_shown_with_how_and_residual():
    o = _real(["--max-num-seqs", "256"])
    est = o.json["estimated"]
    assert {"weights_gib", "non_torch_gib", "peak_activation_gib", "cudagraph_gib", "startup_used_gib"} <= set(est)
    assert all(e["how"] for e in est.values())
    assert o.json["confidence"]["level"] in ("estimated", "low")
    assert "estimated (" in o.text and "Boot measurements" in o.text
    # the lines vLLM would print, as sizing.size returns them, in the report for comparison with a boot
    assert any(x.startswith("Available KV cache memory: ") for x in o.json["log"])
    assert "vLLM would log (compare with a boot's):\n  Setting attention block size to 832 tokens" in o.text


def test_measured_inputs_replace_estimates():
    m = {"weights_gib": 51.0, "non_torch_gib": 0.6, "peak_activation_gib": 2.84, "cudagraph_gib": 0.89,
         "startup_used_gib": 0.5}
    o = _real(["--max-num-seqs", "256"], measured=m)
    assert o.json["estimated"] == {} and o.json["summary"]["weights_bytes"] == 51 * GIB


def test_a_flag_vllm_does_not_know_is_refused_with_its_near_match_and_no_search():
    o = _real(["--max-num-seqz", "8"])
    assert o.verdict == "rejected" and o.exit_code == 1
    assert "unrecognized arguments: --max-num-seqz 8" in o.json["why"] and "did you mean --max-num-seqs?" in o.json["why"]
    assert o.json["recommendation"] is None
    assert "Verdict: vLLM REFUSES THE FLAGS" in o.text


def test_an_estimated_cuda_total_is_shown_and_checked_on_its_low_side():
    from planner.catalog.catalog import resolve_model  # noqa: PLC0415

    o = FRONTEND.plan(PlanRequest(find_profile("rtx5090"), resolve_model("qwen3-8b"), ("--max-model-len", "8192"), {},
                                  "0.34", {}))
    e = o.json["estimated"]["cuda_total_gib"]
    assert e["residual_gib"] == pytest.approx(263 / 1024, abs=1e-4) and "typical driver reserve" in e["how"]
    assert "cuda_total -0.26" in o.json["confidence"]["note"]
