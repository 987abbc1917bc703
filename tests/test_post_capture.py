"""SGLANG_ENABLE_POST_CAPTURE_KV_SIZING on SGLang 0.5.23 (planner/engines/sglang/pipeline/post_capture.py).

The pre-capture part (gate, fraction, slack floor, the pool's VA upper bound) is SGLang's code and is checked
against the 0.5.23 oracle, which runs it up to the first real CUDA call (the VMM reservation in init_pools:
``tests/golden/post_capture/oracle-0.5.23.json``). The post-capture size is the planner's estimate; the tests
recompute it from the cited formula (kv_pool_runtime.py:59-140 @0.5.23) and the plan's own pieces.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import planner
from planner.cli import main
from planner.errors import BadInput
from planner.engines.sglang.plan import GIB

ENV = {"SGLANG_ENABLE_POST_CAPTURE_KV_SIZING": "1"}
GOLDEN = Path(__file__).parent / "golden" / "post_capture" / "oracle-0.5.23.json"
CONFIGS = Path(__file__).parent.parent / "planner" / "catalog" / "configs"


def _golden() -> list[dict]:
    return json.loads(GOLDEN.read_text(encoding="utf-8"))["cases"]


@pytest.mark.parametrize("case", _golden(), ids=lambda c: c["id"])
def test_pre_capture_numbers_equal_the_0_5_23_oracle(case):
    """mem_fraction_static, the profile and the VA upper bound (pre-capture tokens) as SGLang 0.5.23 computes them."""
    inp, want = case["inputs"], case["summary"]
    p = planner.plan(inp["gpu"], str(CONFIGS / inp["config"]), inp["flags"], env=inp["env"],
                     free_before_gib=inp["free_before_gib"], free_after_gib=inp["free_after_gib"],
                     sglang_version="0.5.23")
    assert p.args.mem_fraction_static == want["mem_fraction_static"]
    assert p.args.post_capture_kv == case["post_capture"]
    prof = p.profile
    if want["rest_gib_before_mamba"] is not None:  # the oracle reports it for hybrid models
        assert prof.rest_gib_before_mamba == want["rest_gib_before_mamba"]
    assert prof.available_kv_bytes == want["available_kv_bytes"]
    assert prof.kv_cell_bytes_per_token == want["kv_cell_bytes_per_token"]
    assert prof.max_mamba_cache_size == want["max_mamba_cache_size"]
    va = p.post_capture["va_tokens"] if p.post_capture else prof.max_total_num_tokens
    va_running = p.post_capture["va_running"] if p.post_capture else prof.max_running_requests
    assert va == want["max_total_num_tokens"]
    assert va_running == want["max_running_requests"]


def test_fraction_worked_case_from_memory_hook_291_295():
    """Dense Qwen3-8B on an RTX 5090 (32,607 MiB, tp 1): reserved = 1536 + 1/8 x 1024 = 1664 MiB,
    f = round((32607 - 1664) / 32607, 3) = 0.949 (not multimodal: no 8192 / gpu_mem)."""
    p = planner.plan("rtx5090", "qwen3-8b", "", env=ENV, sglang_version="0.5.23")
    assert p.args.mem_fraction_static == round((32607 - 1664) / 32607, 3) == 0.949
    off = planner.plan("rtx5090", "qwen3-8b", "", sglang_version="0.5.23")
    assert off.args.mem_fraction_static < 0.949  # the heuristic keeps the activation and graph reserve


def test_multimodal_fraction_takes_8192_over_gpu_mem_and_tp_scales_the_reserve():
    """Qwen3.6-27B is multimodal (adjust_mem_fraction_for_vlm, memory_hook.py:417-428 @0.5.23):
    round((97887 - 1536 - tp/8 x 1024) / 97887, 3) - 8192 / 97887."""
    for tp in (1, 2):
        p = planner.plan("rtxpro6000", "qwen3.6-27b", f"--tp-size {tp}", env=ENV, sglang_version="0.5.23")
        want = round((97887 - (1536 + tp / 8 * 1024)) / 97887, 3) - 8192 / 97887
        assert p.args.mem_fraction_static == want


def test_post_capture_pool_is_recomputed_from_the_cited_formula():
    """budget = int(max(0, free - headroom - mm) x 2^30), tokens = min(budget // cell (page-aligned), VA tokens):
    free = what is free after the weights less the real allocations (every pool but the target KV reservation)
    less what the capture took (workspace, prefill and decode graphs); headroom = max(P (1 - f), activation
    reserve) for a hybrid model."""
    for gpu, model in (("rtxpro6000", "qwen3.6-27b"), ("rtx5090", "qwen3-8b"), ("h100-pcie", "qwen3.6-27b")):
        p = planner.plan(gpu, model, "", env=ENV, sglang_version="0.5.23")
        pc, a, prof = p.post_capture, p.args, p.profile
        captured = sum(n.bytes for n in p.needs if n.label != "activations (prefill chunk)")
        free = p.free_after_bytes - (pc["va_pools_total"] - pc["va_kv_bytes"]) - captured
        headroom = prof.pre_model_load_gib * (1 - a.mem_fraction_static)
        mamba = p.state is not None
        gap = a.cuda_graph_max_bs < pc["va_running"]
        if mamba or gap:
            reserve = 512 + max(a.chunked_prefill_size, 2048) * 1.5 + a.tp_size / 8 * 1024
            if p.gpu.capacity_mib > 60 * 1024:
                reserve = max(reserve, 10240)
            headroom = max(headroom, reserve / 1024)
        budget = int(max(0.0, free / GIB - headroom - pc["mm_gib"]) * GIB)
        tokens = min(budget // prof.kv_cell_bytes_per_token // a.page_size * a.page_size, pc["va_tokens"])
        assert (pc["budget_bytes"], pc["tokens"], prof.max_total_num_tokens) == (budget, tokens, tokens)
        assert 0 < tokens <= pc["va_tokens"]
        # the resized KV pool is what the pools hold now; the other pools are the pre-capture ones
        assert p.pools.get("kv_k") + p.pools.get("kv_v") == pc["kv_bytes"] < pc["va_kv_bytes"] or tokens == pc["va_tokens"]
        assert p.verdict == "fits"  # the graphs were taken out of the budget before the pool was backed


@pytest.mark.parametrize("flags, why", [
    ("--disable-cuda-graph", "decode graph off"),
    ("--cuda-graph-max-bs-prefill 4096", "the prefill graph stops under the 8192 chunk"),
    ("--disable-prefill-cuda-graph", "prefill graph off"),
])
def test_gate_conditions_keep_the_heuristic_reserve(flags, why):
    """overrides.py:1836-1853 @0.5.23: eager decode or a prefill chunk no captured graph covers keeps the usual
    fraction: the plan equals the one without the variable."""
    on = planner.plan("rtxpro6000", "qwen3.6-27b", flags, env=ENV, sglang_version="0.5.23")
    off = planner.plan("rtxpro6000", "qwen3.6-27b", flags, sglang_version="0.5.23")
    assert not on.args.post_capture_kv and on.post_capture is None, why
    assert on.args.mem_fraction_static == off.args.mem_fraction_static
    assert on.profile.max_total_num_tokens == off.profile.max_total_num_tokens
    assert any(n.startswith("SGLANG_ENABLE_POST_CAPTURE_KV_SIZING=1 has no effect here: ") for n in on.notes)
    assert not any("POST_CAPTURE" in n for n in off.notes)


def test_unmodelled_cases_are_refused_by_name():
    with pytest.raises(BadInput, match="SGLANG_ENABLE_POST_CAPTURE_KV_SIZING.*0.5.23 only"):
        planner.plan("rtxpro6000", "qwen3.6-27b", "", env=ENV, sglang_version="0.5.18")
    with pytest.raises(BadInput, match="SGLANG_ENABLE_POST_CAPTURE_KV_SIZING=1 with --speculative-algorithm DFLASH"):
        planner.plan("rtxpro6000", "qwen3.6-27b", "--speculative-algorithm DFLASH --speculative-draft-model-path "
                     "z-lab/Qwen3.6-27B-DFlash", env=ENV, sglang_version="0.5.23")


def test_cli_end_to_end_says_the_pool_rests_on_the_estimate(capsys):
    rc = main(["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--sglang-version", "0.5.23",
               "--env", "SGLANG_ENABLE_POST_CAPTURE_KV_SIZING=1"])
    out = " ".join(capsys.readouterr().out.split())
    assert rc == 0
    assert "the KV pool is sized after the CUDA graphs are captured" in out
    assert "'VA upper bound'" in out and "the pool rests on its estimate of what the capture takes" in out
    assert "public logs of consumer Blackwell" in out and "% under" in out
    assert "no flag search under SGLANG_ENABLE_POST_CAPTURE_KV_SIZING=1" in out
    assert main(["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--sglang-version", "0.5.22",
                 "--env", "SGLANG_ENABLE_POST_CAPTURE_KV_SIZING=1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "SGLANG_ENABLE_POST_CAPTURE_KV_SIZING" in err[0]


def test_a_capture_that_leaves_no_kv_memory_fails_after_capture(capsys):
    """An RTX 4090 at --mem-fraction-static 0.93: the graphs and the 6.62 GiB activation reserve (decode graph
    max_bs 48 < 2048 running requests) leave no KV budget: MemoryPoolConfig raises, exit 1."""
    p = planner.plan("rtx4090", "qwen3-8b", "--mem-fraction-static 0.93", env=ENV, sglang_version="0.5.23")
    assert (p.outcome, p.stage, p.error_type) == ("startup_failed", "post_capture_kv_resize", "RuntimeError")
    assert p.post_capture["tokens"] <= 0 and p.post_capture["eager_decode_gap"] == (48, 2048)
    assert main(["--gpu", "rtx4090", "--model", "qwen3-8b", "--sglang-version", "0.5.23", "--no-search",
                 "--env", "SGLANG_ENABLE_POST_CAPTURE_KV_SIZING=1", "--", "--mem-fraction-static", "0.93"]) == 1


def test_fix_offers_post_capture_sizing_where_the_graph_capture_is_the_risk(capsys):
    flags = ["--mem-fraction-static", "0.93"]
    p = planner.plan("rtx5090", "qwen3-8b", flags, sglang_version="0.5.23")
    assert p.verdict == "oom_risk" and "CUDA graph" in p.oom_allocation
    q = planner.plan("rtx5090", "qwen3-8b", flags, env=ENV, sglang_version="0.5.23")
    assert q.verdict == "fits"
    rc = main(["--gpu", "rtx5090", "--model", "qwen3-8b", "--sglang-version", "0.5.23", "--no-search", "--", *flags])
    out = " ".join(capsys.readouterr().out.split())
    assert rc == 1
    fix = next(line for line in out.split("Fix: ")[1:] if "POST_CAPTURE" in line)
    assert "--env SGLANG_ENABLE_POST_CAPTURE_KV_SIZING=1" in fix
    assert f"{q.profile.max_total_num_tokens:,} KV tokens" in fix
    assert f"(now {p.profile.max_total_num_tokens:,}" in fix
    assert f"{q.profile.max_running_requests} running requests" in fix
    # not offered where the release does not model it, nor where the risk is not the capture
    old = planner.plan("rtx5090", "qwen3-8b", flags, sglang_version="0.5.20")
    from planner.engines.sglang.explain import post_capture_fix
    assert post_capture_fix(old) is None


def test_the_search_is_skipped_everywhere_and_says_so(tmp_path, capsys):
    """The grid sizes the pool before capture: the API, the TUI and --batch get no ranking, and say why."""
    from planner.engines.sglang.pipeline.post_capture import SEARCH_SKIPPED

    r = planner.search("rtxpro6000", "qwen3.6-27b", env=ENV, sglang_version="0.5.23")
    assert r.ranked == [] and r.recommended is None and r.skipped_why == SEARCH_SKIPPED
    line = {"id": "pc", "gpu": "rtxpro6000", "model": "qwen3.6-27b", "env": ENV, "search": True,
            "sglang_version": "0.5.23"}
    f = tmp_path / "in.jsonl"
    f.write_text(json.dumps(line) + "\n", encoding="utf-8")
    main(["--batch", str(f)])
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert "recommendation" not in out and SEARCH_SKIPPED in out["notes"]
    # without the variable the same line searches
    f.write_text(json.dumps({**line, "env": {}}) + "\n", encoding="utf-8")
    main(["--batch", str(f)])
    assert "recommendation" in json.loads(capsys.readouterr().out.strip().splitlines()[-1])
