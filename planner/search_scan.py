"""The search's scan over the categorical combinations: exhaustive, or branch and bound (bounds per grid line,
line_bound / bound_all; the combinations that cannot reach the k-th best point skipped and kept for
complete_scan); the caches shared by searches on the same GPU, model, release and memory (shared_for)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from planner.catalog.catalog import ResolvedModel
from planner.catalog.spec import ModelSpec
from planner.engines.sglang.pipeline.pools import geometries
from planner.engines.sglang.pipeline.server_args import Rejected
from planner.plan import Plan
from planner.search_eval import (
    FlagBase,
    Prepared,
    _chain,
    _chains_at_once,
    _inputs,
    _static_needs,
    default_range,
    evaluate_points,
    prepare_combo,
    remember,
    run_values,
)
from planner.search_space import (
    MIB,
    RATIO_VALUES,
    Candidate,
    Needs,
    _dedupe_key,
    _mildness,
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
    cache: dict = field(default_factory=dict)  # what combinations share (_chain, _graph_need; shared_for)


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


def bound_lines(grid: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The grid's lines (ratio, mamba size and running requests fixed, mem_fraction_static varies), in the grid's
    order: it is built mem_fraction_static outermost (:func:`_numeric_grid`), so its first points are the lines."""
    mfs = grid["mfs"]
    n_lines = int(np.isnan(mfs).sum()) if np.isnan(mfs[0]) else int((mfs == mfs[0]).sum())
    lines = {k: v[:n_lines] for k, v in grid.items() if k != "mfs"}
    lines["_tiled"] = {k: np.tile(v, 2) for k, v in lines.items()}  # twice: a part's highest and lowest fraction
    return lines


def bound_parts(grid: dict[str, np.ndarray], prep: Prepared) -> list[tuple[float, float, int]]:
    """The parts of a combination's points, each (highest, lowest mem_fraction_static, flags it adds): the
    explicit fractions (one flag, --mem-fraction-static) and, where the grid has unset points, SGLang's default
    over the running-request values (:func:`default_range`, no flag). Along a line the fraction only moves the
    memory the chain shares out: KV tokens, running requests, mamba slots, the longest request and the
    concurrency only grow with it (``test_search_pruning`` checks it), so a part's line at its highest fraction
    bounds them from above and at its lowest from below."""
    mfs = grid["mfs"]
    explicit = mfs[~np.isnan(mfs)]
    parts = [(float(explicit.max()), float(explicit.min()), 1)] if explicit.size else []
    if np.isnan(mfs).any():
        lo, hi = default_range(prep)
        parts.append((hi, lo, 0))
    return parts


def line_bound(plan0: Plan, model: ResolvedModel, prep: Prepared, grid: dict[str, np.ndarray],
               lines: dict[str, np.ndarray], draft: ModelSpec | None, needs: Needs, need_ctx: int,
               cache: dict | None = None, chosen: list[str] | None = None) -> tuple[bool, tuple[int, int, int]]:
    """(whether some point of a combination can meet the needs, the largest value the first three parts of the
    rank key can take at its feasible points): concurrency, KV in 4096-token buckets (for kv-tokens the other way
    round: the KV tokens the running requests can fill, then concurrency), and the mildness of the point's flags
    (``chosen``, the combination's, plus the flags the line and the part add, which are known: point_flags).

    Per line and part (:func:`bound_parts`), the values at the highest fraction, each capped by the memory a
    feasible point's pools must leave: they fit in the GPU's free bytes after the weights less the post-pool
    needs x (1 + margin) and the margin bytes, the needs are at least the ones that do not depend on the point
    (the CUDA graphs' share is >= 0), and the pools at least those with the part's fewest running requests and
    mamba slots and no KV tokens, plus the KV pools' bytes per token x the tokens (every pool tensor grows with
    N, R and M). So a feasible point's KV tokens are at most (room - those pools) / bytes per token. The headroom
    objective ranks by what shrinks with the fraction: its caller prunes there by the needs only."""
    args = prep.args
    parts = bound_parts(grid, prep)
    n_lines = lines["run"].size
    tiled = lines["_tiled"]
    outs = []
    for hi, lo, _ in parts:  # one chain per part: the explicit part's is the same for most combinations (cache)
        pts = dict(tiled, mfs=np.repeat(np.array([hi, lo], dtype=np.float64), n_lines))
        inp, out, _ = _chain(plan0, model, prep, pts, draft, cache, ("bound", id(lines), hi, lo))
        outs.append(out)

    def rows(key: str, half: int) -> np.ndarray:  # (parts, lines): at the parts' highest (0) or lowest (1) fraction
        if len(outs) == 1:
            return outs[0][key].reshape(2, n_lines)[half:half + 1]
        return np.stack([o[key].reshape(2, n_lines)[half] for o in outs])

    n_ub, r_ub, m_lb, r_lb = rows("n", 0), rows("r", 0), rows("m", 1), rows("r_pool", 1)
    ctx = max(need_ctx, 1)
    conc_ub = np.minimum(r_ub, n_ub // ctx)
    longest_ub = np.minimum(args.context_len - 1, n_ub - 1)
    fill_ub = np.minimum(n_ub, np.maximum(r_ub, 0) * ctx)
    cap = _kv_cap(plan0, model, prep, inp, draft, needs, np.maximum(r_lb, 0), np.maximum(m_lb, 0))
    if cap is not None:
        n_ub = np.minimum(n_ub, cap)
        conc_ub = np.minimum(conc_ub, cap // ctx)
        longest_ub = np.minimum(longest_ub, cap - 1)
        fill_ub = np.minimum(fill_ub, cap)
    meets = (longest_ub >= need_ctx) & (conc_ub >= needs.concurrency)
    if not meets.any():
        return False, (0, 0, 0)
    ratio, msize, run = lines["ratio"], lines["msize"], lines["run"]
    line_flags = ((~np.isnan(ratio) & (ratio != RATIO_VALUES[0])).astype(np.int64) + (msize >= 0) + (run >= 0))
    mild = _mildness(chosen or []) - line_flags[None, :] - np.array([f for _, _, f in parts])[:, None]
    if needs.objective == "kv-tokens":
        first, second = fill_ub // 4096, conc_ub
    else:
        first, second = conc_ub, n_ub // 4096
    first, second, mild = first[meets], second[meets], np.broadcast_to(mild, meets.shape)[meets]
    i = np.lexsort((mild, second, first))[-1]
    return True, (int(first[i]), int(second[i]), int(mild[i]))


def bound_all(plan0: Plan, model: ResolvedModel, items: list[tuple[list[str], Prepared]], grid: dict[str, np.ndarray],
              lines: dict[str, np.ndarray], draft: ModelSpec | None, needs: Needs, need_ctx: int,
              cache: dict | None = None) -> list[tuple[bool, tuple[int, int, int]]]:
    """:func:`line_bound` for many combinations ``(chosen, prepared)`` at once: the chains one by one (cached),
    the bounds as one array computation over every (combination, part, line)."""
    key = ("bound_all", id(lines), tuple(id(prep) for _, prep in items), needs.margin, needs.margin_bytes)
    found = None if cache is None else cache.get(key)
    preps = [prep for _, prep in items]
    if found is None or found[0] is not lines or any(a is not b for a, b in zip(found[1], preps)):
        found = (lines, preps, _bound_arrays(plan0, model, items, grid, lines, draft, needs, cache))
        if cache is not None:  # a re-search with other needs (a sweep, the TUI) bounds the same combinations;
            # the preparations (each its flags, so its mildness) and lines kept: their ids stay theirs
            remember(cache, "_bounds", _BOUNDS_KEPT, key, found)
    if found[2] is None:
        return [(False, (0, 0, 0))] * len(items)
    n_ub, r_ub, m_lb, owner, mild0, ctx_len, capped, room, per_tok, state_b = found[2]
    col = (lambda v: np.asarray(v, dtype=np.int64)[:, None])
    ctx = max(need_ctx, 1)
    conc_ub = np.minimum(r_ub, n_ub // ctx)
    longest_ub = np.minimum(col(ctx_len) - 1, n_ub - 1)
    fill_ub = np.minimum(n_ub, np.maximum(r_ub, 0) * ctx)
    cap = np.where(capped[:, None], (col(room) - (m_lb + 1) * col(state_b)) // col(per_tok) + 1, np.iinfo(np.int64).max // 4)
    n_ub = np.minimum(n_ub, cap)
    conc_ub = np.minimum(conc_ub, cap // ctx)
    longest_ub = np.minimum(longest_ub, cap - 1)
    fill_ub = np.minimum(fill_ub, cap)
    meets = (longest_ub >= need_ctx) & (conc_ub >= needs.concurrency)
    ratio, msize, run = lines["ratio"], lines["msize"], lines["run"]
    line_flags = ((~np.isnan(ratio) & (ratio != RATIO_VALUES[0])).astype(np.int64) + (msize >= 0) + (run >= 0))
    mild = col(mild0) - line_flags[None, :]
    first, second = (fill_ub // 4096, conc_ub) if needs.objective == "kv-tokens" else (conc_ub, n_ub // 4096)
    # the three parts in one integer, ordered as the tuples are: 21 bits each (checked), mild offset to >= 0
    first, second, mild = np.maximum(first, 0), np.maximum(second, 0), mild + (1 << 20)
    if first.max() >= 1 << 21 or second.max() >= 1 << 21 or mild.min() < 0 or mild.max() >= 1 << 21:
        return [line_bound(plan0, model, prep, grid, lines, draft, needs, need_ctx, cache, chosen)
                for chosen, prep in items]
    code = np.where(meets, (first << 42) | (second << 21) | mild, -1).max(axis=1)
    best = np.full(len(items), -1, dtype=np.int64)
    np.maximum.at(best, np.array(owner), code)
    mask = (1 << 21) - 1
    return [(False, (0, 0, 0)) if b < 0 else (True, (int(b >> 42), int((b >> 21) & mask), int(b & mask) - (1 << 20)))
            for b in best.tolist()]


_BOUNDS_KEPT = 8  # bound_all's arrays kept per search context (each a few MB: rows x lines x 3 int64 arrays)


def _bound_arrays(plan0: Plan, model: ResolvedModel, items: list[tuple[list[str], Prepared]],
                  grid: dict[str, np.ndarray], lines: dict[str, np.ndarray], draft: ModelSpec | None, needs: Needs,
                  cache: dict | None) -> tuple | None:
    """What :func:`bound_all` computes from the combinations alone (the needs enter only through the margin, in
    the room): per (combination, part) row, the KV tokens and running requests at the highest fraction and the
    mamba slots at the lowest, per line; the row's combination, mildness, context length and cap terms. None
    when no combination has a part."""
    n_lines = lines["run"].size
    tiled = lines["_tiled"]
    hi_n, hi_r, lo_m, owner, mild0, ctx_len, room, per_tok, state_b, capped = [], [], [], [], [], [], [], [], [], []
    parts_of = [bound_parts(grid, prep) for _, prep in items]
    if cache is not None:  # every bound's chain in a few calls (size_chain's per-call cost dominates at this size)
        jobs = []
        for (chosen, prep), parts in zip(items, parts_of):
            for hi, lo, _ in parts:
                jobs.append((prep, dict(tiled, mfs=np.repeat(np.array([hi, lo], dtype=np.float64), n_lines)),
                             ("bound", id(lines), hi, lo)))
        _chains_at_once(plan0, model, jobs, draft, cache)
    for j, ((chosen, prep), parts) in enumerate(zip(items, parts_of)):
        args = prep.args
        cap = _cap_terms(plan0, model, prep, draft, needs)
        for hi, lo, flag in parts:
            pts = dict(tiled, mfs=np.repeat(np.array([hi, lo], dtype=np.float64), n_lines))
            _, out, _ = _chain(plan0, model, prep, pts, draft, cache, ("bound", id(lines), hi, lo))
            hi_n.append(out["n"][:n_lines])
            hi_r.append(out["r"][:n_lines])
            lo_m.append(out["m"][n_lines:])
            owner.append(j)
            mild0.append(_mildness(chosen) - flag)
            ctx_len.append(args.context_len)
            capped.append(cap is not None)
            room.append(cap[0] if cap else 0)
            per_tok.append(cap[1] if cap else 1)
            state_b.append(cap[2] if cap else 0)
    if not owner:
        return None
    col = (lambda v: np.array(v, dtype=np.int64))
    return (np.stack(hi_n), np.stack(hi_r), np.maximum(np.stack(lo_m), 0), np.array(owner), col(mild0), col(ctx_len),
            np.array(capped, dtype=bool), col(room), col(per_tok), col(state_b))


def _cap_terms(plan0: Plan, model: ResolvedModel, prep: Prepared, draft: ModelSpec | None,
               needs: Needs) -> tuple[int, int, int] | None:
    """(room + 1 MiB, KV bytes per token, mamba-state bytes per slot) of :func:`_kv_cap`, or None (no cap)."""
    args, state = prep.args, prep.state
    if (args.unified_memory and state is not None) or needs.margin < 0 or needs.margin_bytes < 0:
        return None
    if prep.pools is None:
        prep.pools = geometries(args, model.spec, state, draft)
    if prep.static_needs is None:
        if prep.inputs is None:
            prep.inputs = _inputs(plan0, model, prep, draft)
        prep.static_needs = _static_needs(plan0, model, prep, prep.inputs[0], draft)
    geo, dgeo = prep.pools
    per_token = geo.token_bytes + (dgeo.token_bytes if dgeo is not None else 0)
    if per_token <= 0:
        return None
    room = plan0.free_after_bytes - prep.static_needs * (1 + needs.margin) - needs.margin_bytes
    # + 1 MiB: float rounding in the feasibility test can only loosen the cap, never tighten it
    return int(room) + MIB, per_token, 0 if state is None else state.conv_bytes + state.ssm_bytes


def _kv_cap(plan0: Plan, model: ResolvedModel, prep: Prepared, inp: dict, draft: ModelSpec | None, needs: Needs,
            r_lb: np.ndarray, m_lb: np.ndarray) -> np.ndarray | None:
    """Per line, the most KV tokens a feasible point can hold (:func:`line_bound`), or None where the pools are
    not a sum of tensors that grow with N (the unified KV + mamba buffer) or the margin is negative. The pools
    are bounded below by the KV pools' bytes per token x N (the K and V tensors, (N + page) rows) and the mamba
    states (M + 1 slots), two of pool_bytes()'s tensors (every other one is >= 0), without evaluating the rest."""
    terms = _cap_terms(plan0, model, prep, draft, needs)
    if terms is None:
        return None
    room, per_token, state_bytes = terms
    return (room - (m_lb + 1) * state_bytes) // per_token + 1


def bound_grid(grid: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The points that bound the rest: on every line of the grid (ratio, mamba size and running requests fixed)
    the largest explicit mem_fraction_static and the unset one (SGLang's default, which can be larger). KV
    tokens, running requests, the longest request and the concurrency only grow with the fraction (more memory
    for the pools: the property ``test_search`` checks), so a line's values are at most these points'."""
    mfs = grid["mfs"]
    explicit = mfs[~np.isnan(mfs)]
    keep = np.isnan(mfs) if explicit.size == 0 else (np.isnan(mfs) | (mfs == explicit.max()))
    return {k: v[keep] for k, v in grid.items()}



def closest_bounds(plan0: Plan, model: ResolvedModel, items: list[tuple[list[str], Prepared]],
                   grid: dict[str, np.ndarray], lines: dict[str, np.ndarray], draft: ModelSpec | None,
                   need_ctx: int, cache: dict) -> list[tuple[int, int, int]]:
    """For each combination, the largest (concurrency, longest request, bytes left) any of its points can have,
    what the closest point is ranked by (None: no point of it is ok, so it has no closest candidate): per line and part (:func:`bound_parts`), the concurrency and longest
    request at the highest fraction, and the bytes left at most the free bytes after the weights less the
    post-pool needs that do not depend on the point, less the KV and mamba-state tensors at the lowest fraction
    (:func:`_kv_cap`'s lower bound on the pools; N and M only grow with the fraction)."""
    n_lines = lines["run"].size
    tiled = lines["_tiled"]
    parts_of = [bound_parts(grid, prep) for _, prep in items]
    jobs = [(prep, dict(tiled, mfs=np.repeat(np.array([hi, lo], dtype=np.float64), n_lines)), ("bound", id(lines), hi, lo))
            for (_, prep), parts in zip(items, parts_of) for hi, lo, _ in parts]
    _chains_at_once(plan0, model, jobs, draft, cache)
    ctx = max(need_ctx, 1)
    out = []
    for (_, prep), parts in zip(items, parts_of):
        terms = _cap_terms(plan0, model, prep, draft, Needs())  # finds the static needs; the tensors' sizes
        best = (np.iinfo(np.int64).min,) * 3
        for hi, lo, _ in parts:
            pts = dict(tiled, mfs=np.repeat(np.array([hi, lo], dtype=np.float64), n_lines))
            _, o, _ = _chain(plan0, model, prep, pts, draft, cache, ("bound", id(lines), hi, lo))
            n_hi, r_hi = o["n"][:n_lines], o["r"][:n_lines]
            n_lo, m_lo = np.maximum(o["n"][n_lines:], 0), np.maximum(o["m"][n_lines:], 0)
            if prep.static_needs is None:  # no structure to lean on (unified buffer): no bound on what is left
                left_ub = int(np.iinfo(np.int64).max)
            else:
                pools = 0 if terms is None else terms[1] * n_lo + (m_lo + 1) * terms[2]
                left_ub = int(np.max(plan0.free_after_bytes - prep.static_needs - pools))
            conc_ub = int(np.minimum(r_hi, n_hi // ctx).max())
            longest_ub = int(np.minimum(prep.args.context_len - 1, n_hi - 1).max())
            if plan0.free_after_bytes > 0 and (n_hi > 0).any() and (r_hi > 0).any() and longest_ub - 5 > 0:
                best = max(best, (conc_ub, longest_ub, left_ub))  # else no point of the part is ok (evaluate_points)
        out.append(None if best[0] == np.iinfo(np.int64).min else best)
    return out


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
    bounds = closest_bounds(ctx.plan0, ctx.model, [(chosen, prep) for _, chosen, prep in sc.pending], ctx.grid,
                            lines, ctx.draft, ctx.need_ctx, ctx.cache)
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
