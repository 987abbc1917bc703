"""The search's evaluation of one categorical combination: the flags parsed once (FlagBase), the combination
resolved (prepare_combo), SGLang's default fraction along --max-running-requests (solve_monotone), the sizing
chain over the numeric grid (size_chain, cached on its exact inputs) and every point's pools, needs and
feasibility as arrays (evaluate_points)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from planner.catalog.catalog import ResolvedModel
from planner.catalog.spec import ModelSpec
from planner.engines.sglang import pipeline as engine
from planner.engines.sglang.cli_flags import SGLangArgError, container_keys, parse_flags, parse_flags_onto
from planner.engines.sglang.pipeline.headroom import estimate_needs
from planner.engines.sglang.pipeline.cuda_graph import capture_mul
from planner.engines.sglang.pipeline.mamba import mamba_state
from planner.engines.sglang.pipeline.memory_profile import (
    chain_inputs,
    per_dp_worker,
    size_chain,
)
from planner.engines.sglang.pipeline import swa
from planner.engines.sglang.pipeline.pools import SwaGeometry, geometries, pool_bytes
from planner.engines.sglang.pipeline.arg_groups import resolve, resolve_fraction
from planner.engines.sglang.pipeline.server_args import Rejected, ResolvedArgs, check_scope, check_values
from planner.engines.sglang.plan import Plan
from planner.engines.sglang.search_space import Needs


@dataclass
class Evaluation:
    """Per-point arrays for one categorical combination (what the property test compares)."""

    combo: list[str]
    args: ResolvedArgs | None
    grid: dict[str, np.ndarray]
    rejected: Rejected | None = None
    out: dict[str, np.ndarray] = field(default_factory=dict)


class FlagBase:
    """The fixed flags parsed once per search; a categorical combination (fixed + chosen) is then parsed
    onto that namespace (:func:`parse_flags_onto`) instead of re-running the release's argparse over the
    whole command line. The chosen flags set only fields the fixed flags leave alone (given_dests), so the
    result is the dict a full parse gives; when the fixed flags do not parse, every combination takes the
    full parse (and gets its error)."""

    def __init__(self, version_dir: str, model_path: str, fixed: list[str]):
        self.version_dir, self.head, self.fixed = version_dir, ["--model-path", model_path], list(fixed)
        try:
            self.base: dict[str, Any] | None = parse_flags(version_dir, [*self.head, *self.fixed])
        except SGLangArgError:
            self.base = None
        self.containers = container_keys(self.base) if self.base is not None else ()

    def parse(self, combo: list[str]) -> dict[str, Any]:
        n = len(self.fixed)
        if self.base is None or combo[:n] != self.fixed:
            return parse_flags(self.version_dir, [*self.head, *combo])
        return parse_flags_onto(self.version_dir, self.base, [*self.head, *combo[n:]], self.containers)


def run_values(grid: dict[str, np.ndarray]) -> np.ndarray:
    """The distinct explicit --max-running-requests values of a grid, ascending."""
    # sorted(set()) rather than np.unique, which imports numpy.ma (about 25 ms of a cold start)
    return np.array(sorted(set(grid["run"][grid["run"] >= 0].tolist())), dtype=np.int64)


def solve_monotone(xs: list, f, exhaustive: bool = False) -> list:
    """``[f(x) for x in xs]`` for a function monotone over the ascending ``xs``: where it takes the same value at
    both ends of a run of ``xs`` it takes it throughout, so only the ends of the runs where it changes are
    evaluated (about 2 log2(len) calls per change instead of len). None (a refused value) counts as one more
    value of the order: refusals form a prefix or a suffix of ``xs`` (e.g. too few running requests), never
    a hole. ``exhaustive``: call f everywhere (what the tests compare against)."""
    if exhaustive or len(xs) <= 2:
        return [f(x) for x in xs]
    out: list = [None] * len(xs)
    known: dict[int, Any] = {}

    def at(i: int):
        if i not in known:
            known[i] = f(xs[i])
        return known[i]

    stack = [(0, len(xs) - 1)]
    while stack:
        lo, hi = stack.pop()
        a, b = at(lo), at(hi)
        if a == b:
            out[lo:hi + 1] = [a] * (hi - lo + 1)
        elif hi - lo <= 1:
            out[lo], out[hi] = a, b
        else:
            mid = (lo + hi) // 2
            stack += [(lo, mid), (mid, hi)]
    return out


def _default_mfs_table(plan0: Plan, spec: ModelSpec, raw: dict[str, Any], args: ResolvedArgs, values: np.ndarray,
                       exhaustive: bool = False, containers: tuple[str, ...] | None = None,
                       draft: ModelSpec | None = None, memo: dict | None = None) -> np.ndarray | None:
    """SGLang's default mem_fraction_static at each explicit --max-running-requests value in ``values``, or None
    when it does not depend on it (the resolved default holds at every point).

    On 0.5.22+ an explicit --max-running-requests clips the default decode graph max_bs, which moves the
    default mem_fraction_static (srt/arg_groups/memory_hook.py:182-188 @0.5.22): more requests, a larger
    max_bs, more reserved, a smaller fraction. That is monotone, so it is solved along the axis
    (:func:`solve_monotone`) rather than resolved at every value."""
    if not _default_moves(args, values):
        return None
    mfs_at = _default_mfs_at(plan0, spec, raw, args, containers, draft, None if exhaustive else memo)
    found = solve_monotone([*values.tolist(), None], mfs_at, exhaustive)[:-1]
    return np.array([args.mem_fraction_static if v is None else v for v in found], dtype=np.float64)


def _default_moves(args: ResolvedArgs, values: np.ndarray) -> bool:
    """Whether the default mem_fraction_static depends on the grid's --max-running-requests values."""
    return bool(args.rules.graph_max_bs_clipped_to_mrr and not args.mem_fraction_static_user and values.size)


def _default_mfs_at(plan0: Plan, spec: ModelSpec, raw: dict[str, Any], args: ResolvedArgs,
                    containers: tuple[str, ...] | None, draft: ModelSpec | None, memo: dict | None = None):
    """SGLang's default mem_fraction_static with --max-running-requests u parsed onto the combination (None for
    u: the flag unset; a refused value gives None). ``memo``: the values found so far, shared by callers."""
    dev = engine.device_for(plan0)
    containers = container_keys(raw) if containers is None else containers
    memo = {} if memo is None else memo

    def mfs_at(u: int | None) -> float | None:  # None: this value is refused (the point keeps the unclipped default)
        if u is None:  # the flag unset: what a value too large to clip anything gives, the end of the axis
            return args.mem_fraction_static
        if u in memo:
            return memo[u]
        try:  # the flag parsed onto this combination's dict: what parsing combo + the flag gives
            raw_u = parse_flags_onto(plan0.rules.flags, raw, ["--max-running-requests", str(int(u))], containers)
            memo[u] = resolve(raw_u, spec, dev, plan0.env, plan0.rules, draft).mem_fraction_static
        except (SGLangArgError, Rejected):
            memo[u] = None
        return memo[u]

    return mfs_at


@dataclass
class Prepared:
    """One categorical combination resolved (the scalar part of its evaluation), ready for any numeric points."""

    combo: list[str]
    args: ResolvedArgs
    state: Any
    values: np.ndarray  # the explicit --max-running-requests values mfs_table is for
    mfs_table: np.ndarray | None
    static_needs: int | None = None  # post-pool needs that do not scale with the captured batch sizes
    pools: tuple | None = None  # geometries(), found once
    lazy: tuple | None = None  # (plan0, spec, raw, containers, draft): mfs_table not found yet (ensure_table)
    memo: dict = field(default_factory=dict)  # default mem_fraction_static by --max-running-requests value
    inputs: tuple | None = None  # (chain_inputs(), their scalar part as a cache key), found once (_chain)
    fraction_hi: float | None = None  # the default fraction at the smallest value (default_range), found once
    graph_key: tuple | None = None  # what the CUDA graphs' estimate depends on besides R (prep_graph_key)
    ctx: tuple | None = None  # (plan0, spec, raw, containers, draft): re-resolving at a --max-running-requests value


def ensure_table(prep: Prepared) -> None:
    """Find a lazily prepared combination's default mem_fraction_static table (:func:`_default_mfs_table`)."""
    if prep.lazy is not None:
        plan0, spec, raw, containers, draft = prep.lazy
        prep.mfs_table = _default_mfs_table(plan0, spec, raw, prep.args, prep.values, False, containers, draft,
                                            prep.memo)
        prep.lazy = None


def default_range(prep: Prepared) -> tuple[float, float]:
    """(at most the lowest, at least the highest) default mem_fraction_static over the grid's
    --max-running-requests values, for the branch and bound's bounds. A clipped decode graph only raises the
    fraction (:func:`_default_mfs_table`), so it is lowest unclipped (the resolved default) and highest at the
    smallest value: until the table is found (ensure_table, then its values exactly), that is found from the
    hooks up to the one that sets the fraction (resolve_fraction), not from a whole resolve. A value the full
    resolve refuses keeps the resolved default (which is in the range); the others are at most the smallest
    value's (the formula is monotone whatever a later hook refuses)."""
    a = prep.args.mem_fraction_static
    if not _default_moves(prep.args, prep.values):
        return a, a
    if prep.lazy is None:  # the table is found: its values exactly
        table = prep.mfs_table
        return min(a, float(table.min())), max(a, float(table.max()))
    if prep.fraction_hi is None:
        prep.fraction_hi = _fraction_at_smallest(prep)
    return min(a, prep.fraction_hi), max(a, prep.fraction_hi)


def _fraction_at_smallest(prep: Prepared) -> float:
    """The hooks' mem_fraction_static with the grid's smallest --max-running-requests parsed onto the
    combination (the resolved default when that value does not parse or an early hook refuses it: the
    full resolve then refuses it too, and such points keep the resolved default)."""
    plan0, spec, raw, containers, draft = prep.lazy
    containers = container_keys(raw) if containers is None else containers
    try:
        raw_u = parse_flags_onto(plan0.rules.flags, raw, ["--max-running-requests", str(int(prep.values[0]))],
                                 containers)
        return resolve_fraction(raw_u, spec, engine.device_for(plan0), plan0.env, plan0.rules, draft)
    except (SGLangArgError, Rejected):
        return prep.args.mem_fraction_static


def prepare_combo(plan0: Plan, model: ResolvedModel, combo: list[str], base: FlagBase | None = None,
                  values: np.ndarray | None = None, exhaustive: bool = False,
                  draft: ModelSpec | None = None, lazy: bool = False) -> Prepared | Rejected:
    """Parse and resolve one combination as ``plan`` would (the Rejected when SGLang or the planner refuses it).
    ``lazy``: its default mem_fraction_static table is found when first needed (:func:`ensure_table`)."""
    spec = model.spec
    try:
        raw = base.parse(combo) if base is not None else parse_flags(plan0.rules.flags, ["--model-path", spec.name, *combo])
    except SGLangArgError as exc:
        return Rejected("SystemExit", str(exc), "argparse")
    if check_scope(raw, plan0.rules) or check_values(raw):
        return Rejected("BadInput", check_scope(raw, plan0.rules) or check_values(raw) or "", "planner")
    try:
        args = resolve(raw, spec, engine.device_for(plan0), plan0.env, plan0.rules, draft)  # DFLASH reads D from it
        state = mamba_state(spec, args.tp_size, args.env)
        engine._check_heads(spec, args.tp_size)
    except Rejected as exc:
        return exc
    values = np.zeros(0, dtype=np.int64) if values is None else values
    containers = base.containers if base is not None and base.base is not None else None
    if lazy and not exhaustive:
        return Prepared(combo, args, state, values, None, lazy=(plan0, spec, raw, containers, draft),
                        ctx=(plan0, spec, raw, containers, draft))
    table = _default_mfs_table(plan0, spec, raw, args, values, exhaustive, containers, draft)
    return Prepared(combo, args, state, values, table, ctx=(plan0, spec, raw, containers, draft))


def evaluate_combo(plan0: Plan, model: ResolvedModel, combo: list[str], grid: dict[str, np.ndarray],
                   draft: ModelSpec | None, needs: Needs, need_ctx: int, base: FlagBase | None = None,
                   values: np.ndarray | None = None, exhaustive: bool = False) -> Evaluation:
    """Resolve one categorical combination, then evaluate every numeric point with arrays (``values``: the
    grid's :func:`run_values`, when the caller found them once for many combinations; ``exhaustive``: resolve
    SGLang's default mem_fraction_static at every --max-running-requests value, see :func:`_default_mfs_table`)."""
    prep = prepare_combo(plan0, model, combo, base, run_values(grid) if values is None else values, exhaustive,
                         draft)
    if isinstance(prep, Rejected):
        return Evaluation(combo, None, grid, rejected=prep)
    return Evaluation(combo, prep.args, grid, out=evaluate_points(plan0, model, prep, grid, draft, needs, need_ctx))


def _chain(plan0: Plan, model: ResolvedModel, prep: Prepared, grid: dict[str, np.ndarray],
           draft: ModelSpec | None, cache: dict | None = None,
           grid_key: tuple | None = None) -> tuple[dict, dict[str, np.ndarray], np.ndarray]:
    """(the chain's inputs, :func:`size_chain` over the grid's points, their mem_fraction_static).

    ``cache`` (one per search): the chain is a pure function of its inputs, and many combinations share them
    (the chunked-prefill and decode-graph axes, say, change only the post-pool needs and at most the default
    fraction), so one evaluation serves every combination with the same scalar inputs, defaults and grid; the
    arrays it returns are shared and never written to. ``grid_key``: what identifies the grid's values (else
    the grid itself, which the cache then keeps alive so that its id stays its own)."""
    if prep.inputs is None:  # the scalar inputs, found once per combination
        prep.inputs = _inputs(plan0, model, prep, draft)
    inp = dict(prep.inputs[0])
    key = None
    if cache is not None:
        key = _chain_key(prep, grid, grid_key)
        hit = cache.get(key)
        if hit is not None:
            inp.update(hit[0])
            return inp, hit[1], hit[2]
    arrays = _point_inputs(prep, grid)
    inp.update(arrays)
    out = size_chain(**inp)
    if key is not None:
        value = (arrays, out, arrays["mfs"], grid)  # the grid kept alive: its id stays its own
        if grid_key is None:  # a whole grid's chain is about a MB: keep the latest _FULL_CHAINS of them
            remember(cache, "_full", _FULL_CHAINS, key, value)
        else:
            cache[key] = value
    return inp, out, arrays["mfs"]


_FULL_CHAINS = 24


def remember(cache: dict, ring: str, limit: int, key, value) -> None:
    """``cache[key] = value``, keeping only the latest ``limit`` keys stored under the same ``ring`` (the keys'
    order is kept in ``cache[ring]``): for the large arrays a search context would otherwise gather without end."""
    cache[key] = value
    kept = cache.setdefault(ring, [])
    kept.append(key)
    if len(kept) > limit:
        cache.pop(kept.pop(0), None)


def _chain_key(prep: Prepared, grid: dict[str, np.ndarray], grid_key: tuple | None) -> tuple:
    """What the chain over ``grid`` depends on for a combination: its scalar inputs, the grid, the defaults."""
    args = prep.args
    defaults = has_defaults(grid["mfs"])  # points at SGLang's default fraction
    if defaults:
        ensure_table(prep)
    table = prep.mfs_table if defaults else None
    return ("chain", id(grid) if grid_key is None else grid_key, prep.inputs[1],
            args.mem_fraction_static if defaults else None, None if table is None else table.tobytes(),
            None if table is None else prep.values.tobytes(), args.mamba_full_memory_ratio,
            args.max_running_requests, args.max_mamba_cache_size, _given_factor(args))


def _given_factor(args: ResolvedArgs) -> float:
    """What SGLang multiplies a given fraction by (1.0 off ROCm: pipeline/rocm.py given_fraction_factor)."""
    if not args.hip:
        return 1.0
    from planner.engines.sglang.pipeline.rocm import given_fraction_factor  # noqa: PLC0415

    return given_fraction_factor(args)


_DEFAULTS_SEEN: dict = {}  # id(mem_fraction_static array) -> (the array, whether it has unset points)


def has_defaults(mfs: np.ndarray) -> bool:
    """Whether a grid has points at SGLang's default fraction (NaN), remembered per array: a search asks it of
    the same few arrays thousands of times (each chain lookup). The arrays are kept with the answer, so an id
    is never another array's; the search never writes to its grids."""
    hit = _DEFAULTS_SEEN.get(id(mfs))
    if hit is not None and hit[0] is mfs:
        return hit[1]
    if len(_DEFAULTS_SEEN) > 512:
        _DEFAULTS_SEEN.clear()
    found = _DEFAULTS_SEEN[id(mfs)] = (mfs, bool(np.isnan(mfs).any()))
    return found[1]


def _point_inputs(prep: Prepared, grid: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The chain's per-point inputs over ``grid``: unset values take the combination's resolved ones."""
    args = prep.args
    n_pts = grid["mfs"].size
    mfs = grid["mfs"]
    defaults = has_defaults(mfs)  # on the grid's own array (has_defaults keys its cache on the array)
    if args.hip:  # ROCm: SGLang scales a given fraction as well as its default (pipeline/rocm.py given_fraction_factor)
        mfs = mfs * _given_factor(args)
    if defaults:
        ensure_table(prep)
        mfs_default = np.full(n_pts, args.mem_fraction_static, dtype=np.float64)
        if prep.mfs_table is not None:
            run, vals = grid["run"], prep.values
            mfs_default = np.where(run >= 0, prep.mfs_table[np.minimum(np.searchsorted(vals, run), vals.size - 1)],
                                   mfs_default)
        mfs = np.where(np.isnan(mfs), mfs_default, mfs)
    ratio = np.where(np.isnan(grid["ratio"]), args.mamba_full_memory_ratio, grid["ratio"])
    # unset: the resolved value (48 under EAGLE, server_args.py:3454-3458 @0.5.11) or None (-1)
    r_default = -1 if args.max_running_requests is None else per_dp_worker(args)
    r_args = np.where(grid["run"] >= 0, per_dp_worker(args, grid["run"]), r_default)
    m_exp = np.where(grid["msize"] >= 0, grid["msize"],
                     -1 if args.max_mamba_cache_size is None else args.max_mamba_cache_size)
    return dict(mfs=mfs, ratio=ratio, r_args=r_args, m_explicit=m_exp)


_SWITCHES = ("solve", "cap_by_estimate", "padding_slots", "min_one_running", "pools_sized_separately", "replay", "swa_cap")  # swa_cap: a tuple per combination (pipeline/swa.py request_cap)


def _chains_at_once(plan0: Plan, model: ResolvedModel, jobs: list[tuple[Prepared, dict, tuple]],
                    draft: ModelSpec | None, cache: dict) -> None:
    """Put :func:`_chain` of every ``(prepared, grid, grid_key)`` into ``cache``, evaluating the missing ones
    together: :func:`size_chain` is elementwise, so one call over their concatenated points (each combination's
    scalar inputs repeated over its points) gives each the arrays its own call would. The release switches are
    Python branches, so the calls are grouped by them."""
    todo: dict = {}
    for prep, grid, grid_key in jobs:
        if prep.inputs is None:
            prep.inputs = _inputs(plan0, model, prep, draft)
        key = _chain_key(prep, grid, grid_key)
        if key not in cache and key not in todo:
            todo[key] = (prep, grid)
    groups: dict = {}
    for key, (prep, grid) in todo.items():
        groups.setdefault(tuple(prep.inputs[0][k] for k in _SWITCHES), []).append((key, prep, grid))
    for switches, members in groups.items():
        parts = [_point_inputs(prep, grid) for _, prep, grid in members]
        sizes = [p["mfs"].size for p in parts]
        inp = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
        for k in members[0][1].inputs[0]:
            if k not in inp and k not in _SWITCHES:
                values = [prep.inputs[0][k] for _, prep, _ in members]
                first = values[0]  # one value for all: given as it is (size_chain broadcasts it)
                same = all(type(v) is type(first) and v == first for v in values)
                inp[k] = first if same else np.repeat(np.array(values), sizes)
        inp.update(zip(_SWITCHES, switches))
        total = sum(sizes)
        out = {k: v if np.ndim(v) else np.broadcast_to(v, total) for k, v in size_chain(**inp).items()}
        start = 0
        for (key, prep, grid), part, size in zip(members, parts, sizes):
            sl = slice(start, start + size)
            start += size
            cache[key] = (part, {k: v[sl] for k, v in out.items()}, part["mfs"], grid)


_INPUT_IDS: dict = {}  # distinct scalar chain inputs -> an int never handed out twice (keys hash it, not the tuple)
_NEXT_INPUT_ID = itertools.count()


def _inputs(plan0: Plan, model: ResolvedModel, prep: Prepared, draft: ModelSpec | None) -> tuple[dict, int]:
    """(chain_inputs() of a combination, the id of their scalar part: equal ids, equal inputs)."""
    inp = chain_inputs(prep.args, model.spec, prep.state, plan0.free_before_bytes, plan0.free_after_bytes, draft)
    scalars = tuple(sorted((k, v) for k, v in inp.items() if k != "mfs"))
    found = _INPUT_IDS.get(scalars)
    if found is None:
        if len(_INPUT_IDS) > 100_000:  # a long batch: forget (a new id for old inputs is only a cache miss)
            _INPUT_IDS.clear()
        found = _INPUT_IDS[scalars] = next(_NEXT_INPUT_ID)
    return inp, found


def evaluate_points(plan0: Plan, model: ResolvedModel, prep: Prepared, grid: dict[str, np.ndarray],
                    draft: ModelSpec | None, needs: Needs, need_ctx: int,
                    cache: dict | None = None) -> dict[str, np.ndarray]:
    """Every numeric point of ``grid`` for a prepared combination, as arrays: :func:`size_chain` (the function
    ``plan`` runs on scalars), pool bytes, post-pool needs and feasibility."""
    base = _points_base(plan0, model, prep, grid, draft, cache)
    n, r, headroom, need_total = base["n"], base["r"], base["headroom"], base["need_total"]
    conc = np.minimum(r, n // max(need_ctx, 1))
    if model.spec.sliding is not None and isinstance(prep.pools[0], SwaGeometry):  # the sliding sub-pool's share
        # the request-capped SWA pool holds its R requests by construction (pipeline/swa.py request_cap)
        conc = np.where(base["swa_capped"], conc, np.minimum(conc, swa.request_capacity(prep.args, model.spec, n)))
    fits = base["ok"] & (headroom - need_total * (1 + needs.margin) - needs.margin_bytes >= 0)
    meets = (base["longest"] >= need_ctx) & (conc >= needs.concurrency)
    return {**base, "fits": fits, "feasible": fits & meets, "conc": conc}


_EVALS_KEPT = 48  # combinations whose needs-free arrays a search context keeps (each about 0.6 MB for 9,072 points)


def _points_base(plan0: Plan, model: ResolvedModel, prep: Prepared, grid: dict[str, np.ndarray],
                 draft: ModelSpec | None, cache: dict | None) -> dict[str, np.ndarray]:
    """What :func:`evaluate_points` finds before it reads the needs: the chain, the pools, the post-pool needs,
    what is left, which points are ok. ``cache``: kept for the latest _EVALS_KEPT combinations, so a re-search
    with other needs (a sweep's next line, the TUI) only tests them."""
    key = ("points", id(prep), id(grid))
    if cache is not None:
        hit = cache.get(key)
        if hit is not None and hit[0] is prep and hit[1] is grid:
            return hit[2]
    spec, args, state = model.spec, prep.args, prep.state
    n_pts = grid["mfs"].size
    inp, out, mfs = _chain(plan0, model, prep, grid, draft, cache)
    n, r, m = out["n"], out["r"], out["m"]
    fail = out["fail"] | (plan0.free_after_bytes <= 0)
    if args.rules.zero_checks:
        fail = fail | (out["fail_m"] & (state is not None))
    if args.rules.weights_check:
        fail = fail | out["fail_rest"]
    ok = ~fail & (r > 0) & (np.minimum(args.context_len - 1, n - 1) - 5 > 0)
    try:
        engine.gdn_backend_check(args, spec, engine.device_for(plan0))
    except Rejected:
        ok = np.zeros_like(ok)
    # pools: the same pool_bytes() that itemizes a single plan
    if prep.pools is None:
        prep.pools = geometries(args, spec, state, draft)
    geo, dgeo = prep.pools
    swa_capped, swa_s = _swa_capped_tokens(args, spec, inp, n)
    total = sum(pool_bytes(args, state, geo, dgeo, n, out["r_pool"], m, out["available"],  # 0.5.9: R_pool
                           swa_s).values())
    headroom = plan0.free_after_bytes - total
    # post-pool needs: constant per combination, except CUDA graphs (they scale with the captured bs)
    if prep.static_needs is None:
        prep.static_needs = _static_needs(plan0, model, prep, inp, draft)
    graph_need = np.zeros(n_pts, dtype=np.int64)
    mul = capture_mul(args)
    if mul > 1 or args.raw.get("moe_a2a_backend") == "deepep":  # padded capture lists, DeepEP's dispatch limit
        graph_need, refused = _graphs_per_point(prep, spec, draft, grid["run"], r, mul)
        ok = ok & ~refused
    elif not args.disable_cuda_graph:  # the calibrated estimate, per point's captured list (headroom.cuda_graph_need)
        graph_need = graph_need_lookup(args, spec, draft, r, cache, prep_graph_key(prep, spec, draft))
    need_total = prep.static_needs + graph_need
    if args.disaggregation_mode == "decode":  # the decode batch's activations scale with the point's R (headroom.py)
        need_total = need_total + _decode_activations(prep, spec, r)
    if args.hip:  # ROCm: aiter's workspace scales with the request pool R (pipeline/rocm.py workspace_bytes)
        from planner.engines.sglang.pipeline.rocm import workspace_bytes  # noqa: PLC0415

        need_total = need_total + workspace_bytes(args, spec, np.maximum(r, 0).astype(np.int64))
    left = headroom - need_total
    longest = np.minimum(args.context_len - 1, n - 1)
    base = {"n": n, "r": r, "m": m, "spec_reserved": out["spec_reserved"], "available": out["available"],
            "ok": ok, "fail": fail, "pool_total": total, "headroom": headroom, "need_total": need_total,
            "left": left, "longest": longest, "mfs": mfs, "swa_capped": swa_capped}
    if cache is not None:
        remember(cache, "_points", _EVALS_KEPT, key, (prep, grid, base))  # prep and grid kept: ids stay theirs
    return base


def _swa_capped_tokens(args: ResolvedArgs, spec: ModelSpec, inp: dict, n):
    """Where a point has the 0.5.14+ request-capped SWA pool (radix cache off, an explicit R): (that mask, the SWA
    sub-pool's tokens per point, the ratio's elsewhere) as size_chain sized them (pipeline/swa.py request_cap); else
    (False, None)."""
    cap = inp.get("swa_cap")
    if cap is None:
        return False, None
    r_args = np.asarray(inp["r_args"], dtype=np.int64)
    on = np.asarray(inp["radix_off"], dtype=bool) & (r_args >= 0)
    if not np.any(on):
        return False, None
    page = args.page_size
    tok = -(-(cap[0] * np.maximum(r_args, cap[4]) + cap[1]) // page) * page
    mtt = args.max_total_tokens
    if mtt is not None:  # calculate_pool_sizes_from_max_tokens: SWA = min(cap, mtt) when mtt capped the full pool
        tok = np.where(np.asarray(n) == mtt // page * page, np.minimum(tok, mtt), tok)
    return on, np.where(on, tok, swa.swa_tokens(args, spec, np.asarray(n, dtype=np.int64)))


_GRAPH_TABLE_MAX = 1 << 16  # running requests up to which the estimate is tabulated


def graph_key(args: ResolvedArgs, spec: ModelSpec, draft: ModelSpec | None) -> tuple:
    """What the CUDA graphs' estimate depends on besides the running requests R (headroom._graph_args and the
    captured list SGLang starts from)."""
    from planner.engines.sglang.pipeline.headroom import _graph_args  # noqa: PLC0415

    return tuple(args.cuda_graph_bs), tuple(sorted(_graph_args(args, spec, draft).items()))


def prep_graph_key(prep: Prepared, spec: ModelSpec, draft: ModelSpec | None) -> tuple:
    """:func:`graph_key` of a combination, found once (() : its graphs are disabled, the estimate is 0)."""
    if prep.graph_key is None:
        prep.graph_key = () if prep.args.disable_cuda_graph else graph_key(prep.args, spec, draft)
    return prep.graph_key


def graph_need_lookup(args: ResolvedArgs, spec: ModelSpec, draft: ModelSpec | None, r: np.ndarray,
                      cache: dict | None, key: tuple | None = None) -> np.ndarray:
    """headroom.cuda_graph_need_array(args, spec, draft, r), read off a table of the estimate at R = 0, 1, 2, ...
    kept in ``cache`` per :func:`graph_key`: for those inputs the estimate is a function of R alone (the captured
    list batch_sizes_to_capture(cuda_graph_bs, R), its length and largest size; R < 0 counts as 0), and the points'
    R take a few hundred values, so one lookup per point replaces the estimate's dozen array operations. Without
    a cache, or for an R of 2^16 or more, computed directly."""
    from planner.engines.sglang.pipeline.headroom import cuda_graph_need_array  # noqa: PLC0415

    top = int(r.max()) if r.size else 0
    if cache is None or top >= _GRAPH_TABLE_MAX:
        return cuda_graph_need_array(args, spec, draft, r)
    tkey = ("graph_table", graph_key(args, spec, draft) if key is None else key)
    table = cache.get(tkey)
    if table is None or table.size <= top:
        size = min(_GRAPH_TABLE_MAX, max(1024, 2 * top + 2))
        table = cache[tkey] = cuda_graph_need_array(args, spec, draft, np.arange(size, dtype=np.int64))
    return table[np.maximum(r, 0)]


def _graphs_per_point(prep: Prepared, spec: ModelSpec, draft: ModelSpec | None, run: np.ndarray, r: np.ndarray,
                      mul: int) -> tuple[np.ndarray, np.ndarray]:
    """(the CUDA graphs' estimate, whether SGLang refuses the capture) per point, as the pipeline's post-pool checks
    find them (pipeline/__init__.py _post_pool_checks): under DP attention with attn_tp > 1 or DeepEP the captured
    list is batch_sizes_to_capture(cuda_graph_bs, R, mul) (R per rank padded to a multiple of attn_tp; an empty
    list is SGLang's ``capture_bs`` assertion), and DeepEP's low-latency dispatch limit may refuse a capture
    (expert_parallel.capture_failure). On 0.5.22+ the decode capture list follows the global
    --max-running-requests (memory_hook.py:182-188 @0.5.22), so a point's list is the one its value resolves to;
    each distinct (value, R) is planned once per combination."""
    from planner.engines.sglang.pipeline.cuda_graph import batch_sizes_to_capture  # noqa: PLC0415
    from planner.engines.sglang.pipeline.expert_parallel import capture_failure  # noqa: PLC0415
    from planner.engines.sglang.pipeline.headroom import cuda_graph_need, prefill_captured  # noqa: PLC0415

    args = prep.args
    clipped = args.rules.graph_max_bs_clipped_to_mrr
    pairs = list(zip((run if clipped else np.full(run.shape, -1)).tolist(), np.maximum(r, 0).tolist()))
    need = np.zeros(len(pairs), dtype=np.int64)
    refused = np.zeros(len(pairs), dtype=bool)
    for i, (u, rr) in enumerate(pairs):
        key = ("graphs", u, rr, mul)
        hit = prep.memo.get(key)
        if hit is None:
            a = _args_at(prep, u)
            bs = None if a.disable_cuda_graph else batch_sizes_to_capture(a.cuda_graph_bs, int(rr), mul)
            valid = bool(bs) and bs[0] > 0
            bad = bs is not None and not valid
            n = cuda_graph_need(bs, a, spec, draft).bytes if valid else 0
            if not bad and capture_failure(a, list(a.piecewise_cuda_graph_tokens) if prefill_captured(a, spec)
                                           else None, bs if valid else None, int(rr)):
                bad = True
            hit = prep.memo[key] = (n, bad)
        need[i], refused[i] = hit
    return need, refused


def _decode_activations(prep: Prepared, spec: ModelSpec, r: np.ndarray) -> np.ndarray:
    """A PD decode role's activation estimate per point: headroom.activation_need with the point's R, the decode
    batch R x draft tokens x the per-token bytes (R <= 0 falls back as plan's does: the scalar estimate)."""
    from planner.engines.sglang.pipeline.headroom import activation_need  # noqa: PLC0415

    key = ("decode_act", None)
    if key not in prep.memo:  # (bytes per running request, the R <= 0 fallback), from the scalar estimate itself
        prep.memo[key] = (activation_need(prep.args, spec, 1).bytes, activation_need(prep.args, spec, None).bytes)
    per_req, fallback = prep.memo[key]
    r = np.asarray(r, dtype=np.int64)
    return np.where(r > 0, r * per_req, fallback)


def _args_at(prep: Prepared, u: int) -> ResolvedArgs:
    """The combination resolved with --max-running-requests ``u`` parsed onto it (u < 0, or a value SGLang refuses:
    the combination's own resolve)."""
    if u < 0 or prep.ctx is None:
        return prep.args
    key = ("args", u)
    if key not in prep.memo:
        plan0, spec, raw, containers, draft = prep.ctx
        containers = container_keys(raw) if containers is None else containers
        try:
            raw_u = parse_flags_onto(plan0.rules.flags, raw, ["--max-running-requests", str(int(u))], containers)
            prep.memo[key] = resolve(raw_u, spec, engine.device_for(plan0), plan0.env, plan0.rules, draft)
        except (SGLangArgError, Rejected):
            prep.memo[key] = prep.args
    return prep.memo[key]


def _static_needs(plan0: Plan, model: ResolvedModel, prep: Prepared, inp: dict, draft: ModelSpec | None) -> int:
    """The post-pool estimates (headroom.estimate_needs) that do not depend on the numeric point."""
    from planner.engines.sglang.pipeline.memory_profile import Profile  # noqa: PLC0415

    probe = Plan(gpu=plan0.gpu, model=model, flags=prep.combo, env=plan0.env, sglang_version=engine.VERSION,
                 free_before_bytes=plan0.free_before_bytes, free_after_bytes=plan0.free_after_bytes,
                 free_before_source="", free_after_source="", assumptions=[])
    probe.capture_bs = None
    fake = Profile(inp["pre_gib"], inp["post_gib"], 0.0, None, None, None, 0, inp["cell"], 1, 1)
    from planner.engines.sglang.pipeline.rocm import WORKSPACE_LABEL  # noqa: PLC0415 - per point (evaluate_points)

    return sum(x.bytes for x in estimate_needs(probe, prep.args, model.spec, fake, draft)
               if x.label != WORKSPACE_LABEL and not (prep.args.disaggregation_mode == "decode"
                                                      and x.label.startswith("activations")))

