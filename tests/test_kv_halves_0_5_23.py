"""SGLang 0.5.23 keeps K and V as the two halves of one tensor per layer but reports them apart.

The pool is one (2, rows, heads, dim) tensor per layer (srt/mem_cache/memory_pool.py:2630-2645 @0.5.23);
``get_kv_size_bytes`` sizes the ``k_buffer`` and ``v_buffer`` views (:2753-2767) and the boot log prints
"KV Cache is allocated. dtype: ..., #tokens: N, K size: X GB, V size: Y GB" (:2082-2091). The planner's pools,
its summary (``--json``) and ``plan check`` must say the same. The log here is written from SGLang 0.5.23's
format strings with the figures of the oracle's own result for the golden case ``seed_fix_mrr4``
(tests/golden/sglang-0.5.23/results.jsonl): the numbers are SGLang's, not the planner's.
"""

from __future__ import annotations

import json
from pathlib import Path

from planner.catalog.catalog import resolve_model
from planner.engines.sglang.check import check
from planner.hardware.profiles import find_profile
from planner.logs import parse_file
from planner.engines.sglang.plan import make_plan
from planner.engines.sglang.summary import build_summary

GOLDEN = Path(__file__).parent / "golden" / "sglang-0.5.23"
GB = 1 << 30  # SGLang's "GB" is 2^30 bytes


def _golden(cid: str) -> tuple[dict, dict]:
    case = next(json.loads(x) for x in (GOLDEN / "cases.jsonl").read_text().splitlines() if x.strip()
                and json.loads(x)["id"] == cid)
    res = next(json.loads(x)["summary"] for x in (GOLDEN / "results.jsonl").read_text().splitlines()
               if x.strip() and json.loads(x)["id"] == cid)
    return case, res


def _kv_line(k: int, v: int, n: int) -> str:
    # srt/mem_cache/memory_pool.py:2086-2091 @0.5.23
    return (f"KV Cache is allocated. dtype: torch.bfloat16, #tokens: {n}, K size: {k / GB:.2f} GB, "
            f"V size: {v / GB:.2f} GB")


def _log_from_oracle(e: dict) -> str:
    args = {"model_path": "Qwen/Qwen3.6-27B", "tp_size": 1, "mem_fraction_static": e["mem_fraction_static"],
            "page_size": e["page_size"], "chunked_prefill_size": e["chunked_prefill_size"],
            "max_running_requests": e["server_args_max_running_requests"],
            "max_mamba_cache_size": e["max_mamba_cache_size"], "mamba_full_memory_ratio": e["mamba_full_memory_ratio"],
            "mamba_radix_cache_strategy": e["mamba_scheduler_strategy"], "speculative_algorithm": "EAGLE",
            "speculative_num_steps": e["speculative_num_steps"], "speculative_eagle_topk": e["speculative_eagle_topk"],
            "speculative_num_draft_tokens": e["speculative_num_draft_tokens"]}
    n = e["max_total_num_tokens"]
    lines = [
        f"server_args={args!r}",  # srt/entrypoints/engine.py:311 @0.5.23
        f"Load weight begin. avail mem={e['pre_model_load_gib']:.2f} GB",  # model_runner.py:1274
        "Load weight end. elapsed=60.00 s, type=Qwen3_5ForConditionalGeneration, avail mem=44.00 GB, mem usage=51.00 GB.",
        "Load weight begin. avail mem=44.00 GB",
        "Load weight end. elapsed=5.00 s, type=Qwen3_5ForCausalLMMTP, avail mem=43.20 GB, mem usage=0.80 GB.",
        _kv_line(e["pool_kv_k_bytes"], e["pool_kv_v_bytes"], n),
        _kv_line(e["pool_draft_kv_k_bytes"], e["pool_draft_kv_v_bytes"], n),
        f"max_total_num_tokens={n}, chunked_prefill_size={e['chunked_prefill_size']}, max_prefill_tokens="
        f"{e['max_prefill_tokens']}, max_running_requests={e['max_running_requests']}, context_len={e['context_len']}, "
        "available_gpu_mem=10.00 GB",  # managers/scheduler.py:1268-1276
    ]
    return "".join(f"[2026-12-02 03:00:{i:02d}] {x}\n" for i, x in enumerate(lines))


def test_planner_reports_k_and_v_halves_as_sglang_does():
    case, e = _golden("seed_fix_mrr4")
    assert e["pool_kv_k_bytes"] == e["pool_kv_v_bytes"] > 0 and e["pool_draft_kv_k_bytes"] == e["pool_draft_kv_v_bytes"] > 0
    plan = make_plan(find_profile(case["gpu"]), resolve_model(case["planner_model"]), case["flags"], {},
                     case["free_before_gib"], case["free_after_gib"], version="0.5.23")
    got = build_summary(plan)
    for f in ("pool_kv_k_bytes", "pool_kv_v_bytes", "pool_draft_kv_k_bytes", "pool_draft_kv_v_bytes", "pool_total_bytes"):
        assert got[f] == e[f], f
    line = next(x for x in plan.pools.lines if x.key == "kv_v")
    assert line.bytes == e["pool_kv_v_bytes"] and "V half of one (2, rows, heads, dim) tensor" in line.formula


def test_plan_check_agrees_with_a_0_5_23_kv_line(tmp_path):
    _, e = _golden("seed_fix_mrr4")
    log = tmp_path / "sglang-0.5.23-seed.log"
    log.write_text(_log_from_oracle(e))
    res = check(parse_file(log), find_profile("rtxpro6000"), "qwen3.6-27b", [], version="0.5.23")
    # 0.5.14+ names the field mamba_radix_cache_strategy: it is passed back under its own flag
    assert res.flags[res.flags.index("--mamba-radix-cache-strategy") + 1] == "extra_buffer"
    rows = {r.what: r for r in res.rows}
    for what in ("KV #tokens (max_total_num_tokens)", "KV K", "KV V", "draft KV K", "draft KV V"):
        assert rows[what].agrees, (what, rows[what].predicted, rows[what].actual)
    assert rows["KV V"].actual == round(e["pool_kv_v_bytes"] / GB, 2) > 0
