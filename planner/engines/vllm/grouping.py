"""Block size, the hybrid allocator's grouping and page-size unification, bytes per block, kernel block sizes.

vLLM 0.33.0 / 0.34.0 (paths under ``vllm/`` of the 0.34.0 wheel; 0.33.0's lines where they differ):

* block size: the user's ``--block-size``, else ``Platform._preferred_block_size_for_backends(backends,
  CacheConfig.DEFAULT_BLOCK_SIZE)`` (``platforms/interface.py:710-805``): 16 in 0.33.0, 64 in 0.34.0
  (``config/cache.py:185``). FLASH_ATTN / TRITON_ATTN accept ``MultipleOf(16)``
  (``v1/attention/backends/flash_attn.py:357-367``, ``triton_attn.py:339``), FLASHINFER ``[16, 32, 64]`` off SM10x
  (``flashinfer.py:587-604``); a backend's preferred size is the default when it supports it
  (``v1/attention/backend.py:158-166``).
* kernel block size per group (``v1/worker/utils.py:508-553`` ``select_common_block_size`` via
  ``prepare_kernel_block_sizes`` ``:648-700``): the group's block size when every backend supports it, else the
  largest explicit supported size dividing it.
* grouping (``v1/core/kv_cache_planning.py:392-603``; 0.33 ``:346-556``): one group for a uniform spec
  (``_get_kv_cache_groups_uniform_spec``); otherwise the pages are already equal (the hybrid alignment padded the
  Mamba page; sliding / chunked / full attention share one page) and ``_get_kv_cache_groups_uniform_page_size``
  buckets layers by spec and splits the buckets into equal-sized groups (``Add N padding layers``).
* hash block size (``v1/core/kv_cache_utils.py:812-900`` ``resolve_kv_cache_block_sizes``).
* bytes per block, layer-outer layout (``_get_kv_cache_bytes_per_block`` ``:620-649``): the widest group's sum of
  its layers' pages (block-stride alignment 1 for the specs modelled).
* layout: ``LBNHC`` for FLASH_ATTN / TRITON_ATTN / the MLA backends / GDN / Mamba2, and for FLASHINFER off SM10x (``v1/attention/backends/
  utils.py:229-236``; FLASHINFER declares its own layouts on SM10x only, ``flashinfer.py:729-735``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from planner.errors import BadInput

# backend -> (explicit sizes, multiple-of base): what get_supported_kernel_block_sizes returns off SM10x
KERNEL_BLOCK_SIZES = {
    "FLASH_ATTN": ((), 16),
    "TRITON_ATTN": ((), 16),
    "FLASHINFER": ((16, 32, 64), None),
    "FLASH_ATTN_MLA": ((), 16),  # v1/attention/backends/mla/flashattn_mla.py:49-50
    "FLASHMLA": ((64,), None),  # mla/flashmla.py:57-58
    "TRITON_MLA": ((), 16),  # mla/triton_mla.py:126-133
    "FLASHINFER_MLA": ((32, 64), None),  # mla/flashinfer_mla.py:204-205 @0.34.0
    "CUTLASS_MLA": ((128,), None),  # mla/cutlass_mla.py:49-50 @0.34.0
    # FLASHINFER's large pages: GQA on SM 10.x with TRT-LLM attention (flashinfer.py:587-605 @0.34.0, 585-604
    # @0.33.0); the name is the planner's, see sized_backends
    "FLASHINFER_LARGE": ((16, 32, 64, 128, 256, 512, 1024), None),
}
DEFAULT_BLOCK_SIZE = {"0.33.0": 16, "0.34.0": 64}


def sized_backends(backends, sm: str, qo_heads: int, kv_heads: int) -> tuple[str, ...]:
    """The backends as their kernel block sizes see them: FLASHINFER advertises pages up to 1024 when the rank's
    query heads group over its KV heads (``qo // kv > 1``) on SM 10.x and TRT-LLM attention is usable
    (``can_use_trtllm_attention``: ``qo % kv == 0``, the FlashInfer cubins installed: utils/flashinfer.py:688-762
    @0.34.0); heads per rank are ``ModelConfig.get_num_attention_heads / get_num_kv_heads``."""
    if sm.startswith("11."):
        raise BadInput(f"vLLM: SM {sm} attention block sizes are not modelled (checked: SM 10.0, 10.3)")
    large = sm.startswith("10.") and kv_heads > 0 and qo_heads // kv_heads > 1 and qo_heads % kv_heads == 0
    return tuple("FLASHINFER_LARGE" if b == "FLASHINFER" and large else b for b in backends)


def kv_cache_layout(backends, sm: str) -> str:
    """``resolve_kv_cache_layout`` (v1/attention/backends/utils.py:311-420 @0.34.0): FLASHINFER on SM 10.x votes
    LBHNC first (flashinfer.py:730-736 @0.34.0, 729-735 @0.33.0: head-major pages for trtllm-gen); no other
    modelled backend declares layouts, so the default preference LBNHC wins otherwise."""
    return "LBHNC" if sm.startswith("10.") and "FLASHINFER" in backends else "LBNHC"


def _check_backends(backends, sm: str) -> list[str]:
    attn = [b for b in backends if b not in ("GDN_ATTN", "MAMBA2_ATTN", "MAMBA_ATTN")]
    for b in attn:
        if b not in KERNEL_BLOCK_SIZES:
            raise BadInput(f"vLLM: the {b} attention backend's block sizes are not modelled")
    if sm.startswith("11."):
        raise BadInput(f"vLLM: SM {sm} attention block sizes are not modelled (checked: SM 10.0, 10.3)")
    return attn


def supports_block_size(backend: str, block_size: int) -> bool:
    explicit, multiple = KERNEL_BLOCK_SIZES[backend]
    return any(block_size % s == 0 for s in explicit) or (multiple is not None and block_size % multiple == 0)


def preferred_block_size(backends, default: int) -> int:
    """``_preferred_block_size_for_backends`` (platforms/interface.py:710-758)."""
    if len(backends) == 1:
        b = backends[0]
        if supports_block_size(b, default):
            return default
        explicit, multiple = KERNEL_BLOCK_SIZES[b]
        return min(list(explicit) + ([multiple] if multiple else []))
    if all(supports_block_size(b, default) for b in backends):
        return default
    raise BadInput("vLLM: mixed attention backends without a common default block size are not modelled")


def cache_block_size(version: str, user_block_size: int | None, backends, sm: str) -> int:
    """``update_block_size_for_backend`` phase 1 (platforms/interface.py:760-805), for non-hybrid models."""
    attn = _check_backends(backends, sm)
    if user_block_size is not None:
        if not all(supports_block_size(b, user_block_size) for b in attn):
            raise BadInput(f"vLLM: --block-size {user_block_size} with {'/'.join(attn)} is not modelled")
        return user_block_size
    return preferred_block_size(attn, DEFAULT_BLOCK_SIZE[version])


def _kernel_supports(backend: str, size: int) -> bool:
    """``_block_size_is_supported`` (v1/worker/utils.py:482-505): an exact size must match, a multiple-of accepts
    any multiple."""
    explicit, multiple = KERNEL_BLOCK_SIZES[backend]
    return size in explicit or (multiple is not None and size % multiple == 0)


def kernel_block_size(block_size: int, backends) -> int:
    """``select_common_block_size`` (v1/worker/utils.py:508-553): the block size when every backend takes it,
    else the largest explicit size dividing it that every backend takes."""
    if all(_kernel_supports(b, block_size) for b in backends):
        return block_size
    cands = sorted({s for b in backends for s in KERNEL_BLOCK_SIZES[b][0] if block_size % s == 0}, reverse=True)
    for s in cands:
        if all(_kernel_supports(b, s) for b in backends):
            return s
    raise BadInput(f"vLLM: no common kernel block size for {block_size}")


@dataclass(frozen=True)
class Group:
    spec: object
    layers: tuple[str, ...]

    @property
    def num_layers(self) -> int:
        return len(self.layers)


def kv_cache_groups(stage_layers) -> list[Group]:
    """The KV cache groups of one worker (kv_cache_planning.py:392-603): one group when every layer has the same
    spec; else the pages must already be uniform (the hybrid alignment made them so), layers are bucketed by spec in
    first-seen order, ``group_size`` is the smallest bucket (the largest when it is under 1.5x the smallest), and
    each bucket splits into ``cdiv(n, group_size)`` groups taking ``layers[i::num_groups]``."""
    buckets: dict[object, list[str]] = {}
    for name, spec in stage_layers:
        buckets.setdefault(spec, []).append(name)
    if len(buckets) == 1:
        spec, names = next(iter(buckets.items()))
        return [Group(spec, tuple(names))]
    if len({spec.page_size_bytes for spec in buckets}) != 1:
        raise BadInput("vLLM: KV-cache page unification across layer kinds is not modelled")
    sizes = [len(v) for v in buckets.values()]
    group_size = min(sizes)
    if max(sizes) < min(sizes) * 1.5:
        group_size = max(sizes)
    groups = []
    for spec, names in buckets.items():
        n = -(-len(names) // group_size)
        for i in range(n):
            groups.append(Group(spec, tuple(names[i::n])))
    return groups


def padding_warnings(stage_layers) -> list[str]:
    """vLLM's ``Add %d padding layers, may waste at most %.2f%% KV cache memory`` (kv_cache_planning.py:578-583)."""
    buckets: dict[object, int] = {}
    for _, spec in stage_layers:
        buckets[spec] = buckets.get(spec, 0) + 1
    if len(buckets) < 2:
        return []
    sizes = list(buckets.values())
    group_size = max(sizes) if max(sizes) < min(sizes) * 1.5 else min(sizes)
    out = []
    for n in sizes:
        pad = group_size - n % group_size
        if pad != group_size:
            out.append(f"Add {pad} padding layers, may waste at most {pad / n * 100:.2f}% KV cache memory")
    return out


def hash_block_size(groups: list[Group], cache_block_size: int, prefix_caching: bool) -> int:
    """``resolve_kv_cache_block_sizes`` (v1/core/kv_cache_utils.py:812-900): one group: the cache block size; else
    the lcm of the groups' block sizes without prefix caching or with a Mamba group outside ``align``, else their
    gcd."""
    if len(groups) <= 1:
        return cache_block_size
    sizes = [g.spec.block_size for g in groups]
    if not prefix_caching or any(getattr(g.spec, "mamba_cache_mode", "align") != "align" for g in groups):
        return math.lcm(*sizes)
    return math.gcd(*sizes)


def bytes_per_block(groups: list[Group]) -> int:
    """``_get_kv_cache_bytes_per_block`` for layer-outer layouts (kv_cache_planning.py:620-633)."""
    return max(g.spec.page_size_bytes * g.num_layers for g in groups)
