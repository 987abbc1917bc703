"""One vLLM launch as the sizing chain takes it: model config, ``vllm serve`` flags, device, measured quantities.

The measured quantities keep the vLLM oracle's names and units (``../shared/tools/vllm-oracle/README.md``,
"Inputs"): they are what a real boot's log reports, so a user can give them instead of the estimates.
Bytes are integers everywhere else; the GiB inputs are converted once, by :func:`gib_bytes`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from planner.catalog.spec import ModelSpec

VERSIONS = ("0.33.0", "0.34.0")
LATEST = VERSIONS[-1]
GIB = 1 << 30
MIB = 1 << 20


@dataclass(frozen=True)
class Device:
    """The GPU as vLLM sees it. ``gpu_total_mib`` is NVML's ``memory.total`` (it picks the default
    ``max_num_seqs`` / ``max_num_batched_tokens`` tier); ``cuda_total_bytes`` is ``cudaMemGetInfo``'s total, the
    ``T`` of ``requested = ceil(T x gpu_memory_utilization)``."""

    gpu_total_mib: float
    cuda_total_bytes: int
    sm: str  # compute capability, "12.0"
    name: str
    count: int = 8  # visible devices
    cuda_version: str = "13.0"  # torch.version.cuda of the release's wheels
    vmm: bool = True  # 0.34: the driver supports CUDA VMM (extensible KV cache)
    flashinfer: str = "cubin"  # cubin | jit | absent


@dataclass(frozen=True)
class Measured:
    """What the profile run measures on the real GPU (the oracle's input names, GiB as the oracle takes them).
    ``None`` where not given: the sizing chain then needs an estimate (``estimates``) or refuses by name."""

    startup_used_gib: float = 0.5
    weights_gib: float | None = None  # None: the weights the planner computes for this rank
    non_torch_gib: float | None = None
    peak_activation_gib: float | None = None
    cudagraph_gib: float = 0.0
    cudagraph_actual_gib: float | None = None  # 0.34 extensible KV cache; None = cudagraph_gib
    warmup_peak_gib: float | None = None  # 0.34; None = peak_activation_gib
    torch_reserve_growth_gib: float = 0.0  # 0.34


@dataclass(frozen=True)
class VllmLaunch:
    version: str  # one of VERSIONS
    spec: ModelSpec  # spec.raw is the config.json
    flags: tuple[str, ...]  # the `vllm serve` flags, without the model
    device: Device
    measured: Measured
    env: dict[str, str] = field(default_factory=dict)
    # the drafter's config.json for a draft-model method (--speculative-config's "model": EAGLE3); None otherwise
    draft: ModelSpec | None = None
