"""The CLI's engine choice (issue #26): ``--engine sglang|vllm``, ``--vllm-version``, vLLM's measured inputs under
the vLLM oracle's names, a pasted ``vllm serve ...`` command, ``--compare-engines``, and ``plan check`` on a vLLM log.

SGLang's own path stays in :mod:`planner.cli` (its output is unchanged); every other engine is reached through
:mod:`planner.engines.registry` (``engine(name).plan(PlanRequest) -> PlanOutcome``). The CLI passes its helpers in
(``resolve_model``, ``profile_for``, ``parse_env``, ``write_out``), so this module does not import the CLI.
"""

from __future__ import annotations

import argparse
import json
import math
import re
from typing import Any, Callable

from planner.errors import EXIT_DOES_NOT_FIT, EXIT_FITS, BadInput

# the vLLM oracle's measured inputs (shared/tools/vllm-oracle/README.md "Inputs"; planner.engines.vllm.inputs
# Measured), as options: name -> (unit, may be zero, help)
VLLM_MEASURED: dict[str, tuple[str, bool, str]] = {
    "cuda_total_mib": ("MiB", False, "cudaMemGetInfo's total per GPU (the T of T x gpu_memory_utilization)"),
    "startup_used_gib": ("GiB", True, "memory in use before vLLM loads the model (CUDA context, other processes)"),
    "weights_gib": ("GiB", True, "the log's 'Model loading took X GiB'"),
    "non_torch_gib": ("GiB", True, "non-torch memory of the profile run (NCCL, CUDA graphs' pool outside torch)"),
    "peak_activation_gib": ("GiB", True, "torch's activation peak of the profile run"),
    "cudagraph_gib": ("GiB", True, "CUDA-graph memory the profiler estimated"),
    "cudagraph_actual_gib": ("GiB", True, "0.34: CUDA-graph memory after capture (default: --cudagraph-gib)"),
    "warmup_peak_gib": ("GiB", True, "0.34: the warmup's peak (default: --peak-activation-gib)"),
    "torch_reserve_growth_gib": ("GiB", True, "0.34: torch's reserved-memory growth through warmup and capture"),
}
SGLANG_MEASURED = {"free_before_load_gib": "free_before_gib", "free_after_load_gib": "free_after_gib"}

# SGLang-only options of plan, and what to give vLLM instead (None: no counterpart)
SGLANG_ONLY: dict[str, str | None] = {
    "--sglang-version": "--vllm-version 0.33 / 0.34",
    "--free-before-load-gib": "--cuda-total-mib and --startup-used-gib (what vLLM measures before loading)",
    "--free-after-load-gib": "--weights-gib (the log's 'Model loading took X GiB')",
    "--compare-releases": "--vllm-version 0.33 / 0.34, one release per run",
    "--allow-fp8-kv": "the vLLM flag --kv-cache-dtype fp8",
    "--allow-bf16-ssm": "the vLLM flag --mamba-ssm-cache-dtype",
    "--allow-no-radix": "the vLLM flag --no-enable-prefix-caching",
    "--speculative": "the vLLM flag --speculative-config",
    "--objective": None,
    "--top": None,
    "--jobs": None,
    "--price": None,
    "--export": None,
}


def add_engine_args(p: argparse.ArgumentParser) -> None:
    """plan's engine options: which engine, its release, and vLLM's measured inputs."""
    from planner.engines.registry import names  # noqa: PLC0415

    e = p.add_argument_group("engine (default SGLang; a pasted 'vllm serve ...' picks vLLM)")
    e.add_argument("--engine", choices=names(), default=None, help="whose rules plan the launch (default: sglang, "
                   "or the engine of the pasted command)")
    e.add_argument("--vllm-version", metavar="X", help="vLLM release: 0.33 or 0.34 (default: the vllm installed "
                   "here, else the latest modelled)")
    e.add_argument("--compare-engines", action="store_true",
                   help="the same GPU, model and context under SGLang's and vLLM's rules, side by side")
    for name, (unit, _, what) in VLLM_MEASURED.items():
        e.add_argument("--" + name.replace("_", "-"), type=float, default=None, metavar=unit,
                       help=f"vLLM, measured: {what}")


def one_gpu(gpu: Any, why: str) -> None:
    """--gpu any / a list of GPU types (the hardware search) refused by name for ``why``."""
    if _is_gpu_set(gpu):
        raise BadInput(f"--gpu {gpu[:60]}: the hardware search (--gpu any / a list of GPU types) is not taken {why}; "
                       f"give one GPU")


def _given(argv: list[str], option: str) -> bool:
    return any(t == option or t.startswith(option + "=") for t in argv)


def wants_engine(ns: Any, argv: list[str], paste: list[str] | None) -> str:
    """The engine this command asks for: --engine, else the pasted command's (vLLM's launchers), else SGLang.
    A measured vLLM input or --vllm-version with SGLang is bad input naming SGLang's counterpart."""
    from planner.paste import engine_of_paste  # noqa: PLC0415

    pasted = engine_of_paste(paste) if paste is not None else None
    name = ns.engine or pasted or "sglang"
    if ns.engine and pasted and pasted != ns.engine:
        raise BadInput(f"--engine {ns.engine}: the pasted command is {'a vLLM' if pasted == 'vllm' else 'an SGLang'} "
                       f"launch; drop --engine or paste {'an SGLang' if ns.engine == 'sglang' else 'a vLLM'} command")
    if name == "sglang" and not ns.compare_engines:
        for opt in ["--vllm-version", *("--" + m.replace("_", "-") for m in VLLM_MEASURED)]:
            if _given(argv, opt):
                counterpart = ("--sglang-version" if opt == "--vllm-version" else
                               "--free-before-load-gib / --free-after-load-gib")
                raise BadInput(f"{opt} is a vLLM input (add --engine vllm); SGLang's counterpart is {counterpart}")
    return name


def batch_engine_options(ns: Any, argv: list[str]) -> None:
    """--batch takes the engine per line: --engine vllm, --vllm-version, --compare-engines or a vLLM measured input
    on its command line would be ignored, so each is bad input naming the line's key instead."""
    keys = {"--engine": '"engine": "vllm"', "--vllm-version": '"vllm_version"', "--compare-engines": None,
            **{"--" + m.replace("_", "-"): f'"measured": {{"{m}": ...}}' for m in VLLM_MEASURED}}
    for opt, key in keys.items():
        if _given(argv, opt) and not (opt == "--engine" and ns.engine == "sglang"):
            raise BadInput(f"{opt}: not taken with --batch" + (f"; give {key} on each line" if key else ""))


def vllm_version(text: str | None, paste: list[str] | None) -> tuple[str | None, str]:
    """(release, where it came from): --vllm-version (0.33 / 0.34 / 0.33.0 / 0.34.0), else the release the pasted
    command names (docker tag, pip / uv pin); else (None, ...): PlanRequest.version None, vLLM's front end's
    default_version() (the vllm installed here, read from its metadata, else the latest modelled), which names
    where it came from. A release not modelled is bad input, never the nearest one."""
    from planner.engines.registry import releases  # noqa: PLC0415

    versions, _ = releases("vllm")

    def norm(v: str, where: str) -> str:
        full = v if v.count(".") >= 2 else v + ".0"
        if full not in versions:
            raise BadInput(f"{where} vLLM {v}: not modelled (modelled: {', '.join(versions)})")
        return full

    if text is not None:
        return norm(text.strip().lstrip("v"), "--vllm-version:"), "--vllm-version"
    if paste is not None:
        from planner.paste import release_of_paste  # noqa: PLC0415

        found = release_of_paste(paste, "vllm")
        if found is not None and found[0] is not None:
            return norm(found[0], f"{found[1]} says"), found[1]
    return None, "the engine's default (the vllm installed here, else the latest modelled)"


def measured_of(ns: Any, engine: str) -> dict[str, float]:
    """The measured inputs given, under the engine's own names (PlanRequest.measured)."""
    out: dict[str, float] = {}
    if engine == "vllm":
        for name, (unit, zero_ok, _) in VLLM_MEASURED.items():
            v = getattr(ns, name)
            if v is None:
                continue
            if not math.isfinite(v) or v < 0 or (v == 0 and not zero_ok) or v > (1 << 30 if unit == "MiB" else 1 << 20):
                raise BadInput(f"--{name.replace('_', '-')}: {v:g} {unit} is out of range")
            out[name] = float(v)
    else:
        for opt, name in SGLANG_MEASURED.items():
            v = getattr(ns, opt)
            if v is not None:
                if not math.isfinite(v) or v <= 0 or v > 1 << 20:
                    raise BadInput(f"--{opt.replace('_', '-')}: {v:g} GiB is out of range (0, 1048576]")
                out[name] = float(v)
        if "free_before_gib" in out and out.get("free_after_gib", 0) > out["free_before_gib"]:
            raise BadInput("--free-after-load-gib: cannot exceed --free-before-load-gib (loading weights frees nothing)")
    return out


def refuse_sglang_only(argv: list[str], why: str = "with --engine vllm", allow: tuple[str, ...] = ()) -> None:
    for opt, instead in SGLANG_ONLY.items():
        if _given(argv, opt) and opt not in allow:
            tail = f"; for vLLM give {instead}" if instead else " (no vLLM counterpart in this build)"
            raise BadInput(f"{opt} is an SGLang option, not taken {why}{tail}")


def vllm_main(ns: Any, argv: list[str], flags: list[str], paste: list[str] | None, h: dict[str, Callable]) -> int:
    """plan --engine vllm (or a pasted vLLM command): one PlanRequest to vLLM's front end, its report printed."""
    from planner.engines.registry import engine  # noqa: PLC0415
    from planner.engines.interface import PlanRequest  # noqa: PLC0415

    gpu_any = _is_gpu_set(ns.gpu)
    refuse_sglang_only(argv, allow=("--price",) if gpu_any else ())
    env = h["parse_env"](ns.env)
    model = ns.model
    if paste is not None:
        from planner.engines.registry import detect_paste  # noqa: PLC0415

        got = detect_paste(paste)  # vLLM's front end reads its own launch command (its paste())
        if got is None or got[0] != "vllm":
            raise BadInput("--engine vllm: the pasted command is not a vLLM launch ('vllm serve MODEL ...')")
        model, flags, env = model or got[1], [*flags, *got[2]], {**got[3], **env}
    version, _ = vllm_version(ns.vllm_version, paste)
    if gpu_any:
        return _vllm_hardware(ns, argv, model, flags, env, version, h)
    if getattr(ns, "layouts", None) is not None:
        raise BadInput("--layouts: only with --gpu any or a list of GPU types (the hardware search)")
    one_gpu(ns.gpu, "with --engine vllm")
    front = engine("vllm")  # "vLLM engine: not available in this build" (exit 2) while its front end is absent
    if not ns.gpu:
        raise BadInput("--gpu: required (e.g. --gpu rtxpro6000; the ids are the file names in hwprofiles/)")
    if not model:
        raise BadInput("--model: required (e.g. --model qwen3.6-27b), or paste 'vllm serve MODEL ...' after '--'")
    request = PlanRequest(gpu=h["profile_for"](ns.gpu), model=h["resolve_model"](model), flags=tuple(flags), env=env,
                          version=version, measured=measured_of(ns, "vllm"), need_context=ns.need_context,
                          need_concurrency=ns.need_concurrency, search=not ns.no_search)
    outcome = front.plan(request)
    h["write_out"]((json.dumps(outcome.json, indent=2, default=str) if ns.json else outcome.text.rstrip("\n")) + "\n")
    return outcome.exit_code


def _is_gpu_set(gpu: Any) -> bool:
    """--gpu any / a comma list with a name in it (a list of digits is NVML indices)."""
    t = gpu.strip().lower() if isinstance(gpu, str) else ""
    return t == "any" or ("," in t and not re.fullmatch(r"[\d,\s]+", t))


def _vllm_hardware(ns: Any, argv: list[str], model: str | None, flags: list[str], env: dict[str, str],
                   version: str | None, h: dict[str, Callable]) -> int:
    """plan --engine vllm --gpu any | a,b: vLLM's hardware search (planner/engines/vllm/deploy.py, through the
    registry); refused by name where this build has none, and for the inputs it does not take."""
    from planner.engines.registry import engine, optional  # noqa: PLC0415

    engine("vllm")  # "vLLM engine: not available in this build" (exit 2) while its front end is absent
    main = optional("vllm", "deploy", "hardware_main")
    if main is None:
        one_gpu(ns.gpu, "with --engine vllm")
    given = [opt for opt in ("--no-search", "--batch") if _given(argv, opt)]
    given += ["--" + m.replace("_", "-") for m in VLLM_MEASURED if getattr(ns, m) is not None]
    if given:
        raise BadInput(f"{given[0]}: not with --gpu {ns.gpu[:60]} (the hardware search plans each type's own memory); "
                       "drop it, or plan one GPU type")
    if not model:
        raise BadInput("--model: required (e.g. --model qwen3.6-27b), or paste 'vllm serve MODEL ...' after '--'")
    return main(ns, h["resolve_model"](model), flags, env, version, h["write_out"])


# --compare-engines --need-context C: each engine serves requests of C tokens under its own flag
CONTEXT_FLAG = {"sglang": "--context-length", "vllm": "--max-model-len"}


def compare_main(ns: Any, argv: list[str], flags: list[str], paste: list[str] | None, h: dict[str, Callable]) -> int:
    """plan --compare-engines: the same GPU, model and context under each engine's rules (its defaults, plus the
    context flag when --need-context is given: engine flags are each engine's own, so none are taken), capacity
    side by side; exit 0 when both fit."""
    from planner.engines.interface import PlanRequest  # noqa: PLC0415
    from planner.engines.registry import engine, names, title  # noqa: PLC0415

    if flags or paste is not None:
        raise BadInput("--compare-engines: plans each engine's defaults; give no engine flags and no pasted command "
                       f"(got {(flags or paste)[0][:60]!r})")
    for opt in ("--compare-releases", "--export", "--price", "--jobs"):
        if _given(argv, opt):
            raise BadInput(f"{opt}: not taken with --compare-engines")
    if not ns.gpu or not ns.model:
        raise BadInput("--compare-engines: give --gpu and --model")
    one_gpu(ns.gpu, "with --compare-engines")
    gpu, model = h["profile_for"](ns.gpu), h["resolve_model"](ns.model)
    env = h["parse_env"](ns.env)
    outcomes = []
    for name in names():
        front = engine(name)
        version = ns.sglang_version if name == "sglang" else vllm_version(ns.vllm_version, None)[0]
        ctx = () if ns.need_context is None else (CONTEXT_FLAG[name], str(ns.need_context))
        request = PlanRequest(gpu=gpu, model=model, flags=ctx, env=env if name == "sglang" else {}, version=version,
                              measured=measured_of(ns, name), need_context=ns.need_context,
                              need_concurrency=ns.need_concurrency, search=False)
        outcomes.append((title(name), front.plan(request)))
    if ns.json:
        from planner.schema import SCHEMA_VERSION  # noqa: PLC0415

        d = {"schema_version": SCHEMA_VERSION, "gpu": gpu.id, "model": model.spec.name,
             "need_context": ns.need_context, "engines": [
                 {"engine": o.engine, "version": o.version, "verdict": o.verdict, "capacity": o.capacity}
                 for _, o in outcomes]}
        h["write_out"](json.dumps(d, indent=2, default=str) + "\n")
    else:
        h["write_out"](render_compare(gpu.id, model.spec.name, ns.need_context, outcomes) + "\n")
    return EXIT_FITS if all(o.verdict == "fits" for _, o in outcomes) else EXIT_DOES_NOT_FIT


def _cell(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:,.2f}"
    return f"{v:,}" if isinstance(v, int) else str(v)


def render_compare(gpu: str, model: str, context: int | None, outcomes: list[tuple[str, Any]]) -> str:
    """The capacity figures of each engine in columns (PlanOutcome.capacity: kv_tokens, context_len,
    max_concurrency_x, max_concurrency, max_running_requests, kv_bytes; "-" where an engine does not give one)."""
    head = [f"{t} {o.version}" for t, o in outcomes]
    rows = [("verdict", [o.verdict for _, o in outcomes])]
    for key, label in (("kv_tokens", "KV cache tokens"), ("context_len", "context length (tokens)"),
                       ("max_concurrency_x", "KV cache / context length"),
                       ("max_concurrency", "requests of that length at once"),
                       ("max_running_requests", "running-request limit"), ("kv_bytes", "KV cache GiB")):
        vals = [o.capacity.get(key) for _, o in outcomes]
        if key == "kv_bytes":
            vals = [None if v is None else v / (1 << 30) for v in vals]
        rows.append((label, vals))
    w0 = max(len(r[0]) for r in rows)
    ws = [max(len(head[i]), *(len(_cell(r[1][i])) for r in rows)) for i in range(len(head))]
    what = f"--context-length / --max-model-len {context:,}" if context else "each engine's defaults"
    lines = [f"Engines compared on {gpu}, model {model}: {what}",
             "  " + " " * w0 + "".join(f"  {h:>{w}}" for h, w in zip(head, ws))]
    for label, vals in rows:
        lines.append("  " + f"{label:<{w0}}" + "".join(f"  {_cell(v):>{w}}" for v, w in zip(vals, ws)))
    return "\n".join(lines)


def _log_text(text_path: str, limit: int = -1) -> str:
    """A log file's text (gzip too), or one line saying why it cannot be read."""
    import gzip  # noqa: PLC0415

    try:
        opener = gzip.open if str(text_path).endswith(".gz") else open
        with opener(text_path, "rt", encoding="utf-8", errors="replace") as fh:
            return fh.read(limit)
    except (OSError, EOFError, ValueError) as exc:
        raise BadInput(f"check: cannot read {str(text_path)[:200]}: {getattr(exc, 'strerror', None) or exc}") from None


def vllm_check(text_path: str, profile: Any, version: str | None, as_json: bool, write_out: Callable,
               model: Any = None) -> int | None:
    """plan check on a vLLM log, through vLLM's front end (planner.engines.vllm.check.check_log(text, gpu=profile,
    version=, model= when --model is given)); None when this build has no vLLM log check (the caller keeps its
    refusal)."""
    from planner.engines.registry import optional  # noqa: PLC0415

    check_log = optional("vllm", "check", "check_log")
    if check_log is None:
        return None
    text = _log_text(text_path)
    full = vllm_version(version, None)[0] if version is not None else None
    outcome = check_log(text, gpu=profile, version=full, **({} if model is None else {"model": model}))
    write_out((json.dumps(outcome.json, indent=2, default=str) if as_json else outcome.text.rstrip("\n")) + "\n")
    return outcome.exit_code


def is_vllm_log(text_path: str) -> bool:
    """The log SGLang's reader refused is a vLLM log (vLLM's own reader says so: planner.engines.vllm.logs.is_log)."""
    from planner.engines.registry import optional  # noqa: PLC0415

    is_log = optional("vllm", "logs", "is_log")
    if is_log is None:
        return False
    try:
        return is_log(_log_text(text_path, 4 << 20))
    except BadInput:
        return False


# the batch keys SGLang's flag search reads and vLLM's does not (docs/json.md "vLLM")
VLLM_LINE_REFUSES = ("speculative", "allow_fp8_kv", "allow_bf16_ssm", "allow_no_radix", "objective", "top")


def batch_result(req: Any, h: dict[str, Callable]) -> dict[str, Any]:
    """A --batch line for vLLM ("engine": "vllm", "vllm_version", "measured" under the vLLM oracle's names;
    "search": true runs vLLM's knob search for need_context / need_concurrency) -> its result object (the front
    end's JSON); SGLang-only keys on it, or vLLM keys on an SGLang line, are its error."""
    from planner.engines.interface import PlanRequest  # noqa: PLC0415
    from planner.engines.registry import engine  # noqa: PLC0415

    if req.engine != "vllm":
        key = "vllm_version" if req.vllm_version is not None else "measured"
        raise BadInput(f"'{key}' is read for vLLM lines only: add \"engine\": \"vllm\" (SGLang's measured inputs are "
                       "free_before_gib / free_after_gib)")
    for key, instead in (("sglang_version", "vllm_version"), ("free_before_gib", "measured.cuda_total_mib"),
                         ("free_after_gib", "measured.weights_gib")):
        if getattr(req, key) is not None:
            raise BadInput(f"'{key}' is SGLang's; a vLLM line takes {instead}")
    from planner.batch import given_keys  # noqa: PLC0415

    # SGLang's search knobs: vLLM's search has its own (planner/engines/vllm/search.py), so one given is refused,
    # never ignored (an "allow_fp8_kv": false would not stop vLLM's search from trying --kv-cache-dtype fp8)
    sglang_search = [k for k in VLLM_LINE_REFUSES if k in given_keys(req)]
    if sglang_search:
        raise BadInput(f"'{sglang_search[0]}' is read by SGLang's search only; a vLLM line's search (\"search\": true) "
                       "takes need_context and need_concurrency")
    unknown = sorted(set(req.measured) - set(VLLM_MEASURED))
    if unknown:
        import difflib  # noqa: PLC0415

        near = difflib.get_close_matches(unknown[0], list(VLLM_MEASURED), n=1)
        raise BadInput(f"measured: unknown '{unknown[0][:60]}'{f'; did you mean {near[0]!r}?' if near else ''} "
                       f"(accepted: {', '.join(VLLM_MEASURED)})")
    measured = {}
    for name, v in req.measured.items():
        unit, zero_ok, _ = VLLM_MEASURED[name]
        if not math.isfinite(v) or v < 0 or (v == 0 and not zero_ok):
            raise BadInput(f"measured.{name}: {v} {unit} is out of range")
        measured[name] = float(v)
    version, _ = vllm_version(req.vllm_version, None)
    front = engine("vllm")
    request = PlanRequest(gpu=h["profile_for"](req.gpu), model=h["resolve_model"](req.model),
                          flags=tuple(str(f) for f in req.flags), env=h["parse_env"](req.env), version=version,
                          measured=measured, need_context=req.need_context, need_concurrency=req.need_concurrency,
                          search=req.search)
    return {**front.plan(request).json, "engine": "vllm"}
