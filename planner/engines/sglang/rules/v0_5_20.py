"""SGLang 0.5.20-0.5.23: the deprecated spellings are gone; the latest releases.

0.5.20 (vs 0.5.19):
* --mamba-scheduler-strategy, --cuda-graph-max-bs, --cuda-graph-bs and the piecewise flags are removed
  (srt/server_args.py:406-412 @0.5.20; flags/v0_5_20.json): the old names are argparse errors.
* The 20-35 GiB tier becomes chunked prefill 4096, decode graph max_bs 48 (tp < 4) / 160
  (srt/arg_groups/memory_hook.py:101-117 @0.5.20).
* --mamba-full-memory-ratio and --swa-full-tokens-ratio are Optional with fallbacks 0.9 / 0.8
  (srt/arg_groups/fields/schedule.py:152-163, 203-210 @0.5.20): same numbers.
* A path-less EAGLE/NEXTN draft's KV layers come from the target config's num_nextn_predict_layers
  (srt/model_executor/model_runner_components/spec_aux_hidden_state.py:74-107 @0.5.20); Qwen3.5/3.6 and
  Qwen3-Next configs have none, NemotronH's default is 0.
* Qwen3-VL on a large Hopper GPU (SM90, >= 60 GiB): the default decode graph max_bs is raised to an explicit
  --max-running-requests of at most 512 (srt/arg_groups/model_overrides/qwen3_vl.py:34-62,
  srt/arg_groups/memory_hook.py:181-187 @0.5.20).

0.5.21: an explicit extra_buffer / extra_buffer_lazy on a model without mamba state is a ValueError
(srt/arg_groups/model_hook.py:947-954 @0.5.21); SM100 allows flashinfer for hybrid GDN models
(srt/layers/attention/attention_registry.py:441 @0.5.21).

0.5.22: the default decode graph max_bs is clipped to an explicit --max-running-requests
(srt/arg_groups/memory_hook.py:83, 182-188 @0.5.22); tc_piecewise is removed
(srt/model_executor/cuda_graph_config.py:237-243 @0.5.23); the draft KV term is ``cell + int(cell x Ld / L)``
(srt/model_executor/pool_configurator.py:305-308 @0.5.22); ``extra_per_slot`` joins the mamba solve but is
0 (srt/mem_cache/kv_cache_configurator.py:350 @0.5.23).

0.5.23: ``max(1, R // dp)`` in the request count, the speculative intermediates and the radix-off mamba
size (srt/mem_cache/kv_cache_configurator.py:3128, 3284, 3316, 3332-3334, 3373 @0.5.23); everything else
the planner models is 0.5.22's (ServerArgs fields in srt/arg_groups/fields/, sizing in
srt/mem_cache/kv_cache_configurator.py:2990-3409 @0.5.23).
"""

from __future__ import annotations

from dataclasses import replace

from planner.engines.sglang.rules.v0_5_17 import V0_5_19

V0_5_20 = replace(V0_5_19, version="0.5.20", flags="v0_5_20", tier_20_35_gib_4096=True, qwen3_vl_graph_to_mrr=True,
                  pathless_draft_layers_from_target=True, unified_refuses_prefill_graph=False, replayssm="fixed")
V0_5_21 = replace(V0_5_20, version="0.5.21", flags="v0_5_21", strategy_needs_mamba=True, gdn_blackwell="v0_5_21",
                  unified_tables=True, dspark_replayssm_kda_check="kda")
V0_5_22 = replace(V0_5_21, version="0.5.22", flags="v0_5_22", graph_max_bs_clipped_to_mrr=True, tc_piecewise_removed=True,
                  draft_cell_term_rounded_alone=True, unified_mode="v0_5_22", unified_pad=False)
V0_5_23 = replace(V0_5_22, version="0.5.23", flags="v0_5_23", min_one_running=True, kv_one_tensor=True)
# DFLASH counts as topk 1 for the SM100 default attention backend (trtllm_mha / fa4), since its topk is declared
# later (srt/arg_groups/model_override_base.py:268-321 @0.5.23)
V0_5_23 = replace(V0_5_23, dflash_sm100_trtllm_default=True, dflash_draft_backend="0.5.23")

RELEASES = {r.version: r for r in (V0_5_20, V0_5_21, V0_5_22, V0_5_23)}
