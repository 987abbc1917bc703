"""SGLang 0.5.13: 0.5.12 plus the joint mamba solve and its startup errors, before 0.5.14 moved the
draft weights in front of the sizing.

* ``handle_max_mamba_cache`` solves ``K = B / (S (1 + D / ratio))`` with the speculative intermediates
  inside the mamba share, charged for ``min(R, K // ratio)`` requests
  (srt/model_executor/model_runner_kv_cache_mixin.py:82-184 @0.5.13); RuntimeErrors for ``K <= 0``
  (:167-177) and for no servable request (:895-903). No "Loaded weights leave no GPU memory" check yet:
  ``_profile_available_bytes`` is 0.5.12's (:66-80 @0.5.13).
* ``extra_buffer_lazy`` exists and counts as extra buffer (srt/server_args.py:7363-7364 @0.5.13),
  NemotronH may use extra_buffer (srt/arg_groups/nemotron_h_hook.py:58-62 @0.5.13), the chunk-size
  assert reads the model's ``mamba_chunk_size`` (srt/server_args.py:7389-7400 @0.5.13).
* The ping-pong mapping is int64 (srt/mem_cache/memory_pool.py:558-562 @0.5.13).
* req_to_token keeps ``2 x alloc_len`` columns for spec with page > 1 and topk > 1
  (srt/mem_cache/common.py:194-210 @0.5.13).
* EAGLE with topk > 1 keeps the overlap schedule (srt/arg_groups/speculative_hook.py:289-295 @0.5.13);
  topk > 1 with page > 1 also allows triton (:376-386 @0.5.13).
* The piecewise-graph token list is clamped to ``--context-length`` (srt/server_args.py:1579-1585 @0.5.13).
* Unchanged from 0.5.12: ``auto`` = no_buffer (srt/server_args.py:1225-1228 @0.5.13), the 4 / 6 GiB
  speculative term of mem_fraction_static (:1627-1633), a user --max-running-requests capped by the
  estimate (…kv_cache_mixin.py:885), no draft term in the cell size (pool_configurator.py:108-125),
  draft weights after the target's pools (managers/scheduler.py:816-818).
"""

from __future__ import annotations

from dataclasses import replace

from planner.engines.sglang.rules.v0_5_10 import V0_5_12

V0_5_13 = replace(
    V0_5_12, version="0.5.13", flags="v0_5_13", mamba_solve="joint", zero_checks=True, extra_buffer_lazy=True,
    nemotron_extra_buffer=True, chunk_size_from_model=True, radix_off_message_period=True,
    pingpong_bytes=8, req_to_token_headroom="topk_gt1", spec_topk_disables_overlap=False, page_tree_triton=True,
    pcg_ctx_clamp=True,
)
V0_5_13 = replace(V0_5_13, draft_mtp_rewrite_qwen3_moe=True)  # --- STANDALONE --- (draft config rewrites)

RELEASES = {"0.5.13": V0_5_13}
