"""MLA models (DeepSeek-V3 / R1, Kimi-K2) and DeepSeek-V3.2's DSA indexer against SGLang's own code.

The expected values are the ``summary`` objects the sglang-oracle printed (each release's real ServerArgs,
ModelConfig, sizing chain and ``_init_pools`` on meta tensors, MLATokenToKVPool / NSA-DSATokenToKVPool included),
made by ``scripts/oracle/mla_cases.py``; tests/golden/mla/README.md gives the command. Every field of
``planner.engines.sglang.summary.SUMMARY_FIELDS`` is compared exactly. A case the planner refuses by name (Kimi-K2's remote-code
config on 0.5.11) must be one SGLang rejects there too, and the refusal must name it.
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

HERE = Path(__file__).parent / "golden" / "mla"
RELEASES = tuple(f"0.5.{n}" for n in range(9, 24))  # every release 0.5.9-0.5.23
NEXTN_RELEASES = tuple(v for v in RELEASES if v not in ("0.5.15", "0.5.20", "0.5.21"))  # the oracle cannot build the draft there


def _relative(folder: Path, value: str) -> str:
    return str((folder / value).resolve()) if value.startswith("../") else value


def _load(version: str, cases: str, results: str) -> list[tuple[dict, dict]]:
    folder = HERE / f"sglang-{version}"
    return [({**c, "folder": folder}, e) for c, e in read_pairs(HERE, version, cases=cases, results=results)]


ALL = [(v, c, e) for v in RELEASES for c, e in _load(v, "cases.jsonl", "results.jsonl")
       + _load(v, "random.jsonl", "random_results.jsonl")]


def _plan(case: dict):
    gpu = find_profile(case["gpu"])
    assert gpu.capacity_mib == case["gpu_total_mib"] and gpu.compute_capability == case["gpu_sm"]
    model = resolve_model(_relative(case["folder"], case["planner_model"]))
    return make_plan(gpu, model, list(case["flags"]), case.get("env") or {}, case["free_before_gib"],
                     case["free_after_gib"], version=case["version"])


@pytest.mark.parametrize("version,case,expected", ALL, ids=[f"{v}-{c['id']}" for v, c, _ in ALL])
def test_planner_matches_sglang(version, case, expected):
    if version in ("0.5.9", "0.5.10", "0.5.11") and "kimi" in case["planner_model"]:
        # the oracle has no remote code for kimi_k2: SGLang rejects it, the planner refuses it by name
        assert expected["outcome"] == "rejected" and "custom code" in expected["error_message"]
        with pytest.raises(BadInput, match=rf"model_type kimi_k2\) on SGLang {version}"):
            _plan(case)
        return
    got = build_summary(_plan(case))
    diffs = {k: (expected[k], got[k]) for k in SUMMARY_FIELDS if expected[k] != got[k]}
    assert not diffs, f"{version} {case['id']}: (oracle, planner) {diffs}"


def test_the_golden_sets_cover_mla_and_dsa():
    """Each release reaches the latent pool on every GPU generation, the DSA indexer, FP8 KV and the backends'
    page sizes."""
    for version in RELEASES:
        rows = [(c, e) for v, c, e in ALL if v == version and e["outcome"] == "ok"]
        assert {e["attention_backend"] for _, e in rows} >= {"fa3", "trtllm_mla", "triton"}, version
        assert any(e["pool_other_bytes"] > 0 and e["page_size"] == 64 for _, e in rows), version  # indexer
        assert any(e["kv_cache_dtype"] == "float8_e4m3fn" for _, e in rows), version
        assert all(e["pool_kv_v_bytes"] == 0 for _, e in rows), version  # one latent buffer per layer
        assert {c["gpu"] for c, _ in rows} >= {"h100-sxm", "h200", "b200", "a100-80gb", "rtxpro6000"}, version


def test_latent_cell_is_not_split_by_tp():
    """kv_lora_rank + qk_rope_head_dim = 576 per layer, 61 layers, 2 B: 70,272 B per token at every TP."""
    cells = {(c["flags"].count("--tp-size") and c["flags"][c["flags"].index("--tp-size") + 1], e["kv_cell_bytes_per_token"])
             for v, c, e in ALL if c["planner_model"] == "deepseek-v3" and e["kv_cache_dtype"] == "bfloat16"
             and e["kv_cell_bytes_per_token"] and not e["speculative_algorithm"]}
    assert {cell for _, cell in cells} == {70272}
    assert len({tp for tp, _ in cells}) > 1


def test_nextn_adds_one_latent_layer():
    """NEXTN on DeepSeek-V3's own MTP layer: the draft worker's pool is one latent layer (1,152 B per token in bf16,
    filed as draft K), and from 0.5.14 that layer is in the cell too (70,272 x (1 + 1/61) = 71,424); 0.5.9-0.5.13 keep
    the cell of the target alone."""
    seen = set()
    for v, c, e in ALL:
        if c["planner_model"] != "deepseek-v3" or e["outcome"] != "ok" or e["speculative_algorithm"] != "EAGLE" \
                or e["kv_cache_dtype"] != "bfloat16":
            continue
        assert e["pool_draft_kv_k_bytes"] == (e["max_total_num_tokens"] + e["page_size"]) * 1152, (v, c["id"])
        assert e["kv_cell_bytes_per_token"] == (70272 if int(v.split(".")[2]) < 14 else 71424), (v, c["id"])
        seen.add(v)
    assert seen == set(NEXTN_RELEASES)
