"""SGLang 0.5.14-0.5.16: the draft weights are loaded before the pools are sized, ``auto`` means
extra_buffer, and the CUDA-graph config replaces the piecewise flags.

0.5.14 (vs 0.5.13):
* Flag renames with deprecated aliases: --mamba-radix-cache-strategy, --cuda-graph-max-bs-decode
  (srt/server_args.py:6350-6359 @0.5.14).
* ``auto`` -> extra_buffer when overlap is on or page > 1 and the arch supports it
  (srt/server_args.py:4380-4406 @0.5.14); no_buffer's constraints become asserts.
* Draft weights before the target's pools (managers/scheduler.py:836-869 @0.5.14); no speculative term
  in mem_fraction_static; "Loaded weights leave no GPU memory" ValueError
  (…kv_cache_mixin.py:85-120 @0.5.14); cell += int(cell x draft_layers / L) with a draft path
  (pool_configurator.py:130-145 @0.5.14).
* A user --max-running-requests is capped only by tokens // 2 (…kv_cache_mixin.py:981-1018 @0.5.14).
* Deduplicated conv window of the speculative intermediates (srt/mem_cache/memory_pool.py:93-110,
  438-497 @0.5.14).
* Prefill CUDA graph defaults to tc_piecewise (srt/model_executor/cuda_graph_config.py:90-92 @0.5.14),
  so Qwen3-Next (blacklisted) and Qwen3.5/3.6 (multimodal) get no prefill-graph term; the decode-graph
  term is added even with the decode graph off (srt/server_args.py:3285 @0.5.14).

0.5.15: the prefill graph defaults to breakable (srt/model_executor/cuda_graph_config.py:95-101 @0.5.15),
which every multimodal model loses (srt/server_args.py:3374 @0.5.15); the decode-graph term only when the
decode graph is on (:3639-3643 @0.5.15). Sizing is line for line 0.5.14's.

0.5.16: the sizing moves to srt/mem_cache/kv_cache_configurator.py (same arithmetic); Qwen3.5/3.6 keep the
breakable prefill graph (srt/configs/model_config.py:1785-1788 @0.5.16); req_to_token keeps
``2 x alloc_len + page - 1`` columns for any spec with page > 1 (srt/mem_cache/allocation_sizing.py:46-62
@0.5.16); ReqToTokenPool gains req_generation (srt/mem_cache/memory_pool.py:271 @0.5.16); the hybrid-GDN
Blackwell check splits SM100 {triton, trtllm_mha, fa4} from SM120 {triton, trtllm_mha, flashinfer}
(srt/layers/attention/attention_registry.py:333-351 @0.5.16).

Also from 0.5.14: tp_worker's pool asserts run before the attention backend and the graphs, without the
``- 5`` (srt/managers/tp_worker.py:336-341 @0.5.14).
"""

from __future__ import annotations

from dataclasses import replace

from planner.engines.sglang.rules.v0_5_13 import V0_5_13

V0_5_14 = replace(
    V0_5_13, version="0.5.14", flags="v0_5_14", strategy_key="mamba_radix_cache_strategy",
    graph_max_bs_key="cuda_graph_max_bs_decode", graph_bs_key="cuda_graph_bs_decode",
    auto_extra_buffer=True, cuda_graph_config=True, spec_v2_env=False, cap_running_by_estimate=False,
    weights_check=True, conv_window_dedup=True, draft_weights_before_sizing=True, draft_layers_in_cell=True,
    pcg_ctx_clamp=False, tp_worker_checks_first=True,
)
# DFLASH keeps the overlap scheduler from 0.5.14 (the spec-v2 dflash_worker_v2; _handle_dflash no longer sets
# disable_overlap_schedule: srt/arg_groups/speculative_hook.py:133-246 @0.5.14)
V0_5_14 = replace(V0_5_14, dflash_overlap_off=False)
# --- NGRAM --- 0.5.14: overlap kept, steps = D // topk (srt/arg_groups/speculative_hook.py:408-430 @0.5.14)
V0_5_14 = replace(V0_5_14, ngram_disables_overlap=False, ngram_steps_from_draft_tokens=True,
                  ngram_alloc_without_draft_kv=True)
V0_5_15 = replace(V0_5_14, version="0.5.15", flags="v0_5_15", prefill_graph_default="breakable",
                  decode_term_always=False, fa4_page_any=True)
V0_5_15 = replace(V0_5_15, dflash_draft_backend="0.5.15")  # DFLASH (speculative_hook.py:240 @0.5.15)
# NemotronH: the triton assertion before the mamba radix-cache checks (srt/server_args.py:4175-4182, 4224 @0.5.15)
V0_5_15 = replace(V0_5_15, nemotron_triton_check_first=True)
# ModelOpt config.json: MIXED_PRECISION with NVFP4 layers is modelopt_mixed (srt/configs/model_config.py:1148-1163
# @0.5.15); the flat kv_cache_quant_algo key is read (srt/layers/quantization/modelopt_quant.py:458, 677, 1296 @0.5.15)
V0_5_15 = replace(V0_5_15, modelopt_config_json="v0_5_15", modelopt_flat_kv_algo_key=True)
V0_5_16 = replace(V0_5_15, version="0.5.16", flags="v0_5_16", mm_breakable_allowlist=True,
                  req_to_token_headroom="page", req_generation=True, gdn_blackwell="v0_5_16",
                  unified_init_typeerror=True, dspark=True)
# DFLASH: the target-layer check after the pre-load memory reading (model_runner.py:323, 478 @0.5.16)
V0_5_16 = replace(V0_5_16, dflash_layer_check_after_pre_load=True, dflash_fa4_draft_kv_model_dtype=True)

RELEASES = {r.version: r for r in (V0_5_14, V0_5_15, V0_5_16)}
