"""The planner against SGLang's own code (0.5.11, 0.5.12, 0.5.13 and 0.5.16), field by field.

The expected values are the ``summary`` objects that the sglang-oracle (each release's real
ServerArgs, ModelConfig, sizing chain and ``_init_pools`` on a simulated GPU) printed for each
case; tests/golden/sglang-<version>/README.md gives the commands that made them. Nothing here is
hand-derived.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.catalog.catalog import resolve_model
from planner.errors import BadInput
from planner.hardware.profiles import find_profile
from planner.engines.sglang.plan import make_plan
from planner.engines.sglang.summary import SUMMARY_FIELDS, build_summary

HERE = Path(__file__).parent / "golden"
GOLDEN = HERE / "sglang-0.5.11"


def _load(cases: str, results: str, version: str = "0.5.11") -> list[tuple[dict, dict]]:
    folder = HERE / f"sglang-{version}"
    res = {}
    for line in (folder / results).read_text().splitlines():
        if line.strip():
            d = json.loads(line)
            res[d["id"]] = d["summary"]
    out = []
    for line in (folder / cases).read_text().splitlines():
        if line.strip():
            c = json.loads(line)
            c["version"] = version
            # draft paths in the cases are relative to the cases file
            c["flags"] = [str(folder / f) if f.startswith("drafts/") else f for f in c["flags"]]
            out.append((c, res[c["id"]]))
    return out


CURATED = _load("cases.jsonl", "results.jsonl")
RANDOM = _load("random.jsonl", "random_results.jsonl")
CURATED_9 = _load("cases.jsonl", "results.jsonl", "0.5.9")
RANDOM_9 = _load("random.jsonl", "random_results.jsonl", "0.5.9")
CURATED_10 = _load("cases.jsonl", "results.jsonl", "0.5.10")
RANDOM_10 = _load("random.jsonl", "random_results.jsonl", "0.5.10")
CURATED_12 = _load("cases.jsonl", "results.jsonl", "0.5.12")
RANDOM_12 = _load("random.jsonl", "random_results.jsonl", "0.5.12")
CURATED_13 = _load("cases.jsonl", "results.jsonl", "0.5.13")
RANDOM_13 = _load("random.jsonl", "random_results.jsonl", "0.5.13")
CURATED_18 = _load("cases.jsonl", "results.jsonl", "0.5.18")
RANDOM_18 = _load("random.jsonl", "random_results.jsonl", "0.5.18")
CURATED_19 = _load("cases.jsonl", "results.jsonl", "0.5.19")
RANDOM_19 = _load("random.jsonl", "random_results.jsonl", "0.5.19")
CURATED_16 = _load("cases.jsonl", "results.jsonl", "0.5.16")
RANDOM_16 = _load("random.jsonl", "random_results.jsonl", "0.5.16")
# Configurations SGLang 0.5.16 accepts that the planner refuses as not modelled (BadInput), by id.
NOT_MODELLED_16 = {
    "page_major_kv_layout_triton": "unified memory pool",
}


def _plan_summary(case: dict) -> dict:
    gpu = find_profile(case["gpu"])
    # the case's GPU facts must be the profile's: the oracle was told the same total and SM
    assert gpu.capacity_mib == case["gpu_total_mib"]
    assert gpu.compute_capability == case["gpu_sm"]
    plan = make_plan(gpu, resolve_model(case["planner_model"]), case["flags"], case.get("env") or {},
                     case["free_before_gib"], case["free_after_gib"], version=case["version"])
    return build_summary(plan)


# Startup checks that SGLang runs after the pools exist but the oracle does not execute (its
# README: "startup_failed is decided where the oracle hits it"). Where the planner stops at one of
# them, the oracle says ok; every sizing field must still agree.
#   tp_worker: srt/managers/tp_worker.py:297 and :301-309 @0.5.11
#   init_attention_backend: srt/layers/attention/attention_registry.py:233-238 @0.5.11
#   scheduler_init: srt/mem_cache/mamba_radix_cache.py:435-438 @0.5.10 (no_buffer with page > 1)
BEYOND_ORACLE = {"tp_worker", "init_attention_backend", "scheduler_init"}
OUTCOME_FIELDS = {"outcome", "startup_ok", "stage", "error_type", "error_message"}


def _compare(case: dict, expected: dict, skip: frozenset[str] = frozenset()) -> None:
    got = _plan_summary(case)
    fields = [k for k in SUMMARY_FIELDS if k not in skip]
    if expected["outcome"] == "ok" and got["stage"] in BEYOND_ORACLE:
        assert got["outcome"] == "startup_failed" and got["error_type"] == "AssertionError"
        fields = [k for k in fields if k not in OUTCOME_FIELDS]
    elif expected["stage"] == "cuda_graph_batch_sizes" and got["stage"] == "init_attention_backend":
        # SGLang builds the attention backend before it captures graphs (srt/model_executor/model_runner.py:
        # 607-609 @0.5.9); the oracle evaluates the capture list without building backends. Both stop the boot.
        assert got["outcome"] == expected["outcome"] == "startup_failed"
        fields = [k for k in fields if k not in OUTCOME_FIELDS]
    diffs = {k: (expected[k], got[k]) for k in fields if expected[k] != got[k]}
    assert not diffs, f"{case['id']}: (oracle, planner) differ: {diffs}"


@pytest.mark.parametrize("case,expected", CURATED_10 + RANDOM_10, ids=[c["id"] for c, _ in CURATED_10 + RANDOM_10])
def test_0_5_10_case_matches_oracle(case, expected):
    _compare(case, expected)


@pytest.mark.parametrize("case,expected", CURATED_9 + RANDOM_9, ids=[c["id"] for c, _ in CURATED_9 + RANDOM_9])
def test_0_5_9_case_matches_oracle(case, expected):
    # 0.5.9's argparse is argparse.ArgumentParser() (srt/server_args.py:5579 @0.5.9): its messages carry the
    # running script's name, the oracle's "oracle.py" there and "launch_server.py" under
    # `python -m sglang.launch_server`, which the planner prints
    msg = expected["error_message"]
    if expected["error_type"] == "SystemExit" and msg and msg.startswith("oracle.py: error:"):
        expected = {**expected, "error_message": "launch_server.py" + msg[len("oracle.py"):]}
    _compare(case, expected)


def test_0_5_9_and_0_5_10_sets_are_large_and_varied():
    for curated, rnd in ((CURATED_9, RANDOM_9), (CURATED_10, RANDOM_10)):
        assert len(curated) >= 40 and len(rnd) >= 30
        assert {"ok", "rejected", "startup_failed"} <= {e["outcome"] for _, e in curated}


@pytest.mark.parametrize("case,expected", CURATED_12 + RANDOM_12, ids=[c["id"] for c, _ in CURATED_12 + RANDOM_12])
def test_0_5_12_case_matches_oracle(case, expected):
    _compare(case, expected)


@pytest.mark.parametrize("case,expected", CURATED_13 + RANDOM_13, ids=[c["id"] for c, _ in CURATED_13 + RANDOM_13])
def test_0_5_13_case_matches_oracle(case, expected):
    # The oracle runs 0.5.13 through its 0.5.11 adapter, whose spec_reserved_bytes is 0.5.11's formula
    # S x R x D (sglang-oracle versions/v0_5_11.py spec_reserved_bytes), not what 0.5.13's joint solve
    # subtracts; SGLang's own results of that subtraction (max_mamba_cache_size, available_kv_bytes,
    # the error texts) are compared. The field itself is checked to be the adapter's formula.
    if expected["speculative_algorithm"] is not None and expected["spec_reserved_bytes"] is not None:
        assert expected["spec_reserved_bytes"] == (expected["mamba_cache_per_req_bytes"]
                                                   * expected["server_args_max_running_requests"]
                                                   * expected["speculative_num_draft_tokens"])
    _compare(case, expected, skip=frozenset({"spec_reserved_bytes"}))


def test_0_5_13_sets_are_large_and_varied():
    assert len(CURATED_13) >= 40 and len(RANDOM_13) >= 30
    assert {"ok", "rejected", "startup_failed"} <= {e["outcome"] for _, e in CURATED_13}
    # the 0.5.13-only startup error (K <= 0) is among them
    assert any("Not enough GPU memory for hybrid" in (e["error_message"] or "") for _, e in CURATED_13 + RANDOM_13)


@pytest.mark.parametrize("case,expected", CURATED_16 + RANDOM_16, ids=[c["id"] for c, _ in CURATED_16 + RANDOM_16])
def test_0_5_16_case_matches_oracle(case, expected):
    if case["id"] in NOT_MODELLED_16:
        with pytest.raises(BadInput, match="not modelled"):
            _plan_summary(case)
        return
    _compare(case, expected)


# Configurations SGLang 0.5.19 accepts that the planner refuses as not modelled (BadInput), by id.
NOT_MODELLED_19 = {
}


@pytest.mark.parametrize("case,expected", CURATED_19 + RANDOM_19, ids=[c["id"] for c, _ in CURATED_19 + RANDOM_19])
def test_0_5_19_case_matches_oracle(case, expected):
    if case["id"] in NOT_MODELLED_19:
        assert expected["outcome"] == "ok"  # SGLang accepts it; the planner says it does not model it
        with pytest.raises(BadInput, match="not modelled"):
            _plan_summary(case)
        return
    _compare(case, expected)


NOT_MODELLED_18 = {
    "page_major_kv_layout_triton": "page-major KV layout without the unified pool",
}


@pytest.mark.parametrize("case,expected", CURATED_18 + RANDOM_18, ids=[c["id"] for c, _ in CURATED_18 + RANDOM_18])
def test_0_5_18_case_matches_oracle(case, expected):
    if case["id"] in NOT_MODELLED_18:
        assert expected["outcome"] == "ok"
        with pytest.raises(BadInput, match="not modelled"):
            _plan_summary(case)
        return
    _compare(case, expected)


def test_0_5_19_sets_are_large_and_varied():
    assert len(CURATED_19) >= 100 and len(RANDOM_19) >= 50
    assert {"ok", "rejected", "startup_failed"} <= {e["outcome"] for _, e in CURATED_19}
    assert len(NOT_MODELLED_19) <= 2
    # the unified memory pool is modelled: SGLang's own buffer and allocator bytes for these launches
    unified = [(c, e) for c, e in CURATED_19 if "--enable-unified-memory" in c["flags"] and e["outcome"] == "ok"]
    assert len(unified) >= 3 and all(e["pool_other_bytes"] > 0 and e["pool_kv_k_bytes"] == 0 for _, e in unified)
    # SGLang's own numbers carry the 0.5.18+ multimodal reserve: for the seed (Qwen3.6, tp 1) the rest
    # before the mamba split is free_after - P x (1 - f) - 100 MiB (kv_cache_configurator.py:2016-2021 @0.5.19)
    case, seed = next((c, e) for c, e in CURATED_19 if c["id"] == "seed")
    plain = case["free_after_gib"] - seed["pre_model_load_gib"] * (1 - seed["mem_fraction_static"])
    assert abs(plain - 100 / 1024 - seed["rest_gib_before_mamba"]) < 1e-9


# Releases whose golden sets come from make_cases_v0516.py through this repository's oracle adapters, with
# the launches SGLang accepts that the planner refuses as not modelled (BadInput), by id.
ADAPTED = {
    "0.5.14": {},
    "0.5.15": {"page_major_kv_layout_triton": "page-major KV layout without the unified pool"},
    "0.5.17": {"page_major_kv_layout_triton": "page-major KV layout without the unified pool"},
    "0.5.20": {},
    "0.5.21": {},
    "0.5.22": {"reject_unified_memory_eagle": "unified memory pool with speculative decoding"},
    "0.5.23": {"reject_unified_memory_eagle": "unified memory pool with speculative decoding"},
}
ADAPTED_CASES = [(c, e) for v in ADAPTED if (HERE / f"sglang-{v}").exists()
                 for c, e in _load("cases.jsonl", "results.jsonl", v) + _load("random.jsonl", "random_results.jsonl", v)]


@pytest.mark.parametrize("case,expected", ADAPTED_CASES, ids=[f"{c['version']}-{c['id']}" for c, _ in ADAPTED_CASES])
def test_adapted_release_case_matches_oracle(case, expected):
    if case["id"] in ADAPTED[case["version"]]:
        assert expected["outcome"] == "ok"
        with pytest.raises(BadInput, match="not modelled"):
            _plan_summary(case)
        return
    _compare(case, expected)


def test_adapted_release_sets_are_large_and_varied():
    for v in ADAPTED:
        if not (HERE / f"sglang-{v}").exists():
            continue
        sets = [(c, e) for c, e in ADAPTED_CASES if c["version"] == v]
        assert len(sets) >= 200, v
        assert {"ok", "rejected", "startup_failed"} <= {e["outcome"] for _, e in sets}, v
        assert len(ADAPTED[v]) <= 3


def _replayssm_cases():
    folder = HERE / "replayssm"
    cases = [json.loads(x) for x in (folder / "cases.jsonl").read_text().splitlines() if x.strip()]
    out = []
    for v in ("0.5.19", "0.5.20", "0.5.23"):
        res = {json.loads(x)["id"]: json.loads(x)["summary"]
               for x in (folder / f"results-{v}.jsonl").read_text().splitlines() if x.strip()}
        out += [({**c, "version": v}, res[c["id"]]) for c in cases if c["id"] in res]
    return out


REPLAYSSM = _replayssm_cases()


@pytest.mark.parametrize("case,expected", REPLAYSSM, ids=[f"{c['version']}-{c['id']}" for c, _ in REPLAYSSM])
def test_replayssm_case_matches_oracle(case, expected):
    _compare(case, expected)


def test_replayssm_set_covers_both_layouts():
    assert {c["version"] for c, _ in REPLAYSSM} == {"0.5.19", "0.5.20", "0.5.23"}
    ok = [e for c, e in REPLAYSSM if e["outcome"] == "ok" and "--enable-linear-replayssm-spec" in c["flags"]]
    assert ok and all(e["pool_mamba_intermediate_ssm_bytes"] == 0 for e in ok)


def test_0_5_16_unified_memory_fails_in_sglangs_own_code():
    # The oracle dropped these as "oracle_error", but the TypeError is raised by SGLang 0.5.16 itself
    # (tests/golden/sglang-0.5.16/README.md, "About the three unified-memory cases"): the planner predicts it.
    dropped = {json.loads(x)["id"]: json.loads(x) for x in (HERE / "sglang-0.5.16" / "dropped.jsonl").read_text().splitlines()
               if x.strip()}
    # the case lines of the dropped cases, as make_cases_v0516.py --curated wrote them
    cases = {json.loads(x)["id"]: json.loads(x)
             for x in (HERE / "sglang-0.5.16" / "dropped_cases.jsonl").read_text().splitlines() if x.strip()}
    ids = [i for i, d in dropped.items() if d["error_type"] == "TypeError" and "unified" in i]
    assert len(ids) == 3
    for i in ids:
        case = cases[i]
        plan = make_plan(find_profile(case["gpu"]), resolve_model(case["planner_model"]), case["flags"], {},
                         case["free_before_gib"], case["free_after_gib"], version="0.5.16")
        assert (plan.stage, plan.error_type, plan.error_message) == (
            dropped[i]["stage"], dropped[i]["error_type"], dropped[i]["error_message"])


def test_0_5_16_sets_are_large_and_varied():
    assert len(CURATED_16) >= 40 and len(RANDOM_16) >= 30
    assert {"ok", "rejected", "startup_failed"} <= {e["outcome"] for _, e in CURATED_16}
    assert len(NOT_MODELLED_16) <= 3


def test_beyond_oracle_case_is_sglangs_own_assert():
    case, expected = next((c, e) for c, e in CURATED if c["id"] == "mmcs2_lt_ratio_disable_cuda_graph")
    assert expected["outcome"] == "ok" and expected["max_running_requests"] == 0
    got = _plan_summary(case)
    assert got["error_message"] == "max_running_request is zero"  # tp_worker.py:297 @0.5.11


def test_golden_sets_are_large_and_varied():
    outcomes = {e["outcome"] for _, e in CURATED}
    assert len(CURATED) >= 40 and len(RANDOM) >= 100
    assert {"ok", "rejected", "startup_failed"} <= outcomes
    assert any(c["id"] == "seed" for c, _ in CURATED)


@pytest.mark.parametrize("case,expected", CURATED, ids=[c["id"] for c, _ in CURATED])
def test_curated_case_matches_oracle(case, expected):
    _compare(case, expected)


@pytest.mark.parametrize("case,expected", RANDOM, ids=[c["id"] for c, _ in RANDOM])
def test_random_case_matches_oracle(case, expected):
    _compare(case, expected)


def test_seed_case_is_the_27_5_gib_reservation():
    case, expected = next((c, e) for c, e in CURATED if c["id"] == "seed")
    assert expected["outcome"] == "startup_failed"
    assert expected["error_message"] == "Not enough memory. Please try to increase --mem-fraction-static."
    got = _plan_summary(case)
    # 146.8 MiB x 48 x 4 draft tokens, as SGLang's handle_max_mamba_cache reserves it
    assert got["spec_reserved_bytes"] == got["mamba_cache_per_req_bytes"] * 48 * 4
    assert round(got["spec_reserved_bytes"] / 2**30, 1) == 27.5
    assert got["server_args_max_running_requests"] == 48
