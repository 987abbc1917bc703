"""SGLang 0.5.17-0.5.19: the pools' padding rows are charged, multimodal models keep a KV reserve.

0.5.17 (vs 0.5.16):
* ``_handle_max_mamba_cache`` charges the padding row of each pool: ``(K + 1) x S`` for the states and
  ``(min(R, K // ratio) + 1) x D x S`` for the speculative intermediates; the joint solve becomes
  ``K = (B - S (1 + D)) // (S (1 + D / ratio))`` and, without spec, ``(B - S) // S``
  (srt/mem_cache/kv_cache_configurator.py:1816-1982 @0.5.17, :2210-2376 @0.5.19).
* ``SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK`` lowers the ratio by one (no_buffer stays 3)
  (kv_cache_configurator.py:1659-1688 @0.5.17).
* ``extra_buffer_lazy`` is allowed with speculative decoding (srt/server_args.py:5584-5623 @0.5.17).
* The prefill-graph capture list is no longer clamped to --context-length
  (srt/model_executor/runner/prefill_cuda_graph_runner.py:1162-1168 @0.5.17); NemotronH loses the
  breakable prefill graph in this release only (srt/server_args.py:4452-4522 @0.5.17).
* trtllm_mha keeps page 128 (srt/arg_groups/overrides.py:2030-2107 @0.5.17); SM100 picks fa4 for
  models with different K and V head sizes (srt/server_args.py:5697-5701 @0.5.17).
* New ValueErrors for --mamba-max-states-per-path and --linear-attn-verify-backend
  (srt/server_args.py:5955-5959, 6083-6096 @0.5.17).

0.5.18: multimodal models keep SGLANG_VLM_CACHE_SIZE_MB (100) of the KV budget, plus
SGLANG_MM_FEATURE_CACHE_MB with GPU feature transport (srt/mem_cache/kv_cache_configurator.py:130-147,
1764-1811 @0.5.18); the Blackwell hybrid-GDN message names both phases (srt/layers/attention/attention_registry.py
@0.5.18); NemotronH has the breakable prefill graph again (srt/server_args.py:4666-4717
@0.5.18); --language-model-only is refused for our models (srt/server_args.py:7657-7686 @0.5.18).

0.5.19: ServerArgs resolution moves to srt/arg_groups/ (same decisions); NemotronH gets Blackwell
defaults and loses its triton assert (srt/arg_groups/model_overrides/nemotron_h.py:97-123 @0.5.19);
trtllm_mha prefill is allowed on SM90 and SM120 (srt/arg_groups/attention_hook.py:131-157 @0.5.19).
"""

from __future__ import annotations

from dataclasses import replace

from planner.engines.sglang.rules.v0_5_14 import V0_5_16

V0_5_17 = replace(
    V0_5_16, version="0.5.17", flags="v0_5_17", padding_slots=True, skip_decode_lock_env=True, lazy_with_spec=True,
    prefill_ctx_clamp=False, nemotron_no_breakable=True, trtllm_page128=True, asym_kv_fa4=True, max_states_per_path_check=True,
    verify_backend_check=True,
    unified_mode="v0_5_17", unified_init_typeerror=False, replayssm="per_slot",
    dspark_replayssm_kda_check="kimi_linear",
)
V0_5_17 = replace(V0_5_17, draft_mtp_rewrite_qwen3_5_text=True, draft_context_is_targets=False)  # --- STANDALONE --- (draft config rewrites)
V0_5_18 = replace(V0_5_17, version="0.5.18", flags="v0_5_18", mm_kv_reserve=True, nemotron_no_breakable=False,
                  language_model_only_check=True, gdn_blackwell="v0_5_18", unified_mode="v0_5_18",
                  dspark_draft_cell="geometry")
# DFLASH: the draft's KV term of the cell from the draft's own geometry (sgl-project/sglang#34234;
# model_runner_components/spec_aux_hidden_state.py:175-223, model_executor/pool_configurator.py:86-100, 215-233 @0.5.18)
V0_5_18 = replace(V0_5_18, dflash_draft_cell_own_geometry=True, dflash_draft_backend="0.5.18")
V0_5_18 = replace(V0_5_18, draft_nextn_on_text_config=True, draft_context_is_targets=True)  # --- STANDALONE --- (draft nextn on hf_text_config)
V0_5_19 = replace(V0_5_18, version="0.5.19", flags="v0_5_19", nemotron_blackwell_defaults=True,
                  nemotron_triton_check_first=False,
                  trtllm_prefill_sm90_sm120=True, unified_mode="v0_5_19", unified_budget_total=True, unified_pad=True,
                  unified_tables=False, unified_refuses_prefill_graph=True, dspark_nemotron_capture=True)

RELEASES = {r.version: r for r in (V0_5_17, V0_5_18, V0_5_19)}
