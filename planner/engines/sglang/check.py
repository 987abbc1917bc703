"""``plan check LOGFILE``: compare an SGLang boot log with the plan, and catch stale logs first.

The log's ServerArgs dump gives the flags (or the user gives them), ``Load weight begin/end``
give the measured free memory before and after the weights, and the planner re-plans with
exactly those inputs. Each pool SGLang logs is then put next to the prediction. SGLang prints
GiB with two decimals (and calls it GB), so a difference within 0.01 GiB is rounding.

Stale-log checks, reported before anything else:

* the log's ServerArgs differ from the flags the user says they launched with;
* the file was last written before ``--launched-at``, or the newest launch in it started before then;
* two launches are interleaved in the file (two servers writing to one log);
* an earlier launch in the file failed differently from the last one (the error you remember may
  not be the one of the launch you are looking at).
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from typing import Any

from planner.catalog.catalog import ResolvedModel, find_entry, resolve_model
from planner.errors import BadInput
from planner.hardware.profiles import GpuProfile
from planner.logs import (Launch, ParsedLog, SchedulerSummary, detect_version, guess_version, interleave_reasons,
                          parse_file, spec_lines)
from planner.engines.sglang.plan import GIB, Plan, json_verdict, make_plan

ROUNDING_GIB = 0.01  # SGLang prints two decimals

# ServerArgs fields that decide memory, as (field, flag). Values are the ones after __post_init__,
# so passing them back as flags reproduces the launch (mem_fraction_static already includes the
# ViT factor; max_running_requests already holds the 48 forced under speculative decoding).
_MEMORY_FIELDS = (
    ("tp_size", "--tp-size"), ("mem_fraction_static", "--mem-fraction-static"),
    ("chunked_prefill_size", "--chunked-prefill-size"), ("max_prefill_tokens", "--max-prefill-tokens"),
    ("cuda_graph_max_bs", "--cuda-graph-max-bs"), ("page_size", "--page-size"),
    ("context_length", "--context-length"), ("max_running_requests", "--max-running-requests"),
    ("max_total_tokens", "--max-total-tokens"), ("max_mamba_cache_size", "--max-mamba-cache-size"),
    ("mamba_full_memory_ratio", "--mamba-full-memory-ratio"),
    ("mamba_scheduler_strategy", "--mamba-scheduler-strategy"), ("mamba_ssm_dtype", "--mamba-ssm-dtype"),
    ("mamba_radix_cache_strategy", "--mamba-radix-cache-strategy"),  # the field's name from 0.5.14
    ("kv_cache_dtype", "--kv-cache-dtype"), ("attention_backend", "--attention-backend"),
    ("speculative_algorithm", "--speculative-algorithm"), ("speculative_num_steps", "--speculative-num-steps"),
    ("speculative_eagle_topk", "--speculative-eagle-topk"),
    ("speculative_num_draft_tokens", "--speculative-num-draft-tokens"),
    ("speculative_draft_model_path", "--speculative-draft-model-path"),
)
_SWITCHES = (("disable_radix_cache", "--disable-radix-cache"), ("disable_overlap_schedule", "--disable-overlap-schedule"),
             ("disable_cuda_graph", "--disable-cuda-graph"))
# Flags that move weights but not the sizing chain: the measured free memory already reflects them.
_WEIGHT_ONLY = ("--cpu-offload-gb", "--quantization", "--schedule-conservativeness")


@dataclass
class Row:
    what: str
    predicted: float | int | None
    actual: float | int | None
    unit: str
    rule: str
    tol: float = 0.0  # extra tolerance from the log's own rounding of its inputs

    @property
    def diff(self) -> float | None:
        if self.predicted is None or self.actual is None:
            return None
        return self.actual - self.predicted

    @property
    def agrees(self) -> bool | None:
        d = self.diff
        if d is None:
            return None
        return abs(d) <= (ROUNDING_GIB if self.unit == "GiB" else 0) + self.tol


@dataclass
class CheckResult:
    log: ParsedLog
    launch: Launch | None
    stale: list[str]
    version: str | None
    flags: list[str]
    plan: Plan | None
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    failure: str | None = None
    explanation: list[str] = field(default_factory=list)
    # the release whose rules were used and why (given, printed by the log, or chosen by reproduction)
    release: str | None = None
    release_why: str = ""
    candidates: list[Candidate] = field(default_factory=list)  # every release planned to choose one
    unseen: str | None = None  # a failed launch the plan says fits: what the planner cannot see


@dataclass
class Candidate:
    """One release the log's evidence allows, planned with the log's inputs: does it reproduce what the log
    shows (the outcome, the pool lines)? ``outcome`` is True/False, or None when the log shows no outcome."""

    version: str
    verdict: str  # the JSON verdict (fits | oom_risk | rejected | startup_failed), or "refused" (bad input there)
    outcome: bool | None
    disagree: list[str]
    agree: int
    detail: str = ""

    @property
    def reproduces(self) -> bool:
        return self.verdict != "refused" and self.outcome is not False and not self.disagree


# Lines only an SGLang server writes (any release): a file with none of them is not an SGLang log.
_SGLANG_MARKERS = ("server_args=ServerArgs(", "server_args={", "Load weight begin", "Load weight end", "KV Cache is allocated",
                   "Memory pool end", "sglang", "SGLang", "max_total_num_tokens", "Mamba Cache is allocated",
                   "Capture cuda graph", "[TP0]", "TpModelWorker", "Scheduler hit an exception",
                   "Not enough memory. Please try to increase --mem-fraction-static")
# What other files look like, to say so: (substring, what it is)
_OTHER_LOGS = (("vllm", "a vLLM log"), ("vLLM", "a vLLM log"), ("llama_model_loader", "a llama.cpp log"),
               ("TensorRT-LLM", "a TensorRT-LLM log"), ("[TRT-LLM]", "a TensorRT-LLM log"),
               ("text-generation-launcher", "a TGI log"), ("text_generation_launcher", "a TGI log"),
               ("ollama", "an Ollama log"), ("lmdeploy", "an LMDeploy log"))
_SNIFF_BYTES = 4 << 20


def sniff_log(head: bytes, name: str) -> str | None:
    """None when ``head`` (the file's first bytes) can be an SGLang log, else what it looks like instead."""
    if not head.strip():
        return f"{name} is empty"
    if b"\x00" in head[:65536]:
        return f"{name} is binary data (NUL bytes), not a text log"
    text = head.decode("utf-8", errors="replace")
    bad = text.count("\ufffd")
    if bad > max(16, len(text) // 20):
        return f"{name} is not text ({bad} undecodable bytes in the first {len(head):,}), not a log"
    if any(m in text for m in _SGLANG_MARKERS):
        return None
    for needle, what in _OTHER_LOGS:
        if needle in text:
            return f"{name} looks like {what}, not an SGLang server log"
    if text.lstrip().startswith(("{", "[")):
        return f"{name} looks like JSON, not an SGLang server log"
    return f"{name} has no line an SGLang server writes (no ServerArgs dump, no 'Load weight' or pool lines)"


def read_log(path: str) -> ParsedLog:
    """Read a boot log for ``plan check``: BadInput (one line) when it cannot be read or is not an SGLang log."""
    import gzip  # noqa: PLC0415

    try:
        opener = gzip.open if str(path).endswith(".gz") else open
        with opener(path, "rb") as fh:
            head = fh.read(_SNIFF_BYTES)
    except (OSError, EOFError, ValueError) as exc:
        raise BadInput(f"check: cannot read {str(path)[:200]}: {getattr(exc, 'strerror', None) or exc}") from None
    what = sniff_log(head, str(path)[:200])
    if what is not None:
        raise BadInput(f"check: {what}; give the log an SGLang server printed (python -m sglang.launch_server ...)")
    try:
        log = parse_file(path)
    except (OSError, EOFError, ValueError) as exc:
        raise BadInput(f"check: cannot read {str(path)[:200]}: {getattr(exc, 'strerror', None) or exc}") from None
    if not log.launches:
        raise BadInput(f"check: {str(path)[:200]} mentions SGLang but holds no launch (no ServerArgs, weight-load, "
                       "pool or failure line)")
    doc = _document_not_log(head.decode("utf-8", errors="replace"), log)
    if doc is not None:
        raise BadInput(f"check: {str(path)[:200]} looks like {doc}, not a server log: the SGLang text in it "
                       f"(line {log.launches[0].start_lineno}) is quoted, not logged; give the log an SGLang server "
                       "printed (python -m sglang.launch_server ... 2>&1 | tee server.log)")
    from planner.logs.server_args import mistyped_field  # noqa: PLC0415

    for launch in log.launches:  # the dump's fields the check reads, checked once here (never a value of another type)
        dump = launch.server_args_event
        bad = mistyped_field(dump.args) if dump is not None else None
        if bad is not None:
            shown = repr(bad[2]) if len(repr(bad[2])) <= 40 else repr(bad[2])[:37] + "..."
            raise BadInput(f"check: {str(path)[:200]} line {dump.lineno}: ServerArgs field '{bad[0]}' is {shown}, "
                           f"where SGLang writes {bad[1]}; the dump is damaged (give the log as the server wrote it)")
    return log


def _document_not_log(text: str, log: ParsedLog) -> str | None:
    """What the file is when it is a document (Markdown: code fences, tables) that only quotes SGLang's text:
    no line of any launch carries a log timestamp. A log pasted into a Markdown issue keeps its timestamps."""
    lines = text.splitlines()
    fences = sum(1 for x in lines if x.lstrip().startswith("```"))
    tables = sum(1 for x in lines if x.startswith("|") and x.rstrip().endswith("|"))
    if fences < 2 and tables < 2:
        return None
    if any(e.timestamp is not None for la in log.launches for e in la.events):
        return None
    return "a Markdown document"


def flags_from_server_args(args: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for key, flag in _MEMORY_FIELDS:
        v = args.get(key)
        if v is None or isinstance(v, (dict, list)):
            continue
        if key in ("mamba_scheduler_strategy", "mamba_radix_cache_strategy") and v == "auto":
            continue
        if key == "kv_cache_dtype" and v == "auto":
            continue
        out += [flag, str(v)]
    for key, flag in _SWITCHES:
        if args.get(key) is True:
            out.append(flag)
    bs = args.get("cuda_graph_bs")
    if isinstance(bs, list) and bs and isinstance(args.get("cuda_graph_max_bs"), int):
        from planner.engines.sglang.pipeline.server_args import _generate_cuda_graph_batch_sizes  # noqa: PLC0415

        default = _generate_cuda_graph_batch_sizes(args["cuda_graph_max_bs"], args.get("speculative_algorithm"),
                                                   bool(args.get("disable_cuda_graph_padding")))
        if list(bs) != default:  # only a list the user chose; the generated one follows from the max
            out += ["--cuda-graph-bs", *(str(int(b)) for b in bs)]
    return out


def _norm_flags(flags: list[str]) -> dict[str, str]:
    out, i = {}, 0
    while i < len(flags):
        f = flags[i]
        if f.startswith("--"):
            if "=" in f:
                k, v = f.split("=", 1)
                out[k] = v
            elif i + 1 < len(flags) and not flags[i + 1].startswith("--"):
                out[f] = flags[i + 1]
                i += 1
            else:
                out[f] = "true"
        i += 1
    return out


def stale_checks(log: ParsedLog, launched_at: _dt.datetime | None, user_flags: list[str]) -> list[str]:
    msgs: list[str] = []
    launch = log.latest
    if launched_at is not None:
        if log.mtime_datetime is not None and log.mtime_datetime < launched_at:
            msgs.append(f"the file was last written at {log.mtime_datetime:%Y-%m-%d %H:%M:%S}, before your launch at "
                        f"{launched_at:%Y-%m-%d %H:%M:%S}: it cannot hold that launch")
        if launch is not None and launch.first_timestamp is not None and launch.first_timestamp < launched_at:
            msgs.append(f"the newest launch in the log started at {launch.first_timestamp:%Y-%m-%d %H:%M:%S}, before "
                        f"your launch at {launched_at:%Y-%m-%d %H:%M:%S}: your launch never wrote to this file")
    reasons = interleave_reasons(log)
    if reasons:
        msgs.append("two launches are interleaved in this file: " + "; ".join(reasons[:2]))
    if user_flags and launch is not None and launch.server_args:
        differ = differing_flags(flags_from_server_args(launch.server_args), user_flags)
        if differ:
            msgs.append("the log's ServerArgs differ from the flags you launched with (" + str(len(differ))
                        + " flag(s)): " + group_differences(differ))
    if len(log.launches) > 1 and launch is not None:
        prev = [x for x in log.launches[:-1] if x.failure is not None]
        if prev and (launch.failure is None or prev[-1].failure.message != launch.failure.message):
            msgs.append(f"an earlier launch in this file (line {prev[-1].start_lineno}) failed with "
                        f"'{prev[-1].failure.message[:80]}'; the newest launch "
                        + ("did not fail" if launch.failure is None else f"failed with '{launch.failure.message[:80]}'"))
    return msgs


# Most memory-relevant first: the flags people chase when a launch does not fit.
_RELEVANCE = ("--mamba-scheduler-strategy", "--max-mamba-cache-size", "--mamba-full-memory-ratio",
              "--max-running-requests", "--mem-fraction-static", "--max-total-tokens", "--context-length",
              "--kv-cache-dtype", "--mamba-ssm-dtype", "--page-size", "--chunked-prefill-size", "--cuda-graph-max-bs",
              "--disable-radix-cache", "--tp-size")


def _canonical(name: str) -> str:
    """One spelling per flag across releases (0.5.14 renamed the strategy and graph flags)."""
    from planner.engines.sglang.cli_flags import RENAMED  # noqa: PLC0415

    for old, new in RENAMED:
        if name == new:
            return old
    return {"--tp": "--tp-size", "--tensor-parallel-size": "--tp-size", "--model": "--model-path"}.get(name, name)


def differing_flags(logged_flags: list[str], user_flags: list[str]) -> list[tuple[str, str, str]]:
    """(flag, yours, the log's) for every flag that differs, most memory-relevant first."""
    logged = {_canonical(k): v for k, v in _norm_flags(logged_flags).items()}
    mine = {_canonical(k): v for k, v in _norm_flags(user_flags).items()}
    known = {_canonical(f) for f in dict(_MEMORY_FIELDS + _SWITCHES).values()}
    switches = {f for _, f in _SWITCHES}
    differ = []
    for k, v in mine.items():
        if k in logged:
            if not _same(logged[k], v):
                differ.append((k, v, logged[k]))
        elif k in switches and v == "true":
            differ.append((k, "on", "off"))
        elif k in known and v != "true":
            differ.append((k, v, "unset"))
    for k in switches:  # a switch the log has on that you did not give
        if logged.get(k) == "true" and k not in mine:
            differ.append((k, "off", "on"))
    rank = {f: i for i, f in enumerate(_RELEVANCE)}
    return sorted(differ, key=lambda d: rank.get(d[0], len(rank)))


def group_differences(differ: list[tuple[str, str, str]]) -> str:
    """Every difference, never truncated: the memory-sizing ones, then the rest."""
    def text(d):
        return f"{d[0]} {d[1]} (yours) vs {d[2]} (log)"

    sizing = [text(d) for d in differ if d[0] in _RELEVANCE[:6]]
    other = [text(d) for d in differ if d[0] not in _RELEVANCE[:6]]
    parts = []
    if sizing:
        parts.append("memory sizing: " + "; ".join(sizing))
    if other:
        parts.append(("other: " if sizing else "") + "; ".join(other))
    return " | ".join(parts)


def _same(a: str, b: str) -> bool:
    try:
        return float(a) == float(b)
    except (ValueError, OverflowError):
        return a == b


def _model_for(launch: Launch | None, model: str | None) -> ResolvedModel:
    if model:
        return resolve_model(model)
    path = launch.server_args.get("model_path") if launch is not None and launch.server_args else None
    if isinstance(path, str) and path:
        if find_entry(path) is not None:
            return resolve_model(path)
        try:
            return resolve_model(path)
        except BadInput:
            pass
    raise BadInput("--model: the log does not name a model this planner knows; give --model NAME or a path")


def rules_version_for_log(log: ParsedLog) -> tuple[str, str]:
    """(modelled release, why) for a log: the release it shows, else the newest modelled release its
    evidence allows (logs carry lower bounds more often than upper ones), else the latest modelled."""
    from planner.engines.sglang.rules import LATEST, RULES, version_key  # noqa: PLC0415

    guess = guess_version(log)
    seen = detect_version(log)
    if guess.exact and guess.exact in RULES:
        return guess.exact, f"the log shows SGLang {guess.exact}"
    fits = [v for v in RULES if guess.contains(v)] if guess.hints and not guess.contradictory else []
    if fits:
        v = max(fits, key=version_key)
        return v, f"the log looks like SGLang {seen}; using the newest modelled release in that range ({v})"
    if seen:
        key = version_key
        oldest = min(RULES, key=key)
        if guess.hi is not None and key(guess.hi) < key(oldest):
            return oldest, f"the log looks like SGLang {seen}, which is not modelled; using the oldest modelled ({oldest})"
        return LATEST, f"the log looks like SGLang {seen}, which is not modelled; using {LATEST}"
    return LATEST, f"the log does not show its version; using the latest modelled release ({LATEST})"


def check(log: ParsedLog, gpu: GpuProfile, model: str | None, user_flags: list[str],
          launched_at: _dt.datetime | None = None, env: dict[str, str] | None = None,
          version: str | None = None) -> CheckResult:
    stale = stale_checks(log, launched_at, user_flags)
    launch = log.latest
    res = CheckResult(log, launch, stale, detect_version(log), [], None)
    if launch is None:
        res.notes.append("no SGLang launch found in this file")
        return res
    spec_read = spec_lines(launch)  # the algorithm, draft pools and DFLASH lines, as the log gives them
    res.notes.extend(f"read from the log: {x}" for x in spec_read)
    if launch.server_args:
        flags = flags_from_server_args(launch.server_args)
        res.notes.append("flags taken from the log's server_args=ServerArgs(...) dump"
                         if launch.server_args_event is None or launch.server_args_event.form != "dict"
                         else "flags taken from the log's server_args={...} dump")
    else:
        flags = list(user_flags)
        res.notes.append("the log has no ServerArgs dump: using the flags you gave")
    kept, i = [], 0
    while i < len(flags):
        if flags[i] in _WEIGHT_ONLY:
            res.notes.append(f"{flags[i]} {flags[i + 1] if i + 1 < len(flags) else ''}: moves weights only; the "
                             "measured free memory already accounts for it")
            i += 2
            continue
        kept.append(flags[i])
        i += 1
    res.flags = kept
    if launch.failure is not None:
        res.failure = describe_failure(launch.failure)
    rank, pre, post0 = _measured_free(launch, res)
    try:
        resolved = _model_for(launch, model)
    except BadInput as exc:
        if not stale and res.failure is None:
            raise
        if version is None:
            version, why = rules_version_for_log(log)
            res.release, res.release_why = version, why
            res.notes.append(why)
        res.notes.append(f"not re-planned: {exc}")
        return res
    given = version is not None
    if version is None:
        version, why, res.candidates = choose_release(log, launch, gpu, resolved, kept, env, rank, pre, post0)
    else:
        why = f"using SGLang {version}: --sglang-version (given)"
        seen = guess_version(log)
        if seen.hints and not seen.contains(version):
            why += f"; the log's lines point at SGLang {seen} instead"
    res.release, res.release_why = version, why
    res.notes.append(why)
    post = None if post0 is None else _post_with_draft(launch, version, post0, res.notes)
    src = None if pre is None else f"log: Load weight begin avail {pre:.2f} GB (GiB)"
    try:
        # the plan's sglang_version_source says where the release came from (the log, or --sglang-version)
        plan = make_plan(gpu, resolved, kept, env, pre, post, free_before_source=src,
                         version=version if given else None, default=None if given else (version, why))
    except BadInput as exc:  # a refusal (not modelled / the draft not readable here): say what the log held
        if not spec_read:
            raise
        raise BadInput(f"{exc} [read from the log: {'; '.join(spec_read)}]") from None
    res.plan = plan
    if plan.error_type == "SystemExit":
        raise BadInput(plan.error_message or "flag error")
    if rank is not None:
        res.rows = _rows(plan, launch, rank)
    if plan.verdict != "fits" and pre is not None:
        res.explanation = smallest_fix(gpu, resolved, kept, env, pre, post, version)
    if launch.outcome == "failed" and plan.verdict == "fits":
        res.unseen = unseen_causes(launch, version)
    return res


_UNSEEN = ("other processes holding memory on the GPU (another server, a notebook, a desktop session: "
           "nvidia-smi lists them), a driver reserve the GPU profile does not show (WSL2 keeps part of the card "
           "for Windows, and its free memory reads lower than a native Linux boot), and fragmentation of "
           "PyTorch's caching allocator (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True reduces it)")


def unseen_causes(launch: Launch, version: str) -> str:
    """What the planner cannot see that would explain a launch the log shows failed while the plan fits."""
    f = launch.failure
    what = f"{f.exc_type}: {f.message}" if f is not None and f.exc_type else (f.message if f is not None else "")
    return (f"the log shows this launch failed ({what[:100]}), but under SGLang {version}'s rules the planner "
            f"finds these inputs fit: the difference is memory it cannot see from the log: {_UNSEEN}")


def _outcome_matches(launch: Launch, plan: Plan) -> bool | None:
    """Does the plan's verdict reproduce the log's outcome? None when the log shows no outcome to compare."""
    from planner.logs import CudaOutOfMemory  # noqa: PLC0415

    outcome = launch.outcome
    if outcome == "completed":
        return plan.verdict != "rejected"
    if outcome != "failed":
        return None
    f = launch.failure
    if isinstance(f, CudaOutOfMemory):  # a CUDA allocation failed: the plan rejects or warns
        return plan.verdict != "fits"
    if plan.verdict != "rejected":
        return False
    # the same refusal: the log message's first sentence is in the plan's message
    head = (f.message or "").split(". ")[0].strip().rstrip(".")[:80] if f is not None else ""
    return not head or head in (plan.error_message or "")


def choose_release(log: ParsedLog, launch: Launch, gpu: GpuProfile, model: ResolvedModel, flags: list[str], env,
                   rank, pre: float | None, post: float | None) -> tuple[str, str, list[Candidate]]:
    """(release, why, the candidates planned). A log that prints its release (or pins it) gets that one; else
    every modelled release its evidence allows is planned with the log's inputs, and the newest that reproduces
    what the log shows (the outcome, the pool lines) is used. Without evidence to compare, or when none
    reproduces it, the newest release of the range (said so)."""
    from planner.engines.sglang.rules import RULES, version_key  # noqa: PLC0415

    guess = guess_version(log)
    key = version_key
    cands = sorted((v for v in RULES if guess.contains(v)), key=key) \
        if guess.hints and not guess.contradictory and not guess.exact else []
    if len(cands) < 2:
        v, why = rules_version_for_log(log)
        return v, why, []
    seen = detect_version(log)
    has_rows = any(x is not None for x in (rank.mamba_cache, rank.kv_cache, launch.summary)) if rank is not None \
        else False
    if launch.outcome not in ("completed", "failed") and not has_rows:
        v = cands[-1]
        return v, (f"the log does not print its release and shows no outcome or pool line to compare; its lines "
                   f"allow SGLang {seen}: using the newest modelled release in that range ({v})"), []
    planned: list[Candidate] = []
    for v in cands:
        p = None if post is None else _post_with_draft(launch, v, post, [])
        try:
            plan = make_plan(gpu, model, flags, env, pre, p, version=v)
        except BadInput as exc:
            planned.append(Candidate(v, "refused", None, [], 0, str(exc)[:120]))
            continue
        if plan.error_type == "SystemExit":
            planned.append(Candidate(v, "refused", None, [], 0, (plan.error_message or "flag error")[:120]))
            continue
        rows = _rows(plan, launch, rank) if rank is not None else []
        planned.append(Candidate(v, json_verdict(plan), _outcome_matches(launch, plan),
                                 [r.what for r in rows if r.agrees is False], sum(1 for r in rows if r.agrees)))
    good = [c for c in planned if c.reproduces]
    shown = _shown_outcome(launch)
    if good:
        v = good[-1].version
        others = [c for c in planned if not c.reproduces]
        why = (f"the log does not print its release; its lines allow SGLang {seen}. Planned each with the log's "
               f"inputs: {_names(good)} reproduce{'s' if len(good) == 1 else ''} what the log shows ({shown})")
        if others:
            why += "; " + "; ".join(f"{c.version} does not ({_miss(c)})" for c in others)
        why += f". Using {v}" + (", the newest that reproduces it" if len(good) > 1 else "")
        return v, why, planned
    v = cands[-1]
    return v, (f"the log does not print its release; its lines allow SGLang {seen}, and no modelled release in "
               f"that range reproduces what it shows ({shown}: " + "; ".join(f"{c.version} {_miss(c)}" for c in planned)
               + f"). Using the newest ({v}); the difference is in what the planner cannot see or a rule it "
               "does not model"), planned


def _names(cs: list[Candidate]) -> str:
    return ", ".join(c.version for c in cs)


def _shown_outcome(launch: Launch) -> str:
    if launch.outcome == "failed":
        f = launch.failure
        return "failed: " + (f.message.split(". ")[0][:60] if f is not None and f.message else "an error")
    if launch.outcome == "completed":
        return "booted, with its pool lines"
    return "its pool lines"


def _miss(c: Candidate) -> str:
    if c.verdict == "refused":
        return f"refuses these flags: {c.detail}"
    parts = []
    if c.outcome is False:
        parts.append({"fits": "predicts FITS", "startup_failed": "predicts WILL NOT BOOT",
                      "rejected": "predicts SGLANG REJECTS THE FLAGS",
                      "oom_risk": "predicts OUT-OF-MEMORY RISK"}.get(c.verdict, c.verdict))
    if c.disagree:
        parts.append("differs on " + ", ".join(c.disagree[:3]))
    return "; ".join(parts) or "no difference"


def describe_failure(f) -> str:
    """The failure in one line, with what it tried to allocate when the log says."""
    text = f"{f.exc_type}: {f.message}" if f.exc_type else (f.message or type(f).__name__)
    tried = getattr(f, "tried_gib", None)
    if tried is not None and "Tried to allocate" not in text:
        text += f" (Tried to allocate {tried:.2f} GiB)"
    if getattr(f, "during_capture", False) and "capture" not in text.lower():
        text += " (while capturing CUDA graphs)"
    return text


def _measured_free(launch: Launch, res: CheckResult):
    """(the rank SGLang sizes from, P GiB, free after load GiB) from the log, or (None, None, None) with a
    note when the log has no 'Load weight end' line (the plan is then made with modelled free memory)."""
    loaded = [r for r in launch.ranks.values() if r.load_end is not None and r.load_end.avail_gib is not None]
    if not loaded:
        res.notes.append("the log has no 'Load weight end' line: re-planned with modelled free memory"
                         + (f"; the launch failed with {res.failure}" if res.failure else ""))
        return None, None, None
    # SGLang takes P and the post-load free memory as the minimum over ranks (model_runner.py:1214-1219,
    # kv_cache_mixin.py:56-68 @0.5.11); the log prints each rank's own.
    rank = min(loaded, key=lambda r: r.load_end.avail_gib)
    post = rank.load_end.avail_gib
    pres = [r.load_begin.avail_gib for r in loaded if r.load_begin is not None and r.load_begin.avail_gib is not None]
    if pres:
        pre = min(pres)
    else:
        pre = post + (rank.load_end.mem_usage_gib or 0.0)
        res.notes.append("no 'Load weight begin' line: P = avail after load + weight mem usage (both rounded)")
    if len(launch.ranks) > 1 and len(loaded) < len(launch.ranks):
        res.notes.append("only some ranks logged their weight load; P and the free memory after load are the "
                         "minimum over the ranks that did (SGLang uses the minimum over all)")
    if post <= 0 or pre <= 0 or post > pre:
        res.notes.append(f"the logged free memory (before {pre:.2f}, after {post:.2f} GiB) is not usable: "
                         "re-planned with modelled free memory")
        return None, None, None
    return rank, pre, post


def _post_with_draft(launch: Launch, version: str, post: float, notes: list[str]) -> float:
    """0.5.14+ sizes the pools after the draft worker has loaded (managers/scheduler.py:846-853 @0.5.16), so
    the free memory SGLang measures is the one after the draft's own ``Load weight end`` (minimum over ranks)."""
    from planner.engines.sglang.rules import rules_for  # noqa: PLC0415

    drafted = [r.draft_load_end.avail_gib for r in launch.ranks.values()
               if r.draft_load_end is not None and r.draft_load_end.avail_gib is not None]
    if not drafted or not rules_for(version).draft_weights_before_sizing:
        return post
    notes.append(f"the draft worker's 'Load weight end' (avail {min(drafted):.2f} GB) is the free memory SGLang "
                 f"{version} sizes the pools from: it loads the draft before the pools")
    return min(drafted)


_NUMERIC = ("--mem-fraction-static", "--mamba-full-memory-ratio", "--max-mamba-cache-size", "--max-running-requests")


def smallest_fix(gpu: GpuProfile, model: ResolvedModel, flags: list[str], env, pre: float, post: float,
                 version: str | None = None) -> list[str]:
    """Keep every categorical flag of the launch, let the search pick the four size flags."""
    from planner.engines.sglang.search import Needs, run_search  # noqa: PLC0415

    fixed, i = [], 0
    while i < len(flags):
        if flags[i] in _NUMERIC:
            i += 2
            continue
        fixed.append(flags[i])
        i += 1
    res = run_search(gpu, model, fixed, env, Needs(), pre, post, top=1, relax=False, version=version)
    if res.skipped_why and not res.space:  # not searched (post-capture KV sizing): say so, claim nothing
        return [res.skipped_why]
    if not res.ranked:
        return ["no setting of --mem-fraction-static, --mamba-full-memory-ratio, --max-mamba-cache-size and "
                "--max-running-requests boots with the other flags of this launch"]
    best = res.ranked[0]
    changed = [f for f in best.chosen if f.startswith("--")]
    return [f"best found by the search (the launch's other flags kept): {' '.join(best.chosen)}: {best.running} running requests, "
            f"{best.kv_tokens:,} KV tokens (search over {', '.join(_NUMERIC)}; {len(changed)} flag(s))"]


def _rows(plan: Plan, launch: Launch, rank) -> list[Row]:
    rows: list[Row] = []
    g = (lambda key: (plan.pools.get(key) / GIB) if plan.pools is not None else None)
    # The log prints free memory to 0.01 GiB: rest = post - P (1 - f) is known to +-(0.005 + 0.005 (1 - f)).
    f = plan.args.mem_fraction_static if plan.args is not None else 1.0
    rest_tol = (0.005 + 0.005 * (1 - f)) * GIB
    tok_tol = 0.0
    if plan.profile is not None and plan.profile.kv_cell_bytes_per_token:
        tok_tol = rest_tol / plan.profile.kv_cell_bytes_per_token + (plan.args.page_size if plan.args else 1)
    m_tol = 0.0
    if plan.profile is not None and plan.profile.mamba_cache_per_req_bytes and plan.args is not None \
            and plan.args.max_mamba_cache_size is None and not plan.args.disable_radix_cache:
        r = plan.args.mamba_full_memory_ratio
        m_tol = rest_tol * r / (1 + r) / plan.profile.mamba_cache_per_req_bytes + 1
    m = rank.mamba_cache
    if m is not None or (plan.profile and plan.profile.max_mamba_cache_size is not None):
        prof = plan.profile
        rows.append(Row("max_mamba_cache_size", prof.max_mamba_cache_size if prof else None,
                        m.max_mamba_cache_size if m else None, "", "handle_max_mamba_cache (kv_cache_mixin.py:94-124)",
                        tol=m_tol))
        rows.append(Row("mamba conv state", g("mamba_conv"), m.conv_gib if m else None, "GiB",
                        "MambaPool conv (memory_pool.py:258-286): (M+1) slots x conv shape x conv dtype"))
        rows.append(Row("mamba ssm state", g("mamba_ssm"), m.ssm_gib if m else None, "GiB",
                        "MambaPool ssm (memory_pool.py:258-286): (M+1) slots x ssm shape x ssm dtype"))
        if m is not None and m.intermediate_ssm_gib is not None or (plan.args and plan.args.spec_on):
            rows.append(Row("spec intermediate ssm", g("mamba_intermediate_ssm"),
                            m.intermediate_ssm_gib if m else None, "GiB",
                            "(R+1) x draft tokens x ssm state (memory_pool.py:287-331)"))
            rows.append(Row("spec intermediate conv", g("mamba_intermediate_conv"),
                            m.intermediate_conv_gib if m else None, "GiB",
                            "(R+1) x draft tokens x conv window (memory_pool.py:287-331)"))
    kv = rank.kv_cache
    swa_kv = None
    if any(x.key == "kv_swa_k" for x in plan.pools.lines) if plan.pools is not None else False:
        kv, swa_kv = _swa_kv_lines(rank)
    prof = plan.profile
    # releases before #tokens was printed on the KV line: the scheduler summary's max_total_num_tokens
    sched = [x.max_total_num_tokens for x in rank.of(SchedulerSummary) if x.max_total_num_tokens]
    kv_tokens = kv.num_tokens if kv and kv.num_tokens else (sched[0] if sched else None)
    rows.append(Row("KV #tokens (max_total_num_tokens)", prof.max_total_num_tokens if prof else None,
                    kv_tokens, "", "N = (post - P(1-f) - spec reservation - M x S) // cell (kv_cache_mixin.py:56-131, "
                    "pool_configurator.py:170-175): a difference points at the free memory SGLang measured when "
                    "profiling (minimum over TP ranks; the RoPE cache grows after 'Load weight end')",
                    tol=tok_tol))
    rows.append(Row("KV K", g("kv_k"), kv.k_gib if kv else None, "GiB", "layers x (N+page) x kv heads x head_dim x bytes"))
    rows.append(Row("KV V", g("kv_v"), kv.v_gib if kv else None, "GiB", "layers x (N+page) x kv heads x v_head_dim x bytes"))
    if swa_kv is not None or (plan.pools is not None and any(x.key == "kv_swa_k" for x in plan.pools.lines)):
        rule = "sliding layers x (SWA tokens + page) x kv heads x head_dim x bytes (pipeline/swa.py)"
        rows.append(Row("sliding-window KV K", g("kv_swa_k"), swa_kv.k_gib if swa_kv else None, "GiB", rule))
        rows.append(Row("sliding-window KV V", g("kv_swa_v"), swa_kv.v_gib if swa_kv else None, "GiB", rule))
    dkv = rank.draft_kv_cache
    if launch.has_draft_model is not False and (dkv is not None or (plan.args is not None and plan.args.spec_on)):
        draft_rule = _draft_pool_rule(launch.spec_algorithm)
        rows.append(Row("draft KV K", g("draft_kv_k"), dkv.k_gib if dkv else None, "GiB", draft_rule))
        rows.append(Row("draft KV V", g("draft_kv_v"), dkv.v_gib if dkv else None, "GiB", draft_rule))
    end = rank.memory_pool_end
    if end is not None and plan.pools is not None:
        rows.append(Row("Memory pool end avail", (plan.free_after_bytes - plan.pools.get("kv_k") - plan.pools.get("kv_v")
                                                  - plan.pools.get("mamba_conv") - plan.pools.get("mamba_ssm")
                                                  - plan.pools.get("mamba_intermediate_ssm")
                                                  - plan.pools.get("mamba_intermediate_conv")
                                                  - plan.pools.get("kv_swa_k") - plan.pools.get("kv_swa_v")
                                                  - plan.pools.get("req_to_token") - plan.pools.get("index_buffers")) / GIB,
                        end.avail_gib, "GiB", "free after load - target pools; a difference points at allocations the pools do not "
                        "include (RoPE cache growth, offload buffers, other processes)"))
    s = launch.summary
    if s is not None:
        rows.append(Row("max_running_requests", prof.max_running_requests if prof else None,
                        s.max_running_requests, "", "_resolve_max_num_reqs (kv_cache_mixin.py:698-717)"))
        rows.append(Row("context_len", plan.args.context_len if plan.args else None, s.context_len, "",
                        "ModelConfig context length"))
    return rows


def _swa_kv_lines(rank):
    """(full, sliding) 'KV Cache is allocated' lines of a hybrid SWA pool on one rank: 0.5.23 labels them "Full" and
    "SWA" (srt/mem_cache/swa_memory_pool.py:96-110 @0.5.23); 0.5.11 / 0.5.16 build the SWA sub-pool first, both
    unlabelled (swa_memory_pool.py:71-88 @0.5.11, :60-77 @0.5.16), so the first line is the sliding one."""
    from planner.logs import KVCacheAllocated  # noqa: PLC0415

    lines = [e for e in rank.of(KVCacheAllocated) if not e.post_capture and not e.va_upper_bound and not e.malformed]
    labelled = {e.label: e for e in lines if e.label}
    if "Full" in labelled or "SWA" in labelled:
        return labelled.get("Full"), labelled.get("SWA")
    return (lines[1] if len(lines) > 1 else None), (lines[0] if lines else None)


def _draft_pool_rule(algorithm: str | None) -> str:
    """Where the draft pool's size comes from, by algorithm (NGRAM has none: no row is made)."""
    if algorithm in ("DFLASH", "DSPARK"):
        return (f"{algorithm} draft pool: the draft head's own layers x KV heads x head_dim x bytes, at the target's "
                "token count (the release's rule: the draft geometry or the layer ratio)")
    if algorithm == "STANDALONE":
        return "STANDALONE draft pool: the draft model's layers at the target's token count"
    return "draft pool: 1 layer for an MTP draft (kv_cache_mixin.py:503-528)"


def points_at(row: Row) -> str:
    """Which rule a disagreement points at, in words."""
    if row.agrees or row.diff is None:
        return ""
    return f"check {row.rule}"
