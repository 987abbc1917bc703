"""The JSON contract: a versioned JSON Schema (draft 2020-12) for every JSON output of ``plan``.

Three kinds, one file each in this package (``plan.schema.json``, ``check.schema.json``,
``batch.schema.json``), printed by ``plan schema KIND``:

- ``plan``: ``plan ... --json`` (also with ``--verbose`` / ``--compare-releases``, which change only the text;
  with ``--gpu any`` / a list of GPU types, the hardware search's object, :mod:`planner.schema.hardware`);
- ``check``: ``plan check LOG --json``;
- ``batch``: one line of ``plan --batch FILE`` (a result, or a line's error).

Each describes both engines: an output whose ``engine`` is ``"vllm"`` is vLLM's front end's object
(:mod:`planner.schema.vllm`), any other SGLang's.

Every output carries ``schema_version`` (= :data:`SCHEMA_VERSION`); each schema's ``$id`` names that
version. The files are generated from :func:`build` (``python -m planner.schema --write``); a test checks
they are current. The versioning policy and every key are in docs/json.md.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

# MAJOR.MINOR. MAJOR: a key removed, renamed or retyped, a value's meaning changed, a verdict value added
# or removed. MINOR: a key added (old consumers that ignore unknown keys keep working).
SCHEMA_VERSION = "1.1"  # 1.1: "engine" (issue #26)
KINDS = ("plan", "check", "batch")
ID_BASE = "urn:gpu-memory-planner:schema"  # a name, not a download address: the files ship in the package
HERE = Path(__file__).parent

# verdict: fits (exit 0); oom_risk (pools fit, a later allocation likely does not); rejected (SGLang's ServerArgs
# refuses the flags); startup_failed (SGLang accepts the flags, then raises while starting, e.g. "Not enough
# memory"); bad_input (batch lines only: the line, or an SGLang flag in it, is bad input: exit 2 in the CLI)
PLAN_VERDICTS = ("fits", "oom_risk", "rejected", "startup_failed")
BATCH_ERROR_VERDICT = "bad_input"
OUTCOMES = ("ok", "rejected", "startup_failed")

_STR = {"type": "string"}
_INT = {"type": "integer"}
_NUM = {"type": "number"}
_BOOL = {"type": "boolean"}
_STRS = {"type": "array", "items": _STR}


def _null(t: dict[str, Any]) -> dict[str, Any]:
    """``t`` or null."""
    if set(t) == {"type"} and isinstance(t["type"], str):
        return {"type": [t["type"], "null"]}
    return {"anyOf": [t, {"type": "null"}]}


def _obj(props: dict[str, Any], optional: tuple[str, ...] = (), desc: str | None = None) -> dict[str, Any]:
    """A fixed-shape object: every key in ``props`` required except ``optional``; no other key."""
    out: dict[str, Any] = {"type": "object"}
    if desc:
        out["description"] = desc
    out.update(properties=props, required=[k for k in props if k not in optional], additionalProperties=False)
    return out


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/$defs/{name}"}


def _summary() -> dict[str, Any]:
    from planner.engines.registry import optional  # noqa: PLC0415 - the plan / check schemas are SGLang's summary

    SUMMARY_FIELDS = optional("sglang", "summary", "SUMMARY_FIELDS")

    types: dict[str, Any] = {
        "summary_version": {"const": 1}, "sglang_version": _STR, "outcome": {"enum": list(OUTCOMES)},
        "validated": _BOOL, "startup_ok": _null(_BOOL), "free_before_load_gib": _NUM, "free_after_load_gib": _NUM,
    }
    strings = ("stage", "error_type", "error_message", "attention_backend", "mamba_scheduler_strategy",
               "speculative_algorithm", "kv_cache_dtype", "mamba_ssm_dtype")
    # kv_cell_bytes_per_token: a float for a hybrid SWA pool (its --swa-full-tokens-ratio term), else an integer
    numbers = ("mem_fraction_static", "mamba_full_memory_ratio", "pre_model_load_gib", "rest_gib_before_mamba",
               "kv_cell_bytes_per_token")
    bools = ("disable_radix_cache", "disable_overlap_schedule")
    props = {}
    for f in (*SUMMARY_FIELDS, "free_before_load_gib", "free_after_load_gib"):  # + the planner's inputs
        if f in types:
            props[f] = types[f]
        elif f in strings:
            props[f] = _null(_STR)
        elif f in numbers:
            props[f] = _null(_NUM)
        elif f in bools:
            props[f] = _null(_BOOL)
        else:  # counts and bytes
            props[f] = _null(_INT)
    return _obj(props, desc="The sglang-oracle summary (summary_version 1): what SGLang resolves and allocates, "
                "field by field as the oracle reports it; null where it does not apply or the run stopped before")


def _plan_defs() -> dict[str, Any]:
    candidate = _obj({
        "flags": _STRS, "chosen": _STRS, "concurrency_at_need": _INT, "kv_tokens": _INT, "running": _INT,
        "longest_request": _INT, "headroom_left_bytes": _INT,
    }, desc="One searched configuration")
    rec = {"flags": _STRS, "chosen": _STRS, "command": _STR, "why": _STR, "runner_up": _null(_STR),
           "summary": _ref("summary"),
           **{k: v for k, v in candidate["properties"].items() if k not in ("flags", "chosen")}}
    plan = _obj({
        "verdict": {"enum": list(PLAN_VERDICTS)},
        "verdict_text": _STR,
        "binding_constraint": _STR,
        "suggestions": _STRS,
        "sglang_version": _STR,
        "sglang_version_source": _STR,
        "units": _STR,
        "gpu": _obj({"id": _STR, "name": _STR, "nvml_total_mib": _INT}),
        "model": _obj({"name": _STR, "architecture": _STR, "weight_bytes": _INT, "weight_source": _STR,
                       "weight_detail": _null(_STR)}),
        "flags": _STRS,
        "env": {"type": "object", "additionalProperties": _STR},
        "inputs": _obj({
            "free_before_load_bytes": _INT, "free_before_source": _STR,
            "free_after_load_bytes": _INT, "free_after_source": _STR,
            "assumptions": {"type": "array", "items": _obj({"name": _STR, "value": _STR, "why": _STR})},
        }),
        "resolved": _null(_obj({
            "defaulted": {"type": "object", "additionalProperties": _STR},
            "warnings": _STRS,
            "mem_fraction_static": _null(_NUM),
            "mamba_ssm_dtype": _null(_STR),
            "mamba_ssm_dtype_from": _null(_STR),
        })),
        "pools": {"type": "array", "items": _obj({
            "key": _STR, "label": _STR, "bytes": _INT, "gib": _NUM, "formula": _STR, "rule": _null(_STR)})},
        "after_pools": _null(_obj({
            "left_bytes": _INT,
            "needs": {"type": "array", "items": _obj({"label": _STR, "bytes": _INT, "how": _STR})},
        })),
        "capacity": _null(_obj({
            "max_running_requests": _INT, "kv_tokens": _INT, "context_len": _INT, "longest_request_tokens": _INT,
            "concurrency_at_context_len": _INT})),
        "confidence": _null(_obj({
            "margin_bytes": _INT, "post_pool_error_gib": _NUM, "calibration_logs": _INT,
            "gpu_class": _STR, "class_logs": _INT, "class_label": _STR, "measured": _STRS,
            "modelled": _STRS, "margin_exceeds_error": _BOOL, "line": _STR})),
        "rule": _null(_STR),
        "notes": _STRS,
        "summary": _ref("summary"),
    }, desc="One plan: the verdict, the inputs, every pool, what is left after them")
    search = _obj({
        "evaluated": _INT, "space": _INT, "pruned": _INT, "feasible": _INT,
        "needs": _obj({"context": _null(_INT), "concurrency": _INT,
                       "speculative": _null({"enum": ["off", "EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM",
                                                      "DFLASH", "DSPARK"]}),
                       "allow_fp8_kv": _BOOL, "allow_bf16_ssm": _BOOL, "allow_no_radix": _BOOL,
                       "objective": {"enum": ["concurrency", "kv-tokens", "headroom"]},
                       "margin": _NUM, "margin_bytes": _INT, "margin_class": _null(_STR)}),
        "top": {"type": "array", "items": _ref("candidate")},
        "pareto": {"type": "array", "items": _ref("candidate")},
        "closest": _null(_ref("candidate")),
        "would_fit_with": _STRS,
        "none_evaluated_because": _STR,
        "closest_refused": _STR,
    }, optional=("none_evaluated_because", "closest_refused"),
        desc="The flag search: counts, the needs it searched for, the ranked and Pareto configurations")
    return {"plan": plan, "summary": _summary(), "candidate": candidate,
            "recommendation": _obj(rec, desc="The best configuration found, as a launch line"), "search": search}


def _header(kind: str, title: str, desc: str) -> dict[str, Any]:
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": f"{ID_BASE}:{SCHEMA_VERSION}:{kind}", "title": title, "description": desc}


def _version() -> dict[str, Any]:
    return {"const": SCHEMA_VERSION, "description": "the version of this schema (MAJOR.MINOR; docs/json.md)"}


def _plan_output(extra: dict[str, Any]) -> dict[str, Any]:
    """One closed object: schema_version, ``extra``, the plan's own keys, and the search's two (present when
    the search ran)."""
    engine = {"const": "sglang", "description": "the engine whose rules made the plan (--engine; a vLLM plan, "
              "\"engine\": \"vllm\", is the vllm_* branch)"}
    props = {"schema_version": _version(), **extra, "engine": engine, **_plan_defs()["plan"]["properties"],
             "recommendation": _null(_ref("recommendation")), "search": _ref("search")}
    return _obj(props, optional=("recommendation", "search"))


def build(kind: str) -> dict[str, Any]:
    """The schema of one kind of output, self-contained (its own $defs)."""
    if kind not in KINDS:
        from planner.errors import BadInput  # noqa: PLC0415

        raise BadInput(f"plan schema: unknown kind '{str(kind)[:40]}'; one of {', '.join(KINDS)}")
    from planner.schema import vllm as V  # noqa: PLC0415

    defs = _plan_defs()
    if kind == "plan":
        out = _header("plan", "plan --json", "What `plan ... --json` prints: one plan, and the flag search's "
                      "recommendation unless --no-search; an SGLang plan, or with \"engine\": \"vllm\" a vLLM one; "
                      "with --gpu any (or a list of GPU types) the hardware search's deployments")
        from planner.schema import hardware as H  # noqa: PLC0415

        out.update({"if": H.IS_HARDWARE, "then": _ref("hardware"), "else": _by_engine("vllm_plan", "sglang_plan")})
        out["$defs"] = {"sglang_plan": _plan_output({}), "vllm_plan": V.branch(V.plan_props(), _version()),
                        "hardware": H.branch(_version()),
                        **{k: v for k, v in defs.items() if k != "plan"}, **V.defs()}
        return out
    if kind == "check":
        out = _header("check", "plan check --json", "What `plan check LOG --json` prints: the boot log next to "
                      "the plan for the same launch (a vLLM log: \"engine\": \"vllm\", vLLM's re-plan and check)")
        out.update(_by_engine("vllm_check", "sglang_check"))
        sglang_check = _obj({
            "schema_version": _version(),
            "stale": _STRS, "version": _null(_STR), "flags": _STRS, "notes": _STRS,
            "failure": _null(_STR), "explanation": _STRS,
            "sglang_version_used": _null(_STR), "sglang_version_why": _STR,
            "release_candidates": {"type": "array", "description": "the releases the log's lines allow, each planned "
                                   "with the log's inputs (empty when the log prints its release)",
                                   "items": _obj({
                "version": _STR, "verdict": {"enum": [*PLAN_VERDICTS, "refused"]},
                "reproduces": _BOOL, "outcome_matches": _null(_BOOL), "rows_differ": _STRS, "rows_agree": _INT})},
            "not_seen_by_planner": _null(_STR),
            "rows": {"type": "array", "items": _obj({
                "what": _STR, "predicted": _null(_NUM), "actual": _null(_NUM), "unit": _STR, "diff": _null(_NUM),
                "agrees": _null(_BOOL), "rule": _STR})},
            "plan": _null(_ref("plan")),
        })
        out["$defs"] = {"sglang_check": sglang_check, "vllm_check": V.branch(V.check_props(), _version()),
                        **{k: v for k, v in defs.items() if k not in ("recommendation", "search", "candidate")},
                        **V.defs()}
        return out
    out = _header("batch", "plan --batch (one line)", "One result line of `plan --batch FILE`: a plan (with the "
                  "search's keys when the request line has \"search\": true; a vLLM line's is vLLM's plan), or that "
                  "line's error")
    out["oneOf"] = [_ref("result"), _ref("error")]
    ident = {"type": ["string", "integer"], "description": "the request's id, else its line number"}
    out["$defs"] = {
        "result": _by_engine("vllm_result", "sglang_result"),
        "sglang_result": _plan_output({"id": ident}),
        "vllm_result": V.branch(V.plan_props(), _version(), {"id": ident}),
        "error": _obj({"schema_version": _version(), "id": ident, "verdict": {"const": BATCH_ERROR_VERDICT},
                       "error": _STR}, desc="A line that is bad input (not JSON, a bad field, an unknown GPU or "
                      "model, a flag SGLang's argparse refuses, a launch the planner does not model)"),
        **{k: v for k, v in defs.items() if k != "plan"}, **V.defs(),
    }
    return out


def _by_engine(vllm: str, sglang: str) -> dict[str, Any]:
    """vLLM's shape where ``engine`` is ``"vllm"``, SGLang's otherwise (an SGLang output always says "sglang")."""
    from planner.schema.vllm import IS_VLLM  # noqa: PLC0415

    return {"if": IS_VLLM, "then": _ref(vllm), "else": _ref(sglang)}


@lru_cache(maxsize=None)
def text(kind: str) -> str:
    """The shipped schema file of ``kind`` (what ``plan schema KIND`` prints)."""
    if kind not in KINDS:
        build(kind)  # the one-line error
    return (HERE / f"{kind}.schema.json").read_text(encoding="utf-8")


def load(kind: str) -> dict[str, Any]:
    return json.loads(text(kind))


def render(kind: str) -> str:
    return json.dumps(build(kind), indent=2) + "\n"


def write() -> list[Path]:
    """Regenerate the shipped files from :func:`build`."""
    paths = []
    for kind in KINDS:
        path = HERE / f"{kind}.schema.json"
        path.write_text(render(kind), encoding="utf-8")
        paths.append(path)
    return paths

