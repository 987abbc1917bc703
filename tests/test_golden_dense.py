"""Dense and MoE full-attention models against SGLang's own code, every release with an oracle venv.

The expected values are the ``summary`` objects the sglang-oracle printed (each release's real ServerArgs,
ModelConfig, sizing chain and ``_init_pools``), made by ``scripts/oracle/dense_cases.py``;
tests/golden/dense/README.md gives the commands. Every field of ``planner.engines.sglang.summary.SUMMARY_FIELDS`` is
compared exactly. Nothing here is hand-derived.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.catalog.catalog import resolve_model
from planner.hardware.profiles import find_profile
from planner.engines.sglang.plan import make_plan
from planner.engines.sglang.summary import SUMMARY_FIELDS, build_summary
from golden_sets import read_pairs

HERE = Path(__file__).parent / "golden" / "dense"
RELEASES = tuple(f"0.5.{n}" for n in range(9, 24))  # every modelled release, 0.5.9-0.5.23
# startup checks SGLang runs after the pools that the oracle does not execute (as in test_golden_oracle.py):
# where the planner stops at one of them and the oracle says ok, the sizing fields must still agree
BEYOND_ORACLE = {"tp_worker", "init_attention_backend", "scheduler_init"}
OUTCOME_FIELDS = {"outcome", "startup_ok", "stage", "error_type", "error_message"}


def _load(version: str, cases: str, results: str) -> list[tuple[dict, dict]]:
    folder = HERE / f"sglang-{version}"
    if not (folder / cases).exists():
        return []  # test_every_release_has_golden_cases names the release (the extra sets are not in every one)
    return [({**c, "folder": folder}, e) for c, e in read_pairs(HERE, version, cases=cases, results=results)]


def _relative(folder: Path, value: str) -> str:
    """Paths in a case (draft dirs, a non-catalog config) are relative to its cases file."""
    return str((folder / value).resolve()) if value.startswith("../") else value


def _plan_summary(case: dict) -> dict:
    gpu = find_profile(case["gpu"])
    assert gpu.capacity_mib == case["gpu_total_mib"]
    assert gpu.compute_capability == case["gpu_sm"]
    folder = case["folder"]
    flags = [_relative(folder, f) for f in case["flags"]]
    model = resolve_model(_relative(folder, case["planner_model"]))
    plan = make_plan(gpu, model, flags, case.get("env") or {}, case["free_before_gib"], case["free_after_gib"],
                     version=case["version"])
    return build_summary(plan)


def _compare(case: dict, expected: dict) -> dict:
    got = _plan_summary(case)
    skip = set()
    if expected["outcome"] == "ok" and got["stage"] in BEYOND_ORACLE:
        skip = OUTCOME_FIELDS
    return {k: (expected[k], got[k]) for k in SUMMARY_FIELDS if k not in skip and expected[k] != got[k]}


ALL = [(v, c, e) for v in RELEASES for c, e in _load(v, "cases.jsonl", "results.jsonl")
       + _load(v, "random.jsonl", "random_results.jsonl")
       + _load(v, "qwen3vl_graph.jsonl", "qwen3vl_graph_results.jsonl")  # 0.5.19-0.5.23 (README.md)
       + (_load(v, "new_models.jsonl", "new_models_results.jsonl") if v != "0.5.9" else [])]  # MiniMax-M2 (#22)
NEW_0_5_9 = _load("0.5.9", "new_models.jsonl", "new_models_results.jsonl")


def test_every_release_has_golden_cases():
    have = {v for v, _, _ in ALL}
    assert have == set(RELEASES), f"missing golden data for {sorted(set(RELEASES) - have)}"


@pytest.mark.parametrize("version,case,expected", ALL, ids=[f"{v}-{c['id']}" for v, c, _ in ALL])
def test_planner_matches_sglang(version, case, expected):
    diffs = _compare(case, expected)
    assert not diffs, f"{version} {case['id']}: (oracle, planner) {diffs}"


def test_the_golden_sets_cover_the_families():
    """Each release's set reaches dense, MoE, multimodal, fp8 KV, TP with replicated KV heads and EAGLE3."""
    for version in RELEASES:
        rows = [(c, e) for v, c, e in ALL if v == version]
        archs = set()
        for c, _ in rows:
            archs.add(resolve_model(_relative(c["folder"], c["planner_model"])).spec.architecture)
        assert {"LlamaForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM", "Qwen3MoeForCausalLM",
                "MixtralForCausalLM", "MistralForCausalLM", "Qwen3VLForConditionalGeneration"} <= archs, version
        assert any(e["kv_cache_dtype"] and "float8" in e["kv_cache_dtype"] and e["outcome"] == "ok" for _, e in rows)
        assert any(e["speculative_algorithm"] == "EAGLE3" and e["outcome"] == "ok" for _, e in rows), version
        assert any(e["tp_size"] == 8 and e["outcome"] == "ok" for _, e in rows), version


def test_qwen3vl_decode_graphs_follow_the_running_requests_on_large_hoppers():
    """0.5.20+: a Qwen3-VL on an SM90 GPU of >= 60 GiB captures decode graphs up to an explicit
    --max-running-requests of at most 512 (SGLang's own code, qwen3vl_graph.jsonl); 0.5.19 and other GPUs do not."""
    rows = {(v, c["id"]): e for v, c, e in ALL if c["id"].startswith(("h100-sxm_", "b200_", "h200_"))}
    key = "h100-sxm_qwen3-vl-8b-instruct_tp1_--max-running-requests_300"
    assert rows[("0.5.19", key)]["cuda_graph_capture_max_bs"] == 256
    for v in ("0.5.20", "0.5.21", "0.5.22", "0.5.23"):
        assert rows[(v, key)]["cuda_graph_capture_max_bs"] == 300
        assert rows[(v, key.replace("_300", "_513"))]["cuda_graph_capture_max_bs"] == 256
        assert rows[(v, "b200_qwen3-vl-8b-instruct_tp1_--max-running-requests_513")]["cuda_graph_capture_max_bs"] == 512


def test_the_new_models_set_covers_the_releases_with_an_oracle_venv():
    """MiniMax-M2 / M2.7 (issue #22): 38 launches each on 0.5.10, 0.5.11, 0.5.16 and 0.5.23 (tests/golden/dense/README.md)."""
    for version in ("0.5.10", "0.5.11", "0.5.16", "0.5.23"):
        rows = [c for v, c, _ in ALL if v == version and c["planner_model"].startswith("minimax")]
        assert len(rows) == 38, version


@pytest.mark.parametrize("case,expected", NEW_0_5_9, ids=[c["id"] for c, _ in NEW_0_5_9])
def test_minimax_on_0_5_9_needs_remote_code_and_is_refused(case, expected):
    """0.5.9 pins transformers 4.57.1, which has no minimax_m2 config: its ServerArgs stops ("contains custom code
    which must be executed") unless --trust-remote-code loads the checkpoint's configuration_minimax_m2.py, which
    no golden case runs. The planner refuses the release by name instead of sizing it."""
    from planner.errors import BadInput

    assert expected["outcome"] == "rejected" and "custom code" in expected["error_message"]
    with pytest.raises(BadInput, match="MiniMaxM2ForCausalLM on SGLang 0.5.9 is not verified"):
        _plan_summary(case)
