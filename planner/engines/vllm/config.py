"""``VllmConfig`` as the sizing chain needs it: the effective values after vLLM's argument resolution.

The field names are the vLLM oracle's ``summary`` names (``../shared/tools/vllm-oracle/README.md``, "Output"), so a
resolved config compares field by field with vLLM's own. :func:`resolve` is vLLM's ``AsyncEngineArgs.from_cli_args
(...).create_engine_config(usage_context=OPENAI_API_SERVER)`` for one release: the defaults by GPU memory tier,
``max_model_len``, prefix caching, the Mamba cache mode, the attention backends, the CUDA-graph mode and sizes, and
vLLM's own validation errors (raised as :class:`VllmRejected` with vLLM's message).
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.engines.vllm.inputs import VllmLaunch


class VllmRejected(Exception):
    """vLLM refused the flags (its argparse line or its ValueError), with vLLM's own message."""

    def __init__(self, stage: str, error_type: str, message: str, rule: str = ""):
        super().__init__(message)
        self.stage, self.error_type, self.message, self.rule = stage, error_type, message, rule


@dataclass(frozen=True)
class VllmConfig:
    version: str
    architecture: str
    model_runner: str  # "v1" | "v2"
    dtype: str
    kv_cache_dtype: str
    max_model_len: int  # -1 is kept as -1 here: the auto-fit happens when the KV cache is sized
    max_num_seqs: int
    max_num_batched_tokens: int
    enable_prefix_caching: bool
    enable_chunked_prefill: bool
    gpu_memory_utilization: float  # resolved_gpu_memory_utilization
    enable_extensible_kv_cache: bool  # 0.34
    tensor_parallel_size: int
    pipeline_parallel_size: int
    data_parallel_size: int
    block_size: int | None  # the user's --block-size, or None (the platform / hybrid alignment decides)
    mamba_cache_mode: str | None  # align | none | None for models without Mamba layers
    attention_backends: tuple[str, ...]
    cudagraph_mode: str
    cudagraph_capture_sizes: tuple[int, ...]
    max_cudagraph_capture_size: int | None
    speculative_method: str | None
    num_speculative_tokens: int | None
    kv_cache_memory_bytes: int | None  # --kv-cache-memory-bytes (no profiling)
    num_gpu_blocks_override: int | None
    enforce_eager: bool
    cpu_offload_gb: float
    quantization: str | None


def resolve(launch: VllmLaunch) -> VllmConfig:
    """vLLM's argument resolution for ``launch.version`` (raises :class:`VllmRejected`)."""
    raise NotImplementedError("planner/engines/vllm/config.py: resolve is being written (issue #26)")
