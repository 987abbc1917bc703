"""Multi-head latent attention (MLA: DeepSeek-V2/V3/R1, Kimi-K2): one compressed latent per token and layer.

SGLang's ``MLATokenToKVPool`` allocates, per layer, one ``(size + page_size, 1, kv_cache_dim)`` buffer with
``kv_cache_dim = kv_lora_rank + qk_rope_head_dim`` (srt/mem_cache/memory_pool.py:1536-1569 @0.5.11,
:3837-3870 @0.5.16, :4793-4870 @0.5.23): a single latent "head" shared by every attention head, so tensor
parallelism does not split it (every GPU holds the whole latent of every token). The pool configurator's cell
is the same ``(kv_lora_rank + qk_rope_head_dim) x layers x element size`` (srt/model_executor/
pool_configurator.py:122-127 @0.5.11, :187-192 @0.5.16, :390-395 @0.5.23). FP8 KV (``fp8_e4m3`` / ``fp8_e5m2``)
stores the same dims in one byte each (``store_dtype`` uint8).
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.cache_kinds import CacheKind


@dataclass(frozen=True)
class MLALatent(CacheKind):
    """The latent cache: ``kv_lora_rank + qk_rope_head_dim`` elements per token and layer, on every GPU."""

    kv_lora_rank: int
    qk_rope_head_dim: int

    @property
    def dim(self) -> int:
        """kv_cache_dim: the one latent row a token takes in one layer."""
        return self.kv_lora_rank + self.qk_rope_head_dim

    def bytes_per_token(self, tp: int) -> int:
        return self.dim * self.layers * self.dtype_bytes  # not divided by tp: the latent is not split by head

    def buffer_bytes(self, rows: int) -> int:
        """Bytes of the per-layer buffers for ``rows`` slots (``size + page_size``: slot 0 is the padded one)."""
        return self.layers * rows * self.dim * self.dtype_bytes
