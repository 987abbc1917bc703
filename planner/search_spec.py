"""The search's speculative-decoding helpers (issue 14): the catalog's draft head when none is given, what a
DFLASH / DSPARK draft's D costs beside the recommendation, and the full re-plan that keeps a point whose whole
plan SGLang would reject (a check the vectorised scan does not run) out of the recommendations."""

from __future__ import annotations

from typing import Any

from planner.catalog.catalog import ResolvedModel
from planner.catalog.spec import ModelSpec
from planner.errors import BadInput
from planner.hardware.profiles import GpuProfile
from planner.plan import Plan, make_plan, without_flag


DRAFTED = {"DFLASH": "DFLASH", "DSPARK": "DSPARK", "EAGLE3": "EAGLE3"}  # algorithms that need a draft head


def default_draft_flags(algorithm: str, model: ResolvedModel, flags: list[str]) -> list[str]:
    """``--speculative X`` with no draft given: the catalog's draft head of that kind for this model (SGLang itself
    rejects DFLASH / DSPARK without ``--speculative-draft-model-path``); a one-line error naming the fix when the
    catalog has none. STANDALONE needs the user's choice of draft model; EAGLE / NEXTN / NGRAM need no path."""
    algo = algorithm.upper()
    if algo not in DRAFTED and algo != "STANDALONE":
        return []
    if any(f.startswith("--speculative-draft-model-path") or f.startswith("--speculative-draft-model")
           for f in flags):
        return []
    from planner.catalog.drafts import catalog_drafts  # noqa: PLC0415

    target = getattr(model, "catalog_id", None) or model.spec.name
    names = {str(target).lower(), str(model.spec.name).lower()}
    found = [e.id for e in catalog_drafts() if e.kind == DRAFTED.get(algo) and names & {t.lower() for t in e.targets}]
    if found:
        return ["--speculative-draft-model-path", found[0]]
    kinds = sorted(e.id for e in catalog_drafts() if e.kind == DRAFTED.get(algo))
    what = "a smaller model with the same vocabulary" if algo == "STANDALONE" else f"a {algo} head for this model"
    raise BadInput(f"--speculative {algo}: needs --speculative-draft-model-path ({what}); the catalog has none for "
                   f"{model.spec.name}" + (f" (its {algo} heads: {', '.join(kinds)})" if kinds else "")
                   + "; give a catalog name, a config.json, a checkpoint directory or a Hub id")


def d_tradeoff(plan: Plan, gpu: GpuProfile, model: ResolvedModel, flags: list[str], env: dict[str, str],
               free_before_gib: float | None, free_after_gib: float | None, draft: ModelSpec | None,
               version: str | None) -> list[str]:
    """DFLASH / DSPARK: the recommended launch re-planned with a smaller draft block, so the report says what
    the draft's D costs (each running request holds mamba intermediates for D draft tokens and D verify slots);
    the search keeps the draft's own D (it was trained for it)."""
    a = plan.args
    if a is None or a.speculative_algorithm not in ("DFLASH", "DSPARK") or _capacity(plan) is None:
        return []
    d0 = int(a.speculative_num_draft_tokens or 0)
    flag = "--speculative-dflash-block-size" if a.speculative_algorithm == "DFLASH" else "--speculative-dspark-block-size"
    out = [f"D = {d0} (recommended: the draft's own block): {_capacity(plan)}"]
    for d in sorted({max(2, d0 // 2), max(2, d0 // 4)}, reverse=True):
        if d >= d0:
            continue
        block = d if a.speculative_algorithm == "DFLASH" else d - 1  # DSPARK: D = gamma + 1
        try:
            p = make_plan(gpu, model, [*without_flag(flags, "--speculative-num-draft-tokens"), flag, str(block)], env,
                          free_before_gib, free_after_gib, draft=draft, version=version)
        except BadInput:
            continue
        cap = _capacity(p)
        if cap is None:
            out.append(f"D = {d} ({flag} {block}): {p.verdict} ({p.error_type}: {p.error_message})")
        else:
            out.append(f"D = {d} ({flag} {block}): {cap} (the draft was trained for D = {d0}: acceptance may drop)")
    return out


def _drop_rejected(ranked: list[Any], gpu: GpuProfile, model: ResolvedModel, env: dict[str, str],
                   free_before_gib: float | None, free_after_gib: float | None, draft: ModelSpec | None,
                   version: str | None) -> tuple[list[Any], Plan | None]:
    """The ranked points whose whole plan SGLang's code would not reject. The vectorised scan sizes the pools;
    a check the scan does not run (a draft's ModelConfig refusing the target's context length, a DFLASH draft's
    target layers) can still reject a point, so the best points are re-planned in full, in rank order, and the
    rejected ones dropped (at most 64 plans; the first accepted one is the recommendation)."""
    kept: list[Any] = []
    first: Plan | None = None
    for i, c in enumerate(ranked):
        if i >= 64 and first is None:
            break
        if first is not None and len(kept) >= 64:
            kept.append(c)
            continue
        p = make_plan(gpu, model, c.flags, env, free_before_gib, free_after_gib, draft=draft, version=version)
        if p.verdict == "rejected":
            continue
        kept.append(c)
        first = first or p
    return kept, first


def _algo_in(flags: list[str]) -> str:
    for i, f in enumerate(flags):
        if f == "--speculative-algorithm" and i + 1 < len(flags):
            return flags[i + 1].upper()
        if f.startswith("--speculative-algorithm="):
            return f.split("=", 1)[1].upper()
    return ""


def _capacity(plan: Plan) -> str | None:
    p = plan.profile
    if p is None or p.max_running_requests is None or p.max_total_num_tokens is None:
        return None
    return f"{p.max_running_requests} running requests, {p.max_total_num_tokens:,} KV tokens"
