"""What an engine is to the core: the inputs a plan gives it and the result it gives back.

The core (:mod:`planner.engines.sglang.plan`) depends on engines only through this module; no engine imports the core.
An engine is a module (or object) with ``VERSION`` and ``run(job, draft) -> EngineResult``: SGLang's is
:mod:`planner.engines.sglang.pipeline`; a second engine (vLLM) would implement the same. ``args``,
``state``, ``profile`` and ``pools`` are the engine's own types (for SGLang: ``ResolvedArgs``,
``MambaState``, ``Profile``, ``Pools``); the core reads them through the fields the report names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from planner.catalog.catalog import ResolvedModel
from planner.catalog.spec import ModelSpec
from planner.hardware.profiles import GpuProfile

OUTCOME_OK, OUTCOME_REJECTED, OUTCOME_FAILED = "ok", "rejected", "startup_failed"


@dataclass
class NeedLine:
    """One allocation that comes after the pools (the engine does not budget it): what, bytes, how estimated."""

    label: str
    bytes: int
    how: str


@dataclass(frozen=True)
class EngineInput:
    """One launch as the core resolved it: the GPU, the model, the engine's flags, and the free memory."""

    gpu: GpuProfile
    model: ResolvedModel
    flags: list[str]
    env: dict[str, str]
    rules: Any  # the release's rules (engine-specific; SGLang: rules.Rules)
    free_before_bytes: int  # per GPU, before weight loading
    free_after_bytes: int  # per GPU, after the weights the engine loads before sizing
    weights_per_gpu_bytes: int | None = None  # modelled target weights, when free_after was not given
    draft_checkpoint: tuple[int, str] | None = None  # STANDALONE: the draft checkpoint's bytes and their source
    # one pipeline-parallel rank (planner/engines/sglang/pp.py): (pp_rank, pp_size, the group's min token capacity or None);
    # the model's spec then holds that rank's layers only
    pp_stage: tuple[int, int, int | None] | None = None


@dataclass
class EngineResult:
    """What the engine decided, stage by stage; a stage that raised leaves the later fields unset."""

    outcome: str = OUTCOME_OK  # ok | rejected (flags refused) | startup_failed
    verdict: str = "fits"  # fits | rejected | oom_risk
    stage: str | None = None  # where it failed
    error_type: str | None = None
    error_message: str | None = None  # the engine's own message
    rule: str | None = None  # the source line that decided it
    args: Any = None  # resolved flags
    state: Any = None  # per-request recurrent state, for hybrid models
    profile: Any = None  # the memory profile: budget, tokens, requests
    pools: Any = None  # every allocated tensor
    capture_bs: list[int] | None = None  # CUDA-graph batch sizes
    needs: list[NeedLine] = field(default_factory=list)  # what must still fit after the pools
    headroom_bytes: int | None = None  # free after the pools
    oom_allocation: str | None = None  # the first need that does not fit
    # SGLANG_ENABLE_POST_CAPTURE_KV_SIZING: the KV pool's virtual upper bound and its post-capture size
    # (planner/engines/sglang/pipeline/post_capture.py resize); None when the pool is sized before capture
    post_capture: dict | None = None


class Engine(Protocol):
    VERSION: str

    def run(self, job: EngineInput, draft: ModelSpec | None = None) -> EngineResult: ...


# ---- the front end: what the CLI, batch, TUI and --compare-engines ask of an engine (issue #26) ----------------

@dataclass(frozen=True)
class PlanRequest:
    """One ``plan`` invocation as the core parsed it, engine-neutral. ``flags`` are the engine's own launch flags
    (without the model); ``measured`` holds device quantities the user measured, under the engine's own names
    (SGLang: free_before_gib / free_after_gib; vLLM: the vLLM oracle's cuda_total_mib, non_torch_gib, ...)."""

    gpu: GpuProfile
    model: ResolvedModel
    flags: tuple[str, ...]
    env: dict[str, str]
    version: str | None  # None: the engine's default (installed here, else its latest)
    measured: dict[str, float] = field(default_factory=dict)
    need_context: int | None = None  # --need-context / --need-concurrency: what the search must reach
    need_concurrency: int | None = None
    search: bool = True  # recommend flags when the launch does not fit (or does not reach the needs)


@dataclass
class PlanOutcome:
    """What an engine's front end answers for one request: everything the CLI prints or returns."""

    engine: str  # registry name: "sglang" | "vllm"
    version: str  # the release whose rules were used
    verdict: str  # fits | rejected | oom_risk
    exit_code: int  # 0 fits, 1 does not fit / the engine rejects (2 is raised as planner.errors.BadInput)
    text: str  # the human report, as printed
    json: dict[str, Any]  # the --json object (engine-specific keys under the engine's own names)
    launch: str | None = None  # the recommended launch line, runnable as printed
    # for --compare-engines: the same figures under each engine's rules (tokens in the KV cache, max concurrency
    # at the launch's context, the context length, the KV bytes); None where the engine did not get there
    capacity: dict[str, Any] = field(default_factory=dict)


class EngineFrontend(Protocol):
    """An engine as the core sees it (planner/engines/registry.py returns one per name)."""

    name: str  # "sglang"
    title: str  # "SGLang"
    versions: tuple[str, ...]  # the releases modelled, oldest first

    def default_version(self) -> tuple[str, str]: ...  # (release, where it came from: installed / latest)

    def plan(self, request: PlanRequest) -> PlanOutcome: ...

    def paste(self, tokens: list[str]) -> tuple[str | None, list[str], dict[str, str]] | None:
        """This engine's launch command (``vllm serve M ...``) -> (model, flags, env); None when not its form."""
        ...


__all__ = ["Engine", "EngineFrontend", "EngineInput", "EngineResult", "NeedLine", "PlanOutcome", "PlanRequest",
           "OUTCOME_OK", "OUTCOME_REJECTED", "OUTCOME_FAILED"]
