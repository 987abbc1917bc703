"""Pipeline-parallel launches against SGLang's own code: every pp rank's summary, field by field.

The expected values are what the sglang-oracle printed for each rank (scripts/oracle/adapters/pp_stage.py: the
rank's layer range from SGLang's get_pp_indices, the pp all-reduce MIN of the token capacity answered from the
other ranks), made by ``scripts/oracle/pp_pd_cases.py``; tests/golden/pp_pd/README.md gives the commands. Each
rank gets its own measured free memory after loading, as in the case file. Nothing here is hand-derived.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.catalog.catalog import resolve_model
from planner.errors import BadInput
from planner.hardware.profiles import find_profile
from planner.engines.sglang.pp import VERIFIED, make_pp_plans, pp_indices, pp_size_of, refusal
from planner.engines.sglang.summary import SUMMARY_FIELDS, build_summary

HERE = Path(__file__).parent / "golden" / "pp_pd"


def _pairs(version: str, prefix: str = ""):
    folder = HERE / f"sglang-{version}"
    if not (folder / f"{prefix}cases.jsonl").exists():
        assert prefix, f"no curated pp golden cases for {version}"
        return []
    cases = [json.loads(x) for x in (folder / f"{prefix}cases.jsonl").read_text().splitlines() if x.strip()]
    results = [json.loads(x) for x in (folder / f"{prefix}results.jsonl").read_text().splitlines() if x.strip()]
    assert [c["id"] for c in cases] == [r["id"] for r in results]
    return list(zip(cases, results))


# the curated set and the random launches (pp_pd_cases.py regen --seed 1 --count 6)
CASES = [(v, c, r) for v in sorted(VERIFIED) for p in ("", "random_") for c, r in _pairs(v, p)]


@pytest.mark.parametrize("version,case,expected", CASES, ids=[f"{v}-{c['id']}" for v, c, _ in CASES])
def test_every_rank_matches_sglang(version, case, expected):
    gpu = find_profile(case["gpu"])
    assert gpu.capacity_mib == case["gpu_total_mib"] and gpu.compute_capability == case["gpu_sm"]
    model = resolve_model(case["planner_model"])
    assert refusal(model, case["flags"], version) is None
    if version not in ("0.5.14", "0.5.15", "0.5.16") and any(st["kv_cell_bytes_per_token"] == 0
                                                             for st in expected["stages"]):
        # a rank of GDN layers only: 0.5.17+ sizes it KV-less (int64-max tokens into the MIN); refused by name
        with pytest.raises(BadInput, match="holds no attention layer"):
            make_pp_plans(gpu, model, case["flags"], case["env"], pp_size_of(case["flags"]),
                          case["free_before_gib"], case["free_after_gib"], version=version)
        return
    stages = make_pp_plans(gpu, model, case["flags"], case["env"], pp_size_of(case["flags"]),
                           case["free_before_gib"], case["free_after_gib"], version=version)
    assert len(stages) == len(expected["stages"])
    if expected["pp_min_tokens"] is not None:  # every rank holds the group's minimum
        assert [s.capacity for s in stages] == [expected["pp_min_tokens"]] * len(stages)
    else:  # a rank fails before the all-reduce: the launch does not start
        assert any(s.plan.verdict != "fits" for s in stages)
    for s, exp in zip(stages, expected["stages"]):
        got = build_summary(s.plan)
        diff = {k: (exp[k], got[k]) for k in SUMMARY_FIELDS if exp[k] != got[k]}
        assert not diff, f"rank {s.rank}: {diff}"


def test_ranks_differ_where_the_partition_does():
    """The golden set exercises what could hide an error: ranks of unequal layer counts get different pools
    before the MIN (the capacities logged at the all-reduce differ), and every rank ends with the minimum."""
    for version in VERIFIED:
        for case, res in _pairs(version):
            caps = res["rank_capacity_at_all_reduce"]
            if res["pp_min_tokens"] is None:
                continue
            assert all(st["max_total_num_tokens"] == min(caps) for st in res["stages"])
            if case["env"].get("SGLANG_PP_LAYER_PARTITION"):
                assert len(set(st["kv_cell_bytes_per_token"] for st in res["stages"])) > 1


def test_get_pp_indices_port():
    """get_pp_indices (srt/distributed/utils.py:95-131 @0.5.16): the last ``remainder`` ranks take one more."""
    assert [pp_indices(64, r, 3, {}) for r in range(3)] == [(0, 21), (21, 42), (42, 64)]
    assert [pp_indices(10, r, 4, {}) for r in range(4)] == [(0, 2), (2, 4), (4, 7), (7, 10)]
    assert [pp_indices(64, r, 2, {"SGLANG_PP_LAYER_PARTITION": "28,36"}) for r in range(2)] == [(0, 28), (28, 64)]
    with pytest.raises(BadInput, match="sums to 63"):
        pp_indices(64, 0, 2, {"SGLANG_PP_LAYER_PARTITION": "28,35"})


def test_unverified_combinations_are_refused_by_name():
    qwen3 = resolve_model("qwen3-32b")
    unverified = next(v for v in ("0.5.11", "0.5.13", "0.5.20") if v not in VERIFIED)
    assert f"SGLang {unverified}" in refusal(qwen3, ["--pp-size", "2"], unverified)
    assert "NemotronHForCausalLM" in refusal(resolve_model("nemotron-3-nano-30b-a3b"), ["--pp-size", "2"], "0.5.23")
    assert "GptOssForCausalLM" in refusal(resolve_model("gpt-oss-20b"), ["--pp-size", "2"], "0.5.23")
    assert "modelopt_fp4" in refusal(resolve_model("qwen3-30b-a3b-nvfp4"), ["--pp-size", "2"], "0.5.23")
    moe = resolve_model("qwen3-30b-a3b")
    assert refusal(moe, ["--pp-size", "2"], "0.5.23") is None
    assert "--ep-size" in refusal(moe, ["--pp-size", "2", "--tp-size", "2", "--ep-size", "2"], "0.5.23")
    assert "--speculative-algorithm" in refusal(qwen3, ["--pp-size", "2", "--speculative-algorithm", "EAGLE"], "0.5.23")


def test_the_mamba_budget_charges_the_heaviest_stage_from_0_5_17():
    """A hybrid GDN model's pp ranks: 0.5.16 charges every mamba layer of the model; 0.5.17+ the heaviest stage's
    share (pp_layer_scale). Qwen3.6-27B: 48 GDN layers of 64; 22 / 42 layers give 17 / 31 GDN layers."""
    from planner.engines.sglang.pp import mamba_share

    spec = resolve_model("qwen3.6-27b").spec
    env = {"SGLANG_PP_LAYER_PARTITION": "22,42"}
    assert mamba_share(spec, 2, env, "0.5.16") == (48, 48)
    assert mamba_share(spec, 2, env, "0.5.23") == (48, 31)
    assert mamba_share(spec, 2, {}, "0.5.23") == (48, 24)
    # the golden ranks: each rank reports the model's per-request state, its pool covers its own layers
    for version in VERIFIED:
        for case, res in _pairs(version):
            if case["id"] == "qwen36_27b_h100_pp2_partition_mrr":
                s0, s1 = res["stages"]
                assert s0["mamba_cache_per_req_bytes"] == s1["mamba_cache_per_req_bytes"]
                per_layer_0 = s0["pool_mamba_conv_bytes"] // (s0["max_mamba_cache_size"] + 1) // 17
                per_layer_1 = s1["pool_mamba_conv_bytes"] // (s1["max_mamba_cache_size"] + 1) // 31
                assert per_layer_0 == per_layer_1


def test_the_cli_reports_every_rank_and_json_carries_the_same(capsys):
    """plan --pp-size: a report per rank then the launch's verdict; --json the same ranks, layers and plans."""
    import json as _json

    from planner.cli import main
    from planner.engines.sglang.report import to_dict

    argv = ["--gpu", "h100", "--model", "qwen3.6-27b", "--sglang-version", "0.5.23", "--pp-size", "2",
            "--env", "SGLANG_PP_LAYER_PARTITION=22,42"]
    code = main(argv)
    text = capsys.readouterr().out
    assert "=== pp rank 0 of 2: layers [0, 22) ===" in text and "=== pp rank 1 of 2: layers [22, 64) ===" in text
    assert main([*argv, "--json"]) == code
    d = _json.loads(capsys.readouterr().out)["pipeline"]
    stages = make_pp_plans(find_profile("h100"), resolve_model("qwen3.6-27b"), ["--pp-size", "2"],
                           {"SGLANG_PP_LAYER_PARTITION": "22,42"}, 2, version="0.5.23")
    assert [r["layers"] for r in d["ranks"]] == [[0, 22], [22, 64]]
    assert [r["plan"] for r in d["ranks"]] == [_json.loads(_json.dumps(to_dict(s.plan), default=str)) for s in stages]
    assert d["pp_min_tokens"] == min(d["rank_capacity_at_all_reduce"]) == stages[0].capacity
    assert (d["verdict"] == "fits") == (code == 0)
