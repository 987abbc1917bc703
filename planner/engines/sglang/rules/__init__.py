"""What differs between SGLang releases, as switches on one shared pipeline.

Each supported release maps to a :class:`Rules` value. The pipeline in ``pipeline/`` is written
against 0.5.11 (its citations say ``@0.5.11``); every switch below is named for the behaviour it
decides and its comment names the release where that changed and the source line in that release
(docs/release-rules.md lists them per release: ``python -m planner.engines.sglang.rules.table``).
The releases themselves are defined in one
module per range that behaves alike, each from its predecessor: ``v0_5_10.py`` (0.5.9-0.5.12),
``v0_5_13.py``, ``v0_5_14.py`` (0.5.14-0.5.16), ``v0_5_17.py`` (0.5.17-0.5.19), ``v0_5_20.py``
(0.5.20-0.5.23). A release not listed is refused by ``--sglang-version`` instead of guessed.

Sources: the released wheels (``pip download --no-deps sglang==X``), read at the cited lines, and
``shared/reference/sglang-versions.md`` as the map. Every release is also checked field by field against
SGLang's own code run by the sglang-oracle, through its adapters or ours (tests/golden/sglang-<release>/,
scripts/oracle/adapters/), and each switch by worked cases (tests/test_release_rules.py).
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class Rules:
    version: str
    flags: str  # flags/<this>.json: the release's own argparse
    # 0.5.14 renamed --mamba-scheduler-strategy -> --mamba-radix-cache-strategy and
    # --cuda-graph-max-bs -> --cuda-graph-max-bs-decode (old names kept as deprecated aliases
    # until 0.5.20): srt/server_args.py:6350-6359 @0.5.14
    strategy_key: str = "mamba_scheduler_strategy"
    graph_max_bs_key: str = "cuda_graph_max_bs"
    graph_bs_key: str = "cuda_graph_bs"
    # 0.5.14+: `auto` resolves to extra_buffer when overlap is on or page_size > 1 and the arch
    # supports it (srt/arg_groups/overrides.py:1159-1200 @0.5.16); before: auto -> no_buffer
    # (srt/server_args.py:1079-1082 @0.5.11)
    auto_extra_buffer: bool = False
    # 0.5.14+: CudaGraphConfig with a prefill backend (breakable on CUDA since 0.5.15) and
    # reserve_for_graph_mb; no speculative term in the mem_fraction heuristic
    # (srt/server_args.py:3572-3700, 3900-4210 @0.5.16)
    cuda_graph_config: bool = False
    # SGLANG_ENABLE_SPEC_V2 decides overlap under EAGLE (srt/server_args.py:3461-3473 @0.5.11);
    # removed in 0.5.14 (srt/arg_groups/speculative_hook.py:495-520 @0.5.16 keeps overlap)
    spec_v2_env: bool = True
    # how handle_max_mamba_cache charges speculative intermediates:
    # "classic": S x R_args x D before the ratio split (…kv_cache_mixin.py:72-131 @0.5.11)
    # "joint": inside the mamba share, S x min(R_args, M // ratio) x D
    #          (srt/mem_cache/kv_cache_configurator.py:1703-1814 @0.5.16)
    mamba_solve: str = "classic"
    # a user --max-running-requests is capped by the token estimate (…kv_cache_mixin.py:698-717 @0.5.11)
    # or only by tokens // 2 (srt/mem_cache/kv_cache_configurator.py:1622-1659 @0.5.16)
    cap_running_by_estimate: bool = True
    # 0.5.13+: RuntimeErrors for M <= 0 and for no servable request
    # (kv_cache_configurator.py:1645-1654, 1793-1804 @0.5.16)
    zero_checks: bool = False
    # 0.5.14+: ValueError when the loaded weights leave nothing (kv_cache_configurator.py:1549-1568 @0.5.16)
    weights_check: bool = False
    # 0.5.17+: the pools' padding rows are charged: (M + 1) x S and (min(R, M // ratio) + 1) x D x S,
    # and the joint solve subtracts them first (srt/mem_cache/kv_cache_configurator.py:2210-2355 @0.5.19)
    padding_slots: bool = False
    # --- 0.5.9 only (0.5.10 changed each of these) ---
    # 0.5.9: the piecewise CUDA graph is opt-in (--enable-piecewise-cuda-graph, srt/server_args.py:604 @0.5.9),
    # never auto-disabled (:703-798), and its max tokens is chunked_prefill_size with no other cap (:1006-1013)
    piecewise_graph_opt_in: bool = False
    # 0.5.9: the speculative term of mem_fraction_static is 2 GiB, 4 from 0.5.10 (srt/server_args.py:1051-1057 @0.5.9)
    spec_reserve_gib: int = 4
    # 0.5.10+: the decode graph list appends max_bs when it misses it; 0.5.9 does not
    # (srt/server_args.py:1079-1107 @0.5.9, :1497-1528 @0.5.11)
    graph_bs_appends_max: bool = True
    # 0.5.9: init_memory_pool sizes the request pools for R_pool, the unaligned uncapped count
    # (…kv_cache_mixin.py:339-419 @0.5.9; model_runner.py:593-600 @0.5.9)
    request_pools_sized_separately: bool = False
    # 0.5.9: the extra_buffer mamba ratio is 3 + (1 if spec else 2) (…kv_cache_mixin.py:355-365 @0.5.9)
    extra_buffer_ratio_by_spec: bool = False
    # 0.5.9: the ping-pong buffer is 2 wide without draft tokens, else 1 (srt/mem_cache/memory_pool.py:453-455 @0.5.9)
    pingpong_width_by_draft: bool = False
    # 0.5.9: spec + no_buffer turns the radix cache off instead of a ValueError (srt/server_args.py:1760-1764 @0.5.9)
    spec_no_buffer_disables_radix: bool = False
    # 0.5.10+: extra_buffer with the radix cache off is a ValueError; 0.5.9 accepts it
    # (srt/server_args.py:1728-1745 @0.5.9, :2393-2399 @0.5.11)
    extra_buffer_needs_radix: bool = True
    # 0.5.10+: Qwen3.5/Next on SM100 may default to trtllm_mha; 0.5.9 always triton (srt/server_args.py:1579-1605 @0.5.9)
    qwen_hybrid_sm100_trtllm: bool = True
    # 0.5.9: trtllm_mha needs SM100 for any role (srt/server_args.py:1894-1908 @0.5.9), and fa4 forces page 128
    # without an SM100 check (:1917-1921 @0.5.9)
    trtllm_mha_sm100_only: bool = False
    fa4_page_without_sm100: bool = False
    # 0.5.9: "Not enough memory" is an f-string with {self.server_args.mem_fraction_static=}
    # (…kv_cache_mixin.py:415-419 @0.5.9)
    oom_message_fstring: bool = False
    # --- up to 0.5.10 (0.5.11 changed each of these) ---
    # <= 0.5.10: SGLANG_ENABLE_SPEC_V2 defaults to False and, under EAGLE, forces the overlap schedule on
    # (env on; topk > 1 is then a ValueError) or off (srt/server_args.py:2999-3019, srt/environ.py:442 @0.5.10)
    spec_v2_default_off: bool = False
    # <= 0.5.10: the piecewise CUDA graph is off for any speculative algorithm (srt/server_args.py:1088-1090
    # @0.5.10), and --debug-cuda-graph does not turn it off
    spec_disables_piecewise_graph: bool = False
    # 0.5.11+: req_to_token has R + 1 rows and the request->mamba mappings R + 1; <= 0.5.10: R and M rows
    # (srt/mem_cache/memory_pool.py:145, 511-521 @0.5.10)
    request_pool_padding_row: bool = True
    # <= 0.5.10: no_buffer + radix does not force page 1; MambaRadixCache asserts it at scheduler start
    # (srt/mem_cache/mamba_radix_cache.py:435-438 @0.5.10); 0.5.11 forces page 1 (srt/server_args.py:2420-2426 @0.5.11)
    no_buffer_page1_asserted_late: bool = False
    # <= 0.5.10: FlashInfer GDN decode + no_buffer is a ValueError (srt/server_args.py:2152-2163 @0.5.10)
    flashinfer_gdn_no_buffer_error: bool = False
    # 0.5.11+: SM100 with a bf16 ssm state defaults the linear decode backend to flashinfer
    # (srt/server_args.py:2864-2874 @0.5.11)
    sm100_auto_flashinfer_linear_decode: bool = True
    # <= 0.5.10: "Not enough memory" names the fraction, and the request count and mamba ratio are computed
    # before MemoryPoolConfig raises (…kv_cache_mixin.py:54-60, 871-891 @0.5.10)
    oom_message_names_fraction: bool = False
    # 0.5.14-0.5.16: the prefill-graph capture list is clamped to --context-length
    # (srt/server_args.py:4038-4045 @0.5.16); 0.5.17 drops the clamp (prefill_cuda_graph_runner.py:1162-1168 @0.5.17)
    prefill_ctx_clamp: bool = True
    # 0.5.17 only: NemotronH loses the breakable prefill graph (srt/server_args.py:4452-4522 @0.5.17)
    nemotron_no_breakable: bool = False
    # 0.5.17+: trtllm_mha keeps page 128 (16/32/64/128; srt/arg_groups/overrides.py:2030-2107 @0.5.17)
    trtllm_page128: bool = False
    # 0.5.17+: SM100 picks fa4 for models whose K and V head sizes differ (srt/server_args.py:5699-5701 @0.5.17)
    asym_kv_fa4: bool = False
    # 0.5.15+: any fa4 role on SM100 with topk <= 1 forces page 128 (_fa4_page_constraint,
    # srt/arg_groups/overrides.py:1675-1693 @0.5.15); before: only --prefill-attention-backend fa4
    fa4_page_any: bool = False
    # 0.5.17+: --mamba-max-states-per-path and --linear-attn-verify-backend checks
    # (srt/server_args.py:5955-5959, 6083-6096 @0.5.17)
    max_states_per_path_check: bool = False
    verify_backend_check: bool = False
    # 0.5.18+: --language-model-only is a ValueError for all but MuseGlimmer (srt/server_args.py:7657-7686 @0.5.18)
    language_model_only_check: bool = False
    # 0.5.19+: NemotronH's Blackwell defaults (trtllm_mha + page 64 on SM100, triton with spec elsewhere) and no
    # triton assert (srt/arg_groups/model_overrides/nemotron_h.py:97-123 @0.5.19)
    nemotron_blackwell_defaults: bool = False
    # 0.5.15-0.5.18: NemotronH's triton assertion runs in _handle_model_specific_adjustments before its
    # _handle_mamba_radix_cache call (srt/server_args.py:4175-4182, 4224 @0.5.15; :5719-5726, 5795 @0.5.18): NemotronH
    # is not in the linear-attention registry's pre-dispatch; 0.5.13-0.5.14's nemotron_h_hook.py resolves the radix
    # cache first (srt/arg_groups/nemotron_h_hook.py:63-67 @0.5.14)
    nemotron_triton_check_first: bool = False
    # 0.5.19+: trtllm_mha prefill also on SM90/SM120 (srt/arg_groups/attention_hook.py:131-157 @0.5.19)
    trtllm_prefill_sm90_sm120: bool = False
    # 0.5.14+: tp_worker's pool checks run in alloc_memory_pool, before the attention backend and the CUDA
    # graphs, and "Memory pool size is too small" drops the - 5 (srt/managers/tp_worker.py:336-341 @0.5.14)
    tp_worker_checks_first: bool = False
    # hybrid-GDN attention backends on Blackwell: "v0_5_11" one list for all
    # (srt/layers/attention/attention_registry.py:233-238 @0.5.11); "v0_5_16" SM100 {triton, trtllm_mha, fa4},
    # SM120 {triton, trtllm_mha, flashinfer} (:333-351 @0.5.16); "v0_5_18" the same with the per-phase message;
    # "v0_5_21" SM100 also flashinfer (:441 @0.5.21)
    gdn_blackwell: str = "v0_5_11"
    # 0.5.20+: the 20-35 GiB tier is chunked prefill 4096, decode graph 48 / 160 (srt/arg_groups/memory_hook.py:101-117
    # @0.5.20); (--mamba-full-memory-ratio / --swa-full-tokens-ratio become Optional with fallbacks 0.9 / 0.8,
    # srt/arg_groups/fields/schedule.py:152-163, 203-210 @0.5.20: the same numbers, no switch)
    tier_20_35_gib_4096: bool = False
    # 0.5.20+: a path-less EAGLE/NEXTN draft takes its KV layers from the target's num_nextn_predict_layers
    # (model_runner_components/spec_aux_hidden_state.py:74-107 @0.5.20)
    pathless_draft_layers_from_target: bool = False
    # 0.5.19 only: --enable-unified-memory refuses a prefill CUDA graph (srt/arg_groups/kv_cache_hook.py:265-283 @0.5.19)
    unified_refuses_prefill_graph: bool = False
    # 0.5.21+: an explicit extra_buffer strategy on a model without mamba state is a ValueError
    # (srt/arg_groups/model_hook.py:947-954 @0.5.21)
    strategy_needs_mamba: bool = False
    # 0.5.20+: on a large Hopper GPU, Qwen3-VL's default decode graph max_bs is raised to an explicit
    # --max-running-requests of at most 512 (srt/arg_groups/model_overrides/qwen3_vl.py:34-62,
    # srt/arg_groups/memory_hook.py:190-196 @0.5.22; :181-187 @0.5.20)
    qwen3_vl_graph_to_mrr: bool = False
    # 0.5.22+: the default decode graph max_bs is clipped to an explicit --max-running-requests
    # (srt/arg_groups/memory_hook.py:83, 182-188 @0.5.22)
    graph_max_bs_clipped_to_mrr: bool = False
    # 0.5.22+: tc_piecewise is gone (srt/model_executor/cuda_graph_config.py:237-243 @0.5.23)
    tc_piecewise_removed: bool = False
    # 0.5.22+: the draft KV term is cell + int(cell x Ld / L), before int(cell x (1 + Ld / L))
    # (srt/model_executor/pool_configurator.py:305-308 @0.5.22)
    draft_cell_term_rounded_alone: bool = False
    # 0.5.23: max(1, R // dp) wherever max_running_requests is used in sizing
    # (srt/mem_cache/kv_cache_configurator.py:3128, 3284, 3316, 3332-3334, 3373 @0.5.23)
    min_one_running: bool = False
    # ReplaySSM (GDN, --enable-linear-replayssm[-spec]): "" not modelled (<= 0.5.16, refused); "per_slot" (0.5.17-0.5.19:
    # the verify ring rides on every mamba slot, record length = draft tokens,
    # srt/mem_cache/kv_cache_configurator.py:2235-2265, 2344-2350, 2371-2374 @0.5.19); "fixed" (0.5.20+: a
    # (R + 1)-request scratch of --linear-replayssm-cache-len, kv_cache_configurator.py:2406-2428, 2509-2539 @0.5.20)
    replayssm: str = ""
    # 0.5.23: one (2, rows, heads, dim) tensor per layer when K and V rows are equal
    # (srt/mem_cache/memory_pool.py:2630-2645 @0.5.23)
    kv_one_tensor: bool = False
    # --enable-unified-memory / --enable-page-major-kv-layout validation, by release (the pool itself is
    # not modelled): "v0_5_15" (srt/server_args.py:6819-6895 @0.5.16), "v0_5_17", "v0_5_18" (DSPARK-only
    # spec, srt/server_args.py:8313-8402 @0.5.18), "v0_5_19" (page-major needs unified,
    # srt/arg_groups/kv_cache_hook.py:196-303 @0.5.19), "v0_5_22" (EAGLE family allowed)
    unified_mode: str = "v0_5_15"
    # unified pool layout (srt/mem_cache/unified_memory_pool.py, per release): the buffer total comes from the
    # profiled budget, U = A - A % 4096, plus K x S (0.5.19+, :1238-1244 @0.5.19; before: N x F + K x S,
    # :1163-1166 @0.5.18); a page x F view tail pad (0.5.19-0.5.21, :346-351 @0.5.19); the K/V pointer and
    # stride tables (absent in 0.5.19-0.5.20, :596-598 @0.5.19)
    # 0.5.16 only: HybridReqToTokenPool passes enable_gdn_replayssm_spec= to the unified pool's _init_mamba_pool,
    # which does not take it (srt/mem_cache/memory_pool.py:1154, unified_memory_pool.py:746 @0.5.16)
    unified_init_typeerror: bool = False
    unified_budget_total: bool = False
    unified_pad: bool = False
    unified_tables: bool = True
    # 0.5.17+: SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK lowers the base ratio by one (no_buffer keeps 3)
    # (srt/mem_cache/kv_cache_configurator.py:2045-2073 @0.5.19)
    skip_decode_lock_env: bool = False
    # 0.5.17+: extra_buffer_lazy is allowed with speculative decoding (srt/server_args.py:5584-5623 @0.5.17)
    lazy_with_spec: bool = False
    # 0.5.18+: a multimodal model keeps SGLANG_VLM_CACHE_SIZE_MB of the KV budget
    # (srt/mem_cache/kv_cache_configurator.py:132-152 @0.5.19)
    mm_kv_reserve: bool = False
    # --- quantized checkpoints (pipeline/quant_method.py) ---
    # how a config.json ModelOpt checkpoint (quant_method "modelopt") is served: "v0_5_9" ModelOptFp8Config, a
    # ValueError for a quant_algo without FP8 unless ServerArgs picks modelopt_fp4 (SM100 Qwen3-MoE/Next/3.5, NemotronH)
    # (srt/layers/quantization/modelopt_quant.py:460-465, srt/server_args.py:1529-1600 @0.5.9); "v0_5_10" MIXED_PRECISION
    # is w4afp8 but for NemotronH (srt/configs/model_config.py:805-816 @0.5.10); "v0_5_15" modelopt_mixed when a layer is
    # NVFP4 / W4A16_NVFP4 (srt/configs/model_config.py:1148-1163 @0.5.15); w4afp8's weights are not modelled (refused
    # unless the free memory after loading is measured; then its pools are, with a bf16 KV cache, on SM >= 9.0)
    modelopt_config_json: str = "v0_5_10"
    # 0.5.15+: the flat ModelOpt config reads kv_cache_quant_algo when it has no kv_cache_scheme
    # (srt/layers/quantization/modelopt_quant.py:450-458, 662-677, 1278-1296 @0.5.15); before, only the scheme
    modelopt_flat_kv_algo_key: bool = False
    # 0.5.10+: Qwen3VLForConditionalGeneration (Qwen3-VL / Qwen3.5 / Qwen3.6 base) keeps self.quant_config
    # (srt/models/qwen3_vl.py:1076 @0.5.10); 0.5.9 does not, so --kv-cache-dtype auto is the model dtype
    # (srt/models/qwen3_vl.py:773-800 @0.5.9)
    vl_model_keeps_quant_config: bool = True
    # 0.5.14+: the conv window of the speculative intermediates is deduplicated: one
    # (D + K - 1) window instead of D windows of K - 1 (srt/mem_cache/memory_pool.py:380-410, 660-705 @0.5.16)
    conv_window_dedup: bool = False
    # ping-pong track mapping dtype: int32 (memory_pool.py:547-560 @0.5.11), int64 (memory_pool.py:1212-1219 @0.5.16)
    pingpong_bytes: int = 4
    # ReqToTokenPool.req_generation, int64 (R+1,) (srt/mem_cache/memory_pool.py:271 @0.5.16)
    req_generation: bool = False
    # req_to_token row headroom under spec with page > 1: "none" = 4 + D (…kv_cache_mixin.py:199-203
    # @0.5.11); "topk_gt1" = max(4 + D, 2 x alloc_len) for topk > 1 only (srt/mem_cache/common.py:194-210
    # @0.5.13); "page" = max(4 + D, 2 x alloc_len + page - 1) (srt/mem_cache/allocation_sizing.py:46-62 @0.5.16)
    req_to_token_headroom: str = "none"
    # 0.5.13+: extra_buffer_lazy exists and counts as extra buffer everywhere
    # (enable_mamba_extra_buffer, srt/server_args.py:7363-7364 @0.5.13)
    extra_buffer_lazy: bool = False
    # 0.5.13+: NemotronH may use extra_buffer (srt/arg_groups/nemotron_h_hook.py:58-62 @0.5.13)
    nemotron_extra_buffer: bool = False
    # 0.5.13+: the FLA_CHUNK_SIZE assert reads the model's mamba_chunk_size (srt/server_args.py:7389-7400 @0.5.13)
    chunk_size_from_model: bool = False
    # 0.5.13+: the radix-off extra_buffer ValueError gains a period (srt/server_args.py:2697-2702 @0.5.13)
    radix_off_message_period: bool = False
    # <= 0.5.12: an EAGLE topk > 1 turns overlap off (srt/server_args.py:3461-3467 @0.5.11); 0.5.13 keeps it
    # (srt/arg_groups/speculative_hook.py:289-295 @0.5.13)
    spec_topk_disables_overlap: bool = True
    # 0.5.13+: topk > 1 with page > 1 also allows triton, with a new message
    # (srt/arg_groups/speculative_hook.py:376-386 @0.5.13, :634-650 @0.5.16)
    page_tree_triton: bool = False
    # 0.5.13: the piecewise token list is clamped to --context-length (srt/server_args.py:1579-1585 @0.5.13)
    pcg_ctx_clamp: bool = False
    # prefill CUDA graph default, 0.5.14+: "tc_piecewise" (srt/model_executor/cuda_graph_config.py:90-92
    # @0.5.14) or "breakable" (0.5.15+, :95-101 @0.5.15); mm_breakable_allowlist: 0.5.16+ keeps breakable
    # for Qwen3.5/3.6 (srt/configs/model_config.py:1785-1788 @0.5.16; 0.5.15 disables every multimodal model,
    # srt/server_args.py:3374 @0.5.15)
    prefill_graph_default: str = "tc_piecewise"
    mm_breakable_allowlist: bool = False
    # <= 0.5.14: the decode-graph term is in the heuristic even with the decode graph off
    # (srt/server_args.py:1434-1482 @0.5.11, :3285 @0.5.14; 0.5.15+ only when on, :3639-3643 @0.5.15)
    decode_term_always: bool = True
    # 0.5.12+: --speculative-algorithm is a free string, upper-cased and looked up in a registry;
    # an unknown name is a ValueError (srt/server_args.py _handle_speculative_decoding @0.5.12,
    # srt/speculative/spec_info.py:47-60 @0.5.16)
    spec_algo_registry: bool = False
    # 0.5.14+: draft weights load before the target's pools are sized (free-after-load includes them)
    # (managers/scheduler.py:836-869 @0.5.14; after the pools before: managers/scheduler.py:816-818 @0.5.13)
    draft_weights_before_sizing: bool = False
    # 0.5.14+: with an EAGLE/EAGLE3/STANDALONE draft path the target cell pays for the draft's KV:
    # cell += int(cell x draft_layers / full_layers) (srt/model_executor/pool_configurator.py:259-314 @0.5.16)
    draft_layers_in_cell: bool = False
    # --- DFLASH ---
    # 0.5.11-0.5.13: DFLASH turns the overlap scheduler off (srt/server_args.py:3436-3439 @0.5.11,
    # srt/arg_groups/speculative_hook.py:238-242 @0.5.13); 0.5.14+ keeps it
    dflash_overlap_off: bool = True
    # 0.5.18+: the DFLASH draft's KV term of the target cell is the draft's own bytes/token (its layers, KV heads,
    # head dims, KV dtype) instead of the layer ratio ceil(cell x (L + Ld) / L) (sgl-project/sglang#34234;
    # srt/model_executor/model_runner_components/spec_aux_hidden_state.py:175-223 @0.5.18)
    dflash_draft_cell_own_geometry: bool = False
    # 0.5.23+: on SM100 a DFLASH launch gets the no-spec default attention backend (trtllm_mha, or fa4 for asymmetric
    # K/V) instead of flashinfer (_forces_eagle_topk_one, srt/arg_groups/model_override_base.py:268-321 @0.5.23)
    dflash_sm100_trtllm_default: bool = False
    # 0.5.16+: the DFLASH target-layer check (resolve_target_layer_ids) runs after init_torch_distributed has measured
    # the free memory (model_runner.py:323, 478 @0.5.16); before, it raised earlier in ModelRunner.__init__
    # (model_runner.py:437-460, 481 @0.5.11; :513, 538 @0.5.14)
    dflash_layer_check_after_pre_load: bool = False
    # the DFLASH draft worker's attention backend (_resolve_dflash_draft_attention_backend): "" = the target's (0.5.11-
    # 0.5.14); "0.5.15" = trtllm_mha or an unsupported one -> flashinfer (srt/arg_groups/speculative_hook.py:433-475
    # @0.5.16); "0.5.18" = trtllm_mha kept for an all-sliding / causal draft (:520-590 @0.5.18); "0.5.23" = else fa4 on
    # SM100 (srt/arg_groups/speculative_hook.py:886-990 @0.5.23)
    dflash_draft_backend: str = ""
    # 0.5.16+: an fa4 DFLASH draft keeps its KV in its own dtype, not a quantized --kv-cache-dtype
    # (srt/mem_cache/kv_cache_dtype.py:83-99 @0.5.18)
    dflash_fa4_draft_kv_model_dtype: bool = False
    # --- STANDALONE ---
    # a draft config is rewritten to its MTP class (num_nextn_predict_layers = 1): Qwen3MoeForCausalLM and
    # NemotronHPuzzleForCausalLM from 0.5.13 (srt/configs/model_config.py:477-479, 493-498 @0.5.13), the text-only
    # Qwen3_5[Moe]ForCausalLM from 0.5.17 (srt/configs/model_config.py:668-676 @0.5.17)
    draft_mtp_rewrite_qwen3_moe: bool = False
    draft_mtp_rewrite_qwen3_5_text: bool = False
    # 0.5.18+: a Qwen3.5 draft's 1 is also set on hf_text_config, which the KV cell reads
    # (srt/configs/model_config.py:726-728 @0.5.18); before, the cell counts all the draft's layers
    draft_nextn_on_text_config: bool = False
    # the draft worker's ModelConfig gets the target's context length (speculative/standalone_worker_v2.py:164
    # @0.5.9, :181 @0.5.14, :157-160 @0.5.16, :80-87 @0.5.18); 0.5.17 builds it from --context-length only
    # (speculative/standalone_worker_v2.py:70-78 @0.5.17), for EAGLE / EAGLE3 too (speculative/eagle_worker_v2.py:165-172
    # @0.5.17; found by 0.5.17's dense golden case llama8b_eagle3_ctx_rejected); DFLASH / DSPARK keep the target's
    # (speculative/draft_worker_common.py:119 @0.5.17)
    draft_context_is_targets: bool = True
    # --- DSPARK ---
    # 0.5.16+: --speculative-algorithm DSPARK exists, resolved by _handle_dspark
    # (srt/arg_groups/speculative_hook.py:276-420 @0.5.16; spec_info.py:38 @0.5.16, absent @0.5.15)
    dspark: bool = False
    # how the target cell pays for the DSPARK draft's KV (DFLASH family): "ratio" = ceil(cell x (T + L) / T)
    # over T full-attention layers and L draft layers (srt/model_executor/pool_configurator.py:154-169,
    # srt/speculative/dflash_utils.py:58-96 @0.5.16); "geometry" = cell + the draft's own per-token KV
    # (pool_configurator.py:216-233 @0.5.18, spec_aux_hidden_state.py:175-226 @0.5.18, dflash_utils.py:139-152 @0.5.18)
    dspark_draft_cell: str = "ratio"
    # 0.5.17+: --enable-linear-replayssm-spec with DSPARK on a non-KDA hybrid model is a ValueError while the hybrid
    # request pool is built; the message names "(kimi_linear)" until 0.5.20 ("kimi_linear"), not from 0.5.21 ("kda")
    # (srt/mem_cache/kv_cache_configurator.py:759-776 @0.5.17, :1119-1136 @0.5.21); "" = no such check (<= 0.5.16)
    dspark_replayssm_kda_check: str = ""
    # 0.5.19+: NemotronH captures the draft's target layers (set_dflash_layers_to_capture, models/nemotron_h.py @0.5.19);
    # before, the target's init_attention_backends raises ValueError for DSPARK on it
    # (srt/model_executor/model_runner_components/attention_backend_setup.py:55-65, model_runner.py:819-830 @0.5.16)
    dspark_nemotron_capture: bool = False
    # --- NGRAM ---
    # 0.5.9: NGRAM's default D is --speculative-ngram-max-match-window-size (srt/server_args.py:2476-2479
    # @0.5.9); 0.5.10+: 12 (srt/server_args.py:3092-3112 @0.5.10)
    ngram_draft_tokens_from_window: bool = False
    # <= 0.5.13: NGRAM turns the overlap scheduler off (srt/arg_groups/speculative_hook.py:399 @0.5.13); 0.5.14
    # drops that line (srt/arg_groups/speculative_hook.py:408-470 @0.5.14)
    ngram_disables_overlap: bool = True
    # 0.5.14+: speculative_num_steps = D // topk when not given (srt/arg_groups/speculative_hook.py:426-430 @0.5.14)
    ngram_steps_from_draft_tokens: bool = False
    # sizeof(TrieNode) of NGRAM's host-memory trie: 168 B <= 0.5.10 (srt/speculative/cpp_ngram/ngram.h:21-36 @0.5.9),
    # 176 B from 0.5.11 (+ uint64_t version, jit_kernel/csrc/ngram_corpus/trie.h:17-37 @0.5.11)
    ngram_trie_node_bytes: int = 176
    # 0.5.14+: NGRAM has no draft KV (has_draft_kv), so the decode allocation is max(steps x topk, D) even with
    # topk > 1 and page > 1 (srt/mem_cache/common.py get_alloc_len_per_decode @0.5.14, spec_info.py has_draft_kv)
    ngram_alloc_without_draft_kv: bool = False


def _releases() -> dict[str, Rules]:
    """Every modelled release, oldest first, from the per-range modules (each cites what changed)."""
    from planner.engines.sglang.rules import v0_5_10, v0_5_13, v0_5_14, v0_5_17, v0_5_20  # noqa: PLC0415

    out: dict[str, Rules] = {}
    for mod in (v0_5_10, v0_5_13, v0_5_14, v0_5_17, v0_5_20):
        out.update(mod.RELEASES)
    return out


def version_key(version: str) -> tuple[int, ...]:
    """A release's order: 0.5.9 < 0.5.10 < 0.5.10.post1 (the numeric parts; a ``.postN`` sorts by its base)."""
    return tuple(int(p) for p in version.split(".") if p.isdigit())


# Releases whose argparse the planner has (flags/*.json) but whose sizing rules are not modelled yet.
KNOWN = tuple(f"0.5.{n}" for n in range(9, 24))
RULES: dict[str, Rules] = _releases()
LATEST = max(RULES, key=version_key)


def installed_sglang() -> str | None:
    """The version of an sglang installed beside the planner, from package metadata (never imported)."""
    if not _may_have_dist("sglang"):
        return None
    from importlib import metadata  # noqa: PLC0415 - with its imports, about a fifth of numpy's import time

    try:
        return metadata.version("sglang")
    except metadata.PackageNotFoundError:
        return None


def _may_have_dist(name: str) -> bool:
    """False only when importlib.metadata cannot find ``name``: no sys.path directory holds its .dist-info /
    .egg-info, every sys.path entry is a directory (or absent), and no extra finder on sys.meta_path can list
    distributions; anything else is True (then importlib.metadata decides)."""
    if any(hasattr(f, "find_distributions") and getattr(f, "__module__", "") not in _STD_FINDERS for f in sys.meta_path):
        return True
    for entry in sys.path:
        path = entry or "."
        try:
            st = os.stat(path)
        except OSError:
            continue
        if not os.path.isdir(path):
            return True  # a zip or egg file: leave it to importlib.metadata
        try:
            if _dir_has_dist(path, st.st_mtime_ns, name):
                return True
        except OSError:
            return True
    return False


@lru_cache(maxsize=256)
def _dir_has_dist(path: str, mtime_ns: int, name: str) -> bool:  # noqa: ARG001 - mtime: an install re-scans
    """Whether directory ``path`` (as of ``mtime_ns``, like importlib.metadata's own cache) holds a
    ``name-*.dist-info`` / ``.egg-info``."""
    pat = re.compile(rf"^{re.escape(name)}([-_.].*)?\.(dist|egg)-info$", re.IGNORECASE)
    return any(pat.match(n) for n in os.listdir(path))


_STD_FINDERS = ("importlib._bootstrap_external", "_frozen_importlib_external", "importlib.machinery",
                "_frozen_importlib", "importlib._bootstrap")


def default_version() -> tuple[str, str]:
    """(version, why): the installed sglang's when it is modelled, else the latest modelled."""
    inst = installed_sglang()
    from planner.engines.sglang.post_releases import post_base, resolve_post  # noqa: PLC0415

    if post_base(inst):  # a .postN: its base's rules when the wheels agree, else refused by name
        base, note = resolve_post(inst, list(RULES))
        return base, f"the sglang {inst} installed here; {note}"
    if inst in RULES:
        return inst, f"the sglang {inst} installed here"
    if inst:
        return LATEST, f"sglang {inst} is installed but its rules are not modelled; using {LATEST}"
    return LATEST, f"no sglang installed here; the latest modelled release ({LATEST})"


def rules_for(version: str) -> Rules:
    from planner.errors import BadInput  # noqa: PLC0415

    if version in RULES:
        return RULES[version]
    from planner.engines.sglang.post_releases import post_base, resolve_post  # noqa: PLC0415

    if post_base(version):
        return RULES[resolve_post(version, list(RULES))[0]]
    if version in KNOWN:
        raise BadInput(f"--sglang-version {version}: its flags are known but its sizing rules are not modelled "
                       f"yet; modelled: {', '.join(RULES)}")
    raise BadInput(f"--sglang-version: unknown release '{version}'; modelled: {', '.join(RULES)}")


# Switches that changed together at one release and read as one change to a user (the "Other releases" notes).
_CHANGED_IN_0_5_10 = ("piecewise_graph_opt_in", "spec_reserve_gib", "graph_bs_appends_max", "request_pools_sized_separately",
          "extra_buffer_ratio_by_spec", "pingpong_width_by_draft", "spec_no_buffer_disables_radix",
          "extra_buffer_needs_radix", "qwen_hybrid_sm100_trtllm", "trtllm_mha_sm100_only", "fa4_page_without_sm100",
          "oom_message_fstring")
_CHANGED_IN_0_5_11 = ("spec_v2_default_off", "spec_disables_piecewise_graph", "request_pool_padding_row",
           "no_buffer_page1_asserted_late", "flashinfer_gdn_no_buffer_error", "sm100_auto_flashinfer_linear_decode",
           "oom_message_names_fraction")
_CHANGED_IN_0_5_13 = ("extra_buffer_lazy", "nemotron_extra_buffer", "chunk_size_from_model", "radix_off_message_period")
_CHANGED_IN_0_5_17 = ("max_states_per_path_check", "verify_backend_check")
_CHANGED_IN_0_5_19 = ("nemotron_blackwell_defaults", "trtllm_prefill_sm90_sm120")
_CHANGED_IN_0_5_20 = ("tier_20_35_gib_4096", "pathless_draft_layers_from_target", "qwen3_vl_graph_to_mrr")
_CHANGED_IN_0_5_22 = ("graph_max_bs_clipped_to_mrr", "tc_piecewise_removed", "draft_cell_term_rounded_alone")

# What each switch (or group of switches) means for a user, to say what changed between two releases.
_CHANGES: dict[str | tuple[str, ...], str] = {
    "strategy_key": "--mamba-scheduler-strategy became --mamba-radix-cache-strategy (old name an alias until 0.5.20)",
    "nemotron_triton_check_first": "NemotronH's triton-backend assertion runs before its radix-cache checks (which "
                                   "error a launch gets)",
    "auto_extra_buffer": "the default strategy 'auto' means extra_buffer when overlap is on (5 mamba slots per "
                         "running request instead of 3)",
    "cuda_graph_config": "mem_fraction_static no longer adds 4 GiB for speculative decoding, and counts the prefill "
                         "CUDA graph",
    "spec_v2_env": "SGLANG_ENABLE_SPEC_V2 is gone: EAGLE keeps the overlap schedule (also with topk > 1)",
    "mamba_solve": "the speculative intermediate states are reserved inside the mamba share, for "
                   "min(max_running_requests, M // ratio) requests instead of max_running_requests (48 by default)",
    "cap_running_by_estimate": "a --max-running-requests above the KV-based estimate is no longer cut to it",
    "zero_checks": "new startup errors when the mamba cache or the servable requests come out empty",
    "weights_check": "a new startup error when the loaded weights leave no KV budget",
    "padding_slots": "the pools' padding rows are charged: (M + 1) mamba states and (R + 1) x D intermediates",
    "mm_kv_reserve": "multimodal models keep 100 MiB of the KV budget for the embedding cache",
    _CHANGED_IN_0_5_13: "extra_buffer_lazy is added (4 mamba slots per running request with overlap) and NemotronH "
                      "may use extra_buffer",
    "spec_topk_disables_overlap": "EAGLE with topk > 1 keeps the overlap schedule (5 mamba slots instead of 4 "
                                  "with extra_buffer)",
    "prefill_graph_default": "the prefill CUDA graph defaults to breakable instead of tc_piecewise (its capture "
                             "sizes count in mem_fraction_static)",
    "mm_breakable_allowlist": "Qwen3.5/3.6 keep the breakable prefill CUDA graph (len(sizes) x 8 MiB more in "
                              "mem_fraction_static's reserve)",
    "decode_term_always": "the decode CUDA-graph term of mem_fraction_static counts only when the decode graph is on",
    "req_to_token_headroom": "req_to_token keeps more columns under speculative decoding with page > 1",
    _CHANGED_IN_0_5_10: "the request pools are sized for max_running_requests (0.5.9 sized them separately), the piecewise "
              "CUDA graph is on by default, the speculative term of mem_fraction_static grows from 2 to 4 GiB, and "
              "spec + no_buffer with the radix cache is refused instead of turning the radix cache off",
    _CHANGED_IN_0_5_11: "spec v2 is on by default (EAGLE keeps the overlap schedule: 5 mamba slots per running request with "
               "extra_buffer instead of 4), req_to_token gets its padding row and no_buffer with the radix cache "
               "forces page 1",
    "lazy_with_spec": "extra_buffer_lazy is allowed with speculative decoding",
    "prefill_ctx_clamp": "the prefill CUDA graph's capture sizes are no longer clamped to --context-length",
    "nemotron_no_breakable": "NemotronH's breakable prefill CUDA graph is switched (off in 0.5.17 only)",
    "trtllm_page128": "trtllm_mha keeps page 128",
    "asym_kv_fa4": "SM100 picks fa4 for models whose K and V head sizes differ",
    "fa4_page_any": "any fa4 attention role on SM100 forces page 128",
    _CHANGED_IN_0_5_17: "new checks for --mamba-max-states-per-path and --linear-attn-verify-backend",
    "language_model_only_check": "--language-model-only is refused for these models",
    _CHANGED_IN_0_5_19: "NemotronH gets Blackwell attention defaults (trtllm_mha and page 64 on SM100) and "
                         "trtllm_mha prefill is allowed on SM90 / SM120",
    _CHANGED_IN_0_5_20: "the deprecated --mamba-scheduler-strategy / --cuda-graph-max-bs spellings are removed and the "
               "20-35 GiB tier becomes chunked prefill 4096 with decode graphs up to 48 (160 with tp >= 4); Qwen3-VL "
               "on a large Hopper GPU captures decode graphs up to an explicit --max-running-requests (<= 512)",
    "strategy_needs_mamba": "an explicit extra_buffer strategy on a model without mamba state is refused",
    _CHANGED_IN_0_5_22: "the default decode CUDA graph max_bs is clipped to an explicit --max-running-requests "
               "(mem_fraction_static moves with it) and tc_piecewise is removed",
    "min_one_running": "--max-running-requests counts as at least 1 in the sizing",
    "gdn_blackwell": "the attention backends allowed for hybrid GDN models on Blackwell change",
    "tp_worker_checks_first": "tp_worker's pool checks run before the attention backend and drop the - 5",
    "unified_mode": "the --enable-unified-memory / --enable-page-major-kv-layout checks change",
    "conv_window_dedup": "the speculative conv window is stored once per request (D + K - 1) instead of D times",
    "draft_weights_before_sizing": "draft weights load before the pools are sized (they count against the budget)",
    "draft_layers_in_cell": "an EAGLE draft path adds the draft's KV layers to the per-token cell",
    # --- DFLASH ---
    "dflash_overlap_off": "DFLASH keeps the overlap scheduler (extra_buffer: 5 mamba slots per running request "
                          "instead of 4)",
    "dflash_draft_cell_own_geometry": "the DFLASH draft's KV is budgeted from its own layers, KV heads and head "
                                      "dims instead of as extra target layers",
    "dflash_sm100_trtllm_default": "on SM100 DFLASH gets the trtllm_mha (or fa4) default attention backend",
    # --- STANDALONE ---
    ("draft_mtp_rewrite_qwen3_moe", "draft_mtp_rewrite_qwen3_5_text"): "more draft architectures are loaded as their MTP head",
    "draft_nextn_on_text_config": "a Qwen3.5 draft's KV counts as one layer in the cell (its MTP head), not all its layers",
    "draft_context_is_targets": "whether the draft's ModelConfig must cover the target's context length",
}


_RELEVANT: dict[str | tuple[str, ...], set[str]] = {  # which plans a change can matter to: "mamba" (hybrid model), "spec", "mrr" (flag given)
    "nemotron_triton_check_first": {"mamba"},
    "strategy_key": {"mamba"}, "auto_extra_buffer": {"mamba"}, "mamba_solve": {"mamba+spec"},
    "spec_v2_env": {"spec"}, "zero_checks": {"mamba"}, "padding_slots": {"mamba"}, "mm_kv_reserve": {"mm"}, "mm_breakable_allowlist": {"mm"},
    _CHANGED_IN_0_5_13: {"mamba"}, "spec_topk_disables_overlap": {"spec"}, "req_to_token_headroom": {"spec"},
    "lazy_with_spec": {"mamba+spec"}, "nemotron_no_breakable": {"nemotron"}, "asym_kv_fa4": {"asym"},
    "fa4_page_any": {"fa4"}, _CHANGED_IN_0_5_17: {"never"}, "language_model_only_check": {"never"},
    "strategy_needs_mamba": {"dense"}, "min_one_running": {"mrr"}, "gdn_blackwell": {"gdn-blackwell"},
    "tp_worker_checks_first": {"never"}, "unified_mode": {"unified"}, "trtllm_page128": {"trtllm"}, "conv_window_dedup": {"mamba+spec"},
    "draft_weights_before_sizing": {"spec"}, "draft_layers_in_cell": {"draft"}, "cap_running_by_estimate": {"mrr"},
    "dflash_overlap_off": {"dflash"}, "dflash_draft_cell_own_geometry": {"dflash"},  # --- DFLASH ---
    "dflash_sm100_trtllm_default": {"dflash"},
    ("draft_mtp_rewrite_qwen3_moe", "draft_mtp_rewrite_qwen3_5_text"): {"draft"},  # --- STANDALONE ---
    "draft_nextn_on_text_config": {"draft"}, "draft_context_is_targets": {"draft"},
}


def changes_between(old: str, new: str, context: set[str] | None = None) -> list[str]:
    """The user-visible rule changes from release ``old`` to ``new`` (both modelled), optionally only
    those relevant to a plan with the given traits ("mamba", "spec", "mamba+spec", "mrr", "draft")."""
    a, b = RULES[old], RULES[new]
    out = []
    for key, text in _CHANGES.items():
        if all(getattr(a, k) == getattr(b, k) for k in (key if isinstance(key, tuple) else (key,))):
            continue
        need = _RELEVANT.get(key)
        if context is not None and need and not (need & context):
            continue
        out.append(text)
    return out
