"""SGLang as an :class:`planner.engines.interface.EngineFrontend`: one ``plan`` request -> the verdict, the text
report, the ``--json`` object and the recommended launch line, exactly as ``plan --gpu G --model M [flags]`` prints
them today (``tests/test_engines.py`` compares the two).

The CLI reaches it as ``planner.engines.registry.engine("sglang")``. Its measured inputs are the CLI's
``--free-before-load-gib`` / ``--free-after-load-gib`` under ``free_before_gib`` / ``free_after_gib``.
The SGLang flow it runs (``plan.py``, ``search*.py``, ``report.py`` beside it) is imported when asked to plan,
never at import time.
"""

from __future__ import annotations

from typing import Any

from planner.engines.interface import PlanOutcome, PlanRequest
from planner.errors import EXIT_DOES_NOT_FIT, EXIT_FITS, BadInput

MEASURED = ("free_before_gib", "free_after_gib")  # PlanRequest.measured keys SGLang reads


def make_sglang_plan(gpu, model, flags: list[str], env: dict[str, str], free_before: float | None,
                     free_after: float | None, version: str | None, default: tuple[str, str] | None = None,
                     named: bool = False):
    """The plan of one launch on a known GPU profile, as ``plan`` builds it: the release (given, named by the
    paste, or the default narrowed by an old flag spelling), the plan, its range and environment notes."""
    from planner.engines.sglang.plan import make_plan  # noqa: PLC0415

    default, base = choose_release(flags, version, default, named)
    plan = make_plan(gpu, model, flags, env, free_before, free_after, version=version, default=default)
    finish_plan(plan, flags, env, default, base)
    return plan


def choose_release(flags: list[str], version: str | None, default: tuple[str, str] | None,
                   named: bool) -> tuple[tuple[str, str] | None, tuple[str, str] | None]:
    """(default, base): the release to plan when ``version`` is None (``default``, else the installed / latest,
    narrowed by an old flag spelling unless the paste ``named`` its release) and the one before the narrowing
    (``base``, None when nothing was narrowed); a given ``version`` is checked (unknown or unmodelled: bad input)."""
    from planner.engines.sglang.flag_hints import spelling_default  # noqa: PLC0415
    from planner.engines.sglang.rules import default_version, rules_for  # noqa: PLC0415

    base = None
    if version is not None:
        rules_for(version)  # an unknown or unmodelled release is bad input
    elif not (named and default is not None):
        base = default or default_version()
        default = spelling_default(flags, base)
    return default, base


def finish_plan(plan, flags: list[str], env: dict[str, str], default, base) -> None:
    """The notes a plan gets after it is made: the release range an old spelling narrowed to, the environment."""
    from planner.engines.sglang.env_vars import env_notes  # noqa: PLC0415
    from planner.engines.sglang.flag_hints import spelling_range_note  # noqa: PLC0415

    if default is not base and base is not None and (note := spelling_range_note(plan, flags)):
        plan.notes.append(note)  # the release was narrowed by a spelling: does the choice within the range matter?
    if env:
        plan.notes.extend(env_notes(env, plan.sglang_version))


def capacity(plan) -> dict[str, Any]:
    """The figures ``--compare-engines`` puts beside vLLM's (vLLM's front end gives the same keys): KV tokens, the
    context length (``concurrency_context``: the length the concurrency is counted at), the requests of that length
    running at once (``max_concurrency``: whole requests, capped by the running-request limit), the KV cache over
    the context (``max_concurrency_x``, as vLLM's "Maximum concurrency" figure), the running-request limit, the KV
    bytes; None where SGLang does not get there."""
    from planner.engines.sglang.summary import build_summary  # noqa: PLC0415

    s = build_summary(plan)
    tokens, running, ctx = s.get("max_total_num_tokens"), s.get("max_running_requests"), s.get("context_len")
    conc = ratio = None
    if tokens is not None and ctx:
        ratio = round(tokens / ctx, 2)
        conc = tokens // ctx if running is None else min(running, tokens // ctx)
    return {"kv_tokens": tokens, "context_len": ctx, "concurrency_context": ctx, "max_concurrency": conc,
            "max_concurrency_x": ratio, "max_running_requests": running, "kv_bytes": s.get("available_kv_bytes"),
            "verdict": plan.verdict}


class SGLangFrontend:
    name = "sglang"
    title = "SGLang"

    @property
    def versions(self) -> tuple[str, ...]:
        from planner.engines.sglang.rules import RULES  # noqa: PLC0415

        return tuple(RULES)

    def default_version(self) -> tuple[str, str]:
        from planner.engines.sglang.rules import default_version  # noqa: PLC0415

        return default_version()

    def paste(self, tokens: list[str]) -> tuple[str | None, list[str], dict[str, str]] | None:
        from planner.paste import paste_for  # noqa: PLC0415

        return paste_for("sglang", tokens)

    def plan(self, request: PlanRequest) -> PlanOutcome:
        """``plan --gpu G --model M [flags]`` (the default search unless ``request.search`` is False)."""
        from planner.engines.sglang.pipeline.post_capture import search_skipped  # noqa: PLC0415
        from planner.engines.sglang.flag_hints import flag_error  # noqa: PLC0415
        from planner.engines.sglang.report import render_report, to_dict  # noqa: PLC0415
        from planner.schema import SCHEMA_VERSION  # noqa: PLC0415
        from planner.engines.sglang.search import Needs, launch_command, recommendation_dict, run_search, search_dict  # noqa: PLC0415

        unknown = sorted(set(request.measured) - set(MEASURED))
        if unknown:
            raise BadInput(f"SGLang takes no measured '{unknown[0]}' (it takes {', '.join(MEASURED)})")
        fb, fa = request.measured.get("free_before_gib"), request.measured.get("free_after_gib")
        flags, env = list(request.flags), dict(request.env)
        plan = make_sglang_plan(request.gpu, request.model, flags, env, fb, fa, request.version)
        bad = flag_error(plan, None)
        if bad is not None:
            raise bad
        res = None
        if request.search and not search_skipped(plan):
            needs = Needs(context=request.need_context, concurrency=request.need_concurrency or 1)
            res = run_search(plan.gpu, plan.model, plan.flags, plan.env, needs, fb, fa, top=1,
                             version=plan.sglang_version, prune=True)
        if flags or res is None:
            code = EXIT_FITS if plan.verdict == "fits" else EXIT_DOES_NOT_FIT
        else:
            code = EXIT_FITS if res.recommended is not None else EXIT_DOES_NOT_FIT
        d: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "engine": self.name, **to_dict(plan)}
        launch = launch_command(plan.model, plan.flags) if plan.verdict == "fits" else None
        if res is not None:
            rec = recommendation_dict(res, plan.model)
            d["recommendation"], d["search"] = rec, search_dict(res)
            launch = rec["command"] if rec is not None else launch
        text = render_report(plan, res, user_flags=bool(flags), verbose=False, compare=False)
        return PlanOutcome(engine=self.name, version=plan.sglang_version, verdict=plan.verdict, exit_code=code,
                           text=text, json=d, launch=launch, capacity=capacity(plan))


FRONTEND = SGLangFrontend()
