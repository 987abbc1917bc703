"""``plan check`` on a vLLM log (planner/engines/vllm/check.py): the launch and the measured figures read from the
log, the re-plan, the comparison, the failure explained with its fix.

The re-plans run against the vLLM oracle's committed answers (tests/vllm_fixture.py); the logs are vcal's public
excerpts (tests/data/calibration/vllm/, each with its URL) and one composed from the oracle's own log lines
(tests/data/vllm_frontend/q36-rtxpro6000-defaults-0.34.0.log, its header says how)."""

from __future__ import annotations

from pathlib import Path

import pytest
import vllm_scenarios as S
from vllm_fixture import OracleSizer

from planner.engines.vllm.check import check_log, flags_of_args, measured_of
from planner.engines.vllm.inputs import GIB
from planner.engines.vllm.logs import read_log
from planner.errors import BadInput
from planner.hardware.profiles import find_profile

LOGS = Path(__file__).resolve().parent / "data" / "calibration" / "vllm"


def test_failed_boot_is_reproduced_and_fixed():
    o = S.check_q36_defaults_034(OracleSizer())
    assert (o.verdict, o.exit_code, o.version) == ("rejected", 1, "0.34.0")
    c = o.json["check"]
    rows = {r["what"]: r for r in c["compare"]}
    assert rows["failure"]["reproduced"] is True and rows["failure"]["log"] == "mamba_blocks"
    assert rows["failure"]["same_figures"] is True  # 780 blocks, as the log says
    # the log's Available KV cache memory, re-planned from its own figures: vLLM's 39.65 GiB again
    assert rows["Available KV cache memory (GiB)"]["log"] == 39.65
    assert round(rows["Available KV cache memory (GiB)"]["plan"], 2) == 39.65
    assert o.json["measured"]["weights_gib"] == 50.99
    # the sum non-torch + peak + graphs (4.33 GiB) is taken on the pessimistic side (as graphs) for 0.34's measurement
    assert o.json["measured"]["cudagraph_gib"] == pytest.approx(4.33, abs=0.005)
    r = o.json["recommendation"]
    assert r["changes"] == ["--max-num-seqs 780"] and r["num_gpu_blocks"] == 621  # < 697 with the true split
    assert "the plan reproduces it, figure for figure" in o.text and "vllm serve Qwen/Qwen3.6-27B --max-num-seqs 780" in o.text


def test_measured_from_a_successful_boot_line():
    facts = read_log((LOGS / "club3090-1087-qwen38-27b-fp8-2x5090.log").read_text())
    got, how = measured_of(facts, int(31.4 * GIB), 0.92)
    assert got["cuda_total_mib"] == pytest.approx(31.4 * 1024)
    assert (got["cudagraph_gib"], got["cudagraph_actual_gib"]) == (0.13, 0.09)
    assert got["peak_activation_gib"] == pytest.approx(1.59 - 0.13)  # printed peak = transient + graph estimate
    assert got["startup_used_gib"] == pytest.approx(31.4 - 30.27)
    assert "weights_gib" not in got and "non_torch_gib" not in got  # no 'Model loading took' in this excerpt
    assert len(how) == 4


def test_inconsistent_log_is_refused():
    text = ("Model loading took 60.0 GiB memory and 1 seconds\nAvailable KV cache memory: 39.65 GiB\n"
            "non-default args: {'model': 'Qwen/Qwen3.6-27B'}\n")
    with pytest.raises(BadInput, match="disagree"):
        measured_of(read_log(text), int(94.97 * GIB), 1.0)


def test_flags_of_args():
    args = {"model_tag": "M", "model": "M", "max_model_len": 32768, "enable_prefix_caching": False,
            "enforce_eager": True, "speculative_config": {"method": "mtp", "num_speculative_tokens": 1},
            "host": "0.0.0.0", "port": 8000, "gpu_memory_utilization": 0.9}
    assert flags_of_args(args) == ["--max-model-len", "32768", "--no-enable-prefix-caching", "--enforce-eager",
                                   "--speculative-config", '{"method": "mtp", "num_speculative_tokens": 1}',
                                   "--gpu-memory-utilization", "0.9"]


def test_unmodelled_release_and_missing_names_are_refused():
    with pytest.raises(BadInput, match="vLLM 0.11.0"):
        check_log("INFO Initializing a V1 LLM engine (v0.11.0) with config: model='M'\n", gpu=find_profile("h100-sxm"))
    with pytest.raises(BadInput, match="names no model"):
        check_log("Available KV cache memory: 3.0 GiB\n", gpu=find_profile("h100-sxm"), version="0.34.0")
    with pytest.raises(BadInput, match="names no GPU"):
        check_log("non-default args: {'model': 'Qwen/Qwen3.6-27B'}\n", version="0.34.0")


def test_same_check_other_figures_is_said(monkeypatch):
    """A public log (vcal's recipes-831: Qwen3.8-27B, 939 blocks) re-planned as Qwen3.6-27B from the oracle's answers:
    the same check fails, with other figures, and the report says which."""
    # the excerpt lacks the args line a whole log opens with (check refuses a log without it): the defaults' line
    args = "INFO [startup.py:96] non-default args: {'model_tag': 'Qwen/Qwen3.6-27B', 'model': 'Qwen/Qwen3.6-27B'}\n"
    text = args + (LOGS / "recipes-831-qwen38-27b-rtxpro6000-mamba.log").read_text()
    o = S.check_q36_text(OracleSizer(), text)
    row = [r for r in o.json["check"]["compare"] if r["what"] == "failure"][0]
    assert row["reproduced"] is True and row["same_figures"] is False
    assert "the plan fails the same check (mamba_blocks): mamba_blocks 939 logged vs 780 planned" in o.text


def test_a_log_without_its_args_line_is_refused_not_replanned_as_defaults():
    """A public excerpt (2x RTX 3090, TP 2, an INT4 checkpoint) without vLLM's 'non-default args' line: re-planning
    vLLM's defaults (tp 1, bf16, 262,144 tokens) said DOES NOT START for a launch that booted; now one line, exit 2."""
    from planner.engines.vllm.check import check_log  # noqa: PLC0415
    from planner.catalog.catalog import resolve_model  # noqa: PLC0415
    from planner.hardware.profiles import find_profile  # noqa: PLC0415

    text = (LOGS / "club3090-158-qwen36-27b-2x3090.log").read_text()
    with pytest.raises(BadInput, match="no 'non-default args"):
        check_log(text, gpu=find_profile("rtx3090"), model=resolve_model("qwen3.6-27b"))
