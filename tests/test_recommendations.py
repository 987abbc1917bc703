"""Every recommended configuration boots according to SGLang 0.5.11's own code (the oracle)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.catalog.catalog import resolve_model
from planner.hardware.profiles import find_profile
from planner.plan import make_plan
from planner.search import Needs, run_search
from planner.summary import SUMMARY_FIELDS, build_summary

HERE = Path(__file__).parent / "golden" / "recommended"
CASES = [json.loads(x) for x in (HERE / "cases.jsonl").read_text().splitlines() if x.strip()]
RESULTS = {d["id"]: d["summary"] for d in map(json.loads, (HERE / "results.jsonl").read_text().splitlines())}


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_recommendation_boots_in_sglang_and_in_the_planner(case):
    oracle = RESULTS[case["id"]]
    assert oracle["validated"] and oracle["outcome"] == "ok", oracle.get("error_message")
    gpu, model = find_profile(case["gpu"]), resolve_model(case["planner_model"])
    plan = make_plan(gpu, model, case["flags"], None, case["free_before_gib"], case["free_after_gib"])
    assert plan.verdict == "fits"
    got = build_summary(plan)
    diffs = {k: (oracle[k], got[k]) for k in SUMMARY_FIELDS if oracle[k] != got[k]}
    assert not diffs


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_search_still_recommends_the_validated_flags(case):
    gpu, model = find_profile(case["gpu"]), resolve_model(case["planner_model"])
    res = run_search(gpu, model, case["fixed"], needs=Needs(**case["needs"]), relax=False)
    assert res.ranked and res.ranked[0].flags == case["flags"]
