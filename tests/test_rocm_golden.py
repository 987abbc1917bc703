"""SGLang's own decisions on a simulated MI300X (tests/golden/rocm/, README there): the ROCm rules docs/rocm.md
cites, the gap to the planner's CUDA arithmetic that makes an AMD profile a refusal, and the refusal itself."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from planner.catalog.catalog import resolve_model
from planner.cli import main
from planner.hardware.profiles import find_profile
from planner.engines.sglang.plan import make_plan
from planner.engines.sglang.summary import build_summary

HERE = Path(__file__).parent / "golden" / "rocm"
RELEASES = ("0.5.11", "0.5.23")
CASES = {c["id"]: c for c in map(json.loads, (HERE / "cases.jsonl").read_text().splitlines())}


def results(version: str) -> dict[str, dict]:
    return {r["id"]: r["summary"] for r in map(json.loads, (HERE / f"sglang-{version}" / "results.jsonl")
                                                .read_text().splitlines())}


@pytest.mark.parametrize("version", RELEASES)
def test_every_case_boots_with_aiter_and_pages_of_one(version):
    res = results(version)
    assert set(res) == set(CASES)
    for cid, s in res.items():
        assert (s["outcome"], s["sglang_version"], s["attention_backend"], s["page_size"]) == \
            ("ok", version, "aiter", 1), cid


@pytest.mark.parametrize("version", RELEASES)
@pytest.mark.parametrize("model", ["llama8b", "qwen3-32b"])
def test_aiter_scales_mem_fraction_by_0_85_past_8k_context_even_when_given(version, model):
    res = results(version)
    short = res[f"{model}-context-length-8192"]
    assert short["context_len"] == 8192
    # at 8,192 tokens: SGLang's reserve formula alone (no piecewise graph term on ROCm):
    # 512 + 16384 x 1.5 + 512 x 2 + tp/8 x 1024 MiB, floored at 10 GiB past 60 GiB of memory
    cap = CASES[f"{model}-default"]["gpu_total_mib"]
    assert short["mem_fraction_static"] == round((cap - (512 + 16384 * 1.5 + 512 * 2 + 1024 / 8)) / cap, 3)
    assert res[f"{model}-default"]["context_len"] > 8192
    assert res[f"{model}-default"]["mem_fraction_static"] == pytest.approx(short["mem_fraction_static"] * 0.85)
    assert res[f"{model}-mem-fraction-static-0.9"]["mem_fraction_static"] == pytest.approx(0.9 * 0.85)
    assert res[f"{model}-default"]["max_total_num_tokens"] < short["max_total_num_tokens"]


def test_the_planners_cuda_arithmetic_disagrees_so_amd_is_refused():
    """The same launch on an NVIDIA profile of the MI300X's capacity (what planning it 'as CUDA' would give)."""
    mi = find_profile("mi300x")
    as_cuda = replace(find_profile("h100-sxm"), memory_total_mib=mi.memory_total_mib,
                      cuda_total_mib=mi.cuda_total_mib, driver_reserved_mib=None)
    case = CASES["llama8b-default"]
    plan = make_plan(as_cuda, resolve_model("llama-3.1-8b-instruct"), case["flags"], {}, case["free_before_gib"],
                     case["free_after_gib"], version="0.5.23")
    mine = build_summary(plan)
    ref = results("0.5.23")["llama8b-default"]
    assert mine["attention_backend"] != "aiter"
    assert mine["mem_fraction_static"] > ref["mem_fraction_static"] + 0.1
    assert mine["max_total_num_tokens"] > ref["max_total_num_tokens"] * 1.15


@pytest.mark.parametrize("cid", sorted(CASES))
def test_every_golden_launch_is_refused_on_mi300x(cid, capsys):
    case = CASES[cid]
    model = "llama-3.1-8b-instruct" if cid.startswith("llama8b") else "qwen3-32b"
    assert main(["--gpu", "mi300x", "--model", model, *case["flags"], "--no-search"]) == 2
    err = capsys.readouterr().err
    assert "SGLang's ROCm path is not modelled yet" in err and "docs/rocm.md" in err
