"""One small spec per kind of cache, each answering "how many bytes per token / per request on one GPU".

The shape of vLLM's ``vllm/v1/kv_cache_interface.py`` (one class per cache kind: full attention, sliding window,
MLA, Mamba), engine-neutral: a kind knows its geometry and how tensor parallelism splits it, never an engine's
flags or pools. An engine's pool sizing composes the kinds a model has (``memory_profile.cell_size`` for SGLang)
and names the engine rule that does so. A new kind of cache is a new class here (its own module when it grows),
never a branch inside the engine's sizing.

Kinds:

* :class:`FullAttention`: one K and one V entry per token and layer, ``kv_heads`` split over the GPUs and
  replicated below one per GPU (``get_num_kv_heads``, srt/configs/model_config.py:756-763 @0.5.11).
* :class:`planner.cache_kinds.sliding.SlidingWindow` (gpt-oss, attention sinks take no KV) and
  :class:`planner.cache_kinds.sliding.ChunkedLocalAttention` (Llama 4): the same per-token entry over their layers;
  ``hybrid_swa_cell`` composes them with the full layers as SGLang's hybrid SWA pool prices a token.
* :class:`planner.cache_kinds.mla.MLALatent`: multi-head latent attention's one ``kv_lora_rank + qk_rope_head_dim``
  row per token and layer, not split by tensor parallelism.
* :class:`planner.cache_kinds.indexer.IndexerKeys`: DeepSeek-V3.2's sparse-attention indexer keys (FP8 + scales,
  whole pages) beside the latent.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CacheKind:
    """A cache over ``layers`` layers whose elements take ``dtype_bytes`` bytes."""

    layers: int
    dtype_bytes: int

    def bytes_per_token(self, tp: int) -> int:
        """Bytes one token takes over all this kind's layers on one GPU (0 for a per-request state)."""
        return 0

    def bytes_per_request(self, tp: int) -> int:
        """Bytes one request's state takes over all this kind's layers on one GPU (0 for a per-token cache)."""
        return 0


@dataclass(frozen=True)
class FullAttention(CacheKind):
    """Plain multi-head / grouped-query attention: K (``head_dim``) and V (``v_head_dim``) per KV head."""

    kv_heads: int
    head_dim: int
    v_head_dim: int

    def heads_per_gpu(self, tp: int) -> int:
        """KV heads one GPU holds: split over ``tp``, replicated below one per GPU."""
        return max(1, self.kv_heads // tp)

    def bytes_per_token(self, tp: int) -> int:
        return self.heads_per_gpu(tp) * (self.head_dim + self.v_head_dim) * self.layers * self.dtype_bytes
