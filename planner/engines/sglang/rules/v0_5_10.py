"""SGLang 0.5.10-0.5.12: the "classic" sizing of ``model_runner_kv_cache_mixin`` (0.5.11 is the pipeline's
own reference, so its switches are all at their defaults).

* 0.5.10: the same sizing arithmetic as 0.5.11 (handle_max_mamba_cache, cell size, token alignment and
  _resolve_max_num_reqs are line-identical: …kv_cache_mixin.py:144-239, 808-862 @0.5.10), with these
  differences (the "up to 0.5.10" switches of Rules): SGLANG_ENABLE_SPEC_V2 defaults to False (srt/environ.py:442 @0.5.10)
  and under EAGLE it forces the overlap schedule on or off (srt/server_args.py:2999-3019 @0.5.10); the
  piecewise CUDA graph is off under any speculative algorithm (srt/server_args.py:1088-1090 @0.5.10);
  req_to_token has R rows, not R + 1 (srt/mem_cache/memory_pool.py:145 @0.5.10), and the request->mamba
  mapping and ping-pong buffers have M rows (:511-521 @0.5.10); no_buffer with the radix cache keeps the
  page size (the MambaRadixCache assert fires at scheduler start, srt/mem_cache/mamba_radix_cache.py:435-438
  @0.5.10); FlashInfer GDN decode with no_buffer is a ValueError (srt/server_args.py:2152-2163 @0.5.10);
  "Not enough memory" names the fraction (…kv_cache_mixin.py:54-60 @0.5.10).

* 0.5.11: ``srt/model_executor/model_runner_kv_cache_mixin.py`` and ``pool_configurator.py`` @0.5.11.
* 0.5.12: the sizing code is 0.5.11's (kv_cache_mixin, pool_configurator, memory_pool unchanged for these
  models); ``--speculative-algorithm`` became a free string looked up in a registry
  (srt/server_args.py _handle_speculative_decoding @0.5.12, srt/speculative/spec_info.py:47-60 @0.5.16).
"""

from __future__ import annotations

from dataclasses import replace

from planner.engines.sglang.rules import Rules

V0_5_11 = Rules(version="0.5.11", flags="v0_5_11")
V0_5_10 = replace(
    V0_5_11, version="0.5.10", flags="v0_5_10", spec_v2_default_off=True, spec_disables_piecewise_graph=True,
    request_pool_padding_row=False, no_buffer_page1_asserted_late=True, flashinfer_gdn_no_buffer_error=True,
    sm100_auto_flashinfer_linear_decode=False, oom_message_names_fraction=True,
)
# 0.5.9: 0.5.10's spec-v2 and pool-row rules plus its own (the "0.5.9 only" switches of Rules); the sizing
# arithmetic (profile_max_num_token, handle_max_mamba_cache, the cell) is 0.5.10's (…kv_cache_mixin.py:116-211 @0.5.9)
V0_5_9 = replace(
    V0_5_10, version="0.5.9", flags="v0_5_9", gdn_blackwell="v0_5_9", piecewise_graph_opt_in=True, spec_reserve_gib=2,
    graph_bs_appends_max=False, request_pools_sized_separately=True, extra_buffer_ratio_by_spec=True,
    pingpong_width_by_draft=True, spec_no_buffer_disables_radix=True, extra_buffer_needs_radix=False,
    qwen_hybrid_sm100_trtllm=False, trtllm_mha_sm100_only=True, fa4_page_without_sm100=True, oom_message_fstring=True,
)
# --- NGRAM --- 0.5.9: D defaults to --speculative-ngram-max-match-window-size (srt/server_args.py:2476-2479 @0.5.9);
# the trie node is 168 B up to 0.5.10
V0_5_9 = replace(V0_5_9, ngram_draft_tokens_from_window=True, ngram_trie_node_bytes=168)
# quantized checkpoints: a config.json ModelOpt block stays "modelopt" = ModelOptFp8Config, and the Qwen3-VL base class
# keeps no quant config (srt/layers/quantization/modelopt_quant.py:460-465, srt/models/qwen3_vl.py:773-800 @0.5.9)
V0_5_9 = replace(V0_5_9, modelopt_config_json="v0_5_9", vl_model_keeps_quant_config=False)
V0_5_10 = replace(V0_5_10, ngram_trie_node_bytes=168)  # no TrieNode.version yet (jit_kernel/csrc/ngram_corpus/trie.h:17-32 @0.5.10)
V0_5_12 = replace(V0_5_11, version="0.5.12", flags="v0_5_12", spec_algo_registry=True)

RELEASES = {r.version: r for r in (V0_5_9, V0_5_10, V0_5_11, V0_5_12)}
