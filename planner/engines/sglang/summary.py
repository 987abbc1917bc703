"""The ``summary`` object: the oracle's summary schema (summary_version 1), filled by the planner.

Field names and meanings follow ``shared/tools/sglang-oracle/README.md`` ("The summary block"), so
a planner result and an oracle result compare field by field. A value is ``None`` when it does
not apply or the run did not get that far, as in the oracle.
"""

from __future__ import annotations

from typing import Any

from planner.engines.sglang.plan import GIB, Plan

SUMMARY_FIELDS = (
    "summary_version", "sglang_version", "outcome", "validated", "startup_ok", "stage", "error_type",
    "error_message", "mem_fraction_static", "chunked_prefill_size", "cuda_graph_max_bs", "page_size",
    "max_prefill_tokens", "attention_backend", "mamba_scheduler_strategy", "disable_radix_cache",
    "disable_overlap_schedule", "speculative_algorithm", "speculative_num_steps", "speculative_eagle_topk",
    "speculative_num_draft_tokens", "server_args_max_running_requests", "mamba_full_memory_ratio",
    "kv_cache_dtype", "mamba_ssm_dtype", "context_len", "tp_size", "pre_model_load_gib",
    "rest_gib_before_mamba", "spec_reserved_bytes", "mamba_cache_per_req_bytes", "max_mamba_cache_size",
    "available_kv_bytes", "kv_cell_bytes_per_token", "max_total_num_tokens", "mamba_ratio",
    "max_running_requests", "cuda_graph_capture_max_bs", "pool_mamba_conv_bytes", "pool_mamba_ssm_bytes",
    "pool_mamba_intermediate_ssm_bytes", "pool_mamba_intermediate_conv_bytes", "pool_kv_k_bytes",
    "pool_kv_v_bytes", "pool_draft_kv_k_bytes", "pool_draft_kv_v_bytes", "pool_draft_kv_bytes",
    "pool_req_to_token_bytes", "pool_index_buffers_bytes", "pool_other_bytes", "pool_total_bytes",
)


def _before_0_5_11(version: str | None) -> bool:
    parts = [int("".join(ch for ch in p if ch.isdigit()) or 0) for p in (version or "0.5.11").split(".")[:3]]
    return tuple(parts) < (0, 5, 11)


def build_summary(plan: Plan) -> dict[str, Any]:
    from planner.engines.sglang.pipeline.memory_profile import kv_dtype_name  # noqa: PLC0415

    s: dict[str, Any] = dict.fromkeys(SUMMARY_FIELDS)
    s["summary_version"] = 1
    s["sglang_version"] = plan.sglang_version
    s["outcome"] = plan.outcome
    s["stage"] = plan.stage
    s["error_type"] = plan.error_type
    s["error_message"] = plan.error_message
    a = plan.args
    s["validated"] = a is not None
    s["startup_ok"] = (plan.outcome == "ok") if a is not None else None
    if a is not None:
        s.update(
            mem_fraction_static=a.mem_fraction_static, chunked_prefill_size=a.chunked_prefill_size,
            cuda_graph_max_bs=a.cuda_graph_max_bs, page_size=a.page_size, max_prefill_tokens=a.max_prefill_tokens,
            attention_backend=a.attention_backend, mamba_scheduler_strategy=a.mamba_scheduler_strategy,
            disable_radix_cache=a.disable_radix_cache, disable_overlap_schedule=a.disable_overlap_schedule,
            speculative_algorithm=a.speculative_algorithm, speculative_num_steps=a.speculative_num_steps,
            speculative_eagle_topk=a.speculative_eagle_topk,
            speculative_num_draft_tokens=a.speculative_num_draft_tokens,
            server_args_max_running_requests=a.max_running_requests,
            mamba_full_memory_ratio=a.mamba_full_memory_ratio, tp_size=a.tp_size, context_len=a.context_len,
            kv_cache_dtype=kv_dtype_name(a, plan.model.spec),
        )
        if plan.state is not None:
            s["mamba_ssm_dtype"] = plan.state.ssm_dtype
        if plan.stage == "runner_setup":  # ModelRunner.__init__ raised (DFLASH target layers): no KV dtype / context yet
            s.update(kv_cache_dtype=None, mamba_ssm_dtype=None, context_len=None)
        if plan.stage == "runner_setup" and a.speculative_algorithm == "DSPARK":  # e.g. a draft without a Markov head:
            from planner.engines.sglang.pipeline.memory_profile import available_gib  # noqa: PLC0415
            # free memory was read (pre_model_load) before the target ModelRunner raised (oracle)
            s["pre_model_load_gib"] = available_gib(plan.free_before_bytes, a.tp_size)
        if plan.stage == "model_config":  # no ModelConfig built: no context length, no KV dtype decided (oracle)
            s["context_len"] = s["kv_cache_dtype"] = None
    p = plan.profile
    if p is not None:
        s.update(
            pre_model_load_gib=p.pre_model_load_gib,
            # SGLang splits a rest between mamba and KV only for hybrid models: None for a plain-attention one,
            # as its own summary has it (tests/golden/quant/sglang-0.5.23, dense checkpoints)
            rest_gib_before_mamba=p.rest_gib_before_mamba if plan.state is not None else None,
            spec_reserved_bytes=p.spec_reserved_bytes, mamba_cache_per_req_bytes=p.mamba_cache_per_req_bytes,
            max_mamba_cache_size=p.max_mamba_cache_size, available_kv_bytes=p.available_kv_bytes,
            kv_cell_bytes_per_token=p.kv_cell_bytes_per_token, max_total_num_tokens=p.max_total_num_tokens,
            max_running_requests=p.max_running_requests, mamba_ratio=p.mamba_ratio,
        )
        if plan.state is None:  # no mamba state: SGLang never runs handle_max_mamba_cache (the oracle's null)
            s["rest_gib_before_mamba"] = None
        if plan.state is not None and a is not None and not a.spec_on and plan.stage != "runner_setup":
            s["spec_reserved_bytes"] = 0  # (at runner_setup, e.g. the quant config, no mamba split has run: null)
        if plan.state is None:  # no mamba state: SGLang has no "rest before the mamba split" (oracle: null)
            s["rest_gib_before_mamba"] = None
        if plan.state is None and a is not None:  # no mamba state: ServerArgs' max_mamba_cache_size as given
            s["max_mamba_cache_size"] = a.max_mamba_cache_size
            if _before_0_5_11(plan.sglang_version):
                # 0.5.9 / 0.5.10 turn rest_memory into tokens inline (profile_max_num_token,
                # srt/model_executor/model_runner_kv_cache_mixin.py:143-149 @0.5.9): no available-bytes value
                # (_profile_available_bytes exists from 0.5.11); only the mamba path hands one back
                s["available_kv_bytes"] = None
    if plan.capture_bs and plan.stage != "cuda_graph_batch_sizes":
        s["cuda_graph_capture_max_bs"] = max(plan.capture_bs)
    pools = plan.pools
    if pools is not None:
        by_key: dict[str, int] = {}
        for line in pools.lines:  # Pools.get for every key at once: the bytes of the lines with that key
            by_key[line.key] = by_key.get(line.key, 0) + line.bytes

        def g(key: str) -> int:
            return by_key.get(key, 0)

        # the oracle files a tensor of at most 64 MiB under index buffers, a larger one under "other"
        # (sglang-oracle oracle.py pool_bytes_for_summary): the ReplaySSM ring tensors go by that rule
        rings = [x.bytes for x in pools.lines if x.key.startswith("replayssm_")]
        ring_other = sum(b for b in rings if b > 64 << 20)
        ring_index = sum(b for b in rings if b <= 64 << 20)
        # the DSA indexer's keys (one row, the per-layer list, in the oracle's buffer table): the same rule
        indexer_other = sum(g(k) for k in ("indexer", "draft_indexer") if g(k) > 64 << 20)
        indexer_index = g("indexer") + g("draft_indexer") - indexer_other
        s.update(
            pool_mamba_conv_bytes=g("mamba_conv"), pool_mamba_ssm_bytes=g("mamba_ssm"),
            pool_mamba_intermediate_ssm_bytes=g("mamba_intermediate_ssm"),
            pool_mamba_intermediate_conv_bytes=g("mamba_intermediate_conv"),
            # a hybrid SWA pool's two sub-pools together, as the oracle files them (pipeline/swa.py)
            pool_kv_k_bytes=g("kv_k") + g("kv_swa_k"), pool_kv_v_bytes=g("kv_v") + g("kv_swa_v"),
            pool_draft_kv_k_bytes=g("draft_kv_k"),
            pool_draft_kv_v_bytes=g("draft_kv_v"), pool_draft_kv_bytes=g("draft_kv_k") + g("draft_kv_v"),
            pool_req_to_token_bytes=g("req_to_token"),
            pool_index_buffers_bytes=g("index_buffers") + g("draft_index_buffers") + ring_index + indexer_index,
            pool_other_bytes=g("mamba_int8_checkpoint") + g("unified") + indexer_other + ring_other,
            pool_total_bytes=sum(by_key.values()),
        )
    s["free_before_load_gib"] = plan.free_before_bytes / GIB
    s["free_after_load_gib"] = plan.free_after_bytes / GIB
    return s
