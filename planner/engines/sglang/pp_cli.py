"""``plan ... --pp-size P``: one report per pipeline-parallel rank (planner/engines/sglang/pp.py), the launch's verdict last;
``--json``: the same as one object (``pipeline``: the ranks' layers, verdicts and plans, the all-reduce's capacities).

Exit 0 when every rank fits, 1 when one does not (or SGLang rejects the launch), 2 when not modelled."""
from __future__ import annotations

from planner.errors import BadInput


def pp_main(ns, model: str | None, flags: list[str], env: dict[str, str], write_out) -> int:
    from planner.catalog.catalog import resolve_model  # noqa: PLC0415
    from planner.hardware.profiles import find_profile  # noqa: PLC0415
    from planner.engines.sglang.plan import default_version  # noqa: PLC0415
    from planner.engines.sglang.pp import make_pp_plans, pp_size_of, refusal  # noqa: PLC0415
    from planner.engines.sglang.report import render_report  # noqa: PLC0415

    size = pp_size_of(flags)
    if not ns.gpu or not model:
        raise BadInput("--gpu and --model: required (e.g. plan --gpu rtx4090 --model qwen3-32b --pp-size 2)")
    if ns.gpu == "auto" or "," in ns.gpu or ns.gpu.isdigit():
        raise BadInput("--gpu auto / an index with --pp-size: plan a named GPU profile (e.g. --gpu rtx4090)")
    gpu = find_profile(ns.gpu)
    if gpu is None:
        raise BadInput(f"--gpu {ns.gpu}: no such GPU profile (plan gpus lists them)")
    version = ns.sglang_version or default_version()[0]
    resolved = resolve_model(model)
    why = refusal(resolved, flags, version)
    if why:
        raise BadInput(why)
    stages = make_pp_plans(gpu, resolved, flags, env, size, ns.free_before_load_gib, ns.free_after_load_gib,
                           version=version)
    fits = all(s.plan.verdict == "fits" for s in stages)
    caps = [s.capacity for s in stages]
    tokens = stages[0].plan.profile.max_total_num_tokens if stages[0].plan.profile is not None else None
    if ns.json:
        import json  # noqa: PLC0415

        from planner.engines.sglang.report import to_dict  # noqa: PLC0415
        from planner.schema import SCHEMA_VERSION  # noqa: PLC0415

        write_out(json.dumps({"schema_version": SCHEMA_VERSION, "engine": "sglang", "pipeline": {
            "pp_size": size, "verdict": "fits" if fits else "does_not_fit", "rank_capacity_at_all_reduce": caps,
            "pp_min_tokens": tokens if all(c is not None for c in caps) else None,
            "ranks": [{"rank": s.rank, "layers": [s.start, s.end], "verdict": s.plan.verdict, "plan": to_dict(s.plan)}
                      for s in stages]}}, indent=2, default=str) + "\n")
        return 0 if fits else 1
    out = []
    for s in stages:
        if ns.free_before_load_gib is None:
            s.plan.notes.append("free memory before loading is modelled as for the TP group alone: the pp group's "
                                "NCCL communicator is not counted (measure it: --free-before-load-gib)")
        out.append(f"=== pp rank {s.rank} of {size}: layers [{s.start}, {s.end}) ===")
        out.append(render_report(s.plan, None, user_flags=True, verbose=ns.verbose))
    out.append(f"=== pipeline: {'FITS' if fits else 'DOES NOT FIT'}: every rank must fit; "
               + (f"each rank's KV pool holds {tokens:,} tokens, the MIN over the pp group of "
                  f"{', '.join(f'{c:,}' for c in caps if c is not None)} "
                  "(kv_cache_configurator.py:1610-1618 @0.5.16) ===" if tokens else "a rank stops before sizing ==="))
    write_out("\n".join(out) + "\n")
    return 0 if fits else 1
