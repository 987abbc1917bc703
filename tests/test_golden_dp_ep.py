"""DP attention (one attention-DP rank) against SGLang's own code, 0.5.16 and 0.5.23: MLA (DeepSeek-V3 / Kimi-K2,
with NEXTN / EAGLE on the checkpoint's MTP layer; DeepSeek-V3.2 with DSA), GQA MoE (Qwen3-MoE, GLM-4.7, MiniMax-M2),
--enable-dp-lm-head (wide.jsonl).

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
RELEASES = ("0.5.16", "0.5.20", "0.5.21", "0.5.22", "0.5.23")  # pipeline/dp_attention.py DP_VERIFIED
EP_RELEASES = ("0.5.16", "0.5.23")  # expert parallel: pipeline/dp_attention.py VERIFIED
MLA_SPEC = ("0.5.16", "0.5.22", "0.5.23")  # NEXTN / EAGLE on an MLA model's MTP layer (0.5.20 / 0.5.21 refuse it)
ALL = [(v, {**c, "folder": HERE / f"sglang-{v}"}, e) for v in RELEASES
       for c, e in read_pairs(HERE, v) + read_pairs(HERE, v, cases="random.jsonl", results="random_results.jsonl")
       + read_pairs(HERE, v, cases="wide.jsonl", results="wide_results.jsonl")]
WIDE = {(v, c["id"]): e for v, c, e in ALL if c["id"] in {x["id"] for x, _ in read_pairs(HERE, v, cases="wide.jsonl",
                                                                                        results="wide_results.jsonl")}}


def _plan(case: dict, flags=None, version=None):
    gpu = find_profile(case["gpu"])
    assert gpu.capacity_mib == case["gpu_total_mib"] and gpu.compute_capability == case["gpu_sm"]
    name = case["planner_model"]  # the catalog's config, the one config_json names; or a path from the case folder
    model = resolve_model(str(case["folder"] / name) if name.startswith("../") else name)
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
    for old in ("0.5.19", "0.5.17", "0.5.15", "0.5.9"):  # the oracle adapters do not stamp the DP widths there
        with pytest.raises(BadInput, match=rf"DP attention on SGLang {old} is not modelled by this planner yet; "
                                           r"modelled: 0\.5\.16, 0\.5\.20, 0\.5\.21, 0\.5\.22, 0\.5\.23"):
            _plan(case, version=old)
    with pytest.raises(BadInput, match=r"--dp-size 8: not modelled by this planner \(data-parallel replicas"):
        _plan(case, flags=["--tp-size", "8", "--dp-size", "8"])
    with pytest.raises(BadInput, match=r"--speculative-algorithm NGRAM: .* not modelled"):  # MLA's own refusal
        _plan(case, flags=list(case["flags"]) + ["--speculative-algorithm", "NGRAM"])
    with pytest.raises(BadInput, match=r"without --dp-size > 1"):
        _plan(case, flags=["--tp-size", "8", "--enable-dp-attention"])
    with pytest.raises(BadInput, match=r"--enable-dp-lm-head: not modelled by this planner \(the LM head split over "
                                       r"the attention-TP group, without DP attention"):
        _plan(case, flags=["--tp-size", "8", "--enable-dp-lm-head"])
    h200 = find_profile("h200")
    nxt = resolve_model("qwen3-next-80b-a3b")  # DP attention is modelled, its MTP draft with it is not
    with pytest.raises(BadInput, match=r"DP attention with --speculative-algorithm NEXTN on qwen3-next-80b-a3b-instruct "
                                       r"is not modelled by this planner yet; modelled: NEXTN / EAGLE on the "
                                       r"checkpoint's own MTP layer of DeepSeek-V3 / R1 / V3.2 and GLM-4.x MoE"):
        make_plan(h200, nxt, ["--tp-size", "4", "--dp-size", "4", "--enable-dp-attention", "--speculative-algorithm",
                              "NEXTN"], {}, 139.0, 60.28, version="0.5.16")
    for name in ("qwen3-vl-30b-a3b-instruct", "llama-3.1-70b-instruct", "gpt-oss-120b"):  # VL MoE, dense, SWA
        with pytest.raises(BadInput, match=r"--dp-size 8 --enable-dp-attention: DP attention for \S+ is not modelled "
                                           r"yet; modelled: MLA models .*, the GQA MoE models Qwen3-MoE / GLM-4.x MoE / "
                                           r"MiniMax-M2 and the hybrid GDN MoE Qwen3-Next / Qwen3.5-MoE$"):
            make_plan(h200, resolve_model(name), list(case["flags"]), {}, 139.0, 60.28, version="0.5.16")
    with pytest.raises(BadInput, match=r"DP attention with --speculative-algorithm NGRAM on qwen3-235b-a22b is not "
                                       r"modelled by this planner yet; modelled: NEXTN / EAGLE on the checkpoint's own"):
        make_plan(h200, resolve_model("qwen3-235b-a22b"), list(case["flags"]) + ["--speculative-algorithm", "NGRAM"],
                  {}, 139.0, 60.28, version="0.5.16")


def test_the_wide_set_reaches_what_it_claims():
    """The wide set's oracle answers differ where the rule says they must: KV heads per attention-TP rank (a GQA
    cell grows as attn_tp shrinks, replicated below one head), the MLA cell with the MTP layer's term, and 0.5.16's
    prefill graph off under DP attention (a larger fraction than 0.5.23's, which keeps the breakable graph)."""
    for v in RELEASES:
        cell = {k[1]: e["kv_cell_bytes_per_token"] for k, e in WIDE.items() if k[0] == v and e["outcome"] == "ok"}
        # Qwen3-235B: 4 KV heads x 128 x 94 layers x 2 (K, V) x 2 B: attn_tp 1 -> 4 heads, 2 -> 2, 4 -> 1
        assert cell["h200_qwen3-235b-a22b_tp8_dp8_default"] == 4 * 128 * 94 * 2 * 2
        assert cell["h200_qwen3-235b-a22b_tp8_dp4_default"] == 2 * 128 * 94 * 2 * 2
        assert cell["h200_qwen3-235b-a22b_tp8_dp2_default"] == cell["h200_qwen3-235b-a22b_tp4_dp4_default"] // 4
        ok = [e for k, e in WIDE.items() if k[0] == v and e["outcome"] == "ok"]
        assert sum(1 for e in ok if e["speculative_algorithm"] in ("NEXTN", "EAGLE")) >= (20 if v in MLA_SPEC else 6), v
        if v in MLA_SPEC:
            assert cell["h200_v3_tp8_dp8_nextn_default"] > cell.get("h200_deepseek-v3_tp8_dp8_nospec_dplmhead", 0)
    for v in RELEASES:  # Qwen3-Next: the mamba state per attention-TP rank, the slots per DP shard
        nx = {k[1][len("h200_qwen3-next-80b-a3b_"):]: e for k, e in WIDE.items()
              if k[0] == v and k[1].startswith("h200_qwen3-next-80b-a3b_")}
        assert nx["tp4_dp4_default"]["mamba_cache_per_req_bytes"] == 2 * nx["tp4_dp2_default"]["mamba_cache_per_req_bytes"]
        assert nx["tp4_dp4_maxmambacachesize_400"]["max_mamba_cache_size"] == 400 // 4
        assert nx["tp8_dp8_maxmambacachesize_400"]["max_mamba_cache_size"] == 400 // 8
        assert nx["tp4_dp2_disableradixcache_maxrunningrequests_256"]["max_mamba_cache_size"] == 256 // 2
    for v in RELEASES:  # the own-MTP drafts of V3.2 and GLM-4.7 with DP attention: a draft pool beside the target's
        for tag in ("v32", "glm47fp8") if v in MLA_SPEC else ("glm47fp8",):
            e = WIDE[(v, f"h200_{tag}_tp8_dp8_nextn")]
            assert e["outcome"] == "ok" and e["pool_draft_kv_bytes"] > 0, (v, tag)
    m16 = WIDE[("0.5.16", "h200_qwen3-235b-a22b_tp8_dp8_default")]["mem_fraction_static"]
    m23 = WIDE[("0.5.23", "h200_qwen3-235b-a22b_tp8_dp8_default")]["mem_fraction_static"]
    assert m16 > m23  # 0.5.23 still reserves len(prefill capture list) x 8 MiB for the breakable graph


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


def test_dp_attention_splits_gqa_attention_weights_over_attn_tp():
    """GQA MoE under DP attention: q / o projections and the embedding over attn_tp, k / v over attn_tp with one
    head per GPU below the KV heads; --enable-dp-lm-head adds the LM head over attn_tp."""
    from planner.catalog.weights import dp_attention_gqa_bytes, dp_lm_head_bytes

    spec = resolve_model("qwen3-235b-a22b").spec  # 94 layers, 64 q / 4 KV heads x 128, hidden 4096, bf16
    layers, h, per = 94, 4096, 2
    qo, kv, emb = layers * 2 * 64 * 128 * h * per, layers * 2 * 4 * 128 * h * per, 151936 * h * per
    # attn_tp 1 (tp 8, dp 8): the whole attention and embedding on every GPU, above the 1/8 split and the one
    # replicated KV head per GPU that tp 8 > 4 KV heads already gives
    from planner.catalog.weights import replicated_kv_bytes

    plain = -(-(qo + kv + emb) // 8) + replicated_kv_bytes(spec, 8)
    assert dp_attention_gqa_bytes(spec, 8, 8) == qo + emb + kv - plain
    assert dp_attention_gqa_bytes(spec, 8, 1) == 0
    assert 0 < dp_attention_gqa_bytes(spec, 8, 2) < dp_attention_gqa_bytes(spec, 8, 4) < dp_attention_gqa_bytes(spec, 8, 8)
    assert dp_lm_head_bytes(spec, 8, 8) == emb - emb // 8
    gpu, model = find_profile("h200"), resolve_model("qwen3-235b-a22b")
    one = make_plan(gpu, model, ["--tp-size", "8"], version="0.5.23")
    dp = make_plan(gpu, model, ["--tp-size", "8", "--dp-size", "8", "--enable-dp-attention"], version="0.5.23")
    head = make_plan(gpu, model, ["--tp-size", "8", "--attn-dp-size", "8", "--enable-dp-lm-head"], version="0.5.23")
    assert one.free_after_bytes - dp.free_after_bytes == dp_attention_gqa_bytes(spec, 8, 8)
    assert dp.free_after_bytes - head.free_after_bytes == dp_lm_head_bytes(spec, 8, 8)


def test_dp_attention_splits_the_gated_deltanet_layers_too():
    """Qwen3-Next under DP attention: its GDN projections (in_proj_qkvz / ba, conv1d, out_proj) and the gated q_proj
    move from 1/tp to 1/attn_tp with the rest of the attention."""
    from planner.catalog.weights import dp_attention_gqa_bytes

    spec = resolve_model("qwen3-next-80b-a3b").spec  # 36 GDN + 12 full-attention layers, hidden 2048, bf16
    gdn = 36 * 2 * ((2 * 2048 + 2 * 4096) * 2048 + 64 * 2048 + 8192 * 4 + 2048 * 4096 + 32 * 3)
    full = 12 * 2 * ((2 * 16 * 256) * 2048 + 2 * 2 * 256 * 2048 + 2048 * 16 * 256)
    emb = 151936 * 2048 * 2
    whole = gdn + full + emb  # attn_tp 1 (tp 4, dp 4): all of it on every GPU
    from planner.catalog.weights import replicated_kv_bytes  # tp 4 > 2 KV heads: one head per GPU already counted

    assert dp_attention_gqa_bytes(spec, 4, 4) == whole - -(-whole // 4) - replicated_kv_bytes(spec, 4)
    # Qwen3.5-MoE: its vision tower (27 blocks, hidden 1152, MLP 4304) moves to 1/attn_tp with the rest
    import dataclasses

    q35 = resolve_model("qwen3.5-35b-a3b").spec
    vision = 27 * (4 * 1152 * 1152 + 2 * 1152 * 4304) * 2
    text_only = dataclasses.replace(q35, vision=None)
    gap = dp_attention_gqa_bytes(q35, 4, 4) - dp_attention_gqa_bytes(text_only, 4, 4)
    assert abs(gap - (vision - vision // 4)) <= 4


def test_dp_attention_widens_the_mtp_drafts_load():
    """0.5.14+ holds the MTP draft's weights when it sizes the pools; under DP attention its embedding (built with the
    target's layout) and its MTP layer's attention are split over attn_tp: the planner's estimate adds them."""
    from planner.catalog.weights import dp_attention_draft_bytes

    spec = resolve_model("deepseek-v3").spec
    emb = -(-129280 // 64) * 64 * 7168 * 2
    extra = dp_attention_draft_bytes(spec, 8, 8)
    assert emb - emb // 8 < extra < emb - emb // 8 + 2**30  # the embedding, and one layer's attention
    assert dp_attention_draft_bytes(spec, 8, 8, lm_head=True) - extra == emb - emb // 8
    assert dp_attention_draft_bytes(spec, 8, 1) == 0
    assert dp_attention_draft_bytes(resolve_model("qwen3-235b-a22b").spec, 8, 8) == 0  # no MTP layer
    gpu, model = find_profile("h200"), resolve_model("deepseek-v3")
    flags = ["--tp-size", "8", "--dp-size", "8", "--enable-dp-attention"]
    plain = make_plan(gpu, model, flags, version="0.5.16")
    nextn = make_plan(gpu, model, flags + ["--speculative-algorithm", "NEXTN"], version="0.5.16")
    one = make_plan(gpu, model, ["--tp-size", "8", "--speculative-algorithm", "NEXTN"], version="0.5.16")
    base = make_plan(gpu, model, ["--tp-size", "8"], version="0.5.16")
    # the draft's load under DP attention = its load without it + the estimate
    assert (plain.free_after_bytes - nextn.free_after_bytes) - (base.free_after_bytes - one.free_after_bytes) == extra


def test_expert_parallel_keeps_the_sizing_and_the_weights():
    """--ep-size E dividing tp (a2a none): SGLang's sizing is the same with and without it (the golden summaries are
    equal pairwise), and the planner's weights per GPU too (E experts shards, each TP-split tp // E ways)."""
    for version in EP_RELEASES:
        rows = {c["id"]: e for v, c, e in ALL if v == version and c["id"].startswith(("h200_", "b200_"))}
        pairs = [(k, k.replace("_ep8_", "_")) for k in rows if "_dp8_ep8_" in k or "_dp4_ep8_" in k]
        pairs = [(a, b) for a, b in pairs if b in rows]
        assert len(pairs) >= 6, version
        for with_ep, without in pairs:  # e.g. h200_tp8_dp8_ep8_default vs h200_tp8_dp8_default
            assert rows[with_ep] == rows[without], (version, with_ep)
    gpu, model = find_profile("h200"), resolve_model("deepseek-v3")
    for version in EP_RELEASES:
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
