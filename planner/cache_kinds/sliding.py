"""Sliding-window and chunked local attention: the kinds of cache whose attention reads a bounded span of tokens.

Both keep one K and one V entry per token and layer, exactly as full attention does
(:class:`planner.cache_kinds.FullAttention`); what differs is how many tokens an engine must keep. SGLang's
hybrid SWA pool (``SWAKVPool``, srt/mem_cache/swa_memory_pool.py @0.5.11) gives these layers their own sub-pool
of ``swa_full_tokens_ratio`` x the full layers' tokens and frees a request's tokens once they leave the window
(or the chunk); the pool sizing prices one full-side token at ``F x full_layers + ratio x S x swa_layers``
(``HybridSWAPoolConfigurator``, srt/model_executor/pool_configurator.py:184-238 @0.5.11), a float.

Kinds:

* :class:`SlidingWindow`: attention over the last ``window`` tokens (gpt-oss ``sliding_window`` 128). gpt-oss's
  attention sinks are one learned logit per query head (``self_attn.sinks``, a model parameter, srt/models/gpt_oss.py
  ``GptOssAttention.sinks`` @0.5.11): they take no KV entry, so the per-token bytes are K and V only.
* :class:`ChunkedLocalAttention`: attention within the current chunk of ``chunk`` tokens (Llama 4
  ``attention_chunk_size`` 8192); SGLang sizes it with the same SWA sub-pool, the chunk as its window
  (``resolve_sliding_window_size``, srt/model_executor/model_runner_components/load_model_utils.py:144-157 @0.5.23).
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.cache_kinds import FullAttention


@dataclass(frozen=True)
class SlidingWindow(FullAttention):
    """K and V per token over the sliding layers; ``window`` bounds what a request needs, not the bytes per token."""

    window: int = 0
    sinks: bool = False  # learned per-head sink logits: parameters, no KV


@dataclass(frozen=True)
class ChunkedLocalAttention(FullAttention):
    """K and V per token over the chunked layers; ``chunk`` bounds what a request needs."""

    chunk: int = 0


def hybrid_swa_cell(full: FullAttention, swa: FullAttention, ratio: float, tp: int) -> float | int:
    """SGLang's bytes per full-side token of the hybrid SWA pool, in its own operation order:
    ``full_per_token * full_layers + ratio * swa_per_token * swa_layers`` (a float whenever the ratio is one;
    srt/model_executor/pool_configurator.py:205-238 @0.5.11, :656-803 @0.5.23); all-SWA models (no full layer)
    price the SWA layers alone, without the ratio."""
    full_per_token = full.heads_per_gpu(tp) * (full.head_dim + full.v_head_dim) * full.dtype_bytes
    swa_per_token = swa.heads_per_gpu(tp) * (swa.head_dim + swa.v_head_dim) * swa.dtype_bytes
    if full.layers == 0:
        return swa_per_token * swa.layers
    return full_per_token * full.layers + ratio * swa_per_token * swa.layers
