"""vLLM's CUDA-graph capture sizes, per release: ``VllmConfig._set_cudagraph_sizes`` and (0.34)
``_split_cudagraph_capture_sizes`` with the grids of ``config/compilation.py``.

Pure functions of the resolved scheduler values; :mod:`.config` calls :func:`capture_sizes`. Citations are
``vllm/config/vllm.py`` / ``vllm/config/compilation.py`` lines of the 0.34.0 and 0.33.0 wheels.
"""

from __future__ import annotations

import bisect
import math


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _walk_grid(limit: int, step) -> list[int]:
    """_walk_grid (compilation.py:78-86 @0.34.0)."""
    grid, size = [], 1
    while size < limit:
        grid.append(size)
        stride = 1 << max(0, math.floor(math.log2(max(1.0, step(size)))))
        size = (size // stride + 1) * stride
    return [*grid, limit] if limit else []


def prefill_grid(max_tokens: int, dense_head: bool = False) -> list[int]:
    """prefill_cudagraph_capture_grid (compilation.py:89-100 @0.34.0)."""
    grid = _walk_grid(max_tokens, lambda t: min(t, max(8, t / 4), 0.07 * max(t, 4096)))
    if dense_head:
        grid = sorted({*grid, *(t for t in range(1, 33) if t < max_tokens)})
    return grid


def decode_grid(max_requests: int) -> list[int]:
    """decode_cudagraph_capture_grid (compilation.py:122-126 @0.34.0)."""
    return _walk_grid(max_requests, lambda n: 0.65 * n ** (2 / 3))


def decode_shapes(sizes, query_lens: dict[int, int], max_tokens: int) -> list[tuple[int, int]]:
    """decode_cudagraph_capture_shapes (compilation.py:54-69 @0.34.0)."""
    sizes = sorted(set(sizes))
    shapes: set[tuple[int, int]] = set()
    for q, max_reqs in query_lens.items():
        limit = min(max_reqs, max_tokens // q)
        reachable = sizes[: bisect.bisect_left(sizes, limit) + 1]
        shapes.update((min(n, limit), q) for n in reachable if limit >= 1)
    return sorted(shapes, key=lambda s: (s[1], s[0]))


class GraphSizeError(ValueError):
    pass


def capture_sizes(version: str, *, sm_major: int, max_num_seqs: int, max_num_batched_tokens: int,
                  num_spec: int, spec_method: str | None, performance_mode: str, mixed_mode_none: bool,
                  user_sizes: list[int] | None, user_max: int | None, gpt_oss: bool) -> tuple[list[int], int]:
    """(cudagraph_capture_sizes, max_cudagraph_capture_size) when CUDA graphs are on.

    ``mixed_mode_none``: the cudagraph mode captures no mixed batch (FULL_DECODE_ONLY). ``gpt_oss``: the
    GptOssForCausalLMConfig override (model_executor/models/config.py:837-883 @0.34.0) applies."""
    family100 = sm_major == 10  # is_device_capability_family(100)
    q = 1 + num_spec  # uniform_decode_query_len (config/vllm.py:657-675 @0.34.0)
    target_query_lens = {q: max_num_seqs}  # no dynamic speculative decoding (refused by name)
    legacy_sizes = user_max is not None or user_sizes is not None
    if gpt_oss and version == "0.33.0" and not legacy_sizes:
        user_max = 1024  # GptOssForCausalLMConfig (model_executor/models/config.py:543-562 @0.33.0)
    # --- _set_cudagraph_sizes (config/vllm.py:2322-2556 @0.34.0; 2398-2657 @0.33.0) ---
    max_size = user_max
    uniform: list[int] = []
    if max_size is None:
        default_max = 1024 if family100 else 512
        max_size = min(max_num_seqs * q * 2, default_max)
        if q > 1:
            def request_counts(max_reqs: int) -> list[int]:
                max_reqs = min(max_reqs, default_max)
                counts = [n for n in (1, 2, 4) if n <= max_reqs]
                counts += list(range(8, min(max_reqs + 1, 256), 8))
                counts += list(range(256, max_reqs + 1, 16))
                return sorted(set(counts + [max_reqs]))
            uniform = sorted({n * q for n in request_counts(max_num_seqs) if n * q <= max_size})
        elif max_num_seqs <= max_size:
            uniform = [max_num_seqs]
    max_tokens = max_num_batched_tokens
    max_size = min(max_tokens, max_size)
    if max_size < 1:  # config/vllm.py:2452-2455 @0.34.0 (an assert, wrapped by pydantic)
        raise GraphSizeError("Assertion failed, Maximum cudagraph size should be greater than or equal to 1 when "
                             "using cuda graph.")
    if user_sizes is not None:
        sizes = sorted(i for i in set(user_sizes) if i <= max_tokens)
    else:
        if performance_mode == "interactivity":
            sizes = list(range(1, min(max_size, 32) + 1))
        else:
            sizes = [i for i in (1, 2, 4) if i <= max_size]
        if max_size >= 8:
            sizes += list(range(8, min(max_size + 1, 256), 8))
        if max_size >= 256:
            sizes += list(range(256, max_size + 1, 16))
        if max_tokens <= max_size and max_tokens not in sizes:
            sizes.append(max_tokens)
        sizes += [s for s in uniform if s <= max_tokens]
        sizes = sorted(set(sizes))
    valid_max = sizes[-1] if sizes else 0
    if user_max is not None and user_max != valid_max and user_sizes is not None:
        raise GraphSizeError(f"customized max_cudagraph_capture_size(={user_max}) should be consistent with the "
                             f"max value of cudagraph_capture_sizes(={valid_max})")
    if version == "0.33.0":
        return sizes, valid_max
    # --- 0.34: _split_cudagraph_capture_sizes (config/vllm.py:2558-2737 @0.34.0) ---
    shared_sizes, shared_max = sizes, valid_max
    prefill_sizes: list[int] | None = None
    max_decode_requests: int | None = None
    max_decode_tokens: int | None = None
    if gpt_oss and not legacy_sizes and not family100:
        mt = min(max_num_batched_tokens, 1024)
        base = {1, 2, 4, *range(8, 256, 8), *range(256, 1024, 16)}
        prefill_sizes = sorted({s for s in base if s < mt} | {mt})
        max_decode_requests = 1024 // q
    wide = not legacy_sizes and family100
    if wide and max_decode_tokens is None:
        max_decode_tokens = 8192
    if prefill_sizes is not None:
        prefill_sizes = sorted({s for s in prefill_sizes if 1 <= s <= max_tokens})
    elif wide:
        prefill_sizes = prefill_grid(min(8192, max_tokens), performance_mode == "interactivity")
    else:
        prefill_sizes = list(shared_sizes)
    if max_decode_requests is not None or wide:
        decode_sizes = decode_grid(max_num_seqs if max_decode_requests is None
                                   else min(max_decode_requests, max_num_seqs))
    else:
        decode_sizes = sorted({min(_cdiv(s, ql), max_num_seqs) for s in shared_sizes for ql in target_query_lens
                               if _cdiv(s, ql) * ql <= shared_max})
    decode_max_tokens = min(max_tokens, max_decode_tokens or max_tokens)
    tokens = {n * ql for n, ql in decode_shapes(decode_sizes, target_query_lens, decode_max_tokens)}
    # get_draft_decode_cudagraph_request_sizes (config/vllm.py:708-730 @0.34.0): one-token draft decodes of
    # single-module MTP / EAGLE with k >= 2
    if decode_sizes and num_spec >= 2 and spec_method in ("eagle", "eagle3", "mtp", "draft_model"):
        tokens.update(n for n, _ in decode_shapes(decode_grid(max_num_seqs), {1: max_num_seqs}, decode_max_tokens))
    decode_tokens = set(tokens)
    tokens.update(prefill_sizes)
    if not legacy_sizes and mixed_mode_none:
        tokens = decode_tokens
    out = sorted(tokens)
    return out, (out[-1] if out else 0)
