"""The vLLM branch of the JSON contract (issue #26): what ``plan --engine vllm --json``, ``plan check <vLLM log>
--json`` and a ``--batch`` line with ``"engine": "vllm"`` print, as JSON Schema (draft 2020-12) pieces that
:mod:`planner.schema` puts behind ``if engine == "vllm"``.

The object is vLLM's front end's (planner/engines/vllm/frontend.py ``VllmFrontend.plan``; ``check``:
planner/engines/vllm/check.py ``check_log``); ``summary`` carries the vLLM oracle's field names and values
(``summary_version`` 1; planner/engines/vllm/sizing.py ``SUMMARY_FIELDS`` = the oracle's, plus
``extensible_measure`` (0.34's extensible KV cache) and ``rule`` (the vLLM source line of a refusal)).
Every key is in docs/json.md "vLLM".
"""

from __future__ import annotations

from typing import Any

_STR = {"type": "string"}
_INT = {"type": "integer"}
_NUM = {"type": "number"}
_BOOL = {"type": "boolean"}
_STRS = {"type": "array", "items": _STR}
_INTS = {"type": "array", "items": _INT}
_OBJ = {"type": "object"}

VLLM_VERDICTS = ("fits", "oom_risk", "rejected")
VLLM_OUTCOMES = ("ok", "rejected", "startup_failed")


def _null(t: dict[str, Any]) -> dict[str, Any]:
    if set(t) == {"type"} and isinstance(t["type"], str):
        return {"type": [t["type"], "null"]}
    return {"anyOf": [t, {"type": "null"}]}


def _obj(props: dict[str, Any], optional: tuple[str, ...] = (), desc: str | None = None,
         closed: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object"}
    if desc:
        out["description"] = desc
    out.update(properties=props, required=[k for k in props if k not in optional])
    if closed:
        out["additionalProperties"] = False
    return out


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/$defs/{name}"}


# the summary's value types (the oracle's, read from its committed answers tests/data/vllm_frontend/oracle-*.jsonl.gz)
_SUMMARY_TYPES: dict[str, Any] = {
    "summary_version": {"const": 1}, "vllm_version": _STR, "outcome": {"enum": list(VLLM_OUTCOMES)},
    "validated": _null(_BOOL), "startup_ok": _null(_BOOL), "max_concurrency": _null(_NUM),
    "gpu_memory_utilization": _null(_NUM),
    "attention_backends": _null(_STRS), "cudagraph_capture_sizes": _null(_INTS), "kernel_block_sizes": _null(_INTS),
    "draft_layers": _null(_STRS),
    "groups": _null({"type": "array", "items": _OBJ}), "draft_kv_specs": _null({"type": "array", "items": _OBJ}),
    "extensible_measure": _null(_OBJ), "rule": _null(_STR),
}
_SUMMARY_STRINGS = ("stage", "error_type", "error_message", "model_runner", "architecture", "kv_cache_dtype", "dtype",
                    "mamba_cache_mode", "kv_cache_layout", "weights_source", "cudagraph_mode", "speculative_method")
_SUMMARY_BOOLS = ("enable_prefix_caching", "enable_chunked_prefill", "enable_extensible_kv_cache")
# always present: a launch vLLM refuses before resolving its config carries these (search.py rejected_summary)
_SUMMARY_REQUIRED = ("summary_version", "vllm_version", "outcome", "validated", "startup_ok", "stage", "error_type",
                     "error_message")


def summary() -> dict[str, Any]:
    from planner.engines.registry import optional  # noqa: PLC0415 - the oracle's names, in its order

    SUMMARY_FIELDS = optional("vllm", "sizing", "SUMMARY_FIELDS") or ()

    props: dict[str, Any] = {}
    for f in (*SUMMARY_FIELDS, "extensible_measure", "rule"):
        if f in _SUMMARY_TYPES:
            props[f] = _SUMMARY_TYPES[f]
        elif f in _SUMMARY_STRINGS:
            props[f] = _null(_STR)
        elif f in _SUMMARY_BOOLS:
            props[f] = _null(_BOOL)
        else:  # sizes, counts and bytes
            props[f] = _null(_INT)
    optional = tuple(k for k in props if k not in _SUMMARY_REQUIRED)
    return _obj(props, optional=optional, desc="The vLLM oracle's summary (summary_version 1): what vLLM resolves, "
                "measures and allocates, under the oracle's field names; a launch vLLM refuses before resolving its "
                "config carries only the first eight keys (and `rule`)")


def _estimate() -> dict[str, Any]:
    return _obj({"gib": _NUM, "how": _STR, "residual_gib": _null(_NUM), "gpu_class": _null(_STR)},
                desc="An input the user did not measure, estimated: its value, how, and its typical error on "
                "public logs of the GPU class")


def _recommendation() -> dict[str, Any]:
    short = _obj({"changes": _STRS, "max_concurrency": _null(_NUM), "max_model_len": _null(_INT)})
    rec = _obj({
        "tried": _INT, "needs": _obj({"context": _null(_INT), "concurrency": _null(_INT)}), "checked": _STR,
        "found": _BOOL,
        # found: the best launch that reaches the needs, robust to the estimates' residuals
        "changes": _STRS, "flags": _STRS, "command": _STR, "num_gpu_blocks": _null(_INT),
        "kv_cache_size_tokens": _null(_INT), "max_concurrency": _null(_NUM), "max_model_len": _null(_INT),
        "max_num_seqs": _null(_INT), "cudagraph_mode": _null(_STR), "alternatives": {"type": "array", "items": short},
        # not found: the best on the point estimates (borderline) and the nearest launch
        "borderline": _obj({"changes": _STRS, "command": _STR, "max_concurrency": _null(_NUM),
                            "max_model_len": _null(_INT)}),
        "nearest": _obj({"changes": _STRS, "outcome": {"enum": list(VLLM_OUTCOMES)}, "error_message": _null(_STR),
                         "max_concurrency": _null(_NUM)}),
    }, optional=("changes", "flags", "command", "num_gpu_blocks", "kv_cache_size_tokens", "max_concurrency",
                 "max_model_len", "max_num_seqs", "cudagraph_mode", "alternatives", "borderline", "nearest"),
        desc="vLLM's knob search: what it tried and for which needs; the launch it recommends when found")
    found = ["changes", "flags", "command", "num_gpu_blocks", "kv_cache_size_tokens", "max_concurrency",
             "max_model_len", "max_num_seqs", "cudagraph_mode", "alternatives"]
    rec["if"] = {"properties": {"found": {"const": True}}}
    rec["then"] = {"required": found}
    rec["else"] = {"not": {"anyOf": [{"required": [k]} for k in found]}}
    return rec


def plan_props() -> dict[str, Any]:
    """The keys of a vLLM plan, in the front end's order (after ``schema_version`` / ``id``)."""
    return {
        "engine": {"const": "vllm", "description": "vLLM's rules made this plan"},
        "vllm_version": {"enum": ["0.33.0", "0.34.0"]},
        "vllm_version_source": {"enum": ["given", "installed", "latest"]},
        "verdict": {"enum": list(VLLM_VERDICTS)},
        "exit_code": {"enum": [0, 1]},
        "why": _null(_STR),
        "model": _obj({"name": _STR, "serve": _STR}),
        "gpu": _obj({"id": _STR, "name": _STR, "nvml_total_mib": _NUM, "cuda_total_bytes": _INT,
                     "cuda_total_source": _STR, "sm": _STR}),
        "flags": _STRS,
        "needs": _obj({"context": _null(_INT), "concurrency": _null(_INT), "met": _BOOL}),
        "summary": _ref("vllm_summary"),
        "measured": {"type": "object", "additionalProperties": _NUM,
                     "propertyNames": {"enum": ["cuda_total_mib", "startup_used_gib", "weights_gib", "non_torch_gib",
                                                "peak_activation_gib", "cudagraph_gib", "cudagraph_actual_gib",
                                                "warmup_peak_gib", "torch_reserve_growth_gib"]}},
        "estimated": {"type": "object", "additionalProperties": _ref("vllm_estimate")},
        "confidence": _null(_obj({"level": {"enum": ["measured", "estimated", "low"]}, "note": _STR})),
        "recommendation": _null(_ref("vllm_recommendation")),
        "launch": _STR,
        "log": _STRS,
    }


def check_props() -> dict[str, Any]:
    """``plan check <vLLM log> --json``: the re-plan's keys and ``check`` (what the log says, next to the plan)."""
    row = _obj({"what": _STR, "log": {"type": ["number", "string"]}, "plan": {"type": ["number", "string", "null"]},
                "reproduced": _BOOL, "same_figures": _BOOL}, optional=("reproduced", "same_figures"))
    return {**plan_props(), "check": _obj({
        "log": {"type": "object", "description": "every fact read from the log (planner/engines/vllm/logs.py "
                "VllmLogFacts)"},
        "read": _STRS, "compare": {"type": "array", "items": row}},
        desc="The log next to the plan: the facts read, the measured inputs taken from it, each compared figure")}


def defs() -> dict[str, Any]:
    return {"vllm_summary": summary(), "vllm_estimate": _estimate(), "vllm_recommendation": _recommendation()}


def branch(props: dict[str, Any], version: dict[str, Any], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """One closed vLLM object: schema_version, ``extra`` (batch: id), then ``props``."""
    return _obj({"schema_version": version, **(extra or {}), **props},
                desc="vLLM's front end's object (planner/engines/vllm/frontend.py); docs/json.md \"vLLM\"")


IS_VLLM = {"properties": {"engine": {"const": "vllm"}}, "required": ["engine"]}
