"""A PD deployment: ``plan ... --prefill-replicas P --decode-replicas D``: roles x replicas.

Each role is its own ``sglang serve --disaggregation-mode prefill|decode`` and is planned alone, with its own
verdict (planner/engines/sglang/pipeline/disaggregation.py); every replica of a role is the same server on the same
GPU type, so one plan per role stands for all its replicas. The deployment adds the GPUs: a replica takes
``--tp-size`` GPUs (PD with pp is refused by name), a role ``replicas x tp``, the deployment the sum. A role with DP
attention (``--dp-size D --enable-dp-attention``, DeepSeek-V3 / R1: pipeline/disaggregation.py) still takes tp GPUs
per replica (the D attention-DP workers live inside the TP group); its plan is one attention-DP worker's (one
GPU's), and the role line says so.
It fits when every role does. The shared SGLang flags go to both roles; ``--prefill-flags '...'`` /
``--decode-flags '...'`` add a role's own (a decode role's speculative decoding, a different TP size).

What is not here: the router / load balancer, the KV transfer's network, anything outside the GPUs' memory; the
ratio of prefill to decode replicas is the user's (the planner sizes memory, not throughput).

Exit 0 when every role fits, 1 when one does not (or SGLang rejects it), 2 when not modelled.
"""
from __future__ import annotations

import json
import shlex
from typing import Any, Callable

from planner.errors import BadInput

ROLES = ("prefill", "decode")
_OPTS = ("--prefill-replicas", "--decode-replicas", "--prefill-flags", "--decode-flags")


def split_options(flags: list[str]) -> tuple[dict[str, str], list[str]]:
    """The deployment's own options (``--prefill-replicas 1`` or ``--prefill-replicas=1``) and the rest."""
    opts: dict[str, str] = {}
    rest: list[str] = []
    i = 0
    while i < len(flags):
        f = flags[i]
        name = f.split("=", 1)[0]
        if name in _OPTS:
            if "=" in f:
                opts[name] = f.split("=", 1)[1]
            elif i + 1 < len(flags):
                opts[name] = flags[i + 1]
                i += 1
            else:
                raise BadInput(f"{name}: expected a value")
            i += 1
            continue
        rest.append(f)
        i += 1
    return opts, rest


def wants_deployment(flags: list[str]) -> bool:
    return any(f.split("=", 1)[0] in ("--prefill-replicas", "--decode-replicas") for f in flags)


def _replicas(opts: dict[str, str], role: str) -> int:
    text = opts.get(f"--{role}-replicas", "0")
    try:
        n = int(text)
    except ValueError:
        raise BadInput(f"--{role}-replicas {text!r}: expected a whole number of replicas (0 or more)") from None
    if n < 0 or n > 10_000:
        raise BadInput(f"--{role}-replicas {n}: expected 0 to 10000")
    return n


def role_flags(shared: list[str], opts: dict[str, str], role: str) -> list[str]:
    """The role's launch flags: the shared ones, the role's own, then ``--disaggregation-mode role``."""
    for f in shared:
        if f.split("=", 1)[0] == "--disaggregation-mode":
            raise BadInput("--disaggregation-mode with --prefill-replicas / --decode-replicas: the deployment sets each "
                           "role's mode itself (drop --disaggregation-mode)")
    own = shlex.split(opts.get(f"--{role}-flags", ""))
    return [*shared, *own, "--disaggregation-mode", role]


def plan_deployment(gpu, model, flags: list[str], env: dict[str, str], free_before: float | None,
                    free_after: float | None, version: str) -> dict[str, Any]:
    """{"roles": [{role, replicas, gpus_per_replica, gpus, verdict, plan}], "total_gpus", "fits"}; a role the
    planner does not model raises BadInput naming the role."""
    from planner.engines.sglang.plan import _tp_from_flags, make_plan  # noqa: PLC0415

    opts, shared = split_options(flags)
    for name in ("--prefill-flags", "--decode-flags"):
        role = name[2:].split("-")[0]
        if name in opts and not _replicas(opts, role):
            raise BadInput(f"{name}: given, but --{role}-replicas is 0 or absent")
    roles = []
    for role in ROLES:
        n = _replicas(opts, role)
        if not n:
            continue
        rflags = role_flags(shared, opts, role)
        try:
            plan = make_plan(gpu, model, rflags, env, free_before, free_after, version=version)
        except BadInput as exc:
            raise BadInput(f"{role} role: {exc}") from None
        tp = _tp_from_flags(rflags)
        attn_dp = plan.args.attn_dp_size if plan.args is not None else 1
        roles.append(dict(role=role, replicas=n, gpus_per_replica=tp, gpus=n * tp, verdict=plan.verdict,
                          attn_dp_size=attn_dp, flags=rflags, plan=plan))
    if not roles:
        raise BadInput("--prefill-replicas / --decode-replicas: at least one role needs 1 or more replicas")
    return dict(roles=roles, total_gpus=sum(r["gpus"] for r in roles),
                fits=all(r["verdict"] == "fits" for r in roles))


def summary_line(dep: dict[str, Any], gpu_id: str) -> str:
    parts = [f"{r['role']} {r['replicas']} x {r['gpus_per_replica']} GPU{'s' if r['gpus_per_replica'] > 1 else ''}"
             f" = {r['gpus']} ({r['verdict'].upper().replace('_', ' ')})" for r in dep["roles"]]
    return (f"=== deployment: {'FITS' if dep['fits'] else 'DOES NOT FIT'}: {'; '.join(parts)}; "
            f"total {dep['total_gpus']} x {gpu_id}; every role must fit ===")


def deployment_dict(dep: dict[str, Any], gpu_id: str) -> dict[str, Any]:
    from planner.engines.sglang.report import to_dict  # noqa: PLC0415

    return {"gpu": gpu_id, "total_gpus": dep["total_gpus"], "verdict": "fits" if dep["fits"] else "does_not_fit",
            "roles": [{k: (to_dict(v) if k == "plan" else v) for k, v in r.items()} for r in dep["roles"]]}


def deploy_main(ns: Any, model: str | None, flags: list[str], env: dict[str, str], write_out: Callable) -> int:
    from planner.catalog.catalog import resolve_model  # noqa: PLC0415
    from planner.engines.sglang.plan import default_version  # noqa: PLC0415
    from planner.engines.sglang.report import render_report  # noqa: PLC0415
    from planner.hardware.profiles import find_profile  # noqa: PLC0415

    if not ns.gpu or not model:
        raise BadInput("--gpu and --model: required (e.g. plan --gpu h100 --model qwen3-32b --tp-size 2 "
                       "--prefill-replicas 1 --decode-replicas 2)")
    if ns.gpu == "auto" or "," in ns.gpu or ns.gpu.isdigit():
        raise BadInput("--gpu auto / an index with --prefill-replicas / --decode-replicas: plan a named GPU profile "
                       "(e.g. --gpu h100)")
    gpu = find_profile(ns.gpu)
    if gpu is None:
        raise BadInput(f"--gpu {ns.gpu}: no such GPU profile (plan gpus lists them)")
    version = ns.sglang_version or default_version()[0]
    dep = plan_deployment(gpu, resolve_model(model), flags, env, ns.free_before_load_gib, ns.free_after_load_gib,
                          version)
    if ns.json:
        from planner.schema import SCHEMA_VERSION  # noqa: PLC0415

        write_out(json.dumps({"schema_version": SCHEMA_VERSION, "engine": "sglang",
                              "deployment": deployment_dict(dep, gpu.id)}, indent=2, default=str) + "\n")
    else:
        out = []
        for r in dep["roles"]:
            dpa = r.get("attn_dp_size", 1)
            per = (f"; DP attention: {dpa} attention-DP workers per replica, the plan is one worker's GPU" if dpa > 1
                   else "")
            out.append(f"=== {r['role']} role: {r['replicas']} replica{'s' if r['replicas'] > 1 else ''} x "
                       f"{r['gpus_per_replica']} GPU{'s' if r['gpus_per_replica'] > 1 else ''} (one plan stands for "
                       f"every replica{per}) ===")
            out.append(render_report(r["plan"], None, user_flags=True, verbose=ns.verbose))
        out.append(summary_line(dep, gpu.id))
        write_out("\n".join(out) + "\n")
    return 0 if dep["fits"] else 1
