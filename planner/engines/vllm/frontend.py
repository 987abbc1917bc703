"""vLLM's front end: what the CLI asks of the engine (:class:`planner.engines.interface.EngineFrontend`).

``FRONTEND.plan(request)`` maps the GPU profile to the device vLLM sees, takes the user's measured figures and
estimates the rest (each with its ``how``), sizes the launch with vLLM's own chain (:mod:`.search` ``evaluate``:
``config.resolve`` then ``sizing.size``), decides the verdict, searches vLLM's knobs when the launch does not start
or misses the needs, and renders the report (:mod:`.report`) and the JSON. Verdicts:

* ``fits`` (exit 0): vLLM starts (the summary's ``outcome`` is ``ok``);
* ``rejected`` (exit 1): vLLM refuses the flags or fails while sizing the KV cache, with vLLM's own message
  (``outcome`` ``rejected`` / ``startup_failed``);
* ``oom_risk`` (exit 1): vLLM 0.33 starts, but the CUDA graphs the user measured (``cudagraph_actual_gib``) exceed
  the estimate vLLM budgeted plus what ``gpu_memory_utilization`` leaves free (0.34's extensible KV cache measures
  after the capture, so there is no post-KV need there).
"""

from __future__ import annotations

import importlib.metadata
import json
from dataclasses import replace
from typing import Any

from planner.engines.interface import PlanOutcome, PlanRequest
from planner.engines.vllm import launch as L
from planner.engines.vllm import report
from planner.engines.vllm.inputs import GIB, LATEST, MIB, VERSIONS, Device
from planner.engines.vllm.search import (Candidate, Context, Estimate, Evaluation, SearchResult, concurrency_of,
                                         evaluate, reaches, search)
from planner.errors import BadInput
from planner.hardware.profiles import GpuProfile
from planner.schema import SCHEMA_VERSION

# cudaMemGetInfo totals read in public vLLM logs ("(.../T GiB)"), for profiles that hold no measured CUDA total
CUDA_TOTAL_READINGS: dict[str, tuple[float, str]] = {
    "rtxpro6000": (94.97, "third-party vLLM logs of this card print '(.../94.97 GiB)'; "
                          "--cuda-total-mib gives your card's own"),
}


ESTIMATED = "estimated"
TYPICAL_RESERVED_MIB = 500  # the middle of the profiles' NVML 'Reserved' readings (354-763 MiB)
RESERVED_SPREAD_MIB = 263  # the farthest reading from it (763 MiB, a100-80gb): the estimate's residual


def version_of(version: str | None) -> tuple[str, str]:
    """(release, where it came from): '0.34' / 'v0.34.0' -> '0.34.0'; None -> the vllm installed here, else the
    latest modelled (an installed release that is not modelled is refused by name)."""
    if version is None:
        try:
            got = importlib.metadata.version("vllm")
        except importlib.metadata.PackageNotFoundError:
            return LATEST, "latest"
        rel = _normal(got)
        if rel is None:
            raise BadInput(f"vLLM {got} (installed here) is not modelled; modelled: {', '.join(VERSIONS)} "
                           "(give --vllm-version)")
        return rel, "installed"
    rel = _normal(version)
    if rel is None:
        raise BadInput(f"--vllm-version {version}: not modelled; modelled: {', '.join(VERSIONS)}")
    return rel, "given"


def _normal(v: str) -> str | None:
    v = v.strip().lstrip("v").split("+", 1)[0]
    for rel in VERSIONS:
        if v == rel or v == rel.rsplit(".", 1)[0]:
            return rel
    return None


def device_of(gpu: GpuProfile, measured: dict[str, float], world: int = 1) -> tuple[Device, str]:
    """The device as vLLM sees it, and where its CUDA total came from (measured, the profile's, a vLLM log's
    reading, NVML less the profile's driver reserve, else estimated from a typical reserve: ``src`` then starts
    with "estimated"). Refused by name: AMD (ROCm), unified memory, a profile without the NVML total or SM."""
    if gpu.vendor != "nvidia":
        raise BadInput(f"vLLM on {gpu.display_name} (ROCm) is not modelled; vLLM is modelled on NVIDIA GPUs")
    if gpu.unified_memory:
        raise BadInput(f"vLLM on {gpu.display_name} (unified memory) is not modelled")
    if gpu.memory_total_mib is None or gpu.compute_capability is None:
        raise BadInput(f"vLLM on {gpu.display_name}: the profile lacks the NVML total or the compute capability")
    if "cuda_total_mib" in measured:
        total, src = float(measured["cuda_total_mib"]), "measured (--cuda-total-mib)"
    elif gpu.cuda_total_mib is not None:
        total, src = float(gpu.cuda_total_mib), f"the {gpu.id} profile's cudaMemGetInfo total"
    elif gpu.id in CUDA_TOTAL_READINGS:
        gib, why = CUDA_TOTAL_READINGS[gpu.id]
        total, src = gib * 1024.0, why
    elif gpu.driver_reserved_mib is not None:
        # NVML's total less its 'Reserved' is cudaMemGetInfo's total: exact to 1 MiB on every profile holding both
        # (a100-80gb, h100-nvl, h100-sxm, l4, l40s, rtx3090, rtx4090, rtx6000-ada)
        total = float(gpu.memory_total_mib - gpu.driver_reserved_mib)
        src = f"NVML total - the profile's driver reserve {gpu.driver_reserved_mib} MiB"
    else:
        total = float(gpu.memory_total_mib - TYPICAL_RESERVED_MIB)
        src = (f"{ESTIMATED}: NVML total - a typical driver reserve {TYPICAL_RESERVED_MIB} MiB (the profiles' readings: "
               f"354-763 MiB; give --cuda-total-mib: torch.cuda.mem_get_info()[1] / 2**20)")
    cuda = int(round(total / 1024.0 * GIB))  # as the vLLM oracle converts it
    name = gpu.nvml_names[0] if gpu.nvml_names else gpu.display_name
    return Device(float(gpu.memory_total_mib), cuda, gpu.compute_capability, name, max(8, world)), src


def _world(flags: list[str]) -> int:
    n = 1
    for opt, short in (("--tensor-parallel-size", "-tp"), ("--pipeline-parallel-size", "-pp"),
                       ("--data-parallel-size", "-dp")):
        v = L.flag_value(flags, opt) or L.flag_value(flags, short)
        if v and v.isdigit():
            n *= int(v)
    return n


def _explicit_len(flags: list[str]) -> int | None:
    v = L.flag_value(flags, "--max-model-len")
    return int(v) if v and v.isdigit() else None


def verdict_of(summary: dict[str, Any], measured: Any = None) -> tuple[str, int, str | None]:
    """(verdict, exit code, why) for one sized launch (see the module's docstring)."""
    outcome = summary.get("outcome")
    if outcome in ("rejected", "startup_failed"):
        hint = f" ({summary['rule']})" if summary.get("rule") else ""
        return "rejected", 1, f"{summary.get('error_type') or 'Error'}: {summary.get('error_message')}{hint}"
    if outcome != "ok":
        raise BadInput(f"vLLM sizing ended in '{outcome}': {summary.get('error_message') or 'no message'}")
    need = _post_kv_need(summary, measured)
    if need is not None and need > 0:
        return "oom_risk", 1, (f"the CUDA graphs take {need / GIB:.2f} GiB more than vLLM budgeted and "
                               "gpu_memory_utilization leaves free")
    return "fits", 0, None


def _post_kv_need(summary: dict[str, Any], measured: Any) -> int | None:
    """0.33 (and 0.34 without the extensible cache): graphs captured after the KV cache beyond vLLM's estimate,
    less what the utilization leaves free (T - requested). None when not applicable."""
    actual = getattr(measured, "cudagraph_actual_gib", None) if measured is not None else None
    if actual is None or summary.get("enable_extensible_kv_cache"):
        return None
    est = summary.get("cudagraph_memory_estimate_bytes") or 0
    free = (summary.get("init_free_bytes") or 0) - (summary.get("requested_memory_bytes") or 0)
    return int(round(actual * GIB)) - est - max(free, 0)


def capacity_of(summary: dict[str, Any]) -> dict[str, Any]:
    """The figures --compare-engines sets beside SGLang's (planner/engines/sglang/frontend.py ``capacity``'s keys):
    vLLM reports its concurrency at ``max_model_len`` only (``kv_cache_utils.py:1082 @0.34.0``), so that is the
    context it is given at; ``max_concurrency`` is the whole requests at once (``min(max_num_seqs, floor(x))``),
    ``max_concurrency_x`` vLLM's figure. None where vLLM does not start."""
    ok = summary.get("outcome") == "ok"
    ctx = summary.get("max_model_len")
    return {"kv_tokens": summary.get("kv_cache_size_tokens") if ok else None, "context_len": ctx,
            "max_running_requests": summary.get("max_num_seqs"), "concurrency_context": ctx,
            "max_concurrency": concurrency_of(summary) if ok else None,
            "max_concurrency_x": summary.get("max_concurrency") if ok else None,
            "kv_bytes": summary.get("kv_cache_bytes") if ok else None,
            "num_gpu_blocks": summary.get("num_gpu_blocks") if ok else None,
            "verdict": "fits" if ok else "rejected"}


def pessimistic(ctx: Context, ev: Evaluation) -> Evaluation | None:
    """``ev``'s launch re-sized with every estimate raised by its residual on public logs (the side that leaves
    less for the KV cache); None when nothing was estimated with a residual."""
    if not any(e.residual_gib for e in ev.estimated.values()) and not ctx.cuda_residual_bytes:
        return None
    given = dict(ctx.given)
    for k, e in ev.estimated.items():
        given[k] = e.gib + (e.residual_gib or 0.0)
    device = replace(ctx.device, cuda_total_bytes=ctx.device.cuda_total_bytes - ctx.cuda_residual_bytes)
    try:
        return evaluate(replace(ctx, device=device, given=given, cuda_residual_bytes=0), ev.flags)
    except BadInput:
        return None


def _confidence(ctx: Context, ev: Evaluation) -> dict[str, Any]:
    """Measured vs estimated, and whether the verdict holds with every estimate off by its class's error."""
    if not ev.estimated and not ctx.cuda_residual_bytes:
        return {"level": "measured", "note": "every boot measurement given"}
    worse = pessimistic(ctx, ev)
    if worse is None:
        return {"level": "estimated", "note": "estimated inputs without a residual on public logs"}
    res = ", ".join([f"{k} +{e.residual_gib:g}" for k, e in ev.estimated.items() if e.residual_gib]
                    + ([f"cuda_total -{ctx.cuda_residual_bytes / GIB:.2f}"] if ctx.cuda_residual_bytes else []))
    same = worse.summary.get("outcome") == ev.summary.get("outcome")
    note = (f"with each estimate raised by its residual ({res} GiB): "
            + (f"{worse.summary.get('outcome')}, {worse.summary.get('num_gpu_blocks')} blocks" if same else
               f"{worse.summary.get('outcome')}: {worse.summary.get('error_message')}"))
    return {"level": "estimated" if same else "low", "note": note}


def robust_best(ctx: Context, found: SearchResult, need_context: int | None, need_concurrency: int | None,
                tries: int = 8) -> tuple[Candidate | None, str]:
    """The best candidate that still reaches the needs with the estimates raised by their residuals (a launch at
    the edge of vLLM's checks on estimated inputs is not recommended); (candidate, how it was checked)."""
    reaching = [c for c in found.ranked if c.reaches][:tries]
    if not reaching:
        return None, ""
    for c in reaching:
        worse = pessimistic(ctx, c.ev)
        if worse is None:
            return c, "sized on measured inputs" if not c.ev.estimated else "estimates without a residual"
        if reaches(worse.summary, need_context, need_concurrency):
            return c, "holds with every estimate raised by its residual on public logs"
    return None, f"none of the {len(reaching)} best holds with the estimates raised by their residuals"


def _draft_of(flags: list[str]):
    """--speculative-config's "model" (EAGLE3's drafter) as the catalog resolves it: a catalog draft
    (``plan models``), a config.json, a checkpoint dir or a Hugging Face id; None without one."""
    raw = None
    for i, f in enumerate(flags):
        if f == "--speculative-config" and i + 1 < len(flags):
            raw = flags[i + 1]
        elif f.startswith("--speculative-config="):
            raw = f.split("=", 1)[1]
    try:
        sc = json.loads(raw) if raw else None
    except ValueError:
        return None  # vLLM's parser answers it
    if not isinstance(sc, dict) or not isinstance(sc.get("model"), str):
        return None
    from planner.catalog.drafts import FLAG, resolve_draft  # noqa: PLC0415

    try:
        return resolve_draft(sc["model"]).spec
    except BadInput as e:
        raise BadInput(str(e).replace(FLAG, "vLLM --speculative-config's model")) from None


class VllmFrontend:
    name = "vllm"
    title = "vLLM"
    versions = VERSIONS

    def default_version(self) -> tuple[str, str]:
        return version_of(None)

    def plan(self, request: PlanRequest, sizer=None, estimator=None) -> PlanOutcome:
        version, vsrc = version_of(request.version)
        flags = list(request.flags)
        device, dsrc = device_of(request.gpu, dict(request.measured), _world(flags))
        cuda_res = int(RESERVED_SPREAD_MIB * MIB) if dsrc.startswith(ESTIMATED) else 0
        ctx = Context(version, request.model.spec, device, dict(request.measured), dict(request.env), sizer, estimator,
                      cuda_res, _draft_of(flags))
        ev = evaluate(ctx, flags)
        verdict, code, why = verdict_of(ev.summary, ev.measured)
        # an explicit --max-model-len is the context the user asked for: the search keeps it unless told less
        need_context = request.need_context or _explicit_len(flags)
        needs_met = reaches(ev.summary, request.need_context, request.need_concurrency)
        found = None
        # a launch vLLM's parser refuses (a misspelt or unknown flag) is fixed by its message, not by a search
        if request.search and not (needs_met and ev.ok) and ev.summary.get("stage") != "serve_args":
            found = search(ctx, ev, need_context, request.need_concurrency)
            if found.best is None and need_context != request.need_context:
                found = search(ctx, ev, request.need_context, request.need_concurrency)
        if verdict == "fits" and not needs_met:
            code = 1
        model = L.model_arg(request.model)
        best, robust = robust_best(ctx, found, need_context, request.need_concurrency) if found else (None, "")
        if found is not None and best is None and found.best is not None and need_context != request.need_context:
            best, robust = robust_best(ctx, found, request.need_context, request.need_concurrency)
        line = L.serve_line(model, best.ev.flags if best else flags, request.env)
        data = {
            "schema_version": SCHEMA_VERSION,  # the JSON contract's (planner/schema: the vllm_* branch)
            "engine": "vllm", "vllm_version": version, "vllm_version_source": vsrc, "verdict": verdict,
            "exit_code": code, "why": why, "model": {"name": request.model.spec.name, "serve": model},
            "gpu": {"id": request.gpu.id, "name": device.name, "nvml_total_mib": device.gpu_total_mib,
                    "cuda_total_bytes": device.cuda_total_bytes, "cuda_total_source": dsrc, "sm": device.sm},
            "flags": flags, "needs": {"context": request.need_context, "concurrency": request.need_concurrency,
                                      "met": needs_met},
            "summary": ev.summary,
            "measured": {k: v for k, v in request.measured.items()},
            "estimated": {**({"cuda_total_gib": Estimate(device.cuda_total_bytes / GIB, dsrc.split(": ", 1)[-1],
                                                         round(cuda_res / GIB, 4),
                                                         "the profiles' driver reserve readings").as_dict()}
                             if cuda_res else {}),
                          **{k: e.as_dict() for k, e in ev.estimated.items()}},
            "confidence": _confidence(ctx, ev) if ev.ok else None,
            "recommendation": _recommendation(found, best, robust, model, request.env),
            "launch": line, "log": ev.log,
        }
        cap = {**capacity_of(ev.summary), "verdict": verdict}
        return PlanOutcome("vllm", version, verdict, code, report.render(data), data, line, cap)

    def paste(self, tokens: list[str]) -> tuple[str | None, list[str], dict[str, str]] | None:
        """``vllm serve M ...``, ``python -m vllm.entrypoints.openai.api_server --model M ...``, ``docker run ...
        vllm/vllm-openai:vX ...`` -> (model, flags, env), read by the core's launcher reader (planner/paste.py; the
        release a paste names is the core's too)."""
        from planner.paste import parse_vllm_paste  # noqa: PLC0415

        got = parse_vllm_paste(list(tokens))
        return None if got is None else (got[0], list(got[1]), dict(got[2]))


def _recommendation(found: SearchResult | None, best: Candidate | None, robust: str, model: str,
                    env: dict[str, str]) -> dict[str, Any] | None:
    if found is None:
        return None
    out: dict[str, Any] = {"tried": found.tried, "needs": found.needs, "checked": robust}
    if best is None:
        near = found.ranked[0] if found.ranked else None
        out["found"] = False
        if found.best is not None:  # reaches on the point estimates, not with them raised by their residuals
            b = found.best
            out["borderline"] = {"changes": b.chosen, "command": L.serve_line(model, b.ev.flags, env),
                                 "max_concurrency": b.ev.summary.get("max_concurrency"),
                                 "max_model_len": b.ev.summary.get("max_model_len")}
        if near is not None:
            out["nearest"] = {"changes": near.chosen, "outcome": near.ev.summary.get("outcome"),
                              "error_message": near.ev.summary.get("error_message"),
                              "max_concurrency": near.ev.summary.get("max_concurrency")}
        return out
    s = best.ev.summary
    out.update({"found": True, "changes": best.chosen, "flags": best.ev.flags,
                "command": L.serve_line(model, best.ev.flags, env),
                "num_gpu_blocks": s.get("num_gpu_blocks"), "kv_cache_size_tokens": s.get("kv_cache_size_tokens"),
                "max_concurrency": s.get("max_concurrency"), "max_model_len": s.get("max_model_len"),
                "max_num_seqs": s.get("max_num_seqs"), "cudagraph_mode": s.get("cudagraph_mode"),
                "alternatives": [{"changes": c.chosen, "max_concurrency": c.ev.summary.get("max_concurrency"),
                                  "max_model_len": c.ev.summary.get("max_model_len")}
                                 for c in found.ranked[found.ranked.index(best) + 1:][:3] if c.reaches]})
    return out


FRONTEND = VllmFrontend()

__all__ = ["CUDA_TOTAL_READINGS", "FRONTEND", "VllmFrontend", "capacity_of", "device_of", "verdict_of", "version_of"]
