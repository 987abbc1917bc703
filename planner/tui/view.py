"""What the explorer shows, computed from a plan: pure functions, no Textual, no I/O.

The widgets only draw what these return. The numbers come from the core (``make_plan``,
``report.verdict_line`` / ``capacity``, ``explain``, ``run_search``); this module groups and formats them:

* the flag fields (which SGLang flags the form edits, how each is validated) and the round trip
  between a flag list and the form's values;
* :func:`evaluate`: the whole re-plan an edit triggers, returning a :class:`PlanView`;
* the memory bar's segments, the verdict, the serving capacity, the search table's rows.
"""

from __future__ import annotations

import functools

import argparse
import shlex
from dataclasses import dataclass, field
from typing import Any

from planner.catalog.catalog import NOT_MODELLED, ResolvedModel, find_entry, load_catalog, resolve_model
from planner.engines.sglang.cli_flags import human_readable_int
from planner.engines.sglang.rules import RULES, default_version
from planner.errors import BadInput, PlannerError
from planner.engines.sglang.explain import explain
from planner.hardware.profiles import GpuProfile, find_profile, load_profiles
from planner.engines.sglang.plan import GIB, MIB, Plan, make_plan
from planner.engines.sglang.report import capacity, verdict_line
from planner.engines.sglang.search import Candidate, SearchResult, launch_command

ENGINE_VERSIONS = tuple(RULES)  # the SGLang releases whose rules are modelled
DEFAULT_GPU = "rtxpro6000"
DEFAULT_MODEL = "qwen3.6-27b"
UNSET = ""  # a choice field's value when the flag is left to SGLang's default


# --------------------------------------------------------------------------- flag fields


@dataclass(frozen=True)
class FieldSpec:
    flag: str  # the SGLang option, e.g. --mem-fraction-static
    kind: str  # float | int | hrint (human_readable_int) | choice | switch
    help: str
    choices: tuple[tuple[str, str], ...] = ()  # (label, value); value UNSET = SGLang's default

    @property
    def id(self) -> str:
        return self.flag.removeprefix("--")


FIELDS: tuple[FieldSpec, ...] = (
    FieldSpec("--mem-fraction-static", "float", "fraction of free memory (P) SGLang may give to static pools"),
    FieldSpec("--mamba-full-memory-ratio", "float", "mamba state : KV memory ratio (ignored with an explicit "
              "--max-mamba-cache-size)"),
    FieldSpec("--max-mamba-cache-size", "int", "mamba state slots (overrides the ratio)"),
    FieldSpec("--max-running-requests", "int", "concurrent requests; under speculative decoding it also sizes "
              "the intermediate-state reservation"),
    FieldSpec("--context-length", "hrint", "longest request in tokens (32768, 32k, 128Ki)"),
    FieldSpec("--chunked-prefill-size", "int", "prefill chunk in tokens (activation memory)"),
    FieldSpec("--cuda-graph-max-bs", "int", "largest CUDA graph batch size"),
    FieldSpec("--page-size", "int", "KV page size in tokens"),
    FieldSpec("--mamba-scheduler-strategy", "choice", "mamba state caching strategy",
              (("auto", UNSET), ("no_buffer", "no_buffer"), ("extra_buffer", "extra_buffer"))),
    FieldSpec("--speculative-algorithm", "choice", "speculative decoding",
              (("none", UNSET), ("EAGLE", "EAGLE"), ("NEXTN", "NEXTN"), ("EAGLE3", "EAGLE3"),
               ("STANDALONE", "STANDALONE"), ("NGRAM", "NGRAM"), ("DFLASH", "DFLASH"), ("DSPARK", "DSPARK"))),
    FieldSpec("--speculative-num-steps", "int", "draft steps per verify"),
    FieldSpec("--kv-cache-dtype", "choice", "KV cache dtype",
              (("auto", UNSET), ("fp8_e4m3", "fp8_e4m3"), ("fp8_e5m2", "fp8_e5m2"), ("bf16", "bf16"),
               ("bfloat16", "bfloat16"), ("fp4_e2m1", "fp4_e2m1"))),
    FieldSpec("--mamba-ssm-dtype", "choice", "mamba ssm state dtype",
              (("default", UNSET), ("float32", "float32"), ("bfloat16", "bfloat16"))),
    FieldSpec("--disable-radix-cache", "switch", "no prefix cache"),
    FieldSpec("--disable-overlap-schedule", "switch", "no CPU/GPU overlap"),
)
FIELD_BY_FLAG = {f.flag: f for f in FIELDS}
# a release's new spelling of a field's flag (0.5.14 renamed these) selects the same field
for _old, _new in __import__("planner.engines.sglang.cli_flags", fromlist=["RENAMED"]).RENAMED:
    if _old in FIELD_BY_FLAG:
        FIELD_BY_FLAG[_new] = FIELD_BY_FLAG[_old]


def spelling(flag: str, version: str | None) -> str:
    """How ``version`` spells a form field's flag (the label and the launch line follow the release)."""
    from planner.engines.sglang.cli_flags import translate_flags  # noqa: PLC0415

    if version not in RULES:
        return flag
    return translate_flags([flag], RULES[version].flags)[0]


def labels_for(version: str | None) -> dict[str, str]:
    return {f.flag: spelling(f.flag, version) for f in FIELDS if f.kind != "switch"}

FormValues = dict[str, Any]  # flag -> str (text / choice) or bool (switch)


def empty_values() -> FormValues:
    return {f.flag: (False if f.kind == "switch" else UNSET) for f in FIELDS}


def field_error(spec: FieldSpec, text: str) -> str | None:
    """The inline message for a field's text, or None when SGLang's parser would take it."""
    text = text.strip()
    if not text or spec.kind not in ("float", "int", "hrint"):
        return None
    try:
        if spec.kind == "float":
            float(text)
        elif spec.kind == "int":
            int(text)
        else:
            human_readable_int(text)
    except (ValueError, argparse.ArgumentTypeError):
        return {"float": "not a number", "int": "not an integer",
                "hrint": "not an integer (e.g. 32768, 32k, 128Ki)"}[spec.kind]
    return None


def split_extras(text: str) -> tuple[list[str], str | None]:
    """The 'other flags' field: shell words, or an error."""
    try:
        return shlex.split(text), None
    except ValueError as exc:
        return [], f"cannot split: {exc}"


def parse_env(text: str) -> tuple[dict[str, str], str | None]:
    try:
        words = shlex.split(text)
    except ValueError as exc:
        return {}, f"cannot split: {exc}"
    env = {}
    for w in words:
        key, eq, value = w.partition("=")
        if not eq or not key:
            return {}, f"expected KEY=VALUE, got '{w}'"
        env[key] = value
    return env, None


def env_text(env: dict[str, str]) -> str:
    return " ".join(shlex.quote(f"{k}={v}") for k, v in env.items())


def form_from_flags(flags: list[str]) -> tuple[FormValues, list[str]]:
    """Split a flag list into the form's fields and the rest (kept verbatim as 'other flags')."""
    values = empty_values()
    extras: list[str] = []
    i = 0
    while i < len(flags):
        tok = flags[i]
        name, eq, inline = tok.partition("=")
        spec = FIELD_BY_FLAG.get(name)
        if spec is None:
            extras.append(tok)
            i += 1
            continue
        if spec.kind == "switch":
            if eq:
                extras.append(tok)
            else:
                values[spec.flag] = True
            i += 1
            continue
        if eq:
            value, used = inline, 1
        elif i + 1 < len(flags):
            value, used = flags[i + 1], 2
        else:
            extras.append(tok)
            break
        if spec.kind == "choice" and value not in {v for _, v in spec.choices if v != UNSET}:
            extras.extend(flags[i:i + used])  # a value the Select does not offer: keep it, verbatim
        else:
            values[spec.flag] = value
        i += used
    return values, extras


def flags_from_form(values: FormValues, extras: list[str], version: str | None = None) -> list[str]:
    """The form as SGLang flags, in ``version``'s spelling when given."""
    out: list[str] = []
    for spec in FIELDS:
        v = values.get(spec.flag)
        if spec.kind == "switch":
            if v:
                out.append(spec.flag)
        elif isinstance(v, str) and v.strip():
            out += [spelling(spec.flag, version) if version else spec.flag, v.strip()]
    return out + list(extras)


def translated_extras(extras: list[str], version: str) -> tuple[list[str], list[str]]:
    """'Other flags' in the release's spelling, and a note for each renamed flag that was translated."""
    from planner.engines.sglang.cli_flags import translate_flags  # noqa: PLC0415

    if version not in RULES:
        return extras, []
    fixed = translate_flags(extras, RULES[version].flags)
    notes = [f"{a.partition('=')[0]} is spelled {b.partition('=')[0]} in SGLang {version}: translated"
             for a, b in zip(extras, fixed) if a != b]
    return fixed, notes


# --------------------------------------------------------------------------- inputs


LIVE = "auto"  # the GPU choice that plans for this machine through NVML


@functools.lru_cache(maxsize=1)
def live_selection():
    """This machine's GPUs through NVML (read once per session), or None without a driver."""
    from planner.hardware.live import select  # noqa: PLC0415
    from planner.hardware.nvml import NvmlUnavailable  # noqa: PLC0415

    try:
        return select("auto")
    except (NvmlUnavailable, BadInput):
        return None


def live_free_before_gib() -> float | None:
    """P for the live GPUs: free now (other processes excluded) less the server's CUDA context."""
    from planner.engines.sglang.plan import CUDA_CONTEXT_MIB  # noqa: PLC0415

    sel = live_selection()
    return None if sel is None else (sel.free_now_bytes - CUDA_CONTEXT_MIB * MIB) / GIB


def gpu_options() -> list[tuple[str, str]]:
    opts = [(p.id, p.id) for p in load_profiles()]
    sel = live_selection()
    if sel is not None:
        opts.insert(0, (f"this machine: {sel.gpus[0].name} x{len(sel.gpus)} (NVML)", LIVE))
    return opts


def model_options() -> list[tuple[str, str]]:
    return [(e.id, e.id) for e in load_catalog() if not e.draft]


def initial_gpu(name: str | None) -> str:
    """The profile id for a --gpu argument, or LIVE for auto (raises BadInput for an unknown one)."""
    if name == LIVE:
        if live_selection() is None:
            raise BadInput("--gpu auto: NVML is not available on this machine; use --gpu NAME")
        return LIVE
    return find_profile(name or DEFAULT_GPU).id


def initial_model(name: str | None) -> tuple[str, str]:
    """(catalog id, path text): a catalog name selects it, anything else goes in the path field."""
    name = name or DEFAULT_MODEL
    entry = find_entry(name)
    if entry is not None and not entry.draft:
        return entry.id, ""
    _weights_modelled(resolve_model(name))  # raises BadInput now, not inside the app
    return DEFAULT_MODEL, name


def _weights_modelled(model: ResolvedModel) -> ResolvedModel:
    """The explorer has no measured free memory after loading: a checkpoint without a weight model is bad input
    here, as resolving it was before measured launches could plan it (planner.engines.sglang.plan.make_plan)."""
    if model.weight_source == NOT_MODELLED:
        raise BadInput(model.weight_detail)
    return model


# --------------------------------------------------------------------------- the view


@dataclass(frozen=True)
class Segment:
    key: str  # reserved | weights | mamba | spec | kv | draft_kv | index | needs | outside | free | over
    name: str
    bytes: int
    detail: str = ""

    @property
    def gib(self) -> str:
        return gib(self.bytes)

    @property
    def gib_short(self) -> str:
        return f"{self.bytes / GIB:.1f}"


@dataclass
class BarView:
    title: str
    capacity_bytes: int
    segments: list[Segment]
    note: str = ""

    @property
    def keys(self) -> list[str]:
        return [s.key for s in self.segments if s.bytes > 0]

    @property
    def drawn(self) -> list[Segment]:
        """The segments the bar draws, left to right. When the plan asks for more than the GPU has they run
        past its end; ``over`` (in the legend) is not drawn as a block of its own: it is how far they run."""
        return [s for s in self.segments if s.key != "over"]


@dataclass
class VerdictView:
    kind: str  # fits | oom_risk | rejected | bad
    title: str
    message: str
    binding: str = ""
    suggestions: list[str] = field(default_factory=list)


@dataclass
class PlanView:
    """Everything an edit changes on screen."""

    verdict: VerdictView
    bar: BarView | None = None
    capacity: list[tuple[str, str]] = field(default_factory=list)
    command: str = ""
    hints: dict[str, str] = field(default_factory=dict)  # flag -> what SGLang would use when left empty
    field_errors: dict[str, str] = field(default_factory=dict)  # input key -> message
    labels: dict[str, str] = field(default_factory=dict)  # field flag -> the release's spelling
    notes: list[str] = field(default_factory=list)  # e.g. a renamed flag translated to the release's spelling
    plan: Plan | None = None
    gpu: GpuProfile | None = None
    model: ResolvedModel | None = None
    flags: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    version: str | None = None


def gib(n: float) -> str:
    return f"{n / GIB:.2f} GiB"


def _pool_group(key: str) -> str:
    if key.startswith("draft_kv"):
        return "draft_kv"
    if key.startswith("kv_"):
        return "kv"
    if key.startswith("mamba_intermediate"):
        return "spec"
    if key.startswith("mamba_"):
        return "mamba"
    return "index"


_POOL_NAMES = {"mamba": "mamba state", "spec": "spec intermediates", "kv": "KV cache", "draft_kv": "draft KV",
               "index": "req_to_token + index"}


def bar_view(plan: Plan) -> BarView:
    """The GPU's memory, left to right, in the order SGLang takes it. Segments sum to the capacity;
    an ``over`` segment is what the plan asks for beyond it."""
    cap = plan.gpu.capacity_mib * MIB
    segs = [Segment("reserved", "driver + CUDA context", cap - plan.free_before_bytes, plan.free_before_source),
            Segment("weights", "weights", plan.free_before_bytes - plan.free_after_bytes, plan.free_after_source)]
    note = ""
    if plan.pools is not None:
        sums: dict[str, int] = {}
        for line in plan.pools.lines:
            g = _pool_group(line.key)
            sums[g] = sums.get(g, 0) + line.bytes
        for g in ("mamba", "spec", "kv", "draft_kv", "index"):
            if g in sums:
                segs.append(Segment(g, _POOL_NAMES[g], sums[g]))
        need = sum(n.bytes for n in plan.needs)
        if plan.needs:
            segs.append(Segment("needs", "needs after pools", need, ", ".join(n.label for n in plan.needs)))
        left = (plan.headroom_bytes or 0) - need
        segs.append(Segment("free" if left >= 0 else "over", "free" if left >= 0 else "over capacity", abs(left)))
    elif plan.profile is not None and plan.profile.rest_gib_before_mamba is not None:
        prof = plan.profile
        rest = int(prof.rest_gib_before_mamba * GIB)
        segs.append(Segment("outside", "outside pools (1 - mfs)", plan.free_after_bytes - rest))
        if prof.spec_reserved_bytes:
            segs.append(Segment("spec", "spec reservation (asked)", prof.spec_reserved_bytes))
        if prof.max_mamba_cache_size and prof.mamba_cache_per_req_bytes:
            asked = prof.max_mamba_cache_size * prof.mamba_cache_per_req_bytes
            segs.append(Segment("mamba", "mamba state (asked)", asked))
        kv = prof.available_kv_bytes
        if kv is not None:
            segs.append(Segment("free" if kv >= 0 else "over", "left for KV" if kv >= 0 else "over capacity",
                                abs(kv)))
        else:  # SGLang stopped before the KV budget (the mamba slots or the weights check): what the pools had
            segs.append(Segment("free" if rest >= 0 else "over",
                                "left for mamba + KV" if rest >= 0 else "over capacity", abs(rest)))
        note = "no pools allocated: SGLang stops while sizing them"
    else:
        fa = plan.free_after_bytes
        if fa >= 0:
            segs.append(Segment("free", "free after weights", fa))
        else:  # the whole weights, drawn past the GPU's end by what does not fit
            segs.append(Segment("over", "over capacity", -fa))
        note = "no pools allocated"
    title = f"{plan.gpu.display_name} · {gib(cap)} ({plan.gpu.capacity_mib:,} MiB)"
    return BarView(title, cap, [s for s in segs if s.bytes > 0 or s.key in ("free",)], note)


def verdict_view(plan: Plan, d: dict[str, Any]) -> VerdictView:
    """The report's verdict line, split into its headline and SGLang's message (or the reason)."""
    title, _, message = d["verdict_text"].partition(": ")
    return VerdictView(plan.verdict, title, message, d.get("binding_constraint") or "",
                       list(d.get("suggestions") or []))


def capacity_rows(d: dict[str, Any], plan: Plan) -> list[tuple[str, str]]:
    c = d.get("capacity")
    if not c:
        return [("serving capacity", "none: nothing is allocated")]
    rows = [("running requests", f"{c['max_running_requests']:,}"),
            ("KV tokens", f"{c['kv_tokens']:,}"),
            ("longest request", f"{c['longest_request_tokens']:,} tokens"),
            (f"at context {c['context_len']:,}", f"{c['concurrency_at_context_len']:,} requests at once")]
    return rows


def hints(plan: Plan) -> dict[str, str]:
    """What SGLang resolves each flag to when it is left empty (shown as the field's placeholder)."""
    a, prof = plan.args, plan.profile
    if a is None:
        return {}
    out = {
        "--mem-fraction-static": f"{a.mem_fraction_static:.4f}",
        "--mamba-full-memory-ratio": f"{a.mamba_full_memory_ratio:g}",
        "--context-length": f"{a.context_len}",
        "--chunked-prefill-size": f"{a.chunked_prefill_size}",
        "--cuda-graph-max-bs": f"{a.cuda_graph_max_bs}",
        "--page-size": f"{a.page_size}",
    }
    if a.max_running_requests is not None:
        out["--max-running-requests"] = f"{a.max_running_requests}"
    elif prof is not None and prof.max_running_requests is not None:
        out["--max-running-requests"] = f"auto ({prof.max_running_requests})"
    if a.max_mamba_cache_size is not None:
        out["--max-mamba-cache-size"] = f"{a.max_mamba_cache_size}"
    elif prof is not None and prof.max_mamba_cache_size is not None:
        out["--max-mamba-cache-size"] = f"auto ({prof.max_mamba_cache_size})"
    if a.speculative_num_steps is not None:
        out["--speculative-num-steps"] = f"{a.speculative_num_steps}"
    return {k: f"default {v}" for k, v in out.items()}


def _error_field(message: str) -> str | None:
    """A BadInput that names one of the form's flags ('--page-size: 0 is not ...') belongs under it."""
    name = message.split(":", 1)[0].strip()
    return FIELD_BY_FLAG[name].flag if name in FIELD_BY_FLAG else None


def bad_input_view(message: str, field_errors: dict[str, str] | None = None) -> PlanView:
    return PlanView(VerdictView("bad", "BAD INPUT", message), field_errors=dict(field_errors or {}))


def evaluate(gpu: GpuProfile, model: ResolvedModel, flags: list[str], env: dict[str, str],
             version: str | None = None, free_before_gib: float | None = None) -> PlanView:
    """One re-plan: the plan for these inputs and everything the screen shows of it."""
    try:
        plan = make_plan(gpu, model, flags, env, free_before_gib, version=version,
                         free_before_source="live: NVML free now - CUDA context" if free_before_gib else None)
    except PlannerError as exc:
        where = _error_field(str(exc))
        return bad_input_view(str(exc), {where: str(exc).split(":", 1)[1].strip()} if where else {})
    except Exception as exc:  # noqa: BLE001 - a planner bug must not take the explorer down: say it
        return planner_error_view(exc, flags)
    try:
        binding, advice = explain(plan)  # the parts of report.to_dict the screen shows (not the summary, pools)
        d = {"verdict_text": verdict_line(plan), "binding_constraint": binding, "suggestions": advice,
             "capacity": capacity(plan)}
        return PlanView(verdict=verdict_view(plan, d), bar=bar_view(plan), capacity=capacity_rows(d, plan),
                        command=launch_command(model, flags), hints=hints(plan), plan=plan, gpu=gpu, model=model,
                        flags=list(flags), env=dict(env), version=plan.sglang_version)
    except Exception as exc:  # noqa: BLE001 - the same for a bug in describing a plan (tests assert none happens)
        return planner_error_view(exc, flags)


def planner_error_view(exc: Exception, flags: list[str]) -> PlanView:
    """A bug, said in one line instead of a traceback (the property test fails on it: tests/test_tui_fuzz.py)."""
    message = " ".join(f"{type(exc).__name__}: {exc} (flags: {shlex.join(flags)})".split())
    return PlanView(VerdictView("bad", "PLANNER ERROR", message))


NUMBER_KINDS = ("float", "int", "hrint")


def initial_inputs(gpu: str | None, model: str | None, flags: list[str], env: dict[str, str] | None,
                   version: str | None = None) -> dict[str, Any]:
    """The form's values for the command-line arguments (raises BadInput for an unknown GPU, model or
    SGLang release). The release defaults as ``plan``'s does: the installed sglang's, else the latest modelled."""
    catalog_id, path = initial_model(model)
    values, extras = form_from_flags(list(flags))
    if version is None:
        version = default_version()[0]
    elif version not in RULES:
        raise BadInput(f"--sglang-version: {version} is not modelled; modelled: {', '.join(RULES)}")
    return {"gpu": initial_gpu(gpu), "model": catalog_id, "model-path": path, "engine": version,
            **values, "other": shlex.join(extras), "env": env_text(dict(env or {}))}


def replan(inputs: dict[str, Any]) -> PlanView:
    """Everything one edit recomputes: validate the fields, resolve GPU and model, plan, describe."""
    errors: dict[str, str] = {}
    for spec in FIELDS:
        if spec.kind in NUMBER_KINDS:
            e = field_error(spec, str(inputs.get(spec.flag, "")))
            if e:
                errors[spec.flag] = e
    extras, e = split_extras(str(inputs.get("other", "")))
    if e:
        errors["other"] = e
    env, e = parse_env(str(inputs.get("env", "")))
    if e:
        errors["env"] = e
    if inputs.get("engine") not in ENGINE_VERSIONS:
        errors["engine"] = f"SGLang {inputs.get('engine')} is not supported yet"
    path = str(inputs.get("model-path", "")).strip()
    gpu, model, errs = resolve_inputs(str(inputs.get("gpu", "")), path or str(inputs.get("model", "")))
    if "model" in errs and path:
        errs["model-path"] = errs.pop("model")
    errors.update(errs)
    if errors:
        first = next(iter(errors.items()))
        return bad_input_view(f"{first[0]}: {first[1]}" + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""),
                              errors)
    assert gpu is not None and model is not None
    values = {spec.flag: inputs.get(spec.flag, False if spec.kind == "switch" else UNSET) for spec in FIELDS}
    live = live_free_before_gib() if inputs.get("gpu") == LIVE else None
    version = str(inputs["engine"])
    extras, notes = translated_extras(extras, version)
    view = evaluate(gpu, model, flags_from_form(values, extras, version), env, version, live)
    view.labels = labels_for(version)
    view.notes = notes
    return view


@dataclass(frozen=True)
class SearchContext:
    """What a search's rows depend on besides the flags held fixed: a row is a launch for this release,
    GPU, model and environment, and for no other."""

    version: str | None
    gpu: str
    model: str
    env: tuple[tuple[str, str], ...]


def search_context(view: PlanView | None) -> SearchContext | None:
    """The context of the inputs on screen, or None when they do not resolve (bad input)."""
    if view is None or view.gpu is None or view.model is None or view.plan is None:
        return None
    model = view.model.path or view.model.catalog_id or view.model.spec.architecture
    return SearchContext(view.version, view.gpu.id, str(model), tuple(sorted(view.env.items())))


def context_text(ctx: SearchContext | None) -> str:
    if ctx is None:
        return "other inputs"
    env = " ".join(f"{k}={val}" for k, val in ctx.env)
    return f"SGLang {ctx.version} on {ctx.gpu} / {ctx.model}" + (f" with {env}" if env else "")


def is_stale(res: SearchResult, searched: list[str], flags: list[str], version: str | None = None) -> bool:
    """Whether the inputs moved away from both the searched flags and every row of the result."""
    normal = {tuple(flags_from_form(*form_from_flags(c.flags), version)) for c in res.ranked}
    return tuple(flags) != tuple(searched) and tuple(flags) not in normal


LEGEND = ("conc: requests of {:,} tokens at once; run: running requests; KV tok: KV cache tokens; "
          "spare: GiB left after every allocation.")


def search_status(res: SearchResult, model: ResolvedModel, stale: bool) -> str:
    need_ctx = res.needs.context if res.needs.context is not None else min(32768, model.spec.derived_context_len)
    if not res.ranked and res.skipped_why and not res.space:  # not searched at all (post-capture KV sizing)
        text = res.skipped_why[0].upper() + res.skipped_why[1:] + "."
    elif not res.ranked:
        text = (f"None of {res.space or res.evaluated:,} configurations boots with the flags you set held fixed: "
                "clear some (r resets them) and search again.")
    elif res.pruned:  # branch and bound: feasible counts the configurations evaluated
        text = (f"{len(res.ranked)} best of {res.feasible:,} feasible; {res.evaluated:,} of {res.space:,} "
                f"configurations evaluated ({res.pruned:,} combinations skipped, proven unable to win); the flags "
                f"you set stay fixed. {LEGEND.format(need_ctx)}")
    else:
        text = (f"{len(res.ranked)} best of {res.feasible:,} feasible ({res.evaluated:,} tried); the flags you "
                f"set stay fixed. {LEGEND.format(need_ctx)}")
    if stale:
        text = "Inputs changed since this search (s: search again). " + text
    return text


def resolve_inputs(gpu_id: str, model_ref: str) -> tuple[GpuProfile | None, ResolvedModel | None, dict[str, str]]:
    """The GPU profile and model for the form's choices; errors keyed by field ('gpu', 'model')."""
    errors: dict[str, str] = {}
    gpu = model = None
    try:
        if gpu_id == LIVE:
            sel = live_selection()
            if sel is None:
                raise BadInput("no NVML on this machine: pick a GPU profile")
            gpu = sel.profile
        else:
            gpu = find_profile(gpu_id)
    except BadInput as exc:
        errors["gpu"] = str(exc)
    try:
        model = _weights_modelled(resolve_model(model_ref))
    except BadInput as exc:
        errors["model"] = str(exc)
    return gpu, model, errors


# --------------------------------------------------------------------------- search table


COLUMNS: tuple[tuple[str, str], ...] = (
    ("concurrency", "conc"),
    ("running", "run"),
    ("kv_tokens", "KV tok"),
    ("longest", "longest"),
    ("headroom_left", "spare"),
    ("flags", "flags the search chose"),
)
NUMERIC = {"concurrency", "running", "kv_tokens", "longest", "headroom_left"}


def candidate_text(c: Candidate) -> str:
    return " ".join(c.chosen) or "(SGLang defaults)"


def candidate_cells(c: Candidate) -> tuple[str, ...]:
    return (f"{c.concurrency:,}", f"{c.running:,}", f"{c.kv_tokens:,}", f"{c.longest:,}",
            f"{c.headroom_left / GIB:.2f}", candidate_text(c))


def sort_value(c: Candidate, column: str) -> Any:
    return candidate_text(c) if column == "flags" else getattr(c, column)


def filter_rank(cands: list[Candidate], query: str, column: str, reverse: bool) -> list[tuple[int, Candidate]]:
    """(index in the search's ranking, candidate), filtered on the flags text (every word must appear)
    and sorted by ``column`` (the ranking breaks ties)."""
    words = query.lower().split()
    rows = [(i, c) for i, c in enumerate(cands)
            if all(w in " ".join(c.flags).lower() or w in candidate_text(c).lower() for w in words)]
    if column != "rank":
        rows.sort(key=lambda ic: sort_value(ic[1], column), reverse=reverse)
    return rows


def filter_example(cands: list[Candidate]) -> str:
    """A filter the rows answer (a flag and value the search chose for some rows but not all), so the
    placeholder's example always matches; '' when no chosen flag tells the rows apart."""
    for c in cands:
        for name, value in zip(c.chosen, [*c.chosen[1:], ""]):
            if not name.startswith("--"):
                continue
            words = [name.removeprefix("--")] + ([value] if value and not value.startswith("--") else [])
            query = " ".join(words)
            hits = len(filter_rank(cands, query, "rank", False))
            if 0 < hits < len(cands):
                return query
    return ""


def filter_placeholder(cands: list[Candidate]) -> str:
    example = filter_example(cands)
    return f"filter flags, e.g. '{example}'  (/)" if example else "filter flags  (/)"
