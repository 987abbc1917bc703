"""Render a plan: text for people, JSON for scripts. No arithmetic happens here."""

from __future__ import annotations

import re
import shlex
from typing import Any

from planner.catalog.catalog import NOT_MODELLED
from planner.catalog.drafts import launch_flags, unpublished_draft
from planner.engines.sglang.explain import explain
from planner.engines.sglang.rules import version_key as _vkey
from planner.engines.sglang.plan import GIB, Plan, json_verdict
from planner.engines.sglang.summary import build_summary
from planner.shell import shell_wrap

UNIT_NOTE = "GiB = 2^30 bytes (SGLang logs print GiB and call it 'GB')"
NO_COMPARE = "Other releases: not compared (--compare-releases shows how every modelled release decides this launch)."


def _fmt(v: Any) -> str:
    """A value for reading: floats to 4 significant decimals (the exact value is in --json)."""
    if isinstance(v, float):
        return f"{v:.4f}".rstrip("0").rstrip(".") if v == v else "nan"
    return str(v)


def _g(n: int | float | None) -> str:
    return "-" if n is None else f"{n / GIB:8.2f}"


def capacity(plan: Plan) -> dict[str, Any] | None:
    p = plan.profile
    if p is None or p.max_total_num_tokens is None or plan.args is None:
        return None
    n, r, ctx = p.max_total_num_tokens, p.max_running_requests, plan.args.context_len
    longest = max(0, min(ctx - 1, n - 1))
    return {
        "max_running_requests": r,
        "kv_tokens": n,
        "context_len": ctx,
        "longest_request_tokens": longest,
        "concurrency_at_context_len": min(r, n // ctx) if ctx else r,
    }


def verdict_line(plan: Plan) -> str:
    if plan.verdict == "fits":
        return "FITS: SGLang accepts these flags, every pool is allocated, and the estimated headroom covers the rest."
    if plan.verdict == "oom_risk" and plan.headroom_bytes is not None and plan.headroom_bytes < 0:
        return f"OUT-OF-MEMORY RISK: {plan.oom_allocation} exceed the memory the weights leave."
    if plan.verdict == "oom_risk":
        return f"OUT-OF-MEMORY RISK: the pools fit, but {plan.oom_allocation} is unlikely to fit after them."
    if plan.stage == "server_args":
        return f"SGLANG REJECTS THE FLAGS: {plan.error_type}: {plan.error_message}"
    return f"WILL NOT BOOT ({plan.stage}): {plan.error_type}: {plan.error_message}"


def confidence_line(plan: Plan) -> str:
    """How sure the verdict is (issue 10): the margin next to the post-pool estimates' error on the calibration
    logs, and what was measured vs modelled (planner/engines/sglang/calibration.py)."""
    c = plan.confidence
    if not c:
        return ""
    return f"Confidence: {c['line']} (measured: {', '.join(c['measured']) or 'nothing'})"


def to_dict(plan: Plan) -> dict[str, Any]:
    binding, advice = explain(plan)
    a = plan.args
    return {
        "verdict": json_verdict(plan),
        "verdict_text": verdict_line(plan),
        "binding_constraint": binding,
        "suggestions": advice,
        "sglang_version": plan.sglang_version,
        "sglang_version_source": plan.version_source,
        "units": UNIT_NOTE,
        "gpu": {"id": plan.gpu.id, "name": plan.gpu.display_name, "nvml_total_mib": plan.gpu.capacity_mib},
        "model": {"name": plan.model.spec.name, "architecture": plan.model.spec.architecture,
                  "weight_bytes": plan.model.weight_bytes, "weight_source": plan.model.weight_source,
                  "weight_detail": plan.model.weight_detail},
        "flags": plan.flags,
        "env": plan.env,
        "inputs": {"free_before_load_bytes": plan.free_before_bytes, "free_before_source": plan.free_before_source,
                   "free_after_load_bytes": plan.free_after_bytes, "free_after_source": plan.free_after_source,
                   "assumptions": [vars(x) for x in plan.assumptions]},
        "resolved": None if a is None else {
            "defaulted": a.defaulted, "warnings": a.warnings,
            "mem_fraction_static": a.mem_fraction_static, "mamba_ssm_dtype": None if plan.state is None
            else plan.state.ssm_dtype, "mamba_ssm_dtype_from": None if plan.state is None else plan.state.ssm_dtype_from,
        },
        "pools": [] if plan.pools is None else [
            {"key": x.key, "label": x.label, "bytes": x.bytes, "gib": x.bytes / GIB, "formula": x.formula, "rule": x.rule}
            for x in plan.pools.lines],
        "after_pools": None if plan.headroom_bytes is None else {
            "left_bytes": plan.headroom_bytes,
            "needs": [{"label": x.label, "bytes": x.bytes, "how": x.how} for x in plan.needs]},
        "capacity": capacity(plan),
        "confidence": plan.confidence,
        "rule": plan.rule,
        "notes": plan.notes,
        "summary": build_summary(plan),
    }


def release_label(plan: Plan) -> str:
    """'SGLang X rules', with where X came from unless the user named it (a .postN release says whose rules)."""
    why = plan.version_source if plan.version_source and plan.version_source != "--sglang-version" else ""
    return f"SGLang {plan.sglang_version} rules" + (f" ({why})" if why else "")


def render_text(plan: Plan, compare: bool = True) -> str:
    """The full breakdown (``plan --verbose``): inputs, resolved flags, profiling, every pool, needs, verdict."""
    d = to_dict(plan)
    a, prof = plan.args, plan.profile
    out: list[str] = []
    w = out.append
    w(f"gpu-memory-planner — {release_label(plan)}")
    w(f"GPU:   {plan.gpu.display_name} [{plan.gpu.id}], nvidia-smi total {plan.gpu.capacity_mib:,} MiB")
    w(f"Model: {plan.model.spec.name} ({plan.model.spec.architecture}); weights "
      + (f"{_MEASURED} [{plan.model.weight_detail}]" if plan.model.weight_source == NOT_MODELLED else
         f"{plan.model.weight_bytes / GIB:.2f} GiB [{plan.model.weight_source}: {plan.model.weight_detail}]"))
    w(f"Flags: {shlex.join(launch_flags(plan.flags)) or '(none)'}" + (f"   env: {plan.env}" if plan.env else ""))
    w(f"Units: {UNIT_NOTE}")
    w("")
    w("Free memory per GPU")
    w(f"  before weight load (P): {plan.free_before_bytes / GIB:.2f} GiB  [{plan.free_before_source}]")
    w(f"  after weight load:      {plan.free_after_bytes / GIB:.2f} GiB  [{plan.free_after_source}]")
    for x in plan.assumptions:
        w(f"    assumption: {x.name} = {x.value} ({x.why})")
    for note in plan.notes:
        w(f"    note: {note}")
    if a is not None:
        w("")
        w("Resolved flags (what SGLang would set)")
        rows = [
            ("mem_fraction_static", a.mem_fraction_static), ("chunked_prefill_size", a.chunked_prefill_size),
            ("cuda_graph_max_bs", a.cuda_graph_max_bs), ("page_size", a.page_size),
            ("attention_backend", a.attention_backend), ("mamba_scheduler_strategy", a.mamba_scheduler_strategy),
            ("disable_radix_cache", a.disable_radix_cache), ("disable_overlap_schedule", a.disable_overlap_schedule),
            ("speculative_algorithm", a.speculative_algorithm),
            ("speculative_num_steps/topk/draft_tokens",
             f"{a.speculative_num_steps}/{a.speculative_eagle_topk}/{a.speculative_num_draft_tokens}"),
            ("max_running_requests (ServerArgs)", a.max_running_requests), ("context_len", a.context_len),
        ]
        for k, v in rows:
            key = k.split(" ")[0].split("/")[0]
            why = a.defaulted.get(key)
            w(f"  {k:<40} {_fmt(v):<22}" + (f" default: {why}" if why else ""))
        if plan.state is not None:
            w(f"  {'mamba ssm/conv dtype':<40} {plan.state.ssm_dtype}/{plan.state.conv_dtype:<13} ({plan.state.ssm_dtype_from})")
        for msg in a.warnings:
            w(f"  warning: {msg}")
    if prof is not None:
        w("")
        joint = a.rules.mamba_solve != "classic"
        newer = tuple(int(x) for x in plan.sglang_version.split(".")) >= (0, 5, 16)
        w(f"Profiling (SGLang {plan.sglang_version}: "
          + ("mem_cache/kv_cache_configurator.py)" if newer else "model_executor/model_runner_kv_cache_mixin.py)"))
        from planner.engines.sglang.pipeline.memory_profile import mm_reserve_gib  # noqa: PLC0415

        mm = mm_reserve_gib(a)
        mm_text = f" - multimodal reserve {mm:.3f}" if mm else ""
        w(f"  rest = post {prof.post_model_load_gib:.3f} - P {prof.pre_model_load_gib:.3f} x (1 - {a.mem_fraction_static:.4f})"
          f"{mm_text} = {prof.rest_gib_before_mamba:.3f} GiB")
        if mm:
            w("    (multimodal models keep SGLANG_VLM_CACHE_SIZE_MB of the KV budget: "
              "kv_cache_configurator.py:132-152 @0.5.19)")
        if prof.mamba_cache_per_req_bytes:
            w(f"  mamba state per request S = {prof.mamba_cache_per_req_bytes:,} B ({prof.mamba_cache_per_req_bytes / 2**20:.1f} MiB)")
        if prof.spec_reserved_bytes:
            pad = " + 1" if a.rules.padding_slots else ""
            radix_k = a.disable_radix_cache and a.max_mamba_cache_size is None
            if not joint:
                reqs = str(a.max_running_requests)
            elif radix_k:
                reqs = f"(M {prof.max_mamba_cache_size}{pad})" if pad else f"M {prof.max_mamba_cache_size}"
            else:
                reqs = f"(min({a.max_running_requests}, M // ratio){pad})" if pad else \
                    f"min({a.max_running_requests}, M // ratio)"
            w(f"  speculative reservation = S x {reqs} x {a.speculative_num_draft_tokens}"
              f" = {prof.spec_reserved_bytes / GIB:.3f} GiB")
        if prof.max_mamba_cache_size is not None:
            w(f"  max_mamba_cache_size M = {prof.max_mamba_cache_size}  [{prof.max_mamba_cache_source}]")
        if prof.kv_cell_bytes_per_token is not None:
            avail = "-" if prof.available_kv_bytes is None else f"{prof.available_kv_bytes / GIB:.3f} GiB"
            w(f"  KV bytes per token C = {prof.kv_cell_bytes_per_token:,} B;  available for KV = {avail}")
        if prof.max_total_num_tokens is not None:
            w(f"  max_total_num_tokens N = {prof.max_total_num_tokens:,};  max_running_requests R = {prof.max_running_requests}"
              + (f" (mamba ratio {prof.mamba_ratio})" if prof.mamba_ratio else ""))
    if plan.pools is not None:
        w("")
        w(f"{'Pool':<30}{'bytes':>18}{'GiB':>10}  rule")
        for x in plan.pools.lines:
            w(f"  {x.label:<28}{x.bytes:>18,}{_g(x.bytes):>10}  {x.formula}")
        w(f"  {'total':<28}{plan.pools.total:>18,}{_g(plan.pools.total):>10}")
    if plan.headroom_bytes is not None:
        w("")
        w(f"After the pools: {plan.headroom_bytes / GIB:.2f} GiB left; still to come (estimates):")
        for x in plan.needs:
            w(f"  {x.label:<36}{_g(x.bytes)} GiB  {x.how}")
        left = plan.headroom_bytes - sum(x.bytes for x in plan.needs)
        w(f"  {'margin':<36}{_g(left)} GiB")
    cap = d["capacity"]
    if cap:
        w("")
        w("Serving capacity")
        w(f"  max running requests:        {cap['max_running_requests']}")
        w(f"  KV cache tokens:             {cap['kv_tokens']:,}")
        w(f"  longest request:             {cap['longest_request_tokens']:,} tokens (context_len {cap['context_len']:,})")
        w(f"  requests at full context:    {cap['concurrency_at_context_len']}")
        from planner.engines.sglang.pipeline.dflash import dflash_cost  # noqa: PLC0415

        if (dflash := dflash_cost(plan)) is not None:
            w(f"  DFLASH: {dflash}")
    w("")
    w("Verdict: " + d["verdict_text"])
    if confidence_line(plan):
        w(confidence_line(plan))
    if d["binding_constraint"]:
        w("Why: " + d["binding_constraint"])
    for s in d["suggestions"]:
        w("Fix: " + s)
    if plan.rule:
        w(f"Rule: {plan.rule}")
    other = _other_version_note(plan) if compare else NO_COMPARE
    if other:
        w(other)
    return "\n".join(out)


def _outcome_key(p: Plan) -> tuple:
    prof = p.profile
    return (p.verdict, p.error_type, p.error_message,
            None if prof is None else (prof.max_total_num_tokens, prof.max_running_requests, prof.max_mamba_cache_size))


def _outcome_text(p: Plan) -> str:
    prof = p.profile
    if p.verdict in ("fits", "oom_risk") and prof is not None:
        m = f", mamba slots {prof.max_mamba_cache_size}" if prof.max_mamba_cache_size is not None else ""
        head = "FITS" if p.verdict == "fits" else "OUT-OF-MEMORY RISK"
        return f"{head}: {prof.max_total_num_tokens:,} KV tokens, {prof.max_running_requests} running{m}"
    return verdict_line(p)


def plan_traits(plan: Plan) -> set[str]:
    """What a plan is about, to pick the rule changes that can matter to it."""
    traits = set()
    spec_on = any(f.startswith("--speculative-algorithm") for f in plan.flags)
    if plan.model.spec.is_mambaish:
        traits.add("mamba")
        if spec_on:
            traits.add("mamba+spec")
    if spec_on:
        traits.add("spec")
    if any(f.startswith("--max-running-requests") for f in plan.flags):
        traits.add("mrr")
    if any(f.startswith("--speculative-draft-model") for f in plan.flags):
        traits.add("draft")
    if any(f.upper() in ("DFLASH", "--SPECULATIVE-ALGORITHM=DFLASH") for f in plan.flags):
        traits.add("dflash")
    if plan.args is not None and plan.args.is_multimodal:
        traits.add("mm")
    if not plan.model.spec.is_mambaish:
        traits.add("dense")
    if plan.model.spec.architecture == "NemotronHForCausalLM":
        traits.add("nemotron")
    if plan.model.spec.hybrid == "gdn" and plan.gpu.compute_capability and plan.gpu.compute_capability[:2] in ("10", "11", "12"):
        traits.add("gdn-blackwell")
    if any("unified-memory" in f or "page-major" in f for f in plan.flags):
        traits.add("unified")
    if plan.args is not None and plan.args.attention_backend in ("trtllm_mha", "fa4"):
        traits.add("trtllm" if plan.args.attention_backend == "trtllm_mha" else "fa4")
    return traits


def other_versions(plan: Plan, releases: list[str] | None = None) -> list[tuple[list[str], Plan | None]]:
    """The same launch under every modelled release (or those of ``releases``; each in its own flag spelling),
    grouped into runs of consecutive releases with the same outcome: [(releases, a plan of that run)]."""
    from planner.engines.sglang.cli_flags import translate_flags  # noqa: PLC0415
    from planner.engines.sglang.rules import RULES  # noqa: PLC0415
    from planner.engines.sglang.plan import make_plan  # noqa: PLC0415

    groups: list[tuple[list[str], Plan | None]] = []
    last = None
    for v in sorted(RULES if releases is None else releases, key=_vkey):
        if v == plan.sglang_version:
            other = plan
        else:
            try:
                # measured or given free memory is the same for every release; a modelled one is modelled
                # again, since from 0.5.14 the draft's weights are loaded before the pools are sized
                fb = None if plan.free_before_source.startswith("modelled") else plan.free_before_bytes / GIB
                fa = None if plan.free_after_source.startswith("modelled") else plan.free_after_bytes / GIB
                other = make_plan(plan.gpu, plan.model, translate_flags(plan.flags, RULES[v].flags), plan.env,
                                  fb, fa, version=v, free_before_source=None if fb is None else plan.free_before_source)
            except Exception:  # noqa: BLE001 - e.g. a draft this release cannot read
                other = None
        key = None if other is None else _outcome_key(other)
        if groups and key == last:
            groups[-1][0].append(v)
        else:
            groups.append(([v], other))
        last = key
    return groups


def _other_version_note(plan: Plan) -> str:
    """How every other modelled release decides the same launch, and which rule changes explain it."""
    from planner.engines.sglang.rules import changes_between  # noqa: PLC0415

    if plan.args is None and plan.stage == "server_args" and plan.error_type == "SystemExit":
        return ""
    groups = other_versions(plan)
    if len(groups) == 1:
        vs = groups[0][0]
        return f"Other releases: the same outcome under every modelled release ({vs[0]} to {vs[-1]})."
    traits = plan_traits(plan)
    lines = ["Other releases (the same launch, renamed flags in each release's spelling):"]
    for i, (vs, other) in enumerate(groups):
        span = vs[0] if len(vs) == 1 else f"{vs[0]}-{vs[-1]}"
        mark = "  <- this plan" if plan.sglang_version in vs else ""
        text = ("not comparable (the launch does not translate, or the release is not modelled for this model)"
                if other is None else _outcome_text(other))
        lines.append(f"  {span:<14} {text}{mark}")
        if i + 1 < len(groups):
            for c in changes_between(vs[-1], groups[i + 1][0][0], traits):
                lines.append(f"    changed in {groups[i + 1][0][0]}: {c}")
    return "\n".join(lines)


def render_search(res, model, show_plan: bool) -> str:
    """The recommendation: flags, budget, a ready launch line, and what it trades."""
    from planner.engines.sglang.search import launch_command  # noqa: PLC0415

    n = res.needs
    need_ctx = n.context if n.context is not None else min(32768, model.spec.derived_context_len)
    out = []
    w = out.append
    w(f"Search: {evaluated_text(res)}, {res.feasible:,} feasible "
      f"(need: requests of {need_ctx:,} tokens x {n.concurrency}; objective: {n.objective}); margin: "
      f"{margin_text(n)}")
    if res.recommended is None:
        w("Nothing feasible.")
        if res.closest is not None:
            c = res.closest
            w(f"Closest: {' '.join(c.chosen) or '(defaults)'}: {c.concurrency} concurrent at {need_ctx:,} tokens, "
              f"{c.kv_tokens:,} KV tokens, longest request {c.longest:,}, {c.headroom_left / GIB:.2f} GiB spare")
        elif getattr(res, "closest_refused", ""):
            w(f"Closest: none SGLang accepts: it refuses the closest point, {res.closest_refused}")
        for r in res.relaxations:
            w(f"Would fit with {r}")
        return "\n".join(out)
    best = res.ranked[0]
    if show_plan:
        w("")
        w(render_text(res.recommended))
        w("")
    w(f"Recommended: {' '.join(best.chosen) or '(SGLang defaults)'}")
    w(f"  {best.concurrency} concurrent requests of {need_ctx:,} tokens; {best.running} running requests; "
      f"{best.kv_tokens:,} KV tokens; longest request {best.longest:,}; {best.headroom_left / GIB:.2f} GiB spare "
      "after the estimated needs")
    w("  " + res.why)
    if res.runner_up:
        w("  " + res.runner_up)
    if len(res.ranked) > 1:
        w(f"Top {len(res.ranked)}:")
        for i, c in enumerate(res.ranked, 1):
            w(f"  {i}. conc {c.concurrency:>3}  running {c.running:>4}  KV {c.kv_tokens:>10,}  spare "
              f"{c.headroom_left / GIB:6.2f} GiB  {' '.join(c.chosen) or '(defaults)'}")
    w("Launch:")
    w("  " + launch_command(model, best.flags))
    if (draft_note := unpublished_draft(best.flags)) is not None:
        w(draft_note)
    return "\n".join(out)


def check_dict(res) -> dict[str, Any]:
    from planner.schema import SCHEMA_VERSION  # noqa: PLC0415

    return {
        "schema_version": SCHEMA_VERSION,
        "stale": res.stale, "version": res.version, "flags": res.flags, "notes": res.notes,
        "failure": res.failure, "explanation": res.explanation,
        "sglang_version_used": getattr(res, "release", None), "sglang_version_why": getattr(res, "release_why", ""),
        "release_candidates": [{"version": c.version, "verdict": c.verdict, "reproduces": c.reproduces,
                                "outcome_matches": c.outcome, "rows_differ": c.disagree, "rows_agree": c.agree}
                               for c in getattr(res, "candidates", [])],
        "not_seen_by_planner": getattr(res, "unseen", None),
        "rows": [{"what": r.what, "predicted": r.predicted, "actual": r.actual, "unit": r.unit,
                  "diff": r.diff, "agrees": r.agrees, "rule": r.rule} for r in res.rows],
        "plan": None if res.plan is None else to_dict(res.plan),
    }


def render_check(res) -> str:
    from planner.engines.sglang.check import points_at  # noqa: PLC0415

    out: list[str] = []
    w = out.append
    if res.stale:
        w("STALE LOG? This log may not be from the launch you think:")
        for s in res.stale:
            w(f"  - {s}")
        w("")
    log = res.log
    w(f"Log: {log.path or '(text)'}: {len(log.launches)} launch(es); checking the newest"
      + (f" (line {res.launch.start_lineno})" if res.launch is not None else ""))
    w(f"SGLang version seen in the log: {res.version or 'unknown'}; units: {UNIT_NOTE}")
    if res.launch is not None:
        w(f"Outcome in the log: {res.launch.outcome}" + (f" ({res.failure})" if res.failure else ""))
    for n in res.notes:
        w(f"  note: {n}")
    if res.flags:
        w("Re-planned with: " + shlex.join(res.flags))
    if res.plan is not None:
        w("Planner verdict for the same inputs: " + verdict_line(res.plan))
    if getattr(res, "unseen", None):
        w("But: " + res.unseen)
    if res.rows:
        w("")
        w(f"  {'pool / value':<36}{'predicted':>14}{'actual':>14}{'diff':>10}")
        for r in res.rows:
            fmt = (lambda v: "-" if v is None else (f"{v:.2f}" if r.unit == "GiB" else f"{v:,}"))
            mark = "" if r.agrees is None else ("  ok" if r.agrees else "  << " + points_at(r))
            diff = "-" if r.diff is None else (f"{r.diff:+.2f}" if r.unit == "GiB" else f"{r.diff:+,}")
            w(f"  {r.what:<36}{fmt(r.predicted):>14}{fmt(r.actual):>14}{diff:>10}{mark}")
    if res.plan is not None and res.plan.verdict != "fits":
        from planner.engines.sglang.explain import explain  # noqa: PLC0415

        why, advice = explain(res.plan)
        w("")
        w("Why: " + why)
        for a in advice + res.explanation:
            w("Fix: " + a)
    return "\n".join(out)


# --------------------------------------------------------------------------- the default report


def terminal_width() -> int:
    """COLUMNS, else the real terminal's width, else 100; kept within [40, 400]."""
    import shutil  # noqa: PLC0415

    return max(40, min(400, shutil.get_terminal_size((100, 24)).columns))


LAUNCHER = "python -m sglang.launch_server "


def wrap_lines(text: str, width: int) -> str:
    """Wrap every line to ``width``; continuation lines keep the line's indent plus two spaces.
    Words (flags, numbers) are never broken. A launch command (a line starting with ``LAUNCHER``) is wrapped by
    :func:`shell_wrap`, with backslash continuations, and lines already continued with `` \\`` are kept."""
    import textwrap  # noqa: PLC0415

    out = []
    in_command = False  # the line before ended with a shell continuation: this one belongs to that command
    for line in text.split("\n"):
        cont, in_command = in_command, line.endswith(" \\")
        if cont or len(line) <= width:
            out.append(line)
            continue
        indent = line[: len(line) - len(line.lstrip())]
        if line.lstrip().startswith(LAUNCHER):  # a launch command wraps with ` \` so it still pastes
            out.append(shell_wrap(line.strip(), width, indent))
            continue
        # a flag keeps its value on its line ("--mem-fraction-static 0.95" is never cut in two)
        glued = _FLAG_VALUE.sub(lambda m: m.group(1) + _GLUE, line)
        out.extend(x.replace(_GLUE, " ") for x in textwrap.wrap(
            glued, width, subsequent_indent=indent + "  ", break_long_words=False, break_on_hyphens=False) or [line])
    return "\n".join(out)


_GLUE = "\x1f"  # not whitespace to textwrap (break_on_hyphens=False splits on whitespace alone)
_FLAG_VALUE = re.compile(r"(?<![^\s(])(--[A-Za-z][\w-]*) (?=[^\s-])")


def _r(n: int | float) -> str:
    """GiB for reading: one decimal from 10 GiB, two below."""
    x = n / GIB
    return f"{x:.1f}" if abs(x) >= 10 else f"{x:.2f}"


# the weights of a checkpoint without a weight model: what the launch measured stands in for them (plan.make_plan)
_MEASURED = "measured (the free memory after loading is given; this checkpoint's weights have no model here)"


def _source_word(src: str) -> str:
    return src.split(":", 1)[0] if src else "?"


def plan_summary(plan: Plan, launched: bool = False) -> list[str]:
    """What the plan decided, in a few lines: GPU, model, flags, memory, capacity. ``launched``: the report
    printed these flags as its launch line just above, so the Flags line says so instead of repeating them."""
    out = [f"GPU:      {plan.gpu.display_name} [{plan.gpu.id}], {plan.gpu.capacity_mib:,} MiB",
           f"Model:    {plan.model.spec.name} ({plan.model.spec.architecture}), weights "
           + (_MEASURED if plan.model.weight_source == NOT_MODELLED
              else f"{_r(plan.model.weight_bytes)} GiB ({plan.model.weight_source})"),
           ("Flags:    the launch line's above" if launched and plan.flags
            else f"Flags:    {shlex.join(launch_flags(plan.flags)) or '(SGLang defaults)'}")  # as the launch line spells them
           + (f"; env {plan.env}" if plan.env else "")]
    mem = (f"Memory:   per GPU, GiB: {_r(plan.free_before_bytes)} free before load "
           f"({_source_word(plan.free_before_source)}), {_r(plan.free_after_bytes)} after the weights "
           f"({_source_word(plan.free_after_source)})")
    draft_load = next((x.value for x in plan.assumptions if x.name == "draft worker's load per GPU"), None)
    if draft_load:  # a speculative draft loaded before sizing (its estimate and how: --verbose)
        mem += f", the draft worker's {draft_load} included"
    if plan.pools is not None:
        kv = sum(x.bytes for x in plan.pools.lines if x.key.startswith(("kv_", "draft_kv")))
        dkv = sum(x.bytes for x in plan.pools.lines if x.key.startswith("draft_kv"))
        mamba = sum(x.bytes for x in plan.pools.lines if x.key.startswith("mamba_"))
        rest = plan.pools.total - kv - mamba
        parts = [f"KV {_r(kv)}" + (f" of which draft {_r(dkv)}" if dkv else "")] + \
            ([f"mamba {_r(mamba)}"] if mamba else []) + [f"other {_r(rest)}"]
        mem += f"; pools {_r(plan.pools.total)} ({', '.join(parts)})"
    out.append(mem)
    if plan.headroom_bytes is not None:
        need = sum(x.bytes for x in plan.needs)
        items = ", ".join(f"{x.label} {_r(x.bytes)}" for x in plan.needs if x.bytes >= GIB // 100)
        out.append(f"After:    {_r(plan.headroom_bytes)} GiB left after the pools; still to come (estimates) "
                   f"{_r(need)}" + (f": {items}" if items else "")
                   + f"; margin {_r(plan.headroom_bytes - need)} GiB")
    cap = capacity(plan)
    if cap:
        out.append(f"Capacity: {cap['max_running_requests']} running requests, {cap['kv_tokens']:,} KV tokens, "
                   f"longest request {cap['longest_request_tokens']:,} tokens, "
                   f"{cap['concurrency_at_context_len']} at the full context of {cap['context_len']:,}")
    from planner.engines.sglang.pipeline.dflash import dflash_cost  # noqa: PLC0415

    if (dflash := dflash_cost(plan)) is not None:
        out.append(f"DFLASH:   {dflash}")
    for note in plan.notes:
        if not note.startswith(RANGE_DIFFERS):  # shown under the verdict
            out.append(f"Note:     {note}")
    return out


# a note that starts so (flag_hints.spelling_range_note) is shown under the verdict: the verdict is one release's
RANGE_DIFFERS = "the releases that take these spellings decide this launch differently"


def _verdict_block(plan: Plan) -> list[str]:
    d = to_dict(plan)
    out = [f"Verdict: {d['verdict_text']}  [{release_label(plan)}]"]
    out += ["Releases: " + n for n in plan.notes if n.startswith(RANGE_DIFFERS)]  # the verdict is one release's
    if d["binding_constraint"]:
        out.append("Why: " + d["binding_constraint"])
    out += ["Fix: " + s for s in d["suggestions"]]
    if plan.rule:
        out.append(f"Rule: {plan.rule}")
    return out


FOOTER = ("Units: GiB = 2^30 bytes (SGLang's logs call it 'GB'). More: --verbose (the arithmetic, every pool), "
          "--json (exact values), --compare-releases (other releases).")


def render_plan(plan: Plan, compare: bool = False) -> str:
    """The default report of one plan: verdict first, then a short summary."""
    out = _verdict_block(plan) + [""] + plan_summary(plan) + [FOOTER]
    if compare:
        out.append(_other_version_note(plan))
    return "\n".join(x for x in out if x is not None)


def margin_text(needs) -> str:
    return (f"the headroom after the pools must cover the estimated later allocations x {1 + needs.margin:.2f} "
            f"+ {needs.margin_bytes / GIB:.2f} GiB" + _margin_why(needs))


def _margin_why(needs) -> str:
    from planner.engines.sglang.calibration import search_margin  # noqa: PLC0415

    default, why = search_margin(getattr(needs, "margin_class", None))
    return f" = {why}" if needs.margin_bytes == default else " (given)"


def _no_radix_line(res, need_ctx: int) -> str | None:
    nr = getattr(res, "no_radix_best", None)
    if nr is None or res.needs.allow_no_radix:
        return None
    best = res.ranked[0] if res.ranked else None
    gain = "" if best is None else (f" (vs {best.concurrency} and {best.kv_tokens:,} with it on)")
    return (f"Radix cache: kept on (prefix reuse). Turning it off (--allow-no-radix) would give "
            f"{nr.concurrency} requests of {need_ctx:,} tokens at once and {nr.kv_tokens:,} KV tokens{gain}.")


def fix_vs_recommendation(plan: Plan, res) -> str | None:
    """How the plan's Fix line and the search's recommendation relate, with both sets of numbers, when a report
    prints both; ``res`` None (``--no-search``): what the Fix is and what the search would add."""
    from planner.engines.sglang.explain import fix_flags, running_requests_fix  # noqa: PLC0415

    added = fix_flags(plan)
    if not added:
        return None
    fp = running_requests_fix(plan)[1].profile
    fix = (f"the Fix ({' '.join(added)}) is the one-flag change that boots your flags "
           f"({fp.max_running_requests} running, {fp.max_total_num_tokens:,} KV tokens)")
    if res is None:
        return f"Fix vs search: {fix}; without --no-search the planner also searches the flags you left out for the " \
               "best configuration for your needs."
    if res.recommended is None or not res.ranked:
        return None
    best = res.ranked[0]
    names = [w for c in best.chosen for w in c.split() if w.startswith("--")]  # what the search set
    others = [x for x in names if x != "--max-running-requests"]
    more = f"{len(others)} {'more ' if len(others) < len(names) else ''}flag{'s' if len(others) != 1 else ''}"
    if len(others) < len(names):  # the search chose its own --max-running-requests: name it next to the Fix's
        mrr = best.flags[len(best.flags) - 1 - best.flags[::-1].index("--max-running-requests") + 1]
        setting = f"--max-running-requests {mrr}" + (f" and {more}" if others else "")
    else:
        setting = more
        if "--max-running-requests" in plan.flags:  # the search keeps a flag you gave: the Fix is what changes it
            mine = plan.flags[plan.flags.index("--max-running-requests") + 1]
            setting += f" and keeping your --max-running-requests {mine}"
    return (f"Fix vs recommendation: {fix}; the recommendation, the best the search found for your need, sets "
            f"{setting}: {best.running} running, {best.kv_tokens:,} KV tokens.")


def _gives(res, best) -> str:
    """The "Gives" label: under DP attention the search's numbers are one attention-DP rank's (search.run_search)."""
    args = getattr(res.recommended, "args", None)
    d = getattr(args, "attn_dp_size", 1) if args is not None else 1
    return "Gives" if d <= 1 else f"Gives per attention-DP rank (x {d} ranks: {best.concurrency * d} at once)"


def render_recommendation(res, model, width: int, relation: str | None = None) -> list[str]:
    from planner.engines.sglang.search import launch_command  # noqa: PLC0415

    n = res.needs
    need_ctx = n.context if n.context is not None else min(32768, model.spec.derived_context_len)
    best = res.ranked[0]
    out = [f"Verdict: FITS with the recommended flags  [SGLang {res.recommended.sglang_version} rules]",
           "Launch:", shell_wrap(launch_command(model, best.flags), width),
           unpublished_draft(best.flags),
           f"{_gives(res, best)}: {best.concurrency} requests of {need_ctx:,} tokens at once; {best.running} running requests; "
           f"{best.kv_tokens:,} KV tokens; longest request {best.longest:,}; {_r(best.headroom_left)} GiB left "
           "after the estimated needs",
           "Why: " + res.why, relation]
    out = [x for x in out if x is not None]
    nr = _no_radix_line(res, need_ctx)
    if nr:
        out.append(nr)
    if res.runner_up:
        out.append(res.runner_up)
    if getattr(res, "d_tradeoff", None):  # DFLASH / DSPARK: the recommended launch re-planned at a smaller D
        out.append("What D costs (draft tokens per verify; same flags otherwise):")
        out += [f"  {x}" for x in res.d_tradeoff]
    if len(res.ranked) > 1:
        out.append(f"Top {len(res.ranked)}:")
        for i, c in enumerate(res.ranked, 1):
            out.append(f"  {i}. conc {c.concurrency:>3}  running {c.running:>4}  KV {c.kv_tokens:>10,}  spare "
                       f"{_r(c.headroom_left):>6} GiB  {' '.join(c.chosen) or '(defaults)'}")
    out.append(f"Search: {evaluated_text(res)}, {res.feasible:,} feasible (need: requests of "
               f"{need_ctx:,} tokens x {n.concurrency}; objective: {n.objective}); margin: the estimated later "
               f"allocations x {1 + n.margin:.2f} + {n.margin_bytes / GIB:.2f} GiB (--verbose says why)")
    return out


def evaluated_text(res) -> str:
    """How much of the space the search evaluated: with combinations skipped by the branch and bound (``pruned``,
    each proved unable to change the result shown), "N of S configurations evaluated (K combinations skipped,
    proven unable to win)"; else "N configurations evaluated"."""
    pruned, space = getattr(res, "pruned", 0), getattr(res, "space", 0)
    if getattr(res, "skipped_why", "") and space:
        return f"none of {space:,} configurations needed evaluating: {res.skipped_why}"
    if pruned and space:
        return (f"{res.evaluated:,} of {space:,} configurations evaluated ({pruned:,} combination"
                f"{'' if pruned == 1 else 's'} skipped, proven unable to win)")
    return f"{res.evaluated:,} configurations evaluated"


def render_nothing_feasible(res, model) -> list[str]:
    n = res.needs
    need_ctx = n.context if n.context is not None else min(32768, model.spec.derived_context_len)
    out = [f"Verdict: NOTHING FEASIBLE: no setting of the searched flags serves requests of {need_ctx:,} tokens "
           f"x {n.concurrency} with the flags you gave ({evaluated_text(res)})"]
    if res.closest is not None:
        c = res.closest
        out.append(f"Closest: {' '.join(c.chosen) or '(defaults)'}: {c.concurrency} concurrent at {need_ctx:,} "
                   f"tokens, {c.kv_tokens:,} KV tokens, longest request {c.longest:,}, {_r(c.headroom_left)} GiB spare")
    elif getattr(res, "closest_refused", ""):
        out.append(f"Closest: none SGLang accepts: it refuses the closest point, {res.closest_refused}")
    fits = [r for r in res.relaxations if "still does not fit" not in r]
    nr = getattr(res, "no_radix_best", None)
    if nr is not None:
        fits.insert(0, f"the radix cache off (--allow-no-radix): {nr.concurrency} concurrent at {need_ctx:,} tokens, "
                       f"{nr.kv_tokens:,} KV tokens with {' '.join(nr.chosen)}")
    if fits:
        out.append("Would fit with:")
        out += [f"  - {r}" for r in fits]
    tried = [r.split(":", 1)[0] for r in res.relaxations if "still does not fit" in r]
    if tried:
        out.append(f"Tried and still not fitting: {'; '.join(tried)}"
                   + (" (none of the larger GPUs tried fits either)" if any("larger GPU" in t for t in tried) else ""))
    if not fits and not tried:
        out.append("No relaxation was tried (flags you gave stay fixed; --no-search evaluates them alone).")
    out.append(f"Margin: {margin_text(n)}")
    return out


def render_report(plan: Plan, res, user_flags: bool, verbose: bool = False, compare: bool = False,
                  width: int | None = None) -> str:
    """What ``plan`` prints: the verdict and the launch line first, details after, wrapped to the terminal."""
    width = width or terminal_width()
    model = plan.model
    if verbose:
        parts = []
        if user_flags or res is None:
            parts.append(render_text(plan, compare=compare))
        if res is not None:
            parts.append(render_search(res, model, show_plan=not user_flags))
            relation = fix_vs_recommendation(plan, res) if user_flags else None
            if relation:
                parts[-1] += "\n" + relation
        return wrap_lines("\n\n".join(parts), width)
    out: list[str] = []
    if res is not None and not user_flags:
        if res.recommended is None:
            out += render_nothing_feasible(res, model) + [""] + _verdict_block(plan) + [""] + plan_summary(plan)
        else:
            out += render_recommendation(res, model, width) + [""] + plan_summary(res.recommended, launched=True)
            plan = res.recommended
        out.append(FOOTER)
        if compare:
            out.append(_other_version_note(plan))
    else:
        out.append(render_plan(plan, compare))
        relation = fix_vs_recommendation(plan, res) if user_flags else None
        if res is not None:
            out.append("")
            out += (render_recommendation(res, model, width, relation) if res.recommended is not None
                    else render_nothing_feasible(res, model))
        elif relation:
            out.append(relation)
    return fit_screen(out, width)


SCREEN_LINES = 40  # the default report fits one screen (README: at most 40 lines at 100 columns)
# what the default report shortens, in this order, while it is longer than a screen: each has its own flag
_SHORTER = (("Runner-up (", "Runner-up: --top 2 lists it next to the recommendation."),
            ("DFLASH:   ", "DFLASH:   what D costs in each pool: --verbose."))


def fit_screen(out: list[str], width: int) -> str:
    """The report's entries wrapped to ``width``; while it is longer than :data:`SCREEN_LINES`, the entries of
    ``_SHORTER`` are replaced by a line that names the flag that shows them."""
    def text(entries: list[str]) -> str:
        return "\n".join(wrap_lines(x, width) if not x.startswith("  python") else x for x in entries)

    done = text(out)
    for prefix, short in _SHORTER:
        if done.count("\n") + 1 <= SCREEN_LINES:
            break
        out = [short if x.startswith(prefix) else x for x in out]
        done = text(out)
    return done
