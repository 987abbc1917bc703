"""The ``plan --gpu any --json`` object (``--gpu a,b,c`` too; both engines): the "hardware" branch of the plan
schema, told from a plan by its ``deployments`` key (docs/json.md "plan --gpu any --json").

Producers: planner.engines.sglang.deploy.hardware_dict (SGLang) and planner.engines.vllm.deploy.hardware_dict
(vLLM); tests/test_deploy_json.py validates both."""

from __future__ import annotations

from typing import Any

IS_HARDWARE = {"required": ["deployments"]}
LAYOUT_KINDS = ("tp", "dp", "pp", "pd")  # tensor parallel, DP attention (+ EP), pipeline parallel, PD servers
ROLES = ("server", "prefill", "decode")


def branch(version: dict[str, Any]) -> dict[str, Any]:
    from planner.schema import _BOOL, _INT, _NUM, _STR, _STRS, _null, _obj  # noqa: PLC0415

    server = _obj({
        "role": {"enum": list(ROLES)}, "gpus": _INT, "nnodes": _INT, "gpus_per_node": _INT, "tp_size": _INT,
        "pp_size": _INT, "dp_size": _INT, "ep_size": _INT, "flags": _STRS, "concurrency_at_need": _INT,
        "kv_tokens": _INT, "commands": _STRS,
    }, desc="One server of a deployment: its layout, its engine flags, what it holds and its launch line per node")
    deployment = _obj({
        "gpu": _STR, "layout": {"enum": list(LAYOUT_KINDS)}, "label": _STR, "gpus": _INT, "nnodes": _INT,
        "gpus_per_node": _INT, "tp_size": _INT, "flags": _STRS, "searched": _BOOL, "concurrency_at_need": _INT,
        "kv_tokens": _INT, "price_per_gpu_hour": _null(_NUM), "cost_per_hour": _null(_NUM), "commands": _STRS,
        "servers": {"type": "array", "items": server, "minItems": 1, "maxItems": 2},
    }, desc="One GPU type's smallest deployment; the top-level layout fields are its (PD: its decode) server's")
    return _obj({
        "schema_version": version,
        "engine": {"enum": ["sglang", "vllm"]},
        "version": _null(_STR),
        "model": _STR,
        "needs": _obj({"context": _INT, "concurrency": _INT}),
        "layouts": _obj({"kinds": {"type": "array", "items": {"enum": list(LAYOUT_KINDS)}}, "auto": _BOOL,
                         "refused": {"type": "array", "items": _obj({"kind": {"enum": list(LAYOUT_KINDS)},
                                                                     "why": _STR})}}),
        "layouts_tried": _INT,
        "deployments": {"type": "array", "items": deployment},
        "skipped": {"type": "array", "items": _obj({"gpu": _STR, "why": _STR})},
    }, desc="plan --gpu any --json: each GPU type's smallest deployment for the needs, ranked; the types with none")
