"""The search's scan over the categorical combinations: exhaustive, or branch and bound (the bounds per grid
line: planner.engines.sglang.search_bound; the combinations that cannot reach the k-th best point skipped and kept for
complete_scan); the caches shared by searches on the same GPU, model, release and memory (shared_for)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from planner.catalog.catalog import ResolvedModel
from planner.catalog.spec import ModelSpec
from planner.engines.sglang.pipeline.server_args import Rejected
from planner.engines.sglang.plan import Plan
from planner.engines.sglang.search_bound import bound_all, bound_lines, closest_bounds
from planner.engines.sglang.search_eval import FlagBase, Prepared, evaluate_points, prepare_combo, run_values
from planner.engines.sglang.search_space import (
    Candidate,
    Needs,
    _dedupe_key,
    _rank_key,
    _score,
    point_flags,
    top_points,
)


@dataclass
class _Combo:
    """One categorical combination's share of the scan: its configurations, the feasible ones, and its best
    points (rank key, Candidate) in :func:`top_points` order."""

    index: int  # its place in the product of the axes (the exhaustive scan's order)
    chosen: list[str]
    evaluated: int = 0
    feasible: int = 0
    points: list = field(default_factory=list)


@dataclass
class _Scan:
    evaluated: int = 0  # configurations evaluated (a pruned combination's are not)
    feasible: int = 0
    pruned: int = 0  # combinations skipped
    space: int = 0  # configurations in the whole space (every combination x the numeric grid)
    refused: int = 0  # configurations of the combinations SGLang or the planner refuses
    cands: list = field(default_factory=list)  # (rank key, Candidate) of feasible points
    closest: tuple | None = None
    no_radix: tuple | None = None
    best: tuple | None = None  # the best rank key in cands
    pruned_ub: tuple | None = None  # the largest bound (rank-key prefix) of a combination pruned by its bound
    pruned_nr_ub: tuple | None = None  # the same for radix-off combinations (they compete for no_radix only)
    pending: list = field(default_factory=list)  # the pruned combinations: (index, chosen, prepared)
    done: list = field(default_factory=list)  # the evaluated combinations (_Combo)
    ctx: Any = None  # the _ScanContext it ran in (complete_scan goes on in it)
    skipped_radix_off: int = 0  # radix-off combinations left out for a caller that reads only the ranking


def _scan(plan0: Plan, model: ResolvedModel, fixed_flags: list[str], axes, grid: dict[str, np.ndarray],
          draft: ModelSpec | None, needs: Needs, need_ctx: int, top: int, prune: bool, k: int = 2,
          radix_off_too: bool = True) -> _Scan:
    """Every categorical combination (the product of ``axes``) over the numeric grid; with ``prune``, branch
    and bound: the combinations are bounded first (:func:`combo_bound`), evaluated best bound first, and those
    whose bound cannot reach the ``k``-th best point so far (or, radix off when not allowed, the best
    radix-off point) are skipped and kept in ``pending`` (:func:`complete_scan` evaluates them when the final
    ranking cannot be proved equal to the exhaustive one)."""
    shared = shared_for(plan0, model, draft)
    grid = shared.grids.setdefault(_grid_key(grid), grid)  # the same arrays as an earlier search's: cache keys
    values = run_values(grid)
    sc = _Scan()
    ctx = _ScanContext(plan0, model, fixed_flags, grid, draft, needs, need_ctx, top, shared.cache)
    prepared = []
    base = None
    for index, choice in enumerate(itertools.product(*[opts for _, opts in axes])):
        chosen = [t for part in choice for t in part]
        if prune and not radix_off_too and _radix_off_only(chosen, needs):
            sc.space += grid["mfs"].size  # never ranks (radix off, not allowed): the caller reads the ranking only
            sc.skipped_radix_off += 1
            continue
        key = (tuple(fixed_flags + chosen), values.tobytes())
        prep = shared.preps.get(key)
        if prep is None:
            base = base or FlagBase(plan0.rules.flags, model.spec.name, fixed_flags)
            prep = shared.preps[key] = prepare_combo(plan0, model, fixed_flags + chosen, base, values, draft=draft,
                                                     lazy=True)
        sc.space += grid["mfs"].size
        if isinstance(prep, Rejected):
            sc.refused += grid["mfs"].size  # resolved and refused: every point of it evaluated
            continue
        prepared.append((index, chosen, prep))
    if not prune:
        sc.done = [_evaluate(ctx, i, chosen, prep) for i, chosen, prep in prepared]
    else:
        _branch_and_bound(sc, ctx, prepared, k)
    _merge(sc, needs)
    sc.ctx = ctx
    return sc


@dataclass
class _Shared:
    """What searches on the same GPU, model, draft, release, environment and free memory share: the prepared
    combinations (by their flags and the grid's running-request values), the grids (by their values) and the
    chain cache (:func:`_chain`). ``keep`` holds the objects whose ids are part of the key, so the ids stay
    theirs. A relaxation trial, a TUI re-search or a batch sweep over needs reuses them."""

    keep: tuple
    preps: dict = field(default_factory=dict)
    grids: dict = field(default_factory=dict)
    cache: dict = field(default_factory=dict)


_SHARED: dict = {}


_SHARED_MAX = 6  # contexts kept (each holds a search's chains: a few MB to a few tens); a nothing-fits search
# and its relaxation trials use five (the search, TP 2 / 4 / 8, the larger GPU), so a sweep's next line finds them


def shared_for(plan0: Plan, model: ResolvedModel, draft: ModelSpec | None) -> _Shared:
    key = (id(plan0.gpu), id(model), id(draft), plan0.rules.version, tuple(sorted(plan0.env.items())),
           plan0.free_before_bytes, plan0.free_after_bytes)
    found = _SHARED.pop(key, None)
    if found is None:
        found = _Shared(keep=(plan0.gpu, model, draft))
        while len(_SHARED) >= _SHARED_MAX:
            _SHARED.pop(next(iter(_SHARED)))
    _SHARED[key] = found  # most recent last
    return found


def _grid_key(grid: dict[str, np.ndarray]) -> tuple:
    return tuple((k, v.dtype.str, v.tobytes()) for k, v in sorted(grid.items()))


@dataclass
class _ScanContext:
    plan0: Plan
    model: ResolvedModel
    fixed_flags: list[str]
    grid: dict[str, np.ndarray]
    draft: ModelSpec | None
    needs: Needs
    need_ctx: int
    top: int
    cache: dict = field(default_factory=dict)  # what combinations share (_chain, the graph tables; shared_for)


def _evaluate(ctx: _ScanContext, index: int, chosen: list[str], prep: Prepared) -> _Combo:
    o = evaluate_points(ctx.plan0, ctx.model, prep, ctx.grid, ctx.draft, ctx.needs, ctx.need_ctx, ctx.cache)
    rec = _Combo(index, chosen, evaluated=ctx.grid["mfs"].size)
    rec.feasible, rec.points = _combo_points(o, ctx.grid, ctx.fixed_flags, chosen, ctx.needs, ctx.need_ctx, ctx.top)
    return rec


def _radix_off_only(chosen: list[str], needs: Needs) -> bool:
    """A combination whose feasible points compete only for the radix-off alternative (no_radix_best)."""
    return not needs.allow_no_radix and "--disable-radix-cache" in chosen


def _branch_and_bound(sc: _Scan, ctx: _ScanContext, prepared: list, k: int) -> None:
    needs = ctx.needs
    lines = ctx.cache.get(("lines", id(ctx.grid)))  # the grid is kept alive by shared_for: its id is its own
    if lines is None:
        lines = ctx.cache[("lines", id(ctx.grid))] = bound_lines(ctx.grid)  # alive with the cache: id keys chains
    bounded = []
    found = bound_all(ctx.plan0, ctx.model, [(chosen, prep) for _, chosen, prep in prepared], ctx.grid, lines,
                      ctx.draft, needs, ctx.need_ctx, ctx.cache)
    for (index, chosen, prep), (meets, ub) in zip(prepared, found):
        if not meets:  # no point meets the needs: nothing feasible in it (it could only be the closest)
            sc.pending.append((index, chosen, prep))
            continue
        bounded.append((ub, index, chosen, prep))
    bounded.sort(key=lambda b: (tuple(-x for x in b[0]), b[1]))  # best bound first, then the product's order
    kept: list = []  # (rank key, dedupe key) of the feasible points that can be ranked
    nr_best: tuple | None = None
    for ub, index, chosen, prep in bounded:
        if needs.objective != "headroom":
            if _radix_off_only(chosen, needs):
                if nr_best is not None and ub < nr_best[:3]:
                    sc.pending.append((index, chosen, prep))
                    sc.pruned_nr_ub = max(sc.pruned_nr_ub or ub, ub)
                    continue
            else:
                threshold = _kth_best(kept, k)
                if threshold is not None and ub < threshold[:3]:
                    sc.pending.append((index, chosen, prep))
                    sc.pruned_ub = max(sc.pruned_ub or ub, ub)
                    continue
        rec = _evaluate(ctx, index, chosen, prep)
        sc.done.append(rec)
        for key, c in rec.points:
            if not c.feasible:
                continue
            if _radix_off_only(c.chosen, needs):
                nr_best = key if nr_best is None or key > nr_best else nr_best
            else:
                kept.append((key, _dedupe_key(c)))
    sc.pruned = len(sc.pending) + sc.skipped_radix_off


def _kth_best(kept: list, k: int) -> tuple | None:
    """The rank key of the k-th best point with a distinct dedupe key (what the k-th ranked point is at least)."""
    seen: set = set()
    for key, dk in sorted(kept, key=lambda x: x[0], reverse=True):
        if dk not in seen:
            seen.add(dk)
            if len(seen) == k:
                return key
    return None


def complete_scan(sc: _Scan, needs: Needs) -> None:
    """Evaluate the combinations the branch and bound skipped: the scan is then the exhaustive one."""
    ctx = sc.ctx
    sc.done += [_evaluate(ctx, i, chosen, prep) for i, chosen, prep in sc.pending]
    sc.pending, sc.pruned, sc.pruned_ub, sc.pruned_nr_ub = [], sc.skipped_radix_off, None, None
    _merge(sc, needs)


def _merge(sc: _Scan, needs: Needs) -> None:
    """The evaluated combinations' points into the scan, in the product's order (the exhaustive scan's, so that
    equal keys keep its order): feasible ones ranked, radix-off ones apart when not allowed, else the closest."""
    sc.evaluated = sc.refused + sum(r.evaluated for r in sc.done)
    sc.feasible = sum(r.feasible for r in sc.done)
    sc.cands, sc.closest, sc.no_radix, sc.best = [], None, None, None
    for rec in sorted(sc.done, key=lambda r: r.index):
        for key, c in rec.points:
            if c.feasible and _radix_off_only(c.chosen, needs):
                if sc.no_radix is None or key > sc.no_radix[0]:
                    sc.no_radix = (key, c)
                continue
            if c.feasible:
                sc.cands.append((key, c))
                if sc.best is None or key > sc.best:
                    sc.best = key
            elif sc.closest is None or (c.concurrency, c.longest, c.headroom_left) > (
                    sc.closest[1].concurrency, sc.closest[1].longest, sc.closest[1].headroom_left):
                sc.closest = (key, c)


def _combo_points(o: dict[str, np.ndarray], grid: dict[str, np.ndarray], fixed_flags: list[str], chosen: list[str],
                  needs: Needs, need_ctx: int, top: int) -> tuple[int, list]:
    """A combination's feasible count and best points: feasible ones by score, else the closest to feasible."""
    feas = o["feasible"]
    n_feasible = int(feas.sum())
    idx = np.flatnonzero(feas) if n_feasible else np.flatnonzero(o["ok"])
    if idx.size == 0:
        return n_feasible, []
    score = _score(o, needs.objective, need_ctx)
    points = []
    for i in top_points(idx, score, max(top, 3)):
        pf = point_flags(chosen, grid["mfs"][i], grid["ratio"][i], grid["msize"][i], grid["run"][i])
        c = Candidate(flags=fixed_flags + pf, chosen=pf, concurrency=int(o["conc"][i]), kv_tokens=int(o["n"][i]),
                      running=int(o["r"][i]), longest=int(o["longest"][i]), headroom_left=int(o["left"][i]),
                      feasible=bool(feas[i]))
        points.append((_rank_key(c, needs.objective, pf, need_ctx), c))
    return n_feasible, points


def complete_closest(sc: _Scan, needs: Needs) -> None:
    """Nothing ranked: find the closest point (:func:`_merge`) without evaluating every skipped combination:
    the skipped ones are evaluated best closest-bound first (:func:`closest_bounds`) until the bound of the next
    falls below the closest point found (a tie is evaluated: the exhaustive scan keeps the first in product
    order). Only for skipped combinations that cannot rank (no point meets the needs, or radix off when not
    allowed, whose best is proved apart)."""
    ctx = sc.ctx
    lines = ctx.cache.get(("lines", id(ctx.grid)))
    if lines is None:
        lines = ctx.cache[("lines", id(ctx.grid))] = bound_lines(ctx.grid)
    bounds = closest_bounds(ctx.plan0, ctx.model, [(chosen, prep) for _, chosen, prep in sc.pending], lines,
                            ctx.draft, ctx.need_ctx, ctx.cache)
    order = sorted(zip(bounds, sc.pending), key=lambda bp: (bp[0] is None, tuple(-x for x in bp[0] or ()), bp[1][0]))
    current = None if sc.closest is None else _closeness(sc.closest[1])
    left = []
    for bound, (index, chosen, prep) in order:
        if bound is None or (current is not None and bound < current):
            left.append((index, chosen, prep))
            continue
        rec = _evaluate(ctx, index, chosen, prep)
        sc.done.append(rec)
        for _, c in rec.points:
            if not c.feasible:
                current = _closeness(c) if current is None else max(current, _closeness(c))
    sc.pending = left
    sc.pruned = len(left) + sc.skipped_radix_off
    _merge(sc, needs)


def _closeness(c: Candidate) -> tuple[int, int, int]:
    """What the closest point is ranked by (:func:`_merge`)."""
    return (c.concurrency, c.longest, c.headroom_left)
