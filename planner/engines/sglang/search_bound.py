"""The branch and bound's bounds (planner.engines.sglang.search_scan runs it): per categorical combination and grid line, the
most a feasible point can reach, from the sizing chain at a few mem_fraction_static values instead of the whole
grid (bound_all for many combinations at once, line_bound for one; closest_bounds when nothing ranks).

A line is the grid's points with the ratio, mamba size and running requests fixed; along it only
mem_fraction_static moves, and with it the memory the chain shares out: KV tokens, running requests and mamba
slots only grow with the fraction (``test_search_pruning`` checks it on every line), and so do the pools and
the CUDA graphs' estimate. A feasible point's pools and needs fit in the free memory after the weights, which
caps its KV tokens (:func:`_line_caps`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from planner.catalog.catalog import ResolvedModel
from planner.catalog.spec import ModelSpec
from planner.engines.sglang.pipeline.pools import geometries
from planner.engines.sglang.plan import Plan
from planner.engines.sglang.pipeline.cuda_graph import capture_mul
from planner.engines.sglang.search_eval import (
    Prepared,
    _chain,
    _chains_at_once,
    _inputs,
    _static_needs,
    default_range,
    graph_need_lookup,
    prep_graph_key,
    remember,
)
from planner.engines.sglang.search_space import MIB, RATIO_VALUES, Needs, _mildness

EXACT_TOP = 3  # the explicit fractions bounded point by point, from the highest (where the best point most often is)


@dataclass(frozen=True)
class Part:
    """The points of a combination at one kind of fraction, as the bound reads them: the chain is run at
    ``fracs`` (highest first) on every line. The first ``exact`` are grid fractions whose points are bounded one
    by one (their KV tokens, running requests, mamba slots and graphs are known); with ``segment``, the last two
    are the highest and lowest fraction of the part's other points, bounded together. ``flags``: what the part
    adds to the point's flags (1: --mem-fraction-static; 0: SGLang's default)."""

    fracs: tuple[float, ...]
    exact: int
    segment: bool
    flags: int


def bound_lines(grid: dict[str, np.ndarray]) -> dict:
    """The grid's lines in the grid's order: it is built mem_fraction_static outermost (:func:`_numeric_grid`), so
    its first points are the lines; with the grid's explicit fractions (highest first) and whether it has unset
    points, and the points a part's chain runs on, built once per fractions (``_pts``)."""
    mfs = grid["mfs"]
    n_lines = int(np.isnan(mfs).sum()) if np.isnan(mfs[0]) else int((mfs == mfs[0]).sum())
    lines = {k: v[:n_lines] for k, v in grid.items() if k != "mfs"}
    lines["_explicit"] = tuple(sorted(set(mfs[~np.isnan(mfs)].tolist()), reverse=True))
    lines["_default"] = bool(np.isnan(mfs).any())
    lines["_pts"] = {}
    return lines


def part_points(lines: dict, fracs: tuple[float, ...]) -> tuple[dict[str, np.ndarray], tuple]:
    """(every line at each of ``fracs``, the chain cache's key for them)."""
    pts = lines["_pts"].get(fracs)
    if pts is None:
        n_lines = lines["run"].size
        pts = {k: np.tile(lines[k], len(fracs)) for k in ("ratio", "msize", "run")}
        pts["mfs"] = np.repeat(np.array(fracs, dtype=np.float64), n_lines)
        lines["_pts"][fracs] = pts
    return pts, ("bound", id(lines), fracs)


def bound_parts(lines: dict, prep: Prepared) -> list[Part]:
    """The parts of a combination's points: the explicit fractions (the ``EXACT_TOP`` highest point by point, the
    rest as one segment) and, where the grid has unset points, SGLang's default (:func:`default_range`: one
    fraction, so exact, unless it moves with --max-running-requests, then a segment over its range)."""
    parts = []
    explicit = lines["_explicit"]
    if explicit:
        top, rest = explicit[:EXACT_TOP], explicit[EXACT_TOP:]
        parts.append(Part((*top, rest[0], rest[-1]), len(top), True, 1) if rest else Part(top, len(top), False, 1))
    if lines["_default"]:
        lo, hi = default_range(prep)
        parts.append(Part((hi,), 1, False, 0) if hi == lo else Part((hi, lo), 0, True, 0))
    return parts


def _line_caps(part: Part, outs: list[dict[str, np.ndarray]], n_lines: int, terms: list[tuple[int, int, int]],
               graphs: list) -> tuple[np.ndarray, np.ndarray]:
    """Per row and line, (the most KV tokens, the most running requests) a feasible point of the part can have:
    one row per chain in ``outs`` (the part's fractions x the lines), with its combination's cap ``terms`` and
    CUDA graphs' floor (``graphs``, :func:`graph_floors` at the chain's R; 0 when disabled).

    A feasible point's pools and needs fit: pools + needs x (1 + margin) + margin bytes <= the free bytes after
    the weights. The pools are at least the KV pools' bytes per token x N (the K and V tensors have N + page
    rows) and the mamba states ((M + 1) slots), two of pool_bytes()'s tensors (every other one is >= 0); the
    needs at least the static ones (in the terms' room) and the CUDA graphs' estimate at the point's running
    requests. So N <= (room - the states - the graphs) / bytes per token: the cap. At an exact fraction the
    point's own M and R give it, and a point whose N exceeds it cannot be feasible; over a segment the lowest
    fraction's M and R (both only grow with the fraction) cap the highest fraction's N. On a line the highest
    exact point under its cap has the most tokens and requests of the part (both grow with the fraction; the
    segment's points lie below it), else the segment's capped values, else nothing (-1 tokens)."""
    s, k = len(part.fracs), len(outs)
    shape = (k, s, n_lines)
    n = np.stack([o["n"] for o in outs]).reshape(shape)
    r = np.stack([o["r"] for o in outs]).reshape(shape)
    room, per_token, state_bytes = (np.array(v, dtype=np.float64)[:, None, None] for v in zip(*terms))
    # the fractions whose caps are read: the exact ones and the segment's lowest (the sizes are far below 2^53
    # bytes, so float64 holds them exactly; + 0.5 token covers the division's rounding: the cap only loosens)
    at = [*range(part.exact), *([s - 1] if part.segment else [])]
    m = np.maximum(np.stack([o["m"] for o in outs]).reshape(shape)[:, at], 0)
    g = np.stack([np.zeros(s * n_lines, dtype=np.int64) if isinstance(x, int) else x for x in graphs]).reshape(shape)
    cap = (room - (m + 1.0) * state_bytes - g[:, at]) / per_token + 1.5  # N <= cap, for (k, len(at), lines)
    if part.segment:
        top = n[:, s - 2]
        n_b = np.where(top <= cap[:, -1], top, np.floor(np.maximum(cap[:, -1], -1.0)).astype(np.int64))
        r_b = r[:, s - 2]
    else:
        n_b, r_b = np.full((k, n_lines), -1, dtype=np.int64), np.zeros((k, n_lines), dtype=np.int64)
    for i in reversed(range(part.exact)):  # the lowest first: a higher point under its cap replaces it
        under = n[:, i] <= cap[:, i]
        n_b, r_b = np.where(under, n[:, i], n_b), np.where(under, r[:, i], r_b)
    return n_b, r_b


def _rows_caps(rows: list[tuple[Prepared, Part, dict, tuple | None]], n_lines: int, model: ResolvedModel,
               draft: ModelSpec | None, needs: Needs, cache: dict | None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_line_caps` of every ``(prepared, part, chain, cap terms)`` row, in their order: the rows whose parts
    have the same shape (fractions, exact ones, segment) computed together; a row without cap terms (no cap: the
    unified buffer, a negative margin) takes the highest fraction's values."""
    n_ub = np.empty((len(rows), n_lines), dtype=np.int64)
    r_ub = np.empty((len(rows), n_lines), dtype=np.int64)
    groups: dict = {}
    for i, (prep, part, out, terms) in enumerate(rows):
        if terms is None:
            n_ub[i], r_ub[i] = out["n"][:n_lines], out["r"][:n_lines]
        else:
            groups.setdefault((len(part.fracs), part.exact, part.segment), (part, []))[1].append(i)
    for part, idx in groups.values():  # parts of one shape (their fractions aside: the chains are given)
        graphs = graph_floors([(rows[i][0], rows[i][2]["r"]) for i in idx], model, draft, needs, cache)
        n_ub[idx], r_ub[idx] = _line_caps(part, [rows[i][2] for i in idx], n_lines, [rows[i][3] for i in idx],
                                          graphs)
    return n_ub, r_ub


def graph_floors(jobs: list[tuple[Prepared, np.ndarray]], model: ResolvedModel, draft: ModelSpec | None,
                 needs: Needs, cache: dict | None) -> list:
    """For each ``(prepared, R array)``, the CUDA graphs' estimate at each R (headroom.cuda_graph_need_array, what
    evaluate_points charges at a point's R, through search_eval.graph_need_lookup) x (1 + margin), rounded down so
    a cap only loosens; 0 with the graphs disabled. The estimate only grows with R (the captured sizes <= R plus R
    itself: as many or more, and a larger largest one), so at a lower R it is a lower bound. Each R array once
    per graph inputs (combinations share a chain's; the caller keeps the arrays alive, so their ids are theirs)."""
    found: dict = {}
    out: list = []
    for prep, r in jobs:
        key = prep_graph_key(prep, model.spec, draft)
        if not key or capture_mul(prep.args) > 1 or prep.args.raw.get("moe_a2a_backend") == "deepep":
            # a padded capture list (multiples of attn_tp, search_eval._graphs_per_point) may hold fewer graphs than
            # the unpadded one at the same R, so the unpadded estimate is no floor there: none (the cap loosens)
            out.append(0)
            continue
        k = (id(r), key)
        if k not in found:
            need = graph_need_lookup(prep.args, model.spec, draft, r, cache, key)
            found[k] = np.floor(need * (1 + needs.margin)).astype(np.int64)
        out.append(found[k])
    return out


def line_bound(plan0: Plan, model: ResolvedModel, prep: Prepared, grid: dict[str, np.ndarray],
               lines: dict, draft: ModelSpec | None, needs: Needs, need_ctx: int,
               cache: dict | None = None, chosen: list[str] | None = None) -> tuple[bool, tuple[int, int, int]]:
    """(whether some point of a combination can meet the needs, the largest value the first three parts of the
    rank key can take at its feasible points): concurrency, KV in 4096-token buckets (for kv-tokens the other way
    round: the KV tokens the running requests can fill, then concurrency), and the mildness of the point's flags
    (``chosen``, the combination's, plus the flags the line and the part add, which are known: point_flags).
    Per line and part (:func:`bound_parts`), from the most KV tokens and running requests a feasible point can
    have (:func:`_line_caps`). The headroom objective ranks by what shrinks with the fraction: its caller prunes
    there by the needs only."""
    args = prep.args
    parts = bound_parts(lines, prep)
    n_lines = lines["run"].size
    terms = _cap_terms(plan0, model, prep, draft, needs)
    rows = []
    for part in parts:
        pts, key = part_points(lines, part.fracs)
        rows.append((prep, part, _chain(plan0, model, prep, pts, draft, cache, key)[1], terms))
    n_ub, r_ub = _rows_caps(rows, n_lines, model, draft, needs, cache)  # (parts, lines)
    mild0 = _mildness(chosen or []) - np.array([p.flags for p in parts])
    meets, first, second, mild = _key_parts(n_ub, r_ub, np.full(len(parts), args.context_len), mild0, lines, needs,
                                            need_ctx)
    if not meets.any():
        return False, (0, 0, 0)
    first, second, mild = first[meets], second[meets], mild[meets]
    i = np.lexsort((mild, second, first))[-1]
    return True, (int(first[i]), int(second[i]), int(mild[i]))


def _key_parts(n_ub: np.ndarray, r_ub: np.ndarray, ctx_len: np.ndarray, mild0: np.ndarray, lines: dict, needs: Needs,
               need_ctx: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per (row, line), from the most KV tokens and running requests a feasible point can have (``n_ub``,
    ``r_ub``; ``ctx_len`` and ``mild0``, the row's context length and flags' mildness): whether a point can meet
    the needs, and the first three parts of the rank key they bound (:func:`line_bound`)."""
    ctx = max(need_ctx, 1)
    conc_ub = np.minimum(r_ub, n_ub // ctx)
    longest_ub = np.minimum(ctx_len[:, None] - 1, n_ub - 1)
    meets = (longest_ub >= need_ctx) & (conc_ub >= needs.concurrency)
    mild = mild0[:, None] - _line_flags(lines)[None, :]
    if needs.objective == "kv-tokens":
        return meets, np.minimum(n_ub, np.maximum(r_ub, 0) * ctx) // 4096, conc_ub, mild
    return meets, conc_ub, n_ub // 4096, mild


def _line_flags(lines: dict) -> np.ndarray:
    """The flags each line adds to a point's (ratio other than SGLang's default, mamba size, running requests)."""
    ratio, msize, run = lines["ratio"], lines["msize"], lines["run"]
    return (~np.isnan(ratio) & (ratio != RATIO_VALUES[0])).astype(np.int64) + (msize >= 0) + (run >= 0)


def bound_all(plan0: Plan, model: ResolvedModel, items: list[tuple[list[str], Prepared]], grid: dict[str, np.ndarray],
              lines: dict, draft: ModelSpec | None, needs: Needs, need_ctx: int,
              cache: dict | None = None) -> list[tuple[bool, tuple[int, int, int]]]:
    """:func:`line_bound` for many combinations ``(chosen, prepared)`` at once: the chains in a few calls
    (cached), the bounds as one array computation over every (combination, part, line)."""
    key = ("bound_all", id(lines), tuple(id(prep) for _, prep in items), needs.margin, needs.margin_bytes)
    found = None if cache is None else cache.get(key)
    preps = [prep for _, prep in items]
    if found is None or found[0] is not lines or any(a is not b for a, b in zip(found[1], preps)):
        found = (lines, preps, _bound_arrays(plan0, model, items, lines, draft, needs, cache))
        if cache is not None:  # a re-search with other needs (a sweep, the TUI) bounds the same combinations;
            # the preparations (each its flags, so its mildness) and lines kept: their ids stay theirs
            remember(cache, "_bounds", _BOUNDS_KEPT, key, found)
    if found[2] is None:
        return [(False, (0, 0, 0))] * len(items)
    n_ub, r_ub, owner, mild0, ctx_len = found[2]
    meets, first, second, mild = _key_parts(n_ub, r_ub, ctx_len, mild0, lines, needs, need_ctx)
    # the three parts in one integer, ordered as the tuples are: 21 bits each (checked), mild offset to >= 0
    first, second, mild = np.maximum(first, 0), np.maximum(second, 0), mild + (1 << 20)
    if first.max() >= 1 << 21 or second.max() >= 1 << 21 or mild.min() < 0 or mild.max() >= 1 << 21:
        return [line_bound(plan0, model, prep, grid, lines, draft, needs, need_ctx, cache, chosen)
                for chosen, prep in items]
    code = np.where(meets, (first << 42) | (second << 21) | mild, -1).max(axis=1)
    best = np.full(len(items), -1, dtype=np.int64)
    np.maximum.at(best, owner, code)
    mask = (1 << 21) - 1
    return [(False, (0, 0, 0)) if b < 0 else (True, (int(b >> 42), int((b >> 21) & mask), int(b & mask) - (1 << 20)))
            for b in best.tolist()]


_BOUNDS_KEPT = 8  # bound_all's arrays kept per search context (each a few MB: rows x lines x 2 int64 arrays)


def _bound_arrays(plan0: Plan, model: ResolvedModel, items: list[tuple[list[str], Prepared]], lines: dict,
                  draft: ModelSpec | None, needs: Needs, cache: dict | None) -> tuple | None:
    """What :func:`bound_all` computes from the combinations alone (the needs enter only through the margin, in
    the caps): per (combination, part) row, the most KV tokens and running requests a feasible point can have,
    per line (:func:`_line_caps`); the row's combination, mildness and context length. None when no combination
    has a part."""
    n_lines = lines["run"].size
    parts_of = [bound_parts(lines, prep) for _, prep in items]
    if cache is not None:  # every bound's chain in a few calls (size_chain's per-call cost dominates at this size)
        _chains_at_once(plan0, model, [(prep, *part_points(lines, part.fracs)) for (_, prep), parts
                                       in zip(items, parts_of) for part in parts], draft, cache)
    rows, owner, mild0, ctx_len = [], [], [], []
    for j, ((chosen, prep), parts) in enumerate(zip(items, parts_of)):
        terms = _cap_terms(plan0, model, prep, draft, needs)
        mild = _mildness(chosen)
        for part in parts:
            pts, key = part_points(lines, part.fracs)
            rows.append((prep, part, _chain(plan0, model, prep, pts, draft, cache, key)[1], terms))
            owner.append(j)
            mild0.append(mild - part.flags)
            ctx_len.append(prep.args.context_len)
    if not owner:
        return None
    n_ub, r_ub = _rows_caps(rows, n_lines, model, draft, needs, cache)
    col = (lambda v: np.array(v, dtype=np.int64))
    return n_ub, r_ub, col(owner), col(mild0), col(ctx_len)


def _cap_terms(plan0: Plan, model: ResolvedModel, prep: Prepared, draft: ModelSpec | None,
               needs: Needs) -> tuple[int, int, int] | None:
    """(room + 1 MiB, KV bytes per token, mamba-state bytes per slot) of :func:`_line_caps`, or None (no cap: the
    unified KV + mamba buffer is not a sum of tensors that grow with N; a negative margin)."""
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
                   lines: dict, draft: ModelSpec | None, need_ctx: int, cache: dict) -> list[tuple[int, int, int]]:
    """For each combination, the largest (concurrency, longest request, bytes left) any of its points can have,
    what the closest point is ranked by (None: no point of it is ok, so it has no closest candidate): per line
    and part (:func:`bound_parts`), the concurrency and longest request at the highest fraction, and the bytes
    left at most the free bytes after the weights less the post-pool needs that do not depend on the point, less
    the KV and mamba-state tensors at the lowest fraction (:func:`_line_caps`' lower bound on the pools; N and M
    only grow with the fraction)."""
    n_lines = lines["run"].size
    parts_of = [bound_parts(lines, prep) for _, prep in items]
    _chains_at_once(plan0, model, [(prep, *part_points(lines, part.fracs)) for (_, prep), parts in zip(items, parts_of)
                                   for part in parts], draft, cache)
    ctx = max(need_ctx, 1)
    out = []
    for (_, prep), parts in zip(items, parts_of):
        terms = _cap_terms(plan0, model, prep, draft, Needs())  # finds the static needs; the tensors' sizes
        best = (np.iinfo(np.int64).min,) * 3
        for part in parts:
            pts, key = part_points(lines, part.fracs)
            _, o, _ = _chain(plan0, model, prep, pts, draft, cache, key)
            s = len(part.fracs)
            n_hi, r_hi = o["n"][:n_lines], o["r"][:n_lines]
            n_lo = np.maximum(o["n"][(s - 1) * n_lines:], 0)
            m_lo = np.maximum(o["m"][(s - 1) * n_lines:], 0)
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
