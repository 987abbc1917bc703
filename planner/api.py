"""The public API, for notebooks and scripts: names in, plans out (the CLI uses the same core).

    import planner
    p = planner.plan("rtxpro6000", "qwen3.6-27b", "--speculative-algorithm EAGLE --max-running-requests 8")
    p.verdict, p.profile.max_total_num_tokens, planner.summary(p)["pool_total_bytes"]
"""

from __future__ import annotations

import shlex
from typing import Any, Sequence

from planner.catalog.catalog import resolve_model
from planner.hardware.profiles import find_profile
from planner.engines.sglang.plan import Plan, make_plan
from planner.engines.sglang.report import capacity, render_text
from planner.engines.sglang.search import Needs, SearchResult, run_search
from planner.engines.sglang.summary import build_summary


def _flags(flags: str | Sequence[str]) -> list[str]:
    return shlex.split(flags) if isinstance(flags, str) else [str(f) for f in flags]


def plan(gpu: str, model: str, flags: str | Sequence[str] = (), env: dict[str, str] | None = None,
         free_before_gib: float | None = None, free_after_gib: float | None = None,
         sglang_version: str | None = None) -> Plan:
    """One configuration through SGLang's rules (a release's, or the default): pools, capacity, verdict."""
    return make_plan(find_profile(gpu), resolve_model(model), _flags(flags), env, free_before_gib, free_after_gib,
                     version=sglang_version)


def search(gpu: str, model: str, flags: str | Sequence[str] = (), env: dict[str, str] | None = None,
           top: int = 5, sglang_version: str | None = None, **needs: Any) -> SearchResult:
    """The feasible configurations, best first (``needs``: the fields of :class:`planner.engines.sglang.search.Needs`)."""
    return run_search(find_profile(gpu), resolve_model(model), _flags(flags), env, Needs(**needs), top=top,
                      version=sglang_version)


def check_log(path: str, gpu: str, model: str | None = None, flags: str | Sequence[str] = (),
              launched_at: str | None = None, env: dict[str, str] | None = None, sglang_version: str | None = None):
    """A boot log against the plan (see :mod:`planner.engines.sglang.check`): .stale, .rows (predicted vs actual), .plan."""
    import datetime as dt  # noqa: PLC0415

    from planner.engines.sglang.check import check  # noqa: PLC0415
    from planner.logs import parse_file  # noqa: PLC0415

    when = dt.datetime.fromisoformat(launched_at) if launched_at else None
    return check(parse_file(path), find_profile(gpu), model, _flags(flags), when, env, sglang_version)


def summary(p: Plan) -> dict[str, Any]:
    """The oracle-schema summary of a plan."""
    return build_summary(p)


__all__ = ["plan", "search", "summary", "check_log", "capacity", "render_text", "Plan", "SearchResult", "Needs"]
