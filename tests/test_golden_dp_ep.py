"""DP attention (one attention-DP rank) on DeepSeek-V3 against SGLang's own code, 0.5.16 and 0.5.23.

Expected values: the sglang-oracle's ``summary`` with the repository's adapters (scripts/oracle/adapters/v0_5_16.py,
v0_5_23.py stamp attn_dp_size / attn_tp_size as SGLang computes them), made by ``scripts/oracle/dp_ep_cases.py``
(tests/golden/dp_ep/README.md). Every field of ``planner.engines.sglang.summary.SUMMARY_FIELDS`` is compared exactly.
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

HERE = Path(__file__).parent / "golden" / "dp_ep"
RELEASES = ("0.5.16", "0.5.23")
ALL = [(v, {**c, "folder": HERE / f"sglang-{v}"}, e) for v in RELEASES
       for c, e in read_pairs(HERE, v) + read_pairs(HERE, v, cases="random.jsonl", results="random_results.jsonl")]


def _plan(case: dict, flags=None, version=None):
    gpu = find_profile(case["gpu"])
    assert gpu.capacity_mib == case["gpu_total_mib"] and gpu.compute_capability == case["gpu_sm"]
    model = resolve_model(case["planner_model"])  # the catalog's config, the one config_json names
    return make_plan(gpu, model, list(flags or case["flags"]), case.get("env") or {}, case["free_before_gib"],
                     case["free_after_gib"], version=version or case["version"])


@pytest.mark.parametrize("version,case,expected", ALL, ids=[f"{v}-{c['id']}" for v, c, _ in ALL])
def test_planner_matches_sglang(version, case, expected):
    got = build_summary(_plan(case))
    skip = set()
    if expected["stage"] == "cuda_graph_batch_sizes" and got["stage"] == "tp_worker":
        # R // D = 0 on 0.5.16: tp_worker's assert (max_running_request is zero, srt/managers/tp_worker.py:374-381
        # @0.5.16) runs before the graphs are captured; the oracle runs no tp_worker and stops at the capture list
        assert expected["error_message"] == "capture_bs=[0]" and got["error_message"] == "max_running_request is zero"
        skip = {"outcome", "startup_ok", "stage", "error_type", "error_message", "cuda_graph_capture_max_bs"}
    diffs = {k: (expected[k], got[k]) for k in SUMMARY_FIELDS if k not in skip and expected[k] != got[k]}
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
    with pytest.raises(BadInput, match=r"DP attention on SGLang 0\.5\.20 is not modelled"):
        _plan(case, version="0.5.20")
    with pytest.raises(BadInput, match=r"--dp-size 8: not modelled by this planner \(data-parallel replicas"):
        _plan(case, flags=["--tp-size", "8", "--dp-size", "8"])
    with pytest.raises(BadInput, match=r"speculative decoding is not modelled"):
        _plan(case, flags=list(case["flags"]) + ["--speculative-algorithm", "NEXTN"])
    with pytest.raises(BadInput, match=r"without --dp-size > 1"):
        _plan(case, flags=["--tp-size", "8", "--enable-dp-attention"])
    with pytest.raises(BadInput, match=r"--enable-dp-lm-head"):
        _plan(case, flags=list(case["flags"]) + ["--enable-dp-lm-head"])
    v32 = resolve_model("deepseek-v3.2")
    with pytest.raises(BadInput, match=r"--dp-size 8 --enable-dp-attention: DP attention for deepseek-v3.2 is not modelled yet; modelled: MLA models without the DSA indexer"):
        make_plan(find_profile("h200"), v32, list(case["flags"]), {}, 139.0, 60.28, version="0.5.16")


def test_dp_attention_replicates_the_attention_weights():
    """Under DP attention each GPU holds the attention projections and the embedding split over tp // D, not tp:
    DeepSeek-V3 at tp 8, dp 8 loads about 10 GiB more per GPU than at tp 8 alone."""
    from planner.catalog.weights import dp_attention_mla_bytes

    spec = resolve_model("deepseek-v3").spec
    extra = dp_attention_mla_bytes(spec, 8, 8)
    assert 9 * 2**30 < extra < 11.5 * 2**30
    assert dp_attention_mla_bytes(spec, 8, 2) < dp_attention_mla_bytes(spec, 8, 4) < extra
    assert dp_attention_mla_bytes(spec, 8, 1) == 0
    gpu, model = find_profile("h200"), resolve_model("deepseek-v3")
    one = make_plan(gpu, model, ["--tp-size", "8"], version="0.5.16")
    dp = make_plan(gpu, model, ["--tp-size", "8", "--dp-size", "8", "--enable-dp-attention"], version="0.5.16")
    assert one.free_after_bytes - dp.free_after_bytes == extra


def test_expert_parallel_keeps_the_sizing_and_the_weights():
    """--ep-size E dividing tp (a2a none): SGLang's sizing is the same with and without it (the golden summaries are
    equal pairwise), and the planner's weights per GPU too (E experts shards, each TP-split tp // E ways)."""
    for version in RELEASES:
        rows = {c["id"]: e for v, c, e in ALL if v == version and c["id"].startswith(("h200_", "b200_"))}
        pairs = [(k, k.replace("_ep8_", "_")) for k in rows if "_dp8_ep8_" in k or "_dp4_ep8_" in k]
        pairs = [(a, b) for a, b in pairs if b in rows]
        assert len(pairs) >= 6, version
        for with_ep, without in pairs:  # e.g. h200_tp8_dp8_ep8_default vs h200_tp8_dp8_default
            assert rows[with_ep] == rows[without], (version, with_ep)
    gpu, model = find_profile("h200"), resolve_model("deepseek-v3")
    for version in RELEASES:
        plain = make_plan(gpu, model, ["--tp-size", "8"], version=version)
        ep = make_plan(gpu, model, ["--tp-size", "8", "--ep-size", "8"], version=version)
        assert plain.free_after_bytes == ep.free_after_bytes
        assert build_summary(plain) == build_summary(ep)


def test_deepep_and_redundant_experts_are_refused_by_name():
    case = next(c for v, c, _ in ALL if v == "0.5.23")
    # DeepEP and redundant experts are modelled since pipeline/expert_parallel.py (tests/test_expert_parallel.py);
    # the other all-to-all backends and experts that do not divide over the EP ranks stay refused by name
    with pytest.raises(BadInput, match=r"--moe-a2a-backend mooncake: its all-to-all buffers are not modelled"):
        _plan(case, flags=list(case["flags"]) + ["--ep-size", "8", "--moe-a2a-backend", "mooncake"])
    with pytest.raises(BadInput, match=r"--ep-num-redundant-experts 30: 256 \+ 30 experts do not divide"):
        _plan(case, flags=list(case["flags"]) + ["--ep-size", "8", "--ep-num-redundant-experts", "30"])
    with pytest.raises(BadInput, match=r"--ep-size 3: not modelled"):
        _plan(case, flags=["--tp-size", "8", "--ep-size", "3"])
    with pytest.raises(BadInput, match=r"expert parallelism on SGLang 0\.5\.20 is not modelled yet; modelled: 0\.5\.16, 0\.5\.23"):
        _plan(case, flags=["--tp-size", "8", "--ep-size", "8"], version="0.5.20")
