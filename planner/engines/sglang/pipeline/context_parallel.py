"""Decode context parallel (--dcp-size) on SGLang 0.5.22 / 0.5.23: the per-rank rules verified against SGLang's own
code with the oracle (tests/golden/cp/sglang-0.5.2{2,3}, scripts/oracle/cp_cases.py). Pure: no I/O.

NOT wired into the plan yet: --dcp-size > 1 (and --attn-cp-size / --enable-prefill-cp /
--enable-nsa-prefill-context-parallel) stay refused by name (flag_audit.toml "context parallelism"), because the
sizing chain also changes in ways the pipeline does not model yet:
- the breakable prefill CUDA graph is turned off by dcp_size > 1 (arg_groups/cuda_graph_hook.py:212-216 @0.5.23),
  which moves mem_fraction_static (0.812 -> 0.818 on H100 tp 8, golden qwen3-32b_h100-sxm_tp8_dcp{1,2}_default);
- the KV index space is widened by dcp (kv_cache_configurator.py:411-414, 2249-2253 @0.5.23) and the allocator's
  page is page_size * dcp (mem_cache/allocation_sizing.py:25 @0.5.23).
What this module states is what tests/test_context_parallel.py checks against the goldens.
"""
from __future__ import annotations

# Releases whose argparse has --dcp-size (planner/engines/sglang/flags/v0_5_*.json): 0.5.15-0.5.23.
# Verified against the oracle: 0.5.22 and 0.5.23 (get_num_kv_heads is configs/model_config.py:1591-1602 @0.5.22).
DCP_VERIFIED_RELEASES = ("0.5.22", "0.5.23")


def dcp_kv_heads(total_kv_heads: int, attn_tp_size: int, dcp_size: int = 1, is_draft: bool = False) -> int:
    """KV heads one rank holds: DCP ranks replicate KV, so heads shard over attn_tp // dcp groups; a draft never
    joins the group; at least one head (ModelConfig.get_num_kv_heads, configs/model_config.py:1700-1711 @0.5.23;
    the KV configurator calls it with attn_tp_size and attn_dcp_size, mem_cache/kv_cache_configurator.py:1048)."""
    if dcp_size < 1 or attn_tp_size % dcp_size:
        raise ValueError(f"--dcp-size {dcp_size} must divide --tp-size {attn_tp_size}")  # attention_hook.py:64-65
    if is_draft:
        dcp_size = 1
    return max(1, total_kv_heads // (attn_tp_size // dcp_size))


def dcp_cell_scale(total_kv_heads: int, attn_tp_size: int, dcp_size: int) -> tuple[int, int]:
    """(numerator, denominator) of the target KV cell at dcp_size over the cell without DCP, as integers."""
    return dcp_kv_heads(total_kv_heads, attn_tp_size, dcp_size), dcp_kv_heads(total_kv_heads, attn_tp_size, 1)


def dcp_logical_tokens(max_total_num_tokens: int, dcp_size: int) -> int:
    """Token ids the allocator hands out: each rank stores max_total_num_tokens physical slots, the locs span
    max_total_num_tokens * attn_dcp_size (kv_cache_configurator.py:411-414, 536-540 @0.5.23)."""
    return max_total_num_tokens * dcp_size


def dcp_allocator_page(page_size: int, dcp_size: int) -> int:
    """The KV allocator's page: page_size * attn_dcp_size (mem_cache/allocation_sizing.py:25 @0.5.23)."""
    return page_size * dcp_size
