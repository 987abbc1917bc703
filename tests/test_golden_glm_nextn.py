"""GLM-4.x (Glm4MoeForCausalLM, GQA) with EAGLE / NEXTN on the checkpoint's own MTP layer, against SGLang's own code.

The expected values are the ``summary`` objects the sglang-oracle printed for
``tests/golden/dense/sglang-<release>/glm_nextn.jsonl`` (each release's ServerArgs, ModelConfig with the draft built
as Glm4MoeForCausalLMNextN, sizing chain and both workers' ``_init_pools`` on meta tensors), made by
``scripts/oracle/glm_nextn_cases.py`` (tests/golden/dense/README.md gives the command). Every field of
``planner.engines.sglang.summary.SUMMARY_FIELDS`` is compared exactly.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from golden_sets import read_pairs
from planner.catalog.catalog import resolve_model
from planner.errors import BadInput
from planner.hardware.profiles import find_profile
from planner.engines.sglang.plan import make_plan
from planner.engines.sglang.summary import SUMMARY_FIELDS, build_summary

HERE = Path(__file__).parent / "golden" / "dense"
RELEASES = tuple(f"0.5.{n}" for n in range(9, 24))
SETS = tuple(v for v in RELEASES if (HERE / f"sglang-{v}" / "glm_nextn_results.jsonl").exists())
ALL = [(v, {**c, "folder": HERE / f"sglang-{v}"}, e) for v in SETS
       for c, e in read_pairs(HERE, v, cases="glm_nextn.jsonl", results="glm_nextn_results.jsonl")]
# the GLM-4.7 cell: 92 layers x 8 kv heads / tp 8 x 128 x (K + V) x 2 B
CELL = 92 * 1 * 128 * 2 * 2


def _plan(case: dict, flags: list[str] | None = None):
    gpu = find_profile(case["gpu"])
    assert gpu.capacity_mib == case["gpu_total_mib"] and gpu.compute_capability == case["gpu_sm"]
    model = resolve_model(str((case["folder"] / case["planner_model"]).resolve()))
    return make_plan(gpu, model, list(case["flags"] if flags is None else flags), case.get("env") or {},
                     case["free_before_gib"], case["free_after_gib"], version=case["version"])


@pytest.mark.parametrize("version,case,expected", ALL, ids=[f"{v}-{c['id']}" for v, c, _ in ALL])
def test_planner_matches_sglang(version, case, expected):
    got = build_summary(_plan(case))
    diffs = {k: (expected[k], got[k]) for k in SUMMARY_FIELDS if expected[k] != got[k]}
    assert not diffs, f"{version} {case['id']}: (oracle, planner) {diffs}"


def test_every_release_has_a_set():
    assert SETS == RELEASES


def test_the_draft_pool_is_one_gqa_layer():
    """The draft worker's MHATokenToKVPool holds num_nextn_predict_layers (1) layer of the target's kv heads / tp:
    (tokens + page) x 1 x 128 x 2 B each for K and V in bf16; from 0.5.14 the cell pays for it too,
    int(47,104 x (1 + 1/92)) = 47,616; 0.5.9-0.5.13 keep the target's 47,104."""
    seen = set()
    for v, c, e in ALL:
        if e["outcome"] != "ok" or e["kv_cache_dtype"] != "bfloat16":
            continue
        assert e["speculative_algorithm"] == "EAGLE", (v, c["id"])
        assert e["pool_draft_kv_k_bytes"] == e["pool_draft_kv_v_bytes"] == (e["max_total_num_tokens"]
                                                                             + e["page_size"]) * 128 * 2, (v, c["id"])
        assert e["kv_cell_bytes_per_token"] == (CELL if int(v.split(".")[2]) < 14 else int(CELL * (1 + 1 / 92))), \
            (v, c["id"])
        seen.add(v)
    assert seen == set(SETS)


def test_without_the_mtp_key_it_is_refused_by_name():
    """The abbreviated config without num_nextn_predict_layers (the catalog's glm-4.7): the draft cannot be sized."""
    case = next(c for v, c, _ in ALL if c["id"] == "glm_h200_nextn")
    gpu = find_profile("h200")
    model = resolve_model("glm-4.7")
    with pytest.raises(BadInput, match="has no num_nextn_predict_layers"):
        make_plan(gpu, model, list(case["flags"]), {}, case["free_before_gib"], case["free_after_gib"],
                  version=case["version"])


def test_eagle3_without_a_path_stays_refused():
    case = next(c for v, c, _ in ALL if c["id"] == "glm_h200_nextn")
    with pytest.raises(BadInput, match="EAGLE3 without --speculative-draft-model-path"):
        _plan(case, ["--speculative-algorithm", "EAGLE3", "--tp-size", "8"])


def test_a_glm_checkpoint_as_the_draft_path_is_refused():
    """SGLang rewrites a Glm4MoeForCausalLM draft to its NextN layer whatever the algorithm; with a draft path that
    is not what the planner sizes (a second 92-layer model), so it is refused by name, not planned as an OOM."""
    case = next(c for v, c, _ in ALL if c["id"] == "glm_h200_nextn")
    path = str((case["folder"] / case["planner_model"]).resolve())
    for algo in ("EAGLE", "NEXTN", "STANDALONE"):
        with pytest.raises(BadInput, match="loaded by SGLang as its NextN layer"):
            _plan(case, ["--speculative-algorithm", algo, "--speculative-draft-model-path", path, "--tp-size", "8"])
