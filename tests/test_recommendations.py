"""Every recommended configuration boots according to SGLang's own code (the oracle), per release."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.catalog.catalog import resolve_model
from planner.hardware.profiles import find_profile
from planner.engines.sglang.plan import make_plan
from planner.engines.sglang.search import Needs, run_search
from planner.engines.sglang.summary import SUMMARY_FIELDS, build_summary

HERE = Path(__file__).parent / "golden" / "recommended"
CASES, RESULTS = [], {}
for folder in sorted(HERE.glob("sglang-*")):
    for line in (folder / "cases.jsonl").read_text().splitlines():
        if line.strip():
            c = json.loads(line)
            c["id"] = f"{c['sglang_version']}:{c['id']}"
            CASES.append(c)
    for line in (folder / "results.jsonl").read_text().splitlines():
        d = json.loads(line)
        RESULTS[f"{folder.name.split('-', 1)[1]}:{d['id']}"] = d["summary"]


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_recommendation_boots_in_sglang_and_in_the_planner(case):
    oracle = RESULTS[case["id"]]
    assert oracle["validated"] and oracle["outcome"] == "ok", oracle.get("error_message")
    gpu, model = find_profile(case["gpu"]), resolve_model(case["planner_model"])
    plan = make_plan(gpu, model, case["flags"], None, case["free_before_gib"], case["free_after_gib"],
                     version=case["sglang_version"])
    assert plan.verdict == "fits"
    got = build_summary(plan)
    diffs = {k: (oracle[k], got[k]) for k in SUMMARY_FIELDS if oracle[k] != got[k]}
    assert not diffs


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_search_still_recommends_the_validated_flags(case):
    gpu, model = find_profile(case["gpu"]), resolve_model(case["planner_model"])
    res = run_search(gpu, model, case["fixed"], needs=Needs(**case["needs"]), relax=False,
                     version=case["sglang_version"])
    assert res.ranked and res.ranked[0].flags == case["flags"]
