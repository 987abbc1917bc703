"""The number of blocks, vLLM's admission checks, ``--max-model-len -1`` auto-fit and the capacity report.

vLLM's rules (paths under ``vllm/`` of the 0.34.0 wheel; 0.33.0's where they differ):

* blocks a request needs: ``sum over groups cdiv(max_memory_usage_bytes(max_model_len), page)``; bytes needed =
  ``bytes_per_block x`` that (``v1/core/kv_cache_planning.py:1297-1329``; 0.33 ``:1253-1285``).
* the admission check runs against the available memory less one block (the null block,
  ``get_kv_cache_configs`` ``:1641-1652``; 0.33 ``:1528-1539``): ``No available memory for the cache blocks`` when
  that is <= 0, else ``To serve at least one request with the model's max seq len ...`` with the binary-searched
  estimate (``_check_enough_kv_cache_memory`` ``:99-132``; 0.33 ``:50-87``, its own fixed hint). 0.34's hint is
  ``_more_kv_cache_memory_hint`` (``:64-96``).
* ``num_blocks = available // bytes_per_block`` per worker, the minimum over workers (``:1671-1697``), or
  ``num_gpu_blocks_override`` (whose memory replaces the available memory, ``:1616-1636``).
* 0.34's extensible KV cache: the measured count (at most the capacity) is checked again with ``(n - 1) x
  bytes_per_block`` and the after-warmup hint (``shrink_kv_cache_configs`` ``:1827-1861``).
* ``max_concurrency = num_blocks / blocks_per_request``, ``kv_cache_size_tokens = int(max_concurrency x
  max_model_len)`` (``v1/core/kv_cache_utils.py:1082-1149``; the log line ``:1157-1175``).
* auto-fit (``_auto_fit_max_model_len`` ``:1381-1514``; 0.33 ``:1337-1410``): the largest length whose bytes fit
  the check memory, by the same binary search from 1 to the derived length; 0.34 fits again after warmup to
  ``(n - 1) x bytes_per_block`` (``finalize_extensible_kv_cache`` ``:1864-1906``).
"""

from __future__ import annotations

from planner.engines.vllm.grouping import Group
from planner.engines.vllm.kv_spec import cdiv
from planner.engines.vllm.memory import StartupFailed, format_gib

DOCS = "See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."
HINT_033_NONE = ("Try increasing `gpu_memory_utilization` when initializing the engine (this flag also controls CPU "
                 "memory reservation on the CPU backend, despite its name).")


def blocks_per_request(groups: list[Group], max_model_len: int) -> list[int]:
    return [cdiv(g.spec.max_memory_usage_bytes(max_model_len), g.spec.page_size_bytes) for g in groups]


def needed_bytes(groups: list[Group], bpb: int, max_model_len: int) -> int:
    return bpb * sum(blocks_per_request(groups, max_model_len))


def estimate_max_model_len(groups: list[Group], bpb: int, available: int, upper: int) -> int:
    def fits(n: int) -> bool:
        return needed_bytes(groups, bpb, n) <= available

    left, right = 1, upper
    if not fits(left):
        return 0
    result = 1
    while left <= right:
        mid = (left + right) // 2
        if fits(mid):
            result, left = mid, mid + 1
        else:
            right = mid - 1
    return result


def hint_034(extensible: bool, util: float, after_warmup: bool = False) -> str:
    """``_more_kv_cache_memory_hint`` (0.34 kv_cache_planning.py:64-96)."""
    if extensible:
        used_by = "the model and its activations"
        graphs = ""
        if after_warmup:
            used_by = "the model, its activations, CUDA graphs and warmup"
            graphs = " CUDA graphs take less with fewer or smaller capture sizes in the compilation config."
        if util < 1.0:
            return (f"The KV cache gets what is left after {used_by} within `gpu_memory_utilization`={util}; "
                    "increase it (with the extensible KV cache it defaults to 1.0) or decrease `max_model_len` or "
                    f"`max_num_seqs`.{graphs}")
        return (f"The extensible KV cache already takes all device memory left after {used_by}; decrease "
                f"`max_model_len` or `max_num_seqs`, or the model needs a device with more memory.{graphs}")
    return ("Try increasing `gpu_memory_utilization` when initializing the engine (this flag also controls CPU "
            "memory reservation on the CPU backend, despite its name).")


def check_enough(version: str, available: int, groups: list[Group], bpb: int, max_model_len: int,
                 hint: str | None) -> None:
    """``_check_enough_kv_cache_memory``; ``hint`` None is 0.33's fixed text."""
    if available <= 0:
        if version == "0.33.0":
            raise StartupFailed("initialize_kv_caches", "ValueError",
                                f"No available memory for the cache blocks. {HINT_033_NONE} {DOCS}")
        raise StartupFailed("initialize_kv_caches", "ValueError",
                            f"No available memory for the cache blocks. {hint} {DOCS}")
    need = needed_bytes(groups, bpb, max_model_len)
    if need > available:
        est = estimate_max_model_len(groups, bpb, available, max_model_len)
        est_msg = (f"Based on the available memory, the estimated maximum model length is {est}. " if est > 0
                   else "")
        head = (f"To serve at least one request with the model's max seq len ({max_model_len}), "
                f"({format_gib(need)} GiB KV cache is needed, which is larger than the available KV cache memory "
                f"({format_gib(available)} GiB). {est_msg}")
        if version == "0.33.0":
            tail = ("Try increasing `gpu_memory_utilization` (which also controls CPU memory on the CPU backend) or "
                    "decreasing `max_model_len` when initializing the engine. ")
        else:
            tail = f"{hint} Decreasing `max_model_len` also reduces what is needed. "
        raise StartupFailed("initialize_kv_caches", "ValueError", head + tail + DOCS)


def auto_fit(version: str, groups_per_worker: list[list[Group]], bpbs: list[int], check_memory: list[int],
             upper: int, hint: str | None, after_warmup: bool = False) -> int:
    """``_auto_fit_max_model_len``: the fitted length (``upper`` when the full length fits)."""
    best = upper
    for groups, bpb, mem in zip(groups_per_worker, bpbs, check_memory):
        if groups:
            best = min(best, estimate_max_model_len(groups, bpb, mem, upper))
    if best <= 0:
        if version == "0.33.0":
            h = "Try increasing `gpu_memory_utilization`."
        elif after_warmup:
            h = ("CUDA graph capture and warmup left no memory for the KV cache. Increase `gpu_memory_utilization`, "
                 "reduce the memory CUDA graphs take (fewer or smaller capture sizes in the compilation config), or "
                 "use more GPUs.")
        else:
            h = hint
        raise StartupFailed("initialize_kv_caches", "ValueError",
                            f"Cannot auto-fit max_model_len: not enough GPU memory available to serve even a single "
                            f"token. {h}")
    return best


def report(num_blocks: int, bpr: int, max_model_len: int) -> tuple[int, float, str]:
    """(kv_cache_size_tokens, max_concurrency, vLLM's log line)."""
    conc = num_blocks / bpr
    tokens = int(conc * max_model_len)
    return tokens, conc, (f"GPU KV cache size: {tokens:,} tokens, Maximum concurrency for {max_model_len:,} tokens "
                          f"per request: {conc:.2f}x")
