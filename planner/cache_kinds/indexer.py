"""DeepSeek-V3.2's sparse-attention (DSA / NSA) indexer key cache, beside the MLA latent.

``NSATokenToKVPool`` (``DSATokenToKVPool`` from 0.5.16) allocates per layer one ``index_k_with_scale_buffer`` of
``(size // page_size + 1, page_size * (index_head_dim + index_head_dim // 128 * 4))`` uint8: the FP8 index key
of each token and one float32 scale per 128-element block, whole pages (srt/mem_cache/memory_pool.py:1862-1935
@0.5.11, :4270-4300 @0.5.16). The pool configurator charges ``(index_head_dim + index_head_dim // 128 * 4) x
layers`` bytes per token on top of the latent (srt/model_executor/pool_configurator.py:139-149 @0.5.11,
:204-214 @0.5.16, :688-697 @0.5.23). One key per token: not split by tensor parallelism.
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.cache_kinds import CacheKind

QUANT_BLOCK_SIZE = 128  # NSATokenToKVPool.quant_block_size (memory_pool.py:1863 @0.5.11)
SCALE_BYTES = 4  # one float32 scale per block


@dataclass(frozen=True)
class IndexerKeys(CacheKind):
    """FP8 index keys with their block scales; ``dtype_bytes`` is 1 (uint8 storage)."""

    index_head_dim: int

    @property
    def per_token_layer(self) -> int:
        return self.index_head_dim + self.index_head_dim // QUANT_BLOCK_SIZE * SCALE_BYTES

    def bytes_per_token(self, tp: int) -> int:
        return self.per_token_layer * self.layers * self.dtype_bytes

    def buffer_bytes(self, tokens: int, page: int) -> int:
        """``index_k_with_scale_buffer`` over every layer for a pool of ``tokens`` slots: whole pages plus one."""
        return self.layers * (tokens // page + 1) * page * self.per_token_layer * self.dtype_bytes
