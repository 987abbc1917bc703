"""Evidence tables for release detection: what a log line or a ServerArgs field says about the
SGLang release that wrote it, each row cited from ``sglang-versions.md`` or SGLang's source.

Pure data; :mod:`planner.logs.messages` turns ``_TEXT_HINTS`` into :class:`VersionMarker` events
and :mod:`planner.logs.releases` combines all of them.
"""

from __future__ import annotations

_VERSIONS_MD = "sglang-versions.md"

#: (key, substring, lo, hi, citation). The presence of the substring on a line bounds the version.
_TEXT_HINTS: list[tuple[str, str, str | None, str | None, str]] = [
    ("memory_baseline_line", "Memory baseline taken", "0.5.21", None,
     f"{_VERSIONS_MD} §4 'dist-init memory' row and §3 0.5.21: 'Init torch distributed ends' replaced by 'Memory baseline taken'"),
    ("load_weight_overlap", "Committed real weights after CUDA graph capture", "0.5.18", None,
     f"{_VERSIONS_MD} §4 'Load weight end' 0.5.17-0.5.23 row (overlap startup mode from 0.5.18)"),
    ("max_concurrent_requests_log", "Max concurrent requests (per dp worker)", "0.5.13", "0.5.13",
     f"{_VERSIONS_MD} §3: 'one-off log Max concurrent requests (per dp worker) ... (only 0.5.13)'"),
    ("mm_kv_reserve", "of the KV budget for post-sizing multimodal allocations", "0.5.18", None,
     f"{_VERSIONS_MD} §2 'Other' and §4 'multimodal reserve' row [0.5.18]"),
    ("capped_by_mamba", "max_running_requests is capped to", "0.5.17", None,
     f"{_VERSIONS_MD} §2: warning [0.5.17] 'max_running_requests is capped to %d by the mamba state cache'"),
    ("reduced_warning", "max_running_requests was reduced from the requested", "0.5.14", None,
     f"{_VERSIONS_MD} §2: warning [0.5.14] 'max_running_requests was reduced from the requested'"),
    ("weights_leave_no_memory", "Loaded weights leave no GPU memory for the KV cache", "0.5.14", None,
     f"{_VERSIONS_MD} §2: ValueError [0.5.14] 'Loaded weights leave no GPU memory ...'"),
    ("hybrid_state_error", "Not enough GPU memory for hybrid (mamba/linear-attention) state cache", "0.5.13", None,
     f"{_VERSIONS_MD} §2: RuntimeError [0.5.13]"),
    ("hybrid_state_too_small", "Hybrid (mamba/linear-attention) state cache is too small", "0.5.13", None,
     f"{_VERSIONS_MD} §2: RuntimeError [0.5.13]"),
    ("replayssm_ring_L", "GDN ReplaySSM ring buffers allocated (L=", "0.5.15", "0.5.16",
     f"{_VERSIONS_MD} §4 'ReplaySSM rings' rows (0.5.15-0.5.16 form)"),
    # the map says 0.5.19; the format string is already in 0.5.17 (srt/mem_cache/memory_pool.py:817 @0.5.17)
    ("replayssm_ring_record_len", "GDN ReplaySSM ring buffers allocated (record_len=", "0.5.17", None,
     "srt/mem_cache/memory_pool.py:817 @0.5.17 (the 'record_len=' form of the ReplaySSM rings line)"),
    ("unified_memory_pool", "[unified-memory-pool]", "0.5.15", None,
     f"{_VERSIONS_MD} §4: unified memory pool lines only with --enable-unified-memory, 0.5.15+"),
    ("extra_buffer_disable_radix_error", "mamba extra_buffer is not compatible with --disable-radix-cache",
     "0.5.10", "0.5.13", f"{_VERSIONS_MD} §3 0.5.10 (new ValueError) and §2 'Removed since 0.5.11' (gone in 0.5.14)"),
    ("spec_no_buffer_radix_error", "is not compatible with radix cache when using --mamba-scheduler-strategy no_buffer",
     "0.5.10", "0.5.13", f"{_VERSIONS_MD} §3 0.5.10 (radix auto-disable -> ValueError) and §2 'Removed since 0.5.11' (gone in 0.5.14)"),
    ("spec_v2_default", "Spec v2 is enabled by default", "0.5.11", None,
     f"{_VERSIONS_MD} §1 table, SGLANG_ENABLE_SPEC_V2 default False in 0.5.9/0.5.10, True from 0.5.11 (§3 0.5.11)"),
]

#: (field present in the ServerArgs dump, lo, hi, citation)
_FIELD_HINTS: list[tuple[str, str | None, str | None, str]] = [
    ("mamba_radix_cache_strategy", "0.5.14", None,
     f"{_VERSIONS_MD} §1 'mamba strategy flag' row and §3 0.5.14: flag renamed to --mamba-radix-cache-strategy"),
    ("mamba_scheduler_strategy", None, "0.5.13",
     f"{_VERSIONS_MD} §3 0.5.14: renamed to --mamba-radix-cache-strategy (the old spelling is only an alias "
     f"of the new field; flags/v0_5_14.json has no mamba_scheduler_strategy dest)"),
    ("cuda_graph_max_bs", None, "0.5.13",
     f"{_VERSIONS_MD} §3 0.5.14: --cuda-graph-max-bs -> --cuda-graph-max-bs-decode (alias of the new field)"),
    ("cuda_graph_max_bs_decode", "0.5.14", None,
     f"{_VERSIONS_MD} §3 0.5.14: --cuda-graph-max-bs -> --cuda-graph-max-bs-decode"),
    ("cuda_graph_backend_prefill", "0.5.14", None,
     f"{_VERSIONS_MD} §1 'prefill graph' row: --cuda-graph-backend-prefill from 0.5.14"),
    ("enable_int8_mamba_checkpoint", "0.5.14", None,
     f"{_VERSIONS_MD} §1 '--enable-int8-mamba-checkpoint' row and §3 0.5.14"),
    ("enable_unified_memory", "0.5.15", None,
     f"{_VERSIONS_MD} §1 '--enable-unified-memory' row (added 0.5.15)"),
    ("enable_page_major_kv_layout", "0.5.15", None,
     f"{_VERSIONS_MD} §1 '--enable-page-major-kv-layout' row (0.5.15+)"),
    ("enable_linear_replayssm", "0.5.15", None,
     f"{_VERSIONS_MD} §1 '--enable-linear-replayssm' row (n/a up to 0.5.14) and §4 ReplaySSM rings 0.5.15+"),
    ("enable_linear_replayssm_spec", "0.5.17", None,
     f"{_VERSIONS_MD} §1 '--enable-linear-replayssm-spec' row (0.5.17+)"),
    ("mamba_max_states_per_path", "0.5.17", None,
     f"{_VERSIONS_MD} §1 '--mamba-max-states-per-path' row (0.5.17+)"),
    ("linear_attn_backend", "0.5.10", None,
     f"{_VERSIONS_MD} §1 '--linear-attn-backend' row (n/a in 0.5.9)"),
    ("disable_piecewise_cuda_graph", None, "0.5.13",
     f"{_VERSIONS_MD} §1 'prefill graph' row: --cuda-graph-backend-prefill from 0.5.14 "
     f"(flags/v0_5_9..13.json all have disable_piecewise_cuda_graph)"),
]


#: (speculative_algorithm value, lo, citation)
_SPEC_ALGO_HINTS = [
    ("DFLASH", "0.5.11", f"{_VERSIONS_MD} §1 '--speculative-algorithm' row: + DFLASH in 0.5.11"),
    ("DSPARK", "0.5.18", f"{_VERSIONS_MD} §1 '--speculative-algorithm' row (+ DSPARK) and §2 unified memory (DSPARK in 0.5.18-0.5.21)"),
    ("UNO", "0.5.20", f"{_VERSIONS_MD} §1 '--speculative-algorithm' row: + UNO after 0.5.19 (listed for 0.5.23)"),
]
