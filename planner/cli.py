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
import re
import sys
from functools import lru_cache
from typing import Any, Sequence

from planner.catalog.catalog import ResolvedModel, resolve_model
from planner.engines.sglang.pipeline.post_capture import search_skipped
from planner.engines.sglang.rules import LATEST, RULES, rules_for
from planner.errors import EXIT_BAD_INPUT, EXIT_DOES_NOT_FIT, EXIT_FITS, BadInput, PlannerError
from planner.engines.sglang.frontend import choose_release, finish_plan
from planner.engines.sglang.flag_hints import flag_error
from planner.hardware.profiles import find_profile
from planner.engines.sglang.plan import Plan, make_plan
from planner.cli_engines import add_engine_args, batch_engine_options, wants_engine
from planner.cli_io import _ClosedStdout, _say_error, one_line, write_out
from planner.engines.sglang.cli_modes import add_hardware_args, other_mode
from planner.engines.sglang.report import render_search, render_text, to_dict
from planner.engines.sglang.search import OBJECTIVES, Needs, SearchResult, recommendation_dict, run_search, search_dict

EXIT_INTERRUPTED = 130  # the shell's code for SIGINT

HELP_EPILOG = """\
subcommands:
  plan check LOGFILE --gpu G    compare an SGLang boot log with the plan (stale logs reported first)
                                e.g. plan check tests/data/logs/synthetic-0.5.11-tp1-spec.log --gpu rtxpro6000
  plan tui [--gpu G --model M]  interactive what-if explorer (Textual)
  plan probe                    what NVML sees on this machine, next to hwprofiles/
  plan models                   the catalog: models (--model) and drafts (--speculative-draft-model-path)
  plan schema [KIND]            the JSON Schema of plan --json (KIND plan), check --json (check) or one
                                --batch line (batch): every key and the verdict values (docs/json.md)
  plan gpus [--json]            the GPU profiles (--gpu): id, memory, interconnect, name and aliases

paste form (everything after '--' is your launch command; the model comes from --model-path):
  plan --gpu rtxpro6000 -- python -m sglang.launch_server --model-path Qwen/Qwen3.6-27B --tp-size 1
  (also: env assignments first, any python path, uv run, docker run ... IMAGE ..., sglang serve)

vLLM (--engine vllm, or paste 'vllm serve MODEL ...'): --vllm-version, vLLM's measured inputs (--weights-gib ...);
  plan --gpu G --model M --compare-engines puts both engines' capacity side by side.

exit codes: 0 fits, 1 does not fit / SGLang rejects the flags, 2 bad input, 130 interrupted.
Any option not listed above is an SGLang flag, parsed by the chosen release's own argparse."""


class _HelpShown(Exception):
    pass


class _ArgParser(argparse.ArgumentParser):
    def error(self, message: str):
        raise BadInput(f"{message} (see {self.prog} --help)")

    def print_help(self, file=None) -> None:  # noqa: ARG002 - through write_out (closed / ASCII stdout)
        write_out(self.format_help())

    def exit(self, status: int = 0, message: str | None = None):
        if status:
            raise BadInput(one_line(message or "bad arguments"))
        raise _HelpShown


def _parser() -> _ArgParser:
    p = _ArgParser(
        prog="plan",
        description="Predict SGLang's GPU memory plan before boot, and recommend launch flags.",
        epilog=HELP_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter, allow_abbrev=False,
    )
    p.add_argument("--gpu", help="GPU profile: id, alias or NVML name (hwprofiles/), 'auto', NVML indices 0,1, 'any' or h100-sxm,h200")
    add_hardware_args(p)  # --price, --export: for --gpu any (planner/engines/sglang/deploy.py)
    p.add_argument("--model", help="catalog name, Hugging Face id, config.json path or checkpoint dir")
    p.add_argument("--json", action="store_true", help="print the plan as JSON (exact values, oracle-schema summary)")
    p.add_argument("--verbose", "-v", action="store_true",
                   help="the full breakdown: inputs, resolved flags, profiling arithmetic, every pool, other releases")
    p.add_argument("--compare-releases", action="store_true",
                   help="also show how every modelled SGLang release decides the same launch")
    p.add_argument("--batch", metavar="FILE.jsonl", help="one JSON request per line ('-' reads stdin); one result per "
                   'line; a line searches only with "search": true (keys: docs/json.md)')
    p.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="--batch: plan the lines in N processes (results stay in input order)")
    p.add_argument("--free-before-load-gib", type=float, metavar="GIB",
                   help="measured free GiB per GPU before weight load (P; the log's 'Load weight begin' avail)")
    p.add_argument("--free-after-load-gib", type=float, metavar="GIB",
                   help="measured free GiB per GPU after weight load (the log's 'Load weight end' avail)")
    p.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                   help="an SGLang environment variable, e.g. SGLANG_MAMBA_SSM_DTYPE=bfloat16 (repeatable)")
    p.add_argument("--sglang-version", default=None, metavar="X",
                   help=f"whose rules to use ({', '.join(RULES)}; default: the sglang installed here, else {LATEST})")
    add_engine_args(p)  # --engine, --vllm-version, --compare-engines, vLLM's measured inputs (planner/cli_engines.py)
    s = p.add_argument_group("search (recommend launch flags; flags you give stay fixed)")
    s.add_argument("--need-context", type=int, metavar="TOKENS", help="longest request to serve, tokens "
                   "(default: 32768, capped at the model's context)")
    s.add_argument("--need-concurrency", type=int, default=1, metavar="N",
                   help="requests of that length at once (default 1)")
    s.add_argument("--speculative", choices=["off", "EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM", "DFLASH", "DSPARK"],
                   help="want speculative decoding (default: as your flags say)")
    s.add_argument("--allow-fp8-kv", action="store_true", help="allow --kv-cache-dtype fp8_e4m3 (quality)")
    s.add_argument("--allow-bf16-ssm", action="store_true", help="allow --mamba-ssm-dtype bfloat16 (quality)")
    s.add_argument("--allow-no-radix", action="store_true",
                   help="allow --disable-radix-cache (no prefix reuse; off by default, the gain is reported)")
    s.add_argument("--objective", choices=list(OBJECTIVES), default="concurrency",
                   help="rank by concurrency at the needed context (default), KV tokens, or headroom")
    s.add_argument("--top", type=int, default=1, metavar="K", help="list the K best configurations")
    s.add_argument("--no-search", action="store_true", help="only evaluate the flags given")
    return p


def planner_options(parser: argparse.ArgumentParser) -> list[str]:
    return [o for a in parser._actions for o in a.option_strings if o.startswith("--")]  # noqa: SLF001


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _parse_env(items: Sequence[str] | dict[str, Any] | None) -> dict[str, str]:
    """--env KEY=VALUE items (or a batch line's env object) -> {KEY: VALUE}; a KEY that no shell could set is
    bad input (what SGLang reads or ignores of them: env_notes, env_refusal)."""
    if not items:
        return {}
    pairs = [(str(k), str(v)) for k, v in items.items()] if isinstance(items, dict) else None
    if pairs is None:
        pairs = []
        for kv in items:
            if not isinstance(kv, str) or "=" not in kv or not kv.split("=", 1)[0]:
                raise BadInput(f"--env: expected KEY=VALUE, got {str(kv)[:60]!r}")
            pairs.append(tuple(kv.split("=", 1)))
    for k, _ in pairs:
        if not _ENV_NAME.fullmatch(k):
            raise BadInput(f"--env: {k[:60]!r} is not an environment variable name (letters, digits and _, not "
                           "starting with a digit; e.g. --env SGLANG_MAMBA_SSM_DTYPE=bfloat16)")
    return dict(pairs)


def _check_gib(name: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise BadInput(f"{name}: expected a number of GiB, got {value!r}"[:200])
    if value <= 0 or value > 1 << 20:
        raise BadInput(f"{name}: {value} GiB is out of range (0, 1048576]")
    return float(value)


def _check_free_fits_card(profile, free_before: float | None, free_after: float | None) -> None:
    """Free memory cannot exceed what the card has (its NVML total)."""
    total = profile.capacity_mib / 1024
    for name, v in (("--free-before-load-gib", free_before), ("--free-after-load-gib", free_after)):
        if v is not None and v > total:
            raise BadInput(f"{name}: {v:g} GiB is more than the {profile.id} has ({total:.2f} GiB, "
                           f"{profile.capacity_mib:,} MiB NVML total); give the free memory of one GPU")


def resolve_model_safely(name: Any) -> ResolvedModel:
    """resolve_model for a value that may not be a string (a --batch line's field). Every file it reads is checked
    where it is read (planner/catalog/config_file.py): a broken one is already one BadInput line naming it."""
    if not isinstance(name, str):
        raise BadInput(f"--model: expected a name or a path, got {type(name).__name__}")
    return resolve_model(name)


def parse_gpu_selector(text: str):
    """planner.hardware.nvml.parse_gpu_selector, imported only for a value that can be a selector ('auto' or
    starting with a digit): a GPU name needs no NVML module."""
    s = text.strip()
    if s.lower() != "auto" and not s[:1].isdigit():
        return None
    from planner.hardware.nvml import parse_gpu_selector as parse  # noqa: PLC0415

    return parse(text)


def _selector_for(gpu: str):
    """--gpu: NVML indices ("0", "0,1") or "auto", else None (a name). A number that names a card
    ("4090", "5090") is the card."""
    from planner.hardware.profiles import is_profile_name  # noqa: PLC0415

    selector = parse_gpu_selector(gpu)
    if isinstance(selector, list) and is_profile_name(gpu):
        return None
    return selector


def build_plan(gpu: str | None, model: str | None, flags: list[str], env: dict[str, str],
               free_before: float | None, free_after: float | None, version: str | None,
               default: tuple[str, str] | None = None, named: bool = False) -> Plan:
    """``default``: the release to plan when ``version`` is None; ``named``: the pasted command names it (a docker
    tag, ``uv run --with sglang==X``), so a flag spelling never moves the plan to another release."""
    default, base = choose_release(flags, version, default, named)
    if not gpu:
        raise BadInput("--gpu: required (e.g. --gpu rtxpro6000; the ids are the file names in hwprofiles/)")
    if not model:
        raise BadInput("--model: required (e.g. --model qwen3.6-27b), or paste the launch command after '--'")
    free_before = _check_gib("--free-before-load-gib", free_before)
    free_after = _check_gib("--free-after-load-gib", free_after)
    if free_before is not None and free_after is not None and free_after > free_before:
        raise BadInput("--free-after-load-gib: cannot exceed --free-before-load-gib (loading weights frees nothing)")
    selector = _selector_for(gpu)
    profile = _find_profile(gpu) if selector is None else None
    resolved: ResolvedModel = resolve_model_safely(model)
    try:
        if profile is not None:
            _check_free_fits_card(profile, free_before, free_after)
            plan = make_plan(profile, resolved, flags, env, free_before, free_after, version=version,
                             default=default)
        else:
            plan = _live_plan(selector, resolved, flags, env, free_before, free_after, version=version,
                              default=default)
    except BadInput as exc:
        if default is base or base is None or default is None or default[0] not in str(exc):
            raise  # a refusal that does not name the release does not depend on it
        # a refusal under the release an old spelling narrowed to: say why that release, or the user sees a
        # release they never named (e.g. "DP attention on SGLang 0.5.19" from --cuda-graph-max-bs)
        raise BadInput(f"{exc} [planned under SGLang {default[0]}: {default[1]}]") from None
    finish_plan(plan, flags, env, default, base)  # the range an old spelling narrowed to, the environment
    return plan


@lru_cache(maxsize=256)
def _find_profile(gpu: str):
    """find_profile, once per name and process (the profiles are frozen and loaded once; a batch repeats names)."""
    return find_profile(gpu)


def _live_plan(selector, resolved: ResolvedModel, flags: list[str], env: dict[str, str],
               free_before: float | None, free_after: float | None, nvml=None, version: str | None = None,
               default: tuple[str, str] | None = None) -> Plan:
    """--gpu auto / --gpu 0,1: plan for this machine from NVML readings (planner.hardware.live)."""
    from planner.hardware.live import select  # noqa: PLC0415
    from planner.engines.sglang.plan import _tp_from_flags, comm_buffer_mib, context_mib  # noqa: PLC0415

    sel, tp = select(selector, nvml=nvml), _tp_from_flags(flags)
    if tp > len(sel.gpus):
        raise BadInput(f"--tp-size {tp}: only {len(sel.gpus)} GPU(s) selected by --gpu")
    src = None
    if free_before is None:
        used_mib = context_mib(sel.profile.vendor)[0] + comm_buffer_mib(sel.profile.interconnect, tp,
                                                                        sel.profile.vendor)[0]
        free_before = (sel.free_now_bytes - used_mib * (1 << 20)) / (1 << 30)
        reader = "amdsmi" if sel.profile.vendor == "amd" else "NVML"
        src = (f"live: {reader} free now {sel.free_now_bytes / (1 << 30):.2f} GiB (min over the selected GPUs) "
               f"- {used_mib} MiB for the server's CUDA context{' and NCCL / custom all-reduce' if tp > 1 else ''}")
        if free_before <= 0:
            raise BadInput(f"--gpu {selector}: only {sel.free_now_bytes / (1 << 30):.2f} GiB is free now")
    plan = make_plan(sel.profile, resolved, flags, env, free_before, free_after,
                     free_before_source=src, version=version, default=default)
    plan.notes.append(sel.note)
    if sel.other_processes_bytes:
        idle = make_plan(sel.profile, resolved, flags, env, None, None, version=version, default=default)
        plan.notes.append(
            f"other processes hold {sel.other_processes_bytes / (1 << 30):.2f} GiB now: with them the plan "
            f"{'fits' if plan.verdict == 'fits' else 'does not fit'}; on an idle GPU it would "
            f"{'fit' if idle.verdict == 'fits' else 'not fit either'}")
    else:
        plan.notes.append("no other process holds memory on the selected GPUs now")
    return plan


def build_needs(need_context: Any, need_concurrency: Any, speculative: str | None, allow_fp8_kv: bool,
                allow_bf16_ssm: bool, objective: str, allow_no_radix: bool = False) -> Needs:
    for name, v in (("--need-context", need_context), ("--need-concurrency", need_concurrency)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1 or v > 1 << 40):
            raise BadInput(f"{name}: expected a positive integer (at most 2^40), got {v!r}")
    if objective not in OBJECTIVES:
        raise BadInput(f"--objective: expected one of {', '.join(OBJECTIVES)}, got {objective!r}")
    return Needs(context=need_context, concurrency=need_concurrency or 1, speculative=speculative,
                 allow_fp8_kv=bool(allow_fp8_kv), allow_bf16_ssm=bool(allow_bf16_ssm), objective=objective,
                 allow_no_radix=bool(allow_no_radix))


def do_search(plan: Plan, needs: Needs, top: int, free_before: float | None, free_after: float | None) -> SearchResult:
    if plan.free_before_source.startswith("live"):  # search with the live readings too
        free_before = plan.free_before_bytes / (1 << 30)
    # branch and bound: the exhaustive search's result, proved (run_search); the counts cover what was evaluated
    return run_search(plan.gpu, plan.model, plan.flags, plan.env, needs, free_before, free_after,
                      top=max(1, top), version=plan.sglang_version, prune=True)


def exit_code(plan: Plan) -> int:
    return EXIT_FITS if plan.verdict == "fits" else EXIT_DOES_NOT_FIT


def _batch_result(req, version: str | None) -> dict[str, Any]:
    """One validated batch request -> its result object (raises PlannerError for a bad one)."""
    if req.engine != "sglang" or req.vllm_version is not None or req.measured:
        from planner.cli_engines import batch_result  # noqa: PLC0415 - vLLM lines (planner/cli_engines.py)

        return batch_result(req, {"parse_env": _parse_env, "profile_for": _profile_for,
                                  "resolve_model": resolve_model_safely})
    version = req.sglang_version or version
    plan = build_plan(req.gpu, req.model, [str(f) for f in req.flags], _parse_env(req.env), req.free_before_gib,
                      req.free_after_gib, version, None if version is not None else _batch_default_version())
    raise_flag_error(plan, [str(f) for f in req.flags])  # bad input, as in the CLI (exit 2)
    search = req.search and not search_skipped(plan)
    result: dict[str, Any] = {"engine": "sglang", **to_dict(plan)}
    if search:
        needs = build_needs(req.need_context, req.need_concurrency, req.speculative, req.allow_fp8_kv,
                            req.allow_bf16_ssm, req.objective, req.allow_no_radix)
        res = do_search(plan, needs, req.top, req.free_before_gib, req.free_after_gib)
        result["recommendation"] = recommendation_dict(res, plan.model)
        result["search"] = search_dict(res)
    return result


@lru_cache(maxsize=1)
def _batch_default_version() -> tuple[str, str]:
    """default_version(), asked once per batch (run_batch clears it; a --jobs worker asks once)."""
    from planner.engines.sglang.rules import default_version  # noqa: PLC0415

    return default_version()


def run_batch(path: str, version: str | None, out, jobs: int = 1) -> int:
    """Each line is validated on its own; a bad line gives {"schema_version", "id", "verdict": "bad_input",
    "error"} and the batch goes on. ``jobs`` > 1 plans the lines in that many processes; the results keep the input order."""
    if not isinstance(jobs, int) or jobs < 1 or jobs > 256:
        raise BadInput(f"--jobs: expected a positive integer up to 256, got {jobs}")
    _batch_default_version.cache_clear()
    try:
        stream = sys.stdin if path == "-" else open(path, encoding="utf-8", errors="strict")  # noqa: SIM115
    except (OSError, ValueError) as exc:
        raise BadInput(f"--batch: cannot read {str(path)[:200]}: {getattr(exc, 'strerror', None) or exc}") from None
    with stream:
        items = ((lineno, line, version) for lineno, line in _batch_lines(stream, path))
        if jobs == 1:
            for r in map(_batch_line, items):
                write_out(r, out)
        else:
            from concurrent.futures import ProcessPoolExecutor  # noqa: PLC0415

            items = list(items)
            # a line with a search takes tens of ms: one at a time keeps the processes evenly loaded; plain
            # lines (a fraction of a ms) go eight at a time, so the hand-over does not cost more than the plan
            chunk = 1 if any(_SEARCHES.search(line) for _, line, _ in items) else 8
            with ProcessPoolExecutor(jobs) as pool:
                for r in pool.map(_batch_line, items, chunksize=chunk):
                    write_out(r, out)
    return EXIT_FITS


_SEARCHES = re.compile(r'"search"\s*:\s*true')  # a line that asks for the search (batch.py)


def _batch_lines(stream, path: str):
    """(line number, line) of every non-empty line; a line that is not UTF-8 is bad input."""
    lineno = 0
    while True:
        try:
            line = stream.readline()
        except UnicodeDecodeError as exc:
            raise BadInput(f"--batch: {str(path)[:200]}: line {lineno + 1} is not UTF-8 text ({exc.reason})") from None
        if not line:
            return
        lineno += 1
        if line.strip():
            yield lineno, line


def _batch_line(item: tuple[int, str, str | None]) -> str:
    """One --batch request line -> its JSON result line (errors are results, with the line's id)."""
    from planner.batch import parse_line  # noqa: PLC0415

    from planner.schema import BATCH_ERROR_VERDICT, SCHEMA_VERSION  # noqa: PLC0415

    lineno, line, version = item
    rid: Any = lineno
    try:
        rid, req = parse_line(line, lineno)
        rid = req.id if req.id is not None else rid
        result = {"schema_version": SCHEMA_VERSION, "id": rid, **_batch_result(req, version)}
    except PlannerError as exc:
        result = {"schema_version": SCHEMA_VERSION, "id": getattr(exc, "rid", rid), "verdict": BATCH_ERROR_VERDICT,
                  "error": one_line(str(exc))}
    return json.dumps(result, default=str) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """The ``plan`` command. Exit codes: 0 fits, 1 does not fit, 2 bad input, 130 interrupted."""
    argv = list(sys.argv[1:] if argv is None else argv)
    state: dict[str, int] = {}
    try:
        return _main(argv, state)
    except PlannerError as exc:
        _say_error(str(exc))
        return exc.exit_code
    except _ClosedStdout:  # e.g. `plan ... | head`: the verdict's code, not a crash
        return state.get("code", EXIT_FITS)
    except _HelpShown:
        return EXIT_FITS
    except KeyboardInterrupt:
        _say_error("interrupted")
        return EXIT_INTERRUPTED
    except OverflowError:
        _say_error("a number in the input is too large for SGLang to hold (it sizes with 64-bit integers); "
                   "check the flag values")
        return EXIT_BAD_INPUT
    except RecursionError:
        _say_error("input nested too deeply to read")
        return EXIT_BAD_INPUT
    except MemoryError:
        _say_error("out of host memory while reading the input")
        return EXIT_BAD_INPUT


def models_main(argv: list[str], out=None) -> int:
    """plan models: the built-in catalog, target models first, then the drafts with their kind and targets."""
    from planner.catalog.drafts import listing  # noqa: PLC0415
    from planner.engines.sglang.coverage import coverage_text  # noqa: PLC0415

    p = _ArgParser(prog="plan models", description="List the built-in catalog: models for --model, then drafts "
                   "for --speculative-draft-model-path (kind, targets, where each config comes from), then what "
                   "is covered (families, releases, quantizations).")
    p.parse_args(argv)
    write_out(listing() + "\n\n" + coverage_text() + "\n", out or sys.stdout)
    return EXIT_FITS


def schema_main(argv: list[str], out=None) -> int:
    """plan schema [plan|check|batch]: the JSON Schema of that output (planner/schema, docs/json.md)."""
    from planner.schema import KINDS, SCHEMA_VERSION, text  # noqa: PLC0415

    p = _ArgParser(prog="plan schema", description=f"Print the JSON Schema (draft 2020-12, version {SCHEMA_VERSION}) "
                   "of an output: plan (plan --json), check (plan check --json) or batch (one plan --batch line).",
                   allow_abbrev=False)
    p.add_argument("kind", nargs="?", default="plan", choices=KINDS, help="which output (default: plan)")
    ns = p.parse_args(argv)
    write_out(text(ns.kind), out or sys.stdout)
    return EXIT_FITS


def gpus_main(argv: list[str], out=None) -> int:
    """plan gpus [--json]: the GPU profiles, one line each (planner.hardware.listing)."""
    from planner.hardware.listing import gpus_rows, render_gpus  # noqa: PLC0415

    p = _ArgParser(prog="plan gpus", description="List the GPU profiles --gpu takes (hwprofiles/*.toml): id, "
                   "memory (the NVML total SGLang sizes from; unified-memory parts: what CUDA sees), interconnect "
                   "(what tp > 1 is charged for), name and aliases. --gpu also takes the NVML names.")
    p.add_argument("--json", action="store_true", help="print the profiles as a JSON list")
    ns = p.parse_args(argv)
    rows = gpus_rows()
    write_out((json.dumps(rows, indent=2) if ns.json else render_gpus(rows)) + "\n", out or sys.stdout)
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
    write_out(describe(gpus, host_gpus=host) + "\n", out)
    if ns.write_profile:
        folder = Path(ns.write_profile)
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise BadInput(f"--write-profile: cannot create {str(folder)[:200]}: {exc.strerror or exc}") from None
        for g in gpus:
            if g.profile_id:
                write_out(f"GPU {g.index}: already profiled as {g.profile_id}\n", out)
                continue
            text = profile_toml_for(g)
            stem = text.split('id = "', 1)[1].split('"', 1)[0]
            path = folder / f"{stem}.toml"
            if path.exists():
                raise BadInput(f"--write-profile: {path} exists; remove it or pick another folder")
            try:
                path.write_text(text, encoding="utf-8")
            except OSError as exc:
                raise BadInput(f"--write-profile: cannot write {path}: {exc.strerror or exc}") from None
            write_out(f"GPU {g.index}: wrote {path}\n", out)
    return EXIT_FITS


def _check_parser() -> _ArgParser:
    p = _ArgParser(prog="plan check", description="Compare an SGLang boot log with the plan; stale logs are "
                   "reported first. Options not listed here are the SGLang flags you launched with.",
                   allow_abbrev=False)
    p.add_argument("logfile", help="the server's log (plain text or .gz)")
    p.add_argument("--gpu", required=True, help="GPU profile (or auto) the log came from")
    p.add_argument("--model", help="catalog name or path (default: the log's model_path)")
    p.add_argument("--launched-at", metavar="TIME",
                   help="when you launched, e.g. '2026-05-01 12:00' (local time of the log)")
    p.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                   help="an SGLang environment variable the server ran with (repeatable)")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")
    p.add_argument("--sglang-version", metavar="X", help="whose rules to use (default: the release the log shows)")
    p.add_argument("--vllm-version", metavar="X", help="a vLLM log: whose rules (default: the release the log shows)")
    return p


def _launched_at(text: str | None):
    import datetime as dt  # noqa: PLC0415

    if not text:
        return None
    try:
        return dt.datetime.fromisoformat(text)
    except ValueError:
        raise BadInput(f"--launched-at: expected a time like '2026-05-01 12:00:00', got {text[:60]!r}") from None


def _profile_for(gpu: str):
    selector = _selector_for(gpu)
    if selector is not None:
        from planner.hardware.live import select  # noqa: PLC0415
        return select(selector).profile
    return find_profile(gpu)


def check_main(argv: list[str], out=None) -> int:
    """plan check LOGFILE --gpu NAME [--model M] [--launched-at TIME] [SGLang flags as launched]."""
    from planner.engines.sglang.check import check, read_log  # noqa: PLC0415
    from planner.engines.sglang.report import render_check  # noqa: PLC0415

    ns, flags = _check_parser().parse_known_args(argv)
    launched = _launched_at(ns.launched_at)
    profile = _profile_for(ns.gpu)
    if ns.sglang_version:
        rules_for(ns.sglang_version)
    try:
        log = read_log(ns.logfile)  # BadInput: unreadable, or not an SGLang log (says what it looks like)
    except BadInput as exc:
        from planner.cli_engines import is_vllm_log, vllm_check  # noqa: PLC0415 - a vLLM log goes to vLLM's check

        vllm = "a vLLM log" in str(exc) or is_vllm_log(ns.logfile)
        code = (vllm_check(ns.logfile, profile, ns.vllm_version, ns.json, write_out,
                           ns.model and resolve_model_safely(ns.model)) if vllm else None)
        if code is None:
            raise
        return code
    res = check(log, profile, ns.model, flags, launched, _parse_env(ns.env), ns.sglang_version)
    if ns.json:
        from planner.engines.sglang.report import check_dict  # noqa: PLC0415
        text = json.dumps(check_dict(res), indent=2, default=str)
    else:
        text = render_check(res)
    failed = res.launch is not None and res.launch.failed  # a launch the log shows failed is never exit 0
    code = EXIT_DOES_NOT_FIT if res.stale or failed or any(r.agrees is False for r in res.rows) else EXIT_FITS
    try:
        write_out(text + "\n", out)
    except _ClosedStdout:
        pass
    return code


def tui_main(argv: list[str]) -> int:
    """plan tui [--gpu G] [--model M] [--sglang-version V] [SGLang flags]: the what-if explorer."""
    p = _ArgParser(prog="plan tui", description="Textual what-if explorer: edit SGLang flags and see the memory "
                   "plan change as you type. Options not listed here are SGLang flags that start filled in.",
                   allow_abbrev=False)
    p.add_argument("--gpu", default="rtxpro6000", help="GPU profile to start with, or auto (default rtxpro6000)")
    p.add_argument("--model", default="qwen3.6-27b", help="model to start with: catalog name, HF id or path "
                   "(default qwen3.6-27b)")
    p.add_argument("--sglang-version", metavar="X", help=f"whose rules to use (default: the installed sglang, else {LATEST})")
    p.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                   help="an SGLang environment variable (repeatable)")
    p.add_argument("--engine", choices=("sglang", "vllm"), default="sglang",
                   help="whose explorer opens (e switches in the app); with vllm the other options are vLLM flags")
    p.add_argument("--vllm-version", metavar="X", help="vLLM's release (0.33 / 0.34; default: as plan picks it)")
    ns, flags = p.parse_known_args(argv)
    if ns.engine == "vllm" and ns.sglang_version:
        raise BadInput("--sglang-version is an SGLang option; with --engine vllm give --vllm-version")
    from planner.tui import run_tui  # noqa: PLC0415 - Textual loads only for the TUI

    vllm = {"engine": "vllm", "vllm_version": ns.vllm_version} if ns.engine == "vllm" else {}
    if ns.vllm_version and not vllm:
        raise BadInput("--vllm-version is a vLLM option (add --engine vllm)")
    return run_tui(ns.gpu, ns.model, flags, _parse_env(ns.env), version=ns.sglang_version, **vllm)


def raise_flag_error(plan: Plan, flags: list[str], launcher: str | None = None) -> None:
    """SGLang's argparse refused a flag of the plan: raise it as bad input, naming plan's own option instead where
    the flag is a misspelling of one (the near matches are the release's the plan used)."""
    bad = flag_error(plan, launcher)
    if bad is not None:
        raise misspelled_option(flags, plan.sglang_version) or bad


def misspelled_option(flags: list[str], version: str | None) -> BadInput | None:
    """An option neither plan nor SGLang knows, close to one of plan's own: the planner's mistake to name."""
    import difflib  # noqa: PLC0415

    from planner.engines.sglang.cli_flags import known_flag_names  # noqa: PLC0415
    from planner.engines.sglang.rules import default_version  # noqa: PLC0415

    ours = planner_options(_parser())
    try:
        theirs = known_flag_names(rules_for(version or default_version()[0]).flags)
    except PlannerError:
        return None
    for f in flags:
        name = f.split("=", 1)[0]
        if not name.startswith("--") or name in theirs or len(name) > 80:
            continue
        if name in ours:  # only after '--' (before it, plan's parser takes its own options)
            return BadInput(f"{name} is an option of plan, not of SGLang: put it before '--' (everything after "
                            "'--' is your launch command)")
        near_ours = difflib.get_close_matches(name, ours, n=1, cutoff=0.75)
        near_theirs = difflib.get_close_matches(name, sorted(theirs), n=1, cutoff=0.75)
        if near_ours and (not near_theirs or difflib.SequenceMatcher(None, name, near_ours[0]).ratio()
                          >= difflib.SequenceMatcher(None, name, near_theirs[0]).ratio()):
            return BadInput(f"unknown option {name}: did you mean {near_ours[0]} (an option of plan; "
                            "see plan --help)?")
    return None


def _apply_paste(ns, sglang_flags: list[str], paste: list[str] | None) -> tuple[str | None, dict[str, str], list[str]]:
    """(model, env, notes) after folding the pasted launch command into the flags; ``ns.launcher``: the paste's
    launcher as typed (errors name it)."""
    from planner.paste import parse_paste  # noqa: PLC0415

    env = _parse_env(ns.env)
    if paste is None:
        return ns.model, env, []
    pasted_model, pasted_flags, pasted_env, ns.launcher = parse_paste(paste)
    sglang_flags += pasted_flags
    notes, ignored = [], []
    for k, v in pasted_env.items():
        if k.startswith(("SGLANG_", "SGL_")):
            env.setdefault(k, v)
        else:
            ignored.append(k)
    if ignored:
        notes.append(f"environment of the pasted command not used (no effect on the plan): {', '.join(ignored)}")
    return ns.model or pasted_model, env, notes


def _paste_release(ns, paste: list[str] | None) -> tuple[tuple[str, str] | None, list[str]]:
    """(default (release, where it was read), notes) from the release a pasted command names (planner.paste);
    an explicit --sglang-version wins, and the note says so when the two differ."""
    from planner.engines.sglang.post_releases import post_base, resolve_post  # noqa: PLC0415
    from planner.engines.sglang.rules import RULES  # noqa: PLC0415
    from planner.paste import release_of_paste  # noqa: PLC0415

    found = release_of_paste(paste) if paste is not None else None
    if found is None:
        return None, []
    version, where = found
    if ns.sglang_version is not None:
        if version is not None and version != ns.sglang_version:
            return None, [f"--sglang-version {ns.sglang_version} wins over {where}, which says SGLang {version}"]
        return None, []
    if version is None:
        return None, [f"{where}: planned under the default release (give --sglang-version X to choose)"]
    if post_base(version):
        base, why = resolve_post(version, list(RULES))
        return (base, f"{where}; {why}"), []
    try:
        rules_for(version)  # a release the command names that is not modelled: one line, exit 2 (never guessed)
    except BadInput as exc:
        raise BadInput(f"{where} says SGLang {version}, whose rules are not modelled ({exc}); give "
                       "--sglang-version X to plan under a modelled release's rules") from None
    return (version, where), []


def _plan_and_search(ns, model, sglang_flags, env, default=None):
    plan = build_plan(ns.gpu, model, sglang_flags, env, ns.free_before_load_gib, ns.free_after_load_gib,
                      ns.sglang_version, default, named=default is not None)
    raise_flag_error(plan, sglang_flags, getattr(ns, "launcher", None))
    if ns.top < 1 or ns.top > 1000:
        raise BadInput(f"--top: expected a positive integer up to 1000, got {ns.top}")
    if ns.no_search or search_skipped(plan):
        return plan, None
    needs = build_needs(ns.need_context, ns.need_concurrency, ns.speculative, ns.allow_fp8_kv,
                        ns.allow_bf16_ssm, ns.objective, ns.allow_no_radix)
    return plan, do_search(plan, needs, ns.top, ns.free_before_load_gib, ns.free_after_load_gib)


def _render(ns, plan: Plan, res: SearchResult | None, user_flags: bool) -> str:
    if ns.json:
        from planner.schema import SCHEMA_VERSION  # noqa: PLC0415

        d = {"schema_version": SCHEMA_VERSION, "engine": "sglang", **to_dict(plan)}
        if res is not None:
            d["recommendation"] = recommendation_dict(res, plan.model)
            d["search"] = search_dict(res)
        return json.dumps(d, indent=2, default=str)
    from planner.engines.sglang.report import render_report  # noqa: PLC0415

    return render_report(plan, res, user_flags=user_flags, verbose=ns.verbose,
                         compare=ns.compare_releases or ns.verbose)


def _engine_mode(ns, argv: list[str], flags: list[str], paste: list[str] | None) -> int:
    """An engine other than SGLang, or --compare-engines: through planner.engines.registry (planner/cli_engines.py)."""
    from planner.cli_engines import compare_main, vllm_main  # noqa: PLC0415

    helpers = {"parse_env": _parse_env, "profile_for": _profile_for, "resolve_model": resolve_model_safely,
               "write_out": write_out}
    return (compare_main if ns.compare_engines else vllm_main)(ns, argv, flags, paste, helpers)


def _main(argv: list[str], state: dict[str, int] | None = None) -> int:
    state = {} if state is None else state
    sub = {"probe": probe_main, "check": check_main, "tui": tui_main, "models": models_main, "schema": schema_main,
           "gpus": gpus_main}
    if argv and argv[0] in sub:
        return sub[argv[0]](argv[1:])
    paste: list[str] | None = None
    if "--" in argv:
        k = argv.index("--")
        argv, paste = argv[:k], argv[k + 1:]
    if argv and argv[0] in ("-h", "--help"):
        write_out(_parser().format_help())
        return EXIT_FITS
    ns, sglang_flags = _parser().parse_known_args(argv)
    if ns.batch:
        batch_engine_options(ns, argv)  # a line names its engine ("engine": "vllm"), not the command line
        return run_batch(ns.batch, ns.sglang_version, sys.stdout, ns.jobs)
    if wants_engine(ns, argv, paste) != "sglang" or ns.compare_engines:  # vLLM, or both side by side
        return _engine_mode(ns, argv, sglang_flags, paste)
    model, env, notes = _apply_paste(ns, sglang_flags, paste)
    mode = other_mode(ns, model, sglang_flags, env, write_out, build_needs, resolve_model_safely)  # pp, --gpu any
    if mode is not None:
        return mode
    default, release_notes = _paste_release(ns, paste)
    plan, res = _plan_and_search(ns, model, sglang_flags, env, default)
    plan.notes.extend(notes + release_notes)
    user_flags = bool(sglang_flags)
    if user_flags or res is None:
        code = exit_code(plan)
    else:
        code = EXIT_FITS if res.recommended is not None else EXIT_DOES_NOT_FIT
    state["code"] = code
    try:
        write_out(_render(ns, plan, res, user_flags) + "\n")
    except _ClosedStdout:
        pass
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
