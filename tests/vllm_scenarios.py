"""The vLLM front-end scenarios the tests check, each answered by the oracle's committed results
(``tests/vllm_fixture.py`` regenerates them). Inputs are the vLLM oracle's reference cases
(``../shared/tools/vllm-oracle/examples/reference_cases.jsonl``): Qwen3.6-27B on an RTX PRO 6000 (NVML 97,887
MiB, CUDA 94.97 GiB, SM 12.0; non-torch 0.6, activation peak 2.84, graphs 0.89 GiB), Llama-3.1-8B on an H100."""

from __future__ import annotations

from functools import lru_cache

from vllm_fixture import no_estimates

from planner.catalog.catalog import resolve_model
from planner.engines.interface import PlanRequest
from planner.engines.vllm.frontend import FRONTEND
from planner.hardware.profiles import find_profile

Q36_MEASURED = {"non_torch_gib": 0.6, "peak_activation_gib": 2.84, "cudagraph_gib": 0.89}
MTP3 = ["--speculative-config", '{"method": "mtp", "num_speculative_tokens": 3}']


@lru_cache(maxsize=None)
def _model(name: str):
    return resolve_model(name)


def request(model: str, gpu: str, flags: list[str], version: str, measured: dict | None = None, **kw) -> PlanRequest:
    return PlanRequest(find_profile(gpu), _model(model), tuple(flags), {}, version, dict(measured or {}), **kw)


def plan(sizer, model: str, gpu: str, flags: list[str], version: str, measured: dict | None = None, **kw):
    return FRONTEND.plan(request(model, gpu, flags, version, measured, **kw), sizer=sizer, estimator=no_estimates)


def q36_defaults_034(sizer):
    return plan(sizer, "qwen3.6-27b", "rtxpro6000", [], "0.34", Q36_MEASURED)


def q36_defaults_033(sizer):
    return plan(sizer, "qwen3.6-27b", "rtxpro6000", [], "0.33", Q36_MEASURED)


def q36_mtp3_034(sizer):
    return plan(sizer, "qwen3.6-27b", "rtxpro6000", ["--max-model-len", "262144", "--max-num-seqs", "32", *MTP3],
                "0.34", Q36_MEASURED)


def q36_too_long_034(sizer):
    return plan(sizer, "qwen3.6-27b", "rtxpro6000",
                ["--gpu-memory-utilization", "0.70", "--max-model-len", "262144", "--max-num-seqs", "16"],
                "0.34", Q36_MEASURED)


def q36_need_concurrency_034(sizer):
    return plan(sizer, "qwen3.6-27b", "rtxpro6000", ["--max-model-len", "262144", "--max-num-seqs", "32", *MTP3],
                "0.34", Q36_MEASURED, need_concurrency=3)


def llama8b_h100_034(sizer):
    return plan(sizer, "llama-3.1-8b", "h100-sxm", ["--max-model-len", "32768"], "0.34",
                {"non_torch_gib": 0.4, "peak_activation_gib": 1.2, "cudagraph_gib": 0.5})


SCENARIOS = [q36_defaults_034, q36_defaults_033, q36_mtp3_034, q36_too_long_034, q36_need_concurrency_034,
             llama8b_h100_034]


def check_q36_defaults_034(sizer):
    from vllm_fixture import DATA  # noqa: PLC0415

    from planner.engines.vllm.check import check_log  # noqa: PLC0415

    text = (DATA / "q36-rtxpro6000-defaults-0.34.0.log").read_text()
    return check_log(text, gpu=find_profile("rtxpro6000"), sizer=sizer, estimator=no_estimates)


SCENARIOS.append(check_q36_defaults_034)


def q36_need_8_at_128k_034(sizer):
    """Three changes needed: vLLM's Mamba cap, an fp8 KV cache and the context the user asked for."""
    return plan(sizer, "qwen3.6-27b", "rtxpro6000", [], "0.34", Q36_MEASURED, need_context=131072, need_concurrency=8)


SCENARIOS.append(q36_need_8_at_128k_034)


def check_q36_text(sizer, text: str):
    """A log without measured figures, re-planned as Qwen3.6-27B 0.34 with the reference case's inputs."""
    from planner.engines.vllm.check import check_log  # noqa: PLC0415

    return check_log(text, gpu=find_profile("rtxpro6000"), version="0.34.0", model=_model("qwen3.6-27b"),
                     sizer=sizer, estimator=lambda ctx, launch: {}, measured=Q36_MEASURED)


def _recipes_831(sizer):
    from pathlib import Path  # noqa: PLC0415

    p = Path(__file__).resolve().parent / "data" / "calibration" / "vllm" / "recipes-831-qwen38-27b-rtxpro6000-mamba.log"
    # the excerpt lacks the args line a whole log opens with (check refuses a log without it): the defaults' line
    args = "INFO [startup.py:96] non-default args: {'model_tag': 'Qwen/Qwen3.6-27B', 'model': 'Qwen/Qwen3.6-27B'}\n"
    return check_q36_text(sizer, args + p.read_text())


SCENARIOS.append(_recipes_831)
