"""``plan check`` on a vLLM boot log: re-plan the launch the log shows with the figures it measured, compare, and
explain a failure with the fix.

The log is read by :func:`planner.engines.vllm.logs.read_log`. What the re-plan takes from it (the vLLM oracle's
input names; everything else is estimated as for ``plan``, each estimate with its ``how``):

* the launch: the model and the flags of ``non-default args: {...}`` (``entrypoints/common/startup.py:96``);
* ``weights_gib`` = ``Model loading took X GiB`` (the torch memory of the weight load);
* ``cuda_total_mib`` = the ``T`` of ``Free memory on device (F/T GiB) on startup`` (``gpu_worker.py:1152-1172
  @0.34.0``), where printed;
* ``cudagraph_gib`` / ``cudagraph_actual_gib`` = ``CUDA graph pool memory: A GiB (actual), E GiB (estimated)``;
* ``non_torch_gib`` = consumed - weights, ``peak_activation_gib`` = the printed peak - the CUDA-graph estimate
  (the same line prints ``peak_activation_memory = transient peak + estimate``, ``gpu_worker.py:771-773``);
* where only ``Available KV cache memory`` is printed (a boot that failed while sizing the KV cache), its
  terms' sum: ``requested - weights - available`` = non-torch + transient peak + graphs
  (``gpu_worker.py:776-780 @0.34.0``), taken as the CUDA-graph estimate (or, when the log prints that, as the
  transient peak): the pessimistic split for 0.34's measurement, which keeps the estimate free on top of the
  graphs captured and the peak 1.75 times; 0.33 and the profile's capacity read only the sum.
"""

from __future__ import annotations

import json
import math
from typing import Any

from planner.engines.interface import PlanOutcome, PlanRequest
from planner.engines.vllm.frontend import FRONTEND, device_of, version_of
from planner.engines.vllm.inputs import GIB
from planner.errors import BadInput

# non-default args that say nothing about memory (the server's plumbing): not passed to the re-plan
_PLUMBING = {"model", "model_tag", "served_model_name", "host", "port", "api_key", "uvicorn_log_level",
             "disable_log_requests", "enable_log_requests", "disable_log_stats", "enable_auto_tool_choice",
             "tool_call_parser", "reasoning_parser", "chat_template", "dispatch_function", "subparser",
             "trust_remote_code", "download_dir", "tokenizer", "revision", "seed", "disable_uvicorn_access_log",
             "allowed_local_media_path", "middleware", "ssl_keyfile", "ssl_certfile", "root_path"}


def flags_of_args(args: dict[str, Any]) -> list[str]:
    """vLLM's ``non-default args`` dict back into ``vllm serve`` flags (``True`` -> ``--x``, ``False`` ->
    ``--no-x``, dicts as JSON), the plumbing left out."""
    out: list[str] = []
    for k, v in args.items():
        if k in _PLUMBING or v is None:
            continue
        opt = "--" + k.replace("_", "-")
        if v is True:
            out.append(opt)
        elif v is False:
            out.append("--no-" + k.replace("_", "-"))
        elif isinstance(v, dict):
            out += [opt, json.dumps(v)]
        elif isinstance(v, (list, tuple)):
            out += [opt, *map(str, v)]
        else:
            out += [opt, str(v)]
    return out


def measured_of(facts: Any, cuda_total_bytes: int | None, util: float | None) -> tuple[dict[str, float], list[str]]:
    """The oracle's measured inputs the log gives, and how each was read."""
    got: dict[str, float] = {}
    how: list[str] = []
    if facts.cuda_total_gib is not None:
        got["cuda_total_mib"] = facts.cuda_total_gib * 1024.0
        how.append(f"cuda_total_mib: the log's total {facts.cuda_total_gib} GiB")
    if facts.weights_gib is not None:
        got["weights_gib"] = facts.weights_gib
        how.append(f"weights_gib: 'Model loading took {facts.weights_gib} GiB'")
    if facts.cudagraph_estimate_gib is not None:
        got["cudagraph_gib"] = facts.cudagraph_estimate_gib
        how.append(f"cudagraph_gib: the CUDA-graph estimate {facts.cudagraph_estimate_gib} GiB")
    if facts.cudagraph_actual_gib is not None:
        got["cudagraph_actual_gib"] = facts.cudagraph_actual_gib
    if facts.startup_free_gib is not None and facts.cuda_total_gib is not None:
        got["startup_used_gib"] = round(max(facts.cuda_total_gib - facts.startup_free_gib, 0.0), 4)
        how.append(f"startup_used_gib: total {facts.cuda_total_gib} - free {facts.startup_free_gib} GiB on startup")
    if facts.consumed_gib is not None:  # the 'Free memory on device ... Actual usage is' line (V1)
        if facts.weights_gib is not None:
            got["non_torch_gib"] = round(max(facts.consumed_gib - facts.weights_gib, 0.0), 4)
            how.append(f"non_torch_gib: consumed {facts.consumed_gib} - weights {facts.weights_gib} GiB")
        if facts.peak_activation_gib is not None:
            got["peak_activation_gib"] = round(max(facts.peak_activation_gib - got.get("cudagraph_gib", 0.0), 0.0), 4)
            how.append(f"peak_activation_gib: the printed peak {facts.peak_activation_gib} - the graph estimate")
    elif (facts.available_kv_gib is not None and facts.weights_gib is not None and cuda_total_bytes is not None
          and util is not None):
        requested = math.ceil(cuda_total_bytes * util) / GIB
        rest = requested - facts.weights_gib - facts.available_kv_gib - got.get("cudagraph_gib", 0.0)
        if rest < 0:
            raise BadInput(f"the log's figures disagree: requested {requested:.2f} GiB < weights {facts.weights_gib} "
                           f"+ available KV {facts.available_kv_gib} GiB (another CUDA total or utilization?)")
        # the pessimistic split: 0.34 keeps the graphs' estimate free on top of the graphs captured
        # (extensible_kv_cache.py:592-618), the transient peak once (+ its 0.75 margin), non-torch memory once
        part = "peak_activation_gib" if "cudagraph_gib" in got else "cudagraph_gib"
        got["non_torch_gib"] = 0.0
        got.setdefault("peak_activation_gib", 0.0)
        got[part] = round(rest, 4)
        how.append(f"non-torch + peak activation{'' if part == 'peak_activation_gib' else ' + graphs'} = requested "
                   f"{requested:.2f} - weights - available KV {facts.available_kv_gib} GiB = {rest:.2f} GiB, taken "
                   f"as {part} (the split the log does not give, on its pessimistic side)")
    return got, how


def _model(facts: Any, model: Any):
    if model is not None:
        return model
    if not facts.model:
        raise BadInput("the vLLM log names no model (no 'non-default args' line): give --model")
    from planner.catalog.catalog import resolve_model  # noqa: PLC0415

    return resolve_model(facts.model)


def _gpu(facts: Any, gpu: Any):
    if gpu is not None and not isinstance(gpu, str):
        return gpu
    from planner.hardware.profiles import find_profile  # noqa: PLC0415

    name = gpu or facts.gpu
    if not name:
        raise BadInput("the vLLM log names no GPU: give --gpu")
    return find_profile(name)


def check_log(text: str, gpu: Any = None, version: str | None = None, model: Any = None,
              sizer=None, estimator=None, measured: dict[str, float] | None = None) -> PlanOutcome:
    """Re-plan the launch a vLLM log shows with what it measured (``measured``: the user's own figures, which win
    over the log's); compare; explain a failure and its fix."""
    from planner.engines.vllm.logs import read_log  # noqa: PLC0415

    facts = read_log(text)
    if facts.version and version is None:
        try:
            version_of(facts.version)
            version = facts.version
        except BadInput:
            raise BadInput(f"a vLLM log from vLLM {facts.version}, not modelled (modelled: 0.33.0, 0.34.0); give "
                           "--vllm-version to check it under 0.33 / 0.34's rules") from None
    profile, resolved = _gpu(facts, gpu), _model(facts, model)
    if not facts.args:  # re-planning vLLM's defaults would judge a launch the log does not show
        raise BadInput("the vLLM log has no 'non-default args: {...}' line (vLLM prints it as the server starts), so "
                       "the launch's flags are unknown: give the whole log")
    flags = flags_of_args(facts.args)
    rel = version_of(version)[0]
    device, _ = device_of(profile, {"cuda_total_mib": facts.cuda_total_gib * 1024.0} if facts.cuda_total_gib else {})
    util = facts.gpu_memory_utilization or (1.0 if rel >= "0.34" else 0.92)
    got, how = measured_of(facts, device.cuda_total_bytes, util)
    req = PlanRequest(profile, resolved, tuple(flags), {}, rel, {**got, **(measured or {})})
    out = FRONTEND.plan(req, sizer=sizer, estimator=estimator)
    lines, rows = _compare(facts, out.json["summary"])
    head = [f"plan check: a vLLM {facts.version or '(version not printed)'} log, re-planned under vLLM {rel}'s rules",
            "  read from the log: " + ("; ".join(how) if how else "no measured figure")]
    head += lines
    out.json["check"] = {"log": facts.as_dict(), "read": how, "compare": rows}
    out.text = "\n".join(head) + "\n\n" + out.text
    return out


def _compare(facts: Any, s: dict[str, Any]) -> tuple[list[str], list[dict[str, Any]]]:
    rows = []
    avail = s.get("available_kv_bytes")
    for name, logged, planned in (
            ("Available KV cache memory (GiB)", facts.available_kv_gib, None if avail is None else avail / GIB),
            ("GPU KV cache size (tokens)", facts.kv_tokens, s.get("kv_cache_size_tokens")),
            ("Maximum concurrency (x)", facts.concurrency, s.get("max_concurrency"))):
        if logged is not None:
            rows.append({"what": name, "log": logged, "plan": planned})
    lines = [f"  {r['what']}: log {r['log']:,}, plan " + ("-" if r["plan"] is None else
             (f"{r['plan']:,.2f}" if isinstance(r["plan"], float) else f"{r['plan']:,}")) for r in rows]
    f = facts.failure
    if f is not None:
        from planner.engines.vllm.logs import read_log  # noqa: PLC0415

        mine = read_log(s.get("error_message") or "").failure if s.get("error_message") else None
        same = mine is not None and mine.kind == f.kind
        exact = same and mine.numbers == f.numbers
        lines.append(f"  the log's failure: {f.message[:160]}")
        if exact:
            lines.append("  the plan reproduces it, figure for figure")
        elif same:
            diff = ", ".join(f"{k} {f.numbers.get(k)} logged vs {v} planned" for k, v in mine.numbers.items()
                             if f.numbers.get(k) != v)
            lines.append(f"  the plan fails the same check ({f.kind}): {diff}")
        else:
            lines.append(f"  the plan does not reproduce it ({s.get('outcome')}: {s.get('error_message') or 'starts'})")
        rows.append({"what": "failure", "log": f.kind, "plan": s.get("error_message"), "reproduced": same,
                     "same_figures": exact})
    return lines, rows


__all__ = ["check_log", "flags_of_args", "measured_of"]
