"""What a launch's log says about its speculative decoding, in words: the algorithm, the draft model and its
pools, and the DFLASH-specific lines (draft tokens D, the draft's KV geometry, the mamba cap on running
requests). Pure: reads a :class:`~planner.logs.launches.Launch`, returns lines for ``plan check``.

SGLang prints ``GB`` meaning GiB (2^30 bytes) with two decimals; per-token figures derived from them are
approximate (said so with ``~``).
"""

from __future__ import annotations

from planner.logs.events import (
    GIB,
    DFlashBlockSizeMismatch,
    DFlashDraftGraphDisabled,
    DFlashDraftRunner,
    DFlashFusedKV,
    KVCacheAllocated,
    MaxRunningRequestsCapped,
)
from planner.logs.launches import Launch

__all__ = ["spec_lines"]


def _per_token(kv: KVCacheAllocated) -> str:
    k = kv.k_gib if kv.k_gib is not None else kv.kv_gib
    if k is None or not kv.num_tokens:
        return ""
    what = "K" if kv.k_gib is not None else "KV"
    return f", ~{k * GIB / kv.num_tokens:,.0f} B/token for {what} on this rank (from the 2-decimal GB)"


def _pool_text(kv: KVCacheAllocated) -> str:
    size = (f"K {kv.k_gib:.2f} + V {kv.v_gib:.2f} GB" if kv.k_gib is not None and kv.v_gib is not None
            else f"KV {kv.kv_gib:.2f} GB" if kv.kv_gib is not None else "size not printed")
    label = f"{kv.label} " if kv.label else ""
    return f"{label}#tokens {kv.num_tokens:,}, {size}" if kv.num_tokens is not None else f"{label}{size}"


def spec_lines(launch: Launch) -> list[str]:
    """What the launch's log says about speculative decoding, one fact a line; [] for a launch without it."""
    out: list[str] = []
    algo = launch.spec_algorithm
    ranks = sorted(launch.ranks.values(), key=lambda r: r.key)
    draft_pools = [(r.key or "main", r.draft_kv_cache) for r in ranks if r.draft_kv_cache is not None]
    draft_loads = [(r.key or "main", r.draft_load_end) for r in ranks if r.draft_load_end is not None]
    if algo is not None:
        out.append(f"speculative algorithm {algo} (ServerArgs dump)")
    elif launch.speculative or draft_pools or draft_loads or launch.spec_events:
        out.append("speculative decoding, algorithm not in the log (no ServerArgs dump with speculative_algorithm)")
    else:
        return out
    if launch.has_draft_model is False:
        out.append(f"{algo}: no draft model, so no draft weights and no draft KV pool (drafts come from a trie in "
                   "host memory)")
    sa = launch.server_args or {}
    path = sa.get("speculative_draft_model_path")
    if path:
        out.append(f"draft model path {path}")
    for key, le in draft_loads[:1]:
        out.append(f"draft weights: {le.model_class or 'class not printed'}, 'Load weight end' mem usage "
                   f"{le.mem_usage_gib:.2f} GB on {key}" if le.mem_usage_gib is not None
                   else f"draft weights: {le.model_class or 'class not printed'} on {key}")
    for key, kv in draft_pools:
        out.append(f"draft KV pool on {key}: {_pool_text(kv)}{_per_token(kv)}")
    for e in launch.spec_events:
        if isinstance(e, DFlashDraftRunner):
            out.append(f"DFLASH draft runner: block size (draft tokens D) {e.block_size}, draft window "
                       f"{e.draft_window_size if e.draft_window_size is not None else 'none'}, attention "
                       f"{e.attention_backend}, draft class {e.model_class}")
        elif isinstance(e, DFlashBlockSizeMismatch):
            out.append(f"DFLASH runs {e.num_draft_tokens} draft tokens, the draft config's block_size is "
                       f"{e.config_block_size}")
        elif isinstance(e, DFlashFusedKV):
            out.append(f"DFLASH draft KV geometry: {e.n_layers} layers x {e.num_kv_heads} KV heads x {e.head_dim}"
                       f"{f' ({e.rank_key})' if e.rank_key else ''}")
        elif isinstance(e, DFlashDraftGraphDisabled):
            out.append("DFLASH draft CUDA graph disabled: " + (f"only {e.avail_gib:.2f} GB free after the target's "
                       "backend" if e.avail_gib is not None else e.reason))
        elif isinstance(e, MaxRunningRequestsCapped):
            slots = (f" ({e.max_mamba_cache_size} slots, {e.slots_per_request} per request)"
                     if e.max_mamba_cache_size is not None and e.slots_per_request is not None else "")
            out.append(f"max_running_requests capped to {e.value} by the mamba state cache{slots}")
    return out
