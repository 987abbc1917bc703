"""SGLang's own decisions on a simulated AMD Instinct (tests/golden/rocm/, README there): the planner's ROCm path
(planner/engines/sglang/pipeline/rocm.py) equals them field by field, and the rules docs/rocm.md cites show in the
data (aiter by default, x 0.85 past an 8k context, no piecewise graph reserve, fnuz FP8 KV on gfx942)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from planner.catalog.catalog import resolve_model
from planner.engines.sglang.plan import make_plan
from planner.engines.sglang.summary import SUMMARY_FIELDS, build_summary
from planner.hardware.profiles import find_profile

HERE = Path(__file__).parent / "golden" / "rocm"
RELEASES = ("0.5.11", "0.5.13", "0.5.16", "0.5.22", "0.5.23")
CASES = {c["id"]: c for c in map(json.loads, (HERE / "cases.jsonl").read_text().splitlines())}
# the checks SGLang runs after the pools, which the oracle does not execute (as in scripts/oracle/agree.py)
BEYOND_ORACLE = ("tp_worker", "init_attention_backend", "scheduler_init")


def results(version: str) -> dict[str, dict]:
    return {r["id"]: r["summary"] for r in map(json.loads, (HERE / f"sglang-{version}" / "results.jsonl")
                                                .read_text().splitlines())}


def planned(case: dict, version: str) -> dict:
    plan = make_plan(find_profile(case["gpu"]), resolve_model(case["planner_model"]), case["flags"], case["env"],
                     case["free_before_gib"], case["free_after_gib"], version=version)
    return build_summary(plan)


@pytest.mark.parametrize("version", RELEASES)
@pytest.mark.parametrize("cid", sorted(CASES))
def test_the_planner_equals_sglangs_rocm_path_field_by_field(version, cid):
    ref = results(version)[cid]
    mine = planned(CASES[cid], version)
    skip = set()
    if ref["outcome"] == "ok" and mine["stage"] in BEYOND_ORACLE:
        skip = {"outcome", "startup_ok", "stage", "error_type", "error_message"}
    diffs = {k: (ref[k], mine[k]) for k in SUMMARY_FIELDS if k not in skip and ref[k] != mine[k]}
    assert not diffs, diffs


@pytest.mark.parametrize("version", RELEASES)
def test_every_case_boots_and_the_backend_follows_the_heads(version):
    res = results(version)
    assert set(res) == set(CASES)
    for cid, s in res.items():
        assert (s["outcome"], s["sglang_version"], s["page_size"]) == ("ok", version, 1), cid
        want = "triton" if "triton" in cid else "aiter"
        if cid == "deepseek-v3-tp4-default":  # MLA: 128 KV heads / tp 4 = 32 per rank, not 16 or 128
            want = "triton"
        assert s["attention_backend"] == want, cid


@pytest.mark.parametrize("version", RELEASES)
@pytest.mark.parametrize("model", ["llama-3.1-8b-tp1", "qwen3-32b-tp1", "qwen3-30b-a3b-tp1"])
def test_aiter_scales_mem_fraction_by_0_85_past_8k_context_even_when_given(version, model):
    res = results(version)
    short = res[f"{model}-ctx8192"]
    assert short["context_len"] == 8192
    # at 8,192 tokens: SGLang's reserve formula alone (no piecewise graph term on ROCm):
    # 512 + 16384 x 1.5 + 512 x 2 + tp/8 x 1024 MiB, floored at 10 GiB past 60 GiB of memory
    cap = CASES[f"{model}-default"]["gpu_total_mib"]
    assert short["mem_fraction_static"] == round((cap - (512 + 16384 * 1.5 + 512 * 2 + 1024 / 8)) / cap, 3)
    assert res[f"{model}-default"]["context_len"] > 8192
    assert res[f"{model}-default"]["mem_fraction_static"] == pytest.approx(short["mem_fraction_static"] * 0.85)
    assert res[f"{model}-mfs0.9"]["mem_fraction_static"] == pytest.approx(0.9 * 0.85)
    assert res[f"{model}-triton"]["mem_fraction_static"] == short["mem_fraction_static"]  # triton: no x 0.85
    assert res[f"{model}-default"]["max_total_num_tokens"] < short["max_total_num_tokens"]


@pytest.mark.parametrize("version", RELEASES)
def test_from_0_5_19_an_explicit_fraction_is_honoured_under_its_env(version):
    got = results(version)["llama-3.1-8b-honor-mfs0.9"]["mem_fraction_static"]
    if tuple(int(x) for x in version.split(".")) >= (0, 5, 19):  # the env is new in 0.5.19
        assert got == 0.9
    else:
        assert got == pytest.approx(0.9 * 0.85)


@pytest.mark.parametrize("version", RELEASES)
def test_fp8_kv_is_fnuz_on_gfx942(version):
    res = results(version)
    for cid in CASES:
        if cid.endswith("-fp8kv"):
            assert res[cid]["kv_cache_dtype"] == "float8_e4m3fnuz", cid


def test_the_planners_cuda_arithmetic_disagrees():
    """The same launch on an NVIDIA profile of the MI300X's capacity (what planning it 'as CUDA' would give): the
    ROCm rules are what makes the planner's numbers SGLang's."""
    mi = find_profile("mi300x")
    as_cuda = replace(find_profile("h100-sxm"), memory_total_mib=mi.memory_total_mib,
                      cuda_total_mib=mi.cuda_total_mib, driver_reserved_mib=None)
    case = CASES["llama-3.1-8b-tp1-default"]
    plan = make_plan(as_cuda, resolve_model(case["planner_model"]), case["flags"], {}, case["free_before_gib"],
                     case["free_after_gib"], version="0.5.23")
    mine = build_summary(plan)
    ref = results("0.5.23")["llama-3.1-8b-tp1-default"]
    assert mine["attention_backend"] != "aiter"
    assert mine["mem_fraction_static"] > ref["mem_fraction_static"] + 0.1
    assert mine["max_total_num_tokens"] > ref["max_total_num_tokens"] * 1.15
    assert planned(case, "0.5.23")["max_total_num_tokens"] == ref["max_total_num_tokens"]
