"""Worked cases: each release switch, recomputed from the cited source lines of that release.

Each expected value is recomputed here step by step, with no planner code; the planner's answer for the
same launch must equal it. They pin one rule each, between neighbouring releases, including releases the
sglang-oracle does not run (0.5.14, 0.5.15). The releases it runs, through the shared oracle or this
repository's adapters, are also checked case by case against SGLang's own code in test_golden_oracle.py.
"""

from __future__ import annotations

import pytest

from planner.catalog.catalog import resolve_model
from planner.engines.sglang.rules import KNOWN, RULES, changes_between
from planner.hardware.profiles import find_profile
from planner.engines.sglang.plan import make_plan

GIB = 1 << 30
SEED = ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
        "--speculative-num-draft-tokens", "4"]
# a dense target's EAGLE draft is a head given by path (without one SGLang drafts with a second copy of the whole model,
# refused by name: tests/test_refusals.py)
DENSE_DRAFT = ["--speculative-draft-model-path", "qwen3-8b-eagle3"]


def _plan(gpu: str, model: str, flags: list[str], version: str, before: float = 80.0, after: float = 60.0):
    return make_plan(find_profile(gpu), resolve_model(model), flags, {}, before, after, version=version)


def _pcg_tokens(max_tokens: int) -> list[int]:
    """_generate_piecewise_cuda_graph_tokens (srt/server_args.py:1550-1568 @0.5.11), same list in every release."""
    sizes = (list(range(4, 33, 4)) + list(range(48, 257, 16)) + list(range(288, 513, 32))
             + list(range(576, 1025, 64)) + list(range(1280, 4097, 256)) + list(range(4608, max_tokens + 1, 512)))
    return [s for s in sizes if s <= max_tokens]


def test_every_known_release_is_modelled_or_refused():
    for v in KNOWN:
        if v in RULES:
            assert RULES[v].version == v and RULES[v].flags == "v" + v.replace(".", "_")


# --- 0.5.10 ----------------------------------------------------------------------------------------------

def test_0_5_10_spec_turns_overlap_off_and_extra_buffer_gets_4_slots():
    # srt/environ.py:442 @0.5.10: SGLANG_ENABLE_SPEC_V2 = EnvBool(False); srt/server_args.py:2999-3019 @0.5.10:
    # without it, disable_overlap_schedule = True; ratio = 3 + 1 for extra_buffer without overlap
    # (…kv_cache_mixin.py:373-386 @0.5.10)
    flags = [*SEED, "--mamba-scheduler-strategy", "extra_buffer", "--max-running-requests", "8"]
    p10 = _plan("rtxpro6000", "qwen3.6-27b", flags, "0.5.10", 95.0, 44.0)
    p11 = _plan("rtxpro6000", "qwen3.6-27b", flags, "0.5.11", 95.0, 44.0)
    assert p10.args.disable_overlap_schedule and not p11.args.disable_overlap_schedule
    assert (p10.profile.mamba_ratio, p11.profile.mamba_ratio) == (4, 5)
    # req_to_token has R rows in 0.5.10 (srt/mem_cache/memory_pool.py:145 @0.5.10), R + 1 in 0.5.11
    r, ctx, d = p10.profile.max_running_requests, p10.args.context_len, 4
    assert p10.pools.get("req_to_token") == r * (ctx + 4 + d) * 4


def test_0_5_10_spec_v2_env_forces_overlap_on_and_refuses_topk_above_1():
    flags = ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "2",
             "--speculative-num-draft-tokens", "6", "--disable-overlap-schedule", *DENSE_DRAFT]
    p = make_plan(find_profile("h100-sxm"), resolve_model("qwen3-8b"), flags, {"SGLANG_ENABLE_SPEC_V2": "1"},
                  75.0, 58.0, version="0.5.10")
    assert p.error_type == "ValueError"  # srt/server_args.py:3005-3012 @0.5.10
    assert p.error_message == "Spec v2 currently only supports topk = 1 for speculative decoding."


def test_0_5_10_no_piecewise_graph_under_spec():
    # H100 SXM 81559 MiB, tp 1, dense Qwen3-8B, EAGLE: _handle_piecewise_cuda_graph turns PCG off for any
    # speculative algorithm (srt/server_args.py:1088-1090 @0.5.10), so the reserve has no len(tokens) x 8 term;
    # 0.5.11 keeps it. reserved = 512 + 8192 x 1.5 + 256 x 2 + 1/8 x 1024 (+ 8 x 58) + 4096 (EAGLE)
    gpu = find_profile("h100-sxm").capacity_mib
    base = 512 + 8192 * 1.5 + 256 * 2 + 1 / 8 * 1024 + 4096
    p10 = _plan("h100-sxm", "qwen3-8b", [*SEED, *DENSE_DRAFT], "0.5.10")
    p11 = _plan("h100-sxm", "qwen3-8b", [*SEED, *DENSE_DRAFT], "0.5.11")
    assert p10.args.mem_fraction_static == round((gpu - base) / gpu, 3)
    assert p11.args.mem_fraction_static == round((gpu - base - 8 * len(_pcg_tokens(8192))) / gpu, 3)


# --- 0.5.14 / 0.5.15 --------------------------------------------------------------------------------------

def test_0_5_14_and_0_5_15_prefill_graph_terms():
    # Qwen3-Next on an H100 SXM: 0.5.14's prefill default tc_piecewise is disabled for the blacklisted arch
    # (srt/model_executor/cuda_graph_config.py:90-92, srt/server_args.py:2997-3057 @0.5.14), 0.5.15's
    # breakable default is kept (cuda_graph_config.py:95-101 @0.5.15): 8 MiB per prefill capture size.
    gpu = find_profile("h100-sxm").capacity_mib
    base = 512 + 8192 * 1.5 + 1 / 8 * 1024 + 256 * 2
    n14 = _plan("h100-sxm", "qwen3-next-80b-a3b-instruct", ["--tp-size", "1"], "0.5.14")
    n15 = _plan("h100-sxm", "qwen3-next-80b-a3b-instruct", ["--tp-size", "1"], "0.5.15")
    assert n14.args.mem_fraction_static == round((gpu - base) / gpu, 3) == 0.835
    assert n15.args.mem_fraction_static == round((gpu - base - 8 * len(_pcg_tokens(8192))) / gpu, 3) == 0.83
    # Qwen3.5/3.6 (multimodal): no prefill graph in 0.5.14 or 0.5.15 (srt/server_args.py:3374 @0.5.15),
    # kept from 0.5.16 (srt/configs/model_config.py:1785-1788 @0.5.16); then the ViT factor
    q15 = _plan("h100-sxm", "qwen3.6-27b", [], "0.5.15")
    q16 = _plan("h100-sxm", "qwen3.6-27b", [], "0.5.16")
    # adjust_mem_fraction_for_vlm: vision num_hidden_layers (absent: Qwen3.5/3.6 say "depth", so 24) and
    # hidden_size 1152 (srt/server_args.py:7137-7173 @0.5.11, unchanged through 0.5.23)
    vit = 0.95 * max(0.8, min(1.05, 1.0 - 0.1 * (24 * 1152**2 / (24 * 1024**2) - 1.0)))
    assert q15.args.mem_fraction_static == round((gpu - base) / gpu, 3) * vit
    assert q16.args.mem_fraction_static == round((gpu - base - 8 * len(_pcg_tokens(8192))) / gpu, 3) * vit


def test_0_5_14_counts_the_decode_graph_even_when_disabled():
    # srt/server_args.py:3285 @0.5.14 adds max_bs x 2 unconditionally; 0.5.15 only with the decode graph on
    # (srt/server_args.py:3639-3643 @0.5.15). Dense Qwen3-8B on an H100, --disable-cuda-graph (no graphs at all).
    gpu = find_profile("h100-sxm").capacity_mib
    base = 512 + 8192 * 1.5 + 1 / 8 * 1024
    p14 = _plan("h100-sxm", "qwen3-8b", ["--disable-cuda-graph"], "0.5.14")
    p15 = _plan("h100-sxm", "qwen3-8b", ["--disable-cuda-graph"], "0.5.15")
    assert p14.args.mem_fraction_static == round((gpu - base - 256 * 2) / gpu, 3)
    assert p15.args.mem_fraction_static == round((gpu - base) / gpu, 3)


# --- 0.5.17 / 0.5.18 --------------------------------------------------------------------------------------

def test_0_5_17_charges_the_padding_row_and_0_5_18_the_multimodal_reserve():
    # No spec, ratio split: 0.5.16 M = int(B // S); 0.5.17 M = int((B - S) // S) and charges (M + 1) x S
    # (srt/mem_cache/kv_cache_configurator.py:1949-1957, 1977-1982 @0.5.17); 0.5.18 subtracts
    # SGLANG_VLM_CACHE_SIZE_MB / 1024 for a multimodal model first (:130-147, 1789 @0.5.18).
    flags = ["--mem-fraction-static", "0.9"]
    out = {v: _plan("rtxpro6000", "qwen3.6-27b", flags, v, 95.0, 44.0) for v in ("0.5.16", "0.5.17", "0.5.18")}
    s = out["0.5.16"].profile.mamba_cache_per_req_bytes
    rest = 44.0 - 95.0 * (1 - 0.9)
    b = rest * 0.9 / (1 + 0.9) * GIB
    assert out["0.5.16"].profile.max_mamba_cache_size == int(b // s)
    assert out["0.5.17"].profile.max_mamba_cache_size == int((b - s) // s)
    assert out["0.5.17"].profile.available_kv_bytes == int((rest - (int((b - s) // s) + 1) * s / GIB) * GIB)
    rest18 = 44.0 - 95.0 * (1 - 0.9) - 100 / 1024
    b18 = rest18 * 0.9 / (1 + 0.9) * GIB
    m18 = int((b18 - s) // s)
    assert out["0.5.18"].profile.rest_gib_before_mamba == rest18
    assert out["0.5.18"].profile.max_mamba_cache_size == m18
    assert out["0.5.18"].profile.available_kv_bytes == int((rest18 - (m18 + 1) * s / GIB) * GIB)


def test_0_5_17_lazy_extra_buffer_with_spec_is_accepted():
    flags = [*SEED, "--mamba-radix-cache-strategy", "extra_buffer_lazy"]
    assert _plan("rtxpro6000", "qwen3.6-27b", flags, "0.5.16", 95.0, 43.2).error_message == \
        "extra_buffer_lazy unsupported with spec."  # srt/server_args.py:4841-4843 @0.5.16
    p17 = _plan("rtxpro6000", "qwen3.6-27b", flags, "0.5.17", 95.0, 43.2)
    assert p17.error_type is None and p17.profile.mamba_ratio == 4  # lazy + overlap: 3 + 1


# --- 0.5.20 - 0.5.23 --------------------------------------------------------------------------------------

def test_0_5_20_tier_for_20_to_35_gib_cards():
    # srt/arg_groups/memory_hook.py:101-117 @0.5.20: chunked prefill 4096, decode max_bs 48 (tp < 4);
    # before: 2048 / 24. Dense Qwen3-8B on an RTX 4090 (no 10 GiB floor below 60 GiB).
    gpu = find_profile("rtx4090").capacity_mib
    p19 = _plan("rtx4090", "qwen3-8b", [], "0.5.19", 23.0, 7.0)
    p20 = _plan("rtx4090", "qwen3-8b", [], "0.5.20", 23.0, 7.0)
    assert (p19.args.chunked_prefill_size, p19.args.cuda_graph_max_bs) == (2048, 24)
    assert (p20.args.chunked_prefill_size, p20.args.cuda_graph_max_bs) == (4096, 48)
    r19 = 512 + 2048 * 1.5 + 1 / 8 * 1024 + 24 * 2 + 8 * len(_pcg_tokens(2048))
    r20 = 512 + 4096 * 1.5 + 1 / 8 * 1024 + 48 * 2 + 8 * len(_pcg_tokens(4096))
    assert p19.args.mem_fraction_static == round((gpu - r19) / gpu, 3)
    assert p20.args.mem_fraction_static == round((gpu - r20) / gpu, 3)


def test_0_5_20_removes_the_old_spellings():
    for flag in ("--mamba-scheduler-strategy", "--cuda-graph-max-bs"):
        value = "extra_buffer" if "strategy" in flag else "64"
        assert _plan("rtxpro6000", "qwen3.6-27b", [flag, value], "0.5.19", 95.0, 44.0).error_type is None
        p20 = _plan("rtxpro6000", "qwen3.6-27b", [flag, value], "0.5.20", 95.0, 44.0)
        assert p20.error_type == "SystemExit"


def test_0_5_21_extra_buffer_needs_mamba_state():
    # srt/arg_groups/model_hook.py:947-954 @0.5.21
    flags = ["--mamba-radix-cache-strategy", "extra_buffer"]
    assert _plan("h100-sxm", "qwen3-8b", flags, "0.5.20").error_type is None
    p = _plan("h100-sxm", "qwen3-8b", flags, "0.5.21")
    assert (p.error_type, p.error_message) == (
        "ValueError", "--mamba-radix-cache-strategy extra_buffer needs mamba state, got Qwen3ForCausalLM.")


def test_0_5_22_clips_the_decode_graph_to_max_running_requests():
    # srt/arg_groups/memory_hook.py:182-188 @0.5.22: the default max_bs (256 on an 80 GB card) is clipped to
    # an explicit --max-running-requests 64, and so is its max_bs x 2 MiB reserve.
    gpu = find_profile("h100-sxm").capacity_mib
    base = 512 + 8192 * 1.5 + 1 / 8 * 1024 + 8 * len(_pcg_tokens(8192))
    p21 = _plan("h100-sxm", "qwen3-8b", ["--max-running-requests", "64"], "0.5.21")
    p22 = _plan("h100-sxm", "qwen3-8b", ["--max-running-requests", "64"], "0.5.22")
    assert (p21.args.cuda_graph_max_bs, p22.args.cuda_graph_max_bs) == (256, 64)
    assert p21.args.mem_fraction_static == round((gpu - base - 256 * 2) / gpu, 3)
    assert p22.args.mem_fraction_static == round((gpu - base - 64 * 2) / gpu, 3)


def test_0_5_23_max_one_running_request():
    # --max-running-requests 0 with the radix cache off: 0.5.22 sizes M = 0 and raises (K <= 0,
    # kv_cache_configurator.py:2671-3080 @0.5.22); 0.5.23 takes max(1, 0) = 1 (:3332-3334 @0.5.23)
    flags = ["--disable-radix-cache", "--max-running-requests", "0", "--disable-cuda-graph"]
    p22 = _plan("rtxpro6000", "qwen3.6-27b", flags, "0.5.22", 95.0, 44.0)
    p23 = _plan("rtxpro6000", "qwen3.6-27b", flags, "0.5.23", 95.0, 44.0)
    assert p22.error_message.startswith("Not enough GPU memory for hybrid (mamba/linear-attention) state cache. "
                                        "Computed max_mamba_cache_size=0 ")
    assert p23.error_type is None and p23.profile.max_mamba_cache_size == 1 and p23.profile.max_running_requests == 1


@pytest.mark.parametrize("old,new", [("0.5.11", "0.5.23"), ("0.5.16", "0.5.17")])
def test_changes_between_releases_name_the_moves(old, new):
    text = " ".join(changes_between(old, new))
    assert "padding rows" in text
    if old == "0.5.11":
        assert "inside the mamba share" in text and "mamba-radix-cache-strategy" in text


def test_int8_mamba_checkpoint_pool_is_allocated_after_sizing():
    # MambaCheckpointPool.estimate_mem_usage_bytes (srt/mem_cache/mamba_checkpoint_pool.py:263-294 @0.5.19):
    # L x (slots + 1) x (H dv dk int8 + H dk x ssm dtype + conv numel x conv dtype), slots = 2 x M by default
    # (:330); not subtracted from the KV budget (:354-357), so N is unchanged and the pool eats headroom.
    base = _plan("rtxpro6000", "qwen3.6-27b", [], "0.5.19", 95.0, 44.0)
    p = _plan("rtxpro6000", "qwen3.6-27b", ["--enable-int8-mamba-checkpoint"], "0.5.19", 95.0, 44.0)
    m = p.profile.max_mamba_cache_size
    h, dv, dk = 48, 128, 128  # Qwen3.6-27B GDN temporal state per layer at tp 1 (linear_num_value_heads, dims)
    conv = 10240 * 3 * 2  # (conv_dim, kernel - 1) in bfloat16
    expected = 48 * (2 * m + 1) * (h * dv * dk + h * dk * 4 + conv)  # float32 ssm: 4-byte scale
    assert p.pools.get("mamba_int8_checkpoint") == expected
    assert p.profile.max_total_num_tokens == base.profile.max_total_num_tokens
    assert p.headroom_bytes == base.headroom_bytes - expected
    # an oversized pool trips the free-memory check before allocation (:336-352)
    big = _plan("rtxpro6000", "qwen3.6-27b", ["--enable-int8-mamba-checkpoint", "--int8-mamba-ckpt-size", "5000"],
                "0.5.19", 95.0, 44.0)
    assert big.error_type == "RuntimeError" and big.stage == "init_pools"
    assert big.error_message.startswith("int8 mamba checkpoint pool needs ~")
    assert _plan("rtxpro6000", "qwen3.6-27b", ["--enable-int8-mamba-checkpoint"], "0.5.13", 95.0, 44.0).error_type \
        == "SystemExit"  # the flag is new in 0.5.14


def test_unified_memory_pool_per_release():
    # 0.5.18/0.5.19 are checked against SGLang's own code (tests/golden); the releases around them by the
    # formulas of srt/mem_cache/unified_memory_pool.py: 0.5.16 crashes building the pool (a keyword the unified
    # pool does not take, memory_pool.py:1154 vs unified_memory_pool.py:746 @0.5.16); 0.5.20 has no view tail
    # pad change (0.5.19-0.5.21) and no K/V tables (0.5.19-0.5.20); 0.5.22 drops the pad.
    flags = ["--enable-unified-memory", "--attention-backend", "triton"]
    p16 = _plan("rtxpro6000", "qwen3.6-27b", flags, "0.5.16", 95.0, 44.0)
    assert p16.error_type == "TypeError" and p16.stage == "init_pools"
    out = {v: _plan("rtxpro6000", "qwen3.6-27b", flags, v, 95.0, 44.0) for v in ("0.5.19", "0.5.20", "0.5.21", "0.5.22")}
    f, s = 16 * 4 * 512 * 2, out["0.5.19"].profile.mamba_cache_per_req_bytes
    for v, p in out.items():
        a, m = p.profile.available_kv_bytes, p.profile.max_mamba_cache_size
        total = a - a % 4096 + m * s
        pad = f if v in ("0.5.19", "0.5.20", "0.5.21") else 0
        assert p.pools.get("unified") == total + pad, v
        assert p.pools.get("kv_k") == p.pools.get("mamba_ssm") == 0
    tables = 48 * 16
    assert out["0.5.21"].pools.get("index_buffers") - out["0.5.20"].pools.get("index_buffers") == tables
