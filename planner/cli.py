"""The ``plan`` command (I/O edge): parse, resolve inputs, run the pure core, print.

    plan --gpu rtxpro6000 --model qwen3.6-27b [SGLang flags as launch_server takes them]
    plan --gpu rtxpro6000 -- python -m sglang.launch_server --model-path Qwen/Qwen3.6-27B ...
    plan --batch cases.jsonl

Exit codes: 0 fits, 1 does not fit (SGLang rejects, fails at startup, or out-of-memory risk),
2 bad input.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any, Sequence

from planner.catalog.catalog import ResolvedModel, resolve_model
from planner.engines.sglang.rules import LATEST, RULES, rules_for
from planner.errors import EXIT_DOES_NOT_FIT, EXIT_FITS, BadInput, PlannerError
from planner.hardware.nvml import parse_gpu_selector
from planner.hardware.profiles import find_profile
from planner.plan import Plan, make_plan
from planner.report import render_search, render_text, to_dict
from planner.search import OBJECTIVES, Needs, SearchResult, recommendation_dict, run_search

_LAUNCHERS = {"python", "python3", "-m", "sglang.launch_server", "sglang", "serve", "launch_server"}


class _ArgParser(argparse.ArgumentParser):
    def error(self, message: str):
        raise BadInput(f"{message} (see plan --help)")


def _parser() -> _ArgParser:
    p = _ArgParser(
        prog="plan",
        description="Predict SGLang's GPU memory plan before boot. Any option not listed here is passed "
                    "to the SGLang flag parser, exactly as launch_server takes it.",
        allow_abbrev=False,
    )
    p.add_argument("--gpu", help="GPU profile: id, alias or NVML name (see hwprofiles/)")
    p.add_argument("--model", help="catalog name, Hugging Face id, config.json path or checkpoint dir")
    p.add_argument("--json", action="store_true", help="print the plan as JSON (with the oracle-schema summary)")
    p.add_argument("--batch", metavar="FILE.jsonl", help="one request per line; '-' reads stdin")
    p.add_argument("--jobs", type=int, default=1, metavar="N", help="--batch: N processes over the lines "
                   "(results stay in input order)")
    p.add_argument("--free-before-load-gib", type=float, help="measured free GiB per GPU before weight load (P)")
    p.add_argument("--free-after-load-gib", type=float, help="measured free GiB per GPU after weight load")
    p.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                   help="an SGLang environment variable, e.g. SGLANG_MAMBA_SSM_DTYPE=bfloat16")
    p.add_argument("--sglang-version", default=None,
                   help=f"whose rules to use ({', '.join(RULES)}; default: the sglang installed here, else {LATEST})")
    s = p.add_argument_group("search (recommend launch flags; flags you give stay fixed)")
    s.add_argument("--need-context", type=int, help="longest request to serve, tokens (default: 32768, "
                   "capped at the model's context)")
    s.add_argument("--need-concurrency", type=int, default=1, help="requests of that length at once (default 1)")
    s.add_argument("--speculative", choices=["off", "EAGLE", "EAGLE3", "NEXTN"],
                   help="want speculative decoding (default: as your flags say)")
    s.add_argument("--allow-fp8-kv", action="store_true", help="allow --kv-cache-dtype fp8_e4m3 (quality)")
    s.add_argument("--allow-bf16-ssm", action="store_true", help="allow --mamba-ssm-dtype bfloat16 (quality)")
    s.add_argument("--objective", choices=list(OBJECTIVES), default="concurrency",
                   help="rank by concurrency at the needed context (default), KV tokens, or headroom")
    s.add_argument("--top", type=int, default=1, help="list the K best configurations")
    s.add_argument("--no-search", action="store_true", help="only evaluate the flags given")
    return p


def split_paste_form(tokens: list[str]) -> tuple[str | None, list[str]]:
    """``python -m sglang.launch_server --model-path X ...`` -> (X, the other flags)."""
    i = 0
    while i < len(tokens) and not tokens[i].startswith("-") or (i < len(tokens) and tokens[i] == "-m"):
        if tokens[i] not in _LAUNCHERS and not tokens[i].endswith(("python", "python3")):
            raise BadInput(f"after '--': expected 'python -m sglang.launch_server ...' or SGLang flags, got '{tokens[i]}'")
        i += 1
    rest = tokens[i:]
    model, flags, skip = None, [], False
    for j, t in enumerate(rest):
        if skip:
            skip = False
            continue
        if t in ("--model-path", "--model"):
            if j + 1 >= len(rest):
                raise BadInput(f"{t}: expected a value")
            model, skip = rest[j + 1], True
            continue
        if t.startswith(("--model-path=", "--model=")):
            model = t.split("=", 1)[1]
            continue
        flags.append(t)
    return model, flags


def _parse_env(items: Sequence[str] | dict[str, Any] | None) -> dict[str, str]:
    if not items:
        return {}
    if isinstance(items, dict):
        return {str(k): str(v) for k, v in items.items()}
    env = {}
    for kv in items:
        if "=" not in kv or not kv.split("=", 1)[0]:
            raise BadInput(f"--env: expected KEY=VALUE, got '{kv}'")
        k, v = kv.split("=", 1)
        env[k] = v
    return env


def _check_gib(name: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise BadInput(f"{name}: expected a number of GiB, got {value!r}")
    if value <= 0 or value > 1 << 20:
        raise BadInput(f"{name}: {value} GiB is out of range (0, 1048576]")
    return float(value)


def build_plan(gpu: str | None, model: str | None, flags: list[str], env: dict[str, str],
               free_before: float | None, free_after: float | None, version: str | None) -> Plan:
    if version is not None:
        rules_for(version)  # an unknown or unmodelled release is bad input
    if not gpu:
        raise BadInput("--gpu: required (e.g. --gpu rtxpro6000; the ids are the file names in hwprofiles/)")
    if not model:
        raise BadInput("--model: required (e.g. --model qwen3.6-27b), or paste the launch command after '--'")
    resolved: ResolvedModel = resolve_model(model)
    free_before = _check_gib("--free-before-load-gib", free_before)
    free_after = _check_gib("--free-after-load-gib", free_after)
    if free_before is not None and free_after is not None and free_after > free_before:
        raise BadInput("--free-after-load-gib: cannot exceed --free-before-load-gib (loading weights frees nothing)")
    selector = parse_gpu_selector(gpu)
    if selector is None:
        return make_plan(find_profile(gpu), resolved, flags, env, free_before, free_after, version=version)
    return _live_plan(selector, resolved, flags, env, free_before, free_after, version=version)


def _live_plan(selector, resolved: ResolvedModel, flags: list[str], env: dict[str, str],
               free_before: float | None, free_after: float | None, nvml=None, version: str | None = None) -> Plan:
    """--gpu auto / --gpu 0,1: plan for this machine from NVML readings (planner.hardware.live)."""
    from planner.hardware.live import select  # noqa: PLC0415
    from planner.plan import CUDA_CONTEXT_MIB, NCCL_MIB_PER_GPU, _tp_from_flags  # noqa: PLC0415

    sel = select(selector, nvml=nvml)
    tp = _tp_from_flags(flags)
    if tp > len(sel.gpus):
        raise BadInput(f"--tp-size {tp}: only {len(sel.gpus)} GPU(s) selected by --gpu")
    src = None
    if free_before is None:
        used_mib = CUDA_CONTEXT_MIB + (NCCL_MIB_PER_GPU if tp > 1 else 0)
        free_before = (sel.free_now_bytes - used_mib * (1 << 20)) / (1 << 30)
        src = (f"live: NVML free now {sel.free_now_bytes / (1 << 30):.2f} GiB (min over the selected GPUs) "
               f"- {used_mib} MiB for the server's CUDA context{' and NCCL' if tp > 1 else ''}")
        if free_before <= 0:
            raise BadInput(f"--gpu {selector}: only {sel.free_now_bytes / (1 << 30):.2f} GiB is free now")
    plan = make_plan(sel.profile, resolved, flags, env, free_before, free_after,
                     free_before_source=src, version=version)
    plan.notes.append(sel.note)
    if sel.other_processes_bytes:
        idle = make_plan(sel.profile, resolved, flags, env, None, None, version=version)
        plan.notes.append(
            f"other processes hold {sel.other_processes_bytes / (1 << 30):.2f} GiB now: with them the plan "
            f"{'fits' if plan.verdict == 'fits' else 'does not fit'}; on an idle GPU it would "
            f"{'fit' if idle.verdict == 'fits' else 'not fit either'}")
    else:
        plan.notes.append("no other process holds memory on the selected GPUs now")
    return plan


def build_needs(need_context: Any, need_concurrency: Any, speculative: str | None, allow_fp8_kv: bool,
                allow_bf16_ssm: bool, objective: str) -> Needs:
    for name, v in (("--need-context", need_context), ("--need-concurrency", need_concurrency)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
            raise BadInput(f"{name}: expected a positive integer, got {v!r}")
    if objective not in OBJECTIVES:
        raise BadInput(f"--objective: expected one of {', '.join(OBJECTIVES)}, got {objective!r}")
    return Needs(context=need_context, concurrency=need_concurrency or 1, speculative=speculative,
                 allow_fp8_kv=bool(allow_fp8_kv), allow_bf16_ssm=bool(allow_bf16_ssm), objective=objective)


def do_search(plan: Plan, needs: Needs, top: int, free_before: float | None, free_after: float | None) -> SearchResult:
    if plan.free_before_source.startswith("live"):  # search with the live readings too
        free_before = plan.free_before_bytes / (1 << 30)
    return run_search(plan.gpu, plan.model, plan.flags, plan.env, needs, free_before, free_after,
                      top=max(1, top), version=plan.sglang_version)


def exit_code(plan: Plan) -> int:
    return EXIT_FITS if plan.verdict == "fits" else EXIT_DOES_NOT_FIT


def flag_error(plan: Plan) -> BadInput | None:
    """SGLang's argparse refusing a flag is bad input for the user (exit 2), not a verdict."""
    if plan.error_type == "SystemExit":
        from planner.engines.sglang.cli_flags import renamed_hint  # noqa: PLC0415

        msg = plan.error_message or "SGLang flag error"
        hint = renamed_hint(plan.flags, plan.rules.flags) if plan.rules is not None else None
        if hint:
            msg += f" (SGLang {plan.sglang_version}: {hint})"
        return BadInput(msg)
    return None


def search_dict(res: SearchResult) -> dict[str, Any]:
    def cand(c):
        return {"flags": c.flags, "chosen": c.chosen, "concurrency_at_need": c.concurrency, "kv_tokens": c.kv_tokens,
                "running": c.running, "longest_request": c.longest, "headroom_left_bytes": c.headroom_left}

    return {"evaluated": res.evaluated, "feasible": res.feasible, "needs": vars(res.needs),
            "top": [cand(c) for c in res.ranked], "pareto": [cand(c) for c in res.pareto[:20]],
            "closest": None if res.closest is None else cand(res.closest), "would_fit_with": res.relaxations}


def run_batch(path: str, version: str, out, jobs: int = 1) -> int:
    try:
        stream = sys.stdin if path == "-" else open(path, encoding="utf-8")
    except OSError as exc:
        raise BadInput(f"--batch: cannot read {path}: {exc.strerror or exc}") from None
    if jobs < 1:
        raise BadInput(f"--jobs: expected a positive integer, got {jobs}")
    with stream:
        items = ((lineno, line, version) for lineno, line in enumerate(stream, 1) if line.strip())
        if jobs == 1:
            results = map(_batch_line, items)
            for r in results:
                out.write(r + "\n")
        else:  # in parallel over lines; map keeps the input order
            from concurrent.futures import ProcessPoolExecutor  # noqa: PLC0415

            with ProcessPoolExecutor(jobs) as pool:
                for r in pool.map(_batch_line, items, chunksize=8):
                    out.write(r + "\n")
    return EXIT_FITS


def _batch_line(item: tuple[int, str, str]) -> str:
    """One --batch request line -> its JSON result line (errors are results, with the line's id)."""
    lineno, line, version = item
    rid: Any = None
    try:
        req = json.loads(line)
        if not isinstance(req, dict):
            raise BadInput("each line must be a JSON object")
        rid = req.get("id", lineno)
        flags = req.get("flags") or []
        if not isinstance(flags, list) or not all(isinstance(f, (str, int, float)) for f in flags):
            raise BadInput("'flags' must be a list of strings")
        plan = build_plan(req.get("gpu"), req.get("model"), [str(f) for f in flags], _parse_env(req.get("env")),
                          req.get("free_before_gib"), req.get("free_after_gib"),
                          req.get("sglang_version", version))
        result = {"id": rid, **to_dict(plan)}
        if req.get("search", True) and plan.error_type != "SystemExit":
            needs = build_needs(req.get("need_context"), req.get("need_concurrency"), req.get("speculative"),
                                req.get("allow_fp8_kv", False), req.get("allow_bf16_ssm", False),
                                req.get("objective", "concurrency"))
            res = do_search(plan, needs, int(req.get("top", 1)), req.get("free_before_gib"),
                            req.get("free_after_gib"))
            result["recommendation"] = recommendation_dict(res, plan.model)
            result["search"] = search_dict(res)
        bad = flag_error(plan)
        if bad is not None:
            result["error"] = str(bad)
    except json.JSONDecodeError as exc:
        result = {"id": rid if rid is not None else lineno, "error": f"line {lineno}: not JSON ({exc.msg})"}
    except PlannerError as exc:
        result = {"id": rid if rid is not None else lineno, "error": str(exc)}
    return json.dumps(result)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return _main(argv)
    except PlannerError as exc:
        print(f"plan: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except BrokenPipeError:  # pragma: no cover - e.g. `plan ... | head`
        return EXIT_FITS


def probe_main(argv: list[str], nvml=None, out=None) -> int:
    """plan probe [--gpu auto|0,1] [--write-profile [DIR]]: what NVML sees, next to the profiles."""
    from pathlib import Path  # noqa: PLC0415

    from planner.hardware.nvml import describe, profile_toml_for, read_gpus  # noqa: PLC0415

    out = out or sys.stdout
    p = _ArgParser(prog="plan probe", description="Show what NVML sees on this machine next to the matching "
                   "hwprofiles/ entry; optionally write a profile for an unknown card.")
    p.add_argument("--gpu", default="auto", help="auto (all GPUs) or indices like 0 or 0,1")
    p.add_argument("--write-profile", nargs="?", const="hwprofiles", metavar="DIR",
                   help="write a TOML profile for each GPU without one (default folder: hwprofiles)")
    ns = p.parse_args(argv)
    sel = parse_gpu_selector(ns.gpu)
    if sel is None:
        raise BadInput(f"--gpu: expected 'auto' or indices like 0,1 for probe, got '{ns.gpu}'")
    host = read_gpus(None, nvml=nvml)
    gpus = host if sel == "auto" else read_gpus(sel, nvml=nvml)
    out.write(describe(gpus, host_gpus=host) + "\n")
    if ns.write_profile:
        folder = Path(ns.write_profile)
        folder.mkdir(parents=True, exist_ok=True)
        for g in gpus:
            if g.profile_id:
                out.write(f"GPU {g.index}: already profiled as {g.profile_id}\n")
                continue
            text = profile_toml_for(g)
            stem = text.split('id = "', 1)[1].split('"', 1)[0]
            path = folder / f"{stem}.toml"
            if path.exists():
                raise BadInput(f"--write-profile: {path} exists; remove it or pick another folder")
            path.write_text(text, encoding="utf-8")
            out.write(f"GPU {g.index}: wrote {path}\n")
    return EXIT_FITS


def check_main(argv: list[str], out=None) -> int:
    """plan check LOGFILE --gpu NAME [--model M] [--launched-at TIME] [SGLang flags as launched]."""
    import datetime as dt  # noqa: PLC0415

    from planner.check import check  # noqa: PLC0415
    from planner.logs import parse_file  # noqa: PLC0415
    from planner.report import render_check  # noqa: PLC0415

    out = out or sys.stdout
    p = _ArgParser(prog="plan check", description="Compare an SGLang boot log with the plan; stale logs are "
                   "reported first. Options not listed here are the SGLang flags you launched with.",
                   allow_abbrev=False)
    p.add_argument("logfile")
    p.add_argument("--gpu", required=True, help="GPU profile (or auto) the log came from")
    p.add_argument("--model", help="catalog name or path (default: the log's model_path)")
    p.add_argument("--launched-at", help="when you launched, e.g. '2026-05-01 12:00' (local time of the log)")
    p.add_argument("--env", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--json", action="store_true")
    p.add_argument("--sglang-version", help="whose rules to use (default: the release the log shows)")
    ns, flags = p.parse_known_args(argv)
    launched = None
    if ns.launched_at:
        try:
            launched = dt.datetime.fromisoformat(ns.launched_at)
        except ValueError:
            raise BadInput(f"--launched-at: expected a time like '2026-05-01 12:00:00', got '{ns.launched_at}'") from None
    try:
        log = parse_file(ns.logfile)
    except OSError as exc:
        raise BadInput(f"check: cannot read {ns.logfile}: {exc.strerror or exc}") from None
    selector = parse_gpu_selector(ns.gpu)
    if selector is not None:
        from planner.hardware.live import select  # noqa: PLC0415
        profile = select(selector).profile
    else:
        profile = find_profile(ns.gpu)
    if ns.sglang_version:
        rules_for(ns.sglang_version)
    res = check(log, profile, ns.model, flags, launched, _parse_env(ns.env), ns.sglang_version)
    if ns.json:
        from planner.report import check_dict  # noqa: PLC0415
        out.write(json.dumps(check_dict(res), indent=2, default=str) + "\n")
    else:
        out.write(render_check(res) + "\n")
    if res.stale:
        return EXIT_DOES_NOT_FIT
    return EXIT_FITS if all(r.agrees is not False for r in res.rows) else EXIT_DOES_NOT_FIT


def tui_main(argv: list[str]) -> int:
    """plan tui [--gpu G] [--model M] [--sglang-version V] [SGLang flags]: the what-if explorer."""
    p = _ArgParser(prog="plan tui", description="Textual what-if explorer; options not listed here are SGLang "
                   "flags that start filled in.", allow_abbrev=False)
    p.add_argument("--gpu", default="rtxpro6000")
    p.add_argument("--model", default="qwen3.6-27b")
    p.add_argument("--sglang-version")
    p.add_argument("--env", action="append", default=[], metavar="KEY=VALUE")
    ns, flags = p.parse_known_args(argv)
    from planner.tui import run_tui  # noqa: PLC0415 - Textual loads only for the TUI

    return run_tui(ns.gpu, ns.model, flags, _parse_env(ns.env), version=ns.sglang_version)


def _main(argv: list[str]) -> int:
    if argv and argv[0] == "probe":
        return probe_main(argv[1:])
    if argv and argv[0] == "check":
        return check_main(argv[1:])
    if argv and argv[0] == "tui":
        return tui_main(argv[1:])
    paste: list[str] | None = None
    if "--" in argv:
        k = argv.index("--")
        argv, paste = argv[:k], argv[k + 1:]
    if argv and argv[0] in ("-h", "--help"):
        _parser().print_help()
        return EXIT_FITS
    ns, sglang_flags = _parser().parse_known_args(argv)
    model = ns.model
    if paste is not None:
        pasted_model, pasted_flags = split_paste_form(paste)
        if model is None:
            model = pasted_model
        sglang_flags += pasted_flags
    if ns.batch:
        return run_batch(ns.batch, ns.sglang_version, sys.stdout, ns.jobs)
    plan = build_plan(ns.gpu, model, sglang_flags, _parse_env(ns.env), ns.free_before_load_gib,
                      ns.free_after_load_gib, ns.sglang_version)
    bad = flag_error(plan)
    if bad is not None:
        raise bad
    if ns.top < 1:
        raise BadInput(f"--top: expected a positive integer, got {ns.top}")
    res = None
    if not ns.no_search:
        needs = build_needs(ns.need_context, ns.need_concurrency, ns.speculative, ns.allow_fp8_kv,
                            ns.allow_bf16_ssm, ns.objective)
        res = do_search(plan, needs, ns.top, ns.free_before_load_gib, ns.free_after_load_gib)
    user_flags = bool(sglang_flags)
    if ns.json:
        d = to_dict(plan)
        if res is not None:
            d["recommendation"] = recommendation_dict(res, plan.model)
            d["search"] = search_dict(res)
        print(json.dumps(d, indent=2))
    else:
        if user_flags or res is None:
            print(render_text(plan))
            if res is not None:
                print()
        if res is not None:
            print(render_search(res, plan.model, show_plan=not user_flags))
    if user_flags or res is None:
        return exit_code(plan)
    return EXIT_FITS if res.recommended is not None else EXIT_DOES_NOT_FIT


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
