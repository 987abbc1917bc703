"""DP attention (one attention-DP rank) on DeepSeek-V3 against SGLang's own code, 0.5.16 and 0.5.23.

Expected values: the sglang-oracle's ``summary`` with the repository's adapters (scripts/oracle/adapters/v0_5_16.py,
v0_5_23.py stamp attn_dp_size / attn_tp_size as SGLang computes them), made by ``scripts/oracle/dp_ep_cases.py``
(tests/golden/dp_ep/README.md). Every field of ``planner.summary.SUMMARY_FIELDS`` is compared exactly.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from golden_sets import read_pairs
from planner.catalog.catalog import resolve_model
from planner.errors import BadInput
from planner.hardware.profiles import find_profile
from planner.plan import make_plan
from planner.summary import SUMMARY_FIELDS, build_summary

HERE = Path(__file__).parent / "golden" / "dp_ep"
RELEASES = ("0.5.16", "0.5.23")
ALL = [(v, {**c, "folder": HERE / f"sglang-{v}"}, e) for v in RELEASES for c, e in read_pairs(HERE, v)]


def _plan(case: dict, flags=None, version=None):
    gpu = find_profile(case["gpu"])
    assert gpu.capacity_mib == case["gpu_total_mib"] and gpu.compute_capability == case["gpu_sm"]
    model = resolve_model(case["planner_model"])
    return make_plan(gpu, model, list(flags or case["flags"]), case.get("env") or {}, case["free_before_gib"],
                     case["free_after_gib"], version=version or case["version"])


@pytest.mark.parametrize("version,case,expected", ALL, ids=[f"{v}-{c['id']}" for v, c, _ in ALL])
def test_planner_matches_sglang(version, case, expected):
    got = build_summary(_plan(case))
    diffs = {k: (expected[k], got[k]) for k in SUMMARY_FIELDS if expected[k] != got[k]}
    assert not diffs, f"{version} {case['id']}: (oracle, planner) {diffs}"


def test_the_sets_divide_per_rank():
    """The sets reach what DP attention changes: R per DP worker, chunked prefill // D, the reserve term."""
    for version in RELEASES:
        ok = {c["id"]: e for v, c, e in ALL if v == version and e["outcome"] == "ok"}
        assert ok["h200_tp8_dp8_maxrunningrequests_1024"]["max_running_requests"] == 128
        assert ok["h200_tp8_dp4_maxrunningrequests_1024"]["max_running_requests"] == 256
        assert ok["h200_tp8_dp8_default"]["chunked_prefill_size"] == 1024
        assert ok["h200_tp8_dp8_default"]["mem_fraction_static"] < ok["h200_tp8_dp2_default"]["mem_fraction_static"]


def test_unverified_combinations_are_refused_by_name():
    case = next(c for v, c, _ in ALL if v == "0.5.16")
    with pytest.raises(BadInput, match=r"DP attention .* on SGLang 0\.5\.20 is not modelled"):
        _plan(case, version="0.5.20")
    with pytest.raises(BadInput, match=r"--dp-size: data parallelism is not modelled"):
        _plan(case, flags=["--tp-size", "8", "--dp-size", "8"])
    with pytest.raises(BadInput, match=r"speculative decoding is not modelled"):
        _plan(case, flags=list(case["flags"]) + ["--speculative-algorithm", "NEXTN"])
