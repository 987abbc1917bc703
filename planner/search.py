"""Search the ratio and size flags for the configurations that boot, and rank them.

The grid has two kinds of axes:

* categorical flags (scheduler strategy, radix cache, overlap, page size, speculative steps,
  KV / ssm dtypes, context length, chunked prefill): each combination is resolved once by the
  same scalar ``ServerArgs`` mirror that ``plan`` uses (a few hundred calls);
* numeric flags (``--mem-fraction-static``, ``--mamba-full-memory-ratio``,
  ``--max-mamba-cache-size``, ``--max-running-requests``): evaluated together for every
  combination with :func:`size_chain` on numpy arrays, the very function ``plan`` runs on scalars,
  then pool bytes, post-pool needs and feasibility as array arithmetic. No Python loop runs per
  configuration.

Flags the user gave stay fixed. A point is feasible when SGLang accepts the flags, every pool is
allocated, the bytes left after the pools cover the estimated later allocations with the stated
margin, and the stated needs (longest request, concurrency at that length) are met.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from planner.catalog.catalog import ResolvedModel
from planner.catalog.spec import ModelSpec
from planner.engines.sglang import pipeline as engine
from planner.engines.sglang.calibration import search_margin
from planner.engines.sglang.cli_flags import SGLangArgError, container_keys, load_flag_table, parse_flags, parse_flags_onto
from planner.engines.sglang.rules import RULES, Rules
from planner.engines.sglang.pipeline.headroom import estimate_needs
from planner.engines.sglang.pipeline.mamba import mamba_state
from planner.engines.sglang.pipeline.memory_profile import (
    chain_inputs,
    size_chain,
)
from planner.engines.sglang.pipeline.pools import geometries, pool_bytes
from planner.engines.sglang.pipeline.arg_groups import resolve
from planner.engines.sglang.pipeline.server_args import Rejected, ResolvedArgs, check_scope, check_values
from planner.errors import BadInput
from planner.hardware.profiles import GpuProfile
from planner.plan import GIB, Plan, draft_from_flags, make_plan
from planner.search_spec import _algo_in, _drop_rejected, d_tradeoff, default_draft_flags

MIB = 1 << 20
OBJECTIVES = ("concurrency", "kv-tokens", "headroom")

# Numeric axes (NaN / -1 = leave the flag unset, i.e. SGLang's default).
MFS_VALUES = (np.nan, *np.round(np.arange(0.70, 0.951, 0.01), 2))
RATIO_VALUES = (0.9, 0.1, 0.2, 0.3, 0.5, 0.7, 1.2, 1.5, 2.0, 3.0)  # 0.9 is SGLang's default
MAMBA_SIZES = (-1, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256)
RUNNING = (-1, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 256)


@dataclass
class Needs:
    context: int | None = None  # longest request to serve, tokens (None: 32k capped at the model's)
    concurrency: int = 1  # requests at that length, at once
    speculative: str | None = None  # None: as the flags say; "off"; or an algorithm (EAGLE, NEXTN)
    allow_fp8_kv: bool = False
    allow_bf16_ssm: bool = False
    allow_no_radix: bool = False  # prefix caching stays on unless the user allows turning it off
    objective: str = "concurrency"
    margin: float = 0.20  # headroom must cover the estimated needs x (1 + margin) + margin_bytes
    # the fixed part, grounded in the post-pool estimates' measured error (calibration.search_margin)
    margin_bytes: int = field(default_factory=lambda: search_margin()[0])


@dataclass
class Candidate:
    flags: list[str]  # SGLang flags to add to the model path (fixed + chosen)
    chosen: list[str]  # the part the search chose
    concurrency: int
    kv_tokens: int
    running: int
    longest: int
    headroom_left: int  # bytes after pools and estimated needs
    feasible: bool


@dataclass
class SearchResult:
    needs: Needs
    fixed: list[str]
    evaluated: int
    feasible: int
    ranked: list[Candidate]
    pareto: list[Candidate]
    closest: Candidate | None
    recommended: Plan | None
    why: str = ""
    runner_up: str = ""
    relaxations: list[str] = field(default_factory=list)
    no_radix_best: Candidate | None = None  # the best feasible point with the radix cache off, when not allowed
    pruned: int = 0  # combinations skipped by run_search(prune=True)
    d_tradeoff: list[str] = field(default_factory=list)  # DFLASH / DSPARK: what the draft's D costs (d_tradeoff)


def given_dests(flags: list[str], rules: Rules | None = None) -> set[str]:
    """Which ServerArgs fields the user set, from the option strings in ``flags``, under the names the
    pipeline uses (0.5.14+ renames mapped back: mamba_radix_cache_strategy -> mamba_scheduler_strategy, ...)."""
    rules = rules or RULES["0.5.11"]
    table = load_flag_table(rules.flags)
    by_opt = {o: a["dest"] for a in table["actions"] for o in a["option_strings"]}
    rename = {rules.strategy_key: "mamba_scheduler_strategy", rules.graph_max_bs_key: "cuda_graph_max_bs",
              rules.graph_bs_key: "cuda_graph_bs", "tp_size": "tensor_parallel_size"}
    out = set()
    for f in flags:
        if f.startswith("--"):
            name = f.split("=", 1)[0]
            if name in by_opt:
                out.add(rename.get(by_opt[name], by_opt[name]))
    return out


def _flag_names(rules: Rules) -> tuple[str, str]:
    """The release's own spelling of the strategy and decode-graph flags (0.5.14 renamed both)."""
    if rules.strategy_key == "mamba_radix_cache_strategy":
        return "--mamba-radix-cache-strategy", "--cuda-graph-max-bs-decode"
    return "--mamba-scheduler-strategy", "--cuda-graph-max-bs"


def _categorical_axes(model: ModelSpec, fixed: set[str], needs: Needs, spec_on: bool,
                      derived_ctx: int, need_ctx: int, rules: Rules | None = None,
                      gdn_blackwell: bool = False) -> list[tuple[str, list[list[str]]]]:
    axes: list[tuple[str, list[list[str]]]] = []
    strategy_flag, graph_flag = _flag_names(rules or RULES["0.5.11"])

    def add(dest: str, options: list[list[str]]):
        if dest not in fixed:
            axes.append((dest, options))

    if model.is_mambaish:
        strategies = [[strategy_flag, "no_buffer"]]
        if model.hybrid == "gdn":
            strategies.append([strategy_flag, "extra_buffer"])
        add("mamba_scheduler_strategy", strategies)
        # tried without permission only to report what turning it off would gain (run_search)
        add("disable_radix_cache", [[], ["--disable-radix-cache"]])
    add("disable_overlap_schedule", [[], ["--disable-overlap-schedule"]])
    add("page_size", [[], ["--page-size", "64"]])
    if spec_on in ("EAGLE", "EAGLE3", "STANDALONE", True):
        add("speculative_num_steps", [["--speculative-num-steps", str(s), "--speculative-eagle-topk", "1",
                                       "--speculative-num-draft-tokens", str(s + 1)] for s in (1, 2, 3, 4)])
    elif spec_on == "NGRAM":
        # D (draft tokens from the trie) with a BFS breadth that keeps steps = D // topk = 1, as NGRAM's own
        # default 12 // 10 does (_handle_ngram, srt/arg_groups/speculative_hook.py:1309-1330 @0.5.23): fewer
        # draft tokens, fewer mamba intermediates per running request
        add("speculative_num_draft_tokens", [[], *[["--speculative-num-draft-tokens", str(d),
                                                    "--speculative-ngram-max-bfs-breadth", str(d)] for d in (8, 4)]])
    # DFLASH / DSPARK: D is the draft's trained block size and is kept (a smaller one would trade acceptance for
    # slots, which memory cannot judge); what D costs is reported beside the recommendation (d_tradeoff)
    if needs.allow_fp8_kv:
        add("kv_cache_dtype", [[], ["--kv-cache-dtype", "fp8_e4m3"]])
    if needs.allow_bf16_ssm and model.is_mambaish:
        add("mamba_ssm_dtype", [[], ["--mamba-ssm-dtype", "bfloat16"]])
    if need_ctx < derived_ctx:
        add("context_length", [[], ["--context-length", str(need_ctx)]])
    add("chunked_prefill_size", [[], ["--chunked-prefill-size", "4096"]])
    add("cuda_graph_max_bs", [[], [graph_flag, "64"]])
    if gdn_blackwell:  # some releases refuse the default backend for hybrid GDN models on Blackwell
        add("attention_backend", [[], ["--attention-backend", "triton"]])
    return axes


def _default_backend_refused(plan0: Plan) -> bool:
    """True when this release refuses the launch's attention backend for a hybrid GDN model on Blackwell
    (e.g. 0.5.9 allows only triton / trtllm_mha there): the search then also tries triton."""
    if plan0.args is None:
        return False
    try:
        engine.gdn_backend_check(plan0.args, plan0.model.spec, engine.device_for(plan0))
    except Rejected:
        return True
    return False


def _numeric_grid(fixed: set[str], mambaish: bool) -> dict[str, np.ndarray]:
    mfs = np.array([np.nan] if "mem_fraction_static" in fixed else MFS_VALUES, dtype=np.float64)
    ratio = np.array([np.nan] if ("mamba_full_memory_ratio" in fixed or not mambaish) else RATIO_VALUES)
    msize = np.array([-1] if ("max_mamba_cache_size" in fixed or not mambaish) else MAMBA_SIZES, dtype=np.int64)
    run = np.array([-1] if "max_running_requests" in fixed else RUNNING, dtype=np.int64)
    g = np.meshgrid(mfs, ratio, msize, run, indexing="ij")
    grid = {"mfs": g[0].ravel(), "ratio": g[1].ravel(), "msize": g[2].ravel(), "run": g[3].ravel()}
    # An explicit --max-mamba-cache-size makes the ratio irrelevant: keep one ratio per size.
    keep = ~((grid["msize"] >= 0) & ~np.isnan(grid["ratio"]) & (grid["ratio"] != RATIO_VALUES[0]))
    return {k: v[keep] for k, v in grid.items()}


def point_flags(combo: list[str], mfs: float, ratio: float, msize: int, run: int) -> list[str]:
    out = list(combo)
    if not np.isnan(mfs):
        out += ["--mem-fraction-static", f"{mfs:.2f}"]
    if not np.isnan(ratio) and ratio != RATIO_VALUES[0]:
        out += ["--mamba-full-memory-ratio", f"{ratio:g}"]
    if msize >= 0:
        out += ["--max-mamba-cache-size", str(int(msize))]
    if run >= 0:
        out += ["--max-running-requests", str(int(run))]
    return out


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
    return np.unique(grid["run"][grid["run"] >= 0])


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
                       draft: ModelSpec | None = None) -> np.ndarray | None:
    """SGLang's default mem_fraction_static at each explicit --max-running-requests value in ``values``, or None
    when it does not depend on it (the resolved default holds at every point).

    On 0.5.22+ an explicit --max-running-requests clips the default decode graph max_bs, which moves the
    default mem_fraction_static (srt/arg_groups/memory_hook.py:182-188 @0.5.22): more requests, a larger
    max_bs, more reserved, a smaller fraction. That is monotone, so it is solved along the axis
    (:func:`solve_monotone`) rather than resolved at every value."""
    if not (args.rules.graph_max_bs_clipped_to_mrr and not args.mem_fraction_static_user) or values.size == 0:
        return None
    dev = engine.device_for(plan0)
    containers = container_keys(raw) if containers is None else containers

    def mfs_at(u: int | None) -> float | None:  # None: this value is refused (the point keeps the unclipped default)
        if u is None:  # the flag unset: what a value too large to clip anything gives, the end of the axis
            return args.mem_fraction_static
        try:  # the flag parsed onto this combination's dict: what parsing combo + the flag gives
            raw_u = parse_flags_onto(plan0.rules.flags, raw, ["--max-running-requests", str(int(u))], containers)
            return resolve(raw_u, spec, dev, plan0.env, plan0.rules, draft).mem_fraction_static
        except (SGLangArgError, Rejected):
            return None

    found = solve_monotone([*values.tolist(), None], mfs_at, exhaustive)[:-1]
    return np.array([args.mem_fraction_static if v is None else v for v in found], dtype=np.float64)


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


def prepare_combo(plan0: Plan, model: ResolvedModel, combo: list[str], base: FlagBase | None = None,
                  values: np.ndarray | None = None, exhaustive: bool = False,
                  draft: ModelSpec | None = None) -> Prepared | Rejected:
    """Parse and resolve one combination as ``plan`` would (the Rejected when SGLang or the planner refuses it)."""
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
    table = _default_mfs_table(plan0, spec, raw, args, values, exhaustive,
                               base.containers if base is not None and base.base is not None else None, draft)
    return Prepared(combo, args, state, values, table)


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
           draft: ModelSpec | None) -> tuple[dict, dict[str, np.ndarray], np.ndarray]:
    """(the chain's inputs, :func:`size_chain` over the grid's points, their mem_fraction_static)."""
    args, state = prep.args, prep.state
    n_pts = grid["mfs"].size
    mfs_default = np.full(n_pts, args.mem_fraction_static, dtype=np.float64)
    if prep.mfs_table is not None:
        run, vals = grid["run"], prep.values
        mfs_default = np.where(run >= 0, prep.mfs_table[np.minimum(np.searchsorted(vals, run), vals.size - 1)],
                               mfs_default)
    mfs = np.where(np.isnan(grid["mfs"]), mfs_default, grid["mfs"])
    ratio = np.where(np.isnan(grid["ratio"]), args.mamba_full_memory_ratio, grid["ratio"])
    # unset: the resolved value (48 under EAGLE, server_args.py:3454-3458 @0.5.11) or None (-1)
    r_default = -1 if args.max_running_requests is None else args.max_running_requests
    r_args = np.where(grid["run"] >= 0, grid["run"], r_default)
    m_exp = np.where(grid["msize"] >= 0, grid["msize"],
                     -1 if args.max_mamba_cache_size is None else args.max_mamba_cache_size)
    inp = chain_inputs(args, model.spec, state, plan0.free_before_bytes, plan0.free_after_bytes, draft)
    inp.update(mfs=mfs, ratio=ratio, r_args=r_args, m_explicit=m_exp)
    return inp, size_chain(**inp), mfs


def bound_values(plan0: Plan, model: ResolvedModel, prep: Prepared, grid: dict[str, np.ndarray],
                 draft: ModelSpec | None, need_ctx: int) -> dict[str, np.ndarray]:
    """What :func:`may_improve` reads (KV tokens, running requests, longest request, concurrency), from the chain
    alone: the numbers evaluate_points gives at those points, without the pools and needs."""
    _, out, _ = _chain(plan0, model, prep, grid, draft)
    n, r = out["n"], out["r"]
    return {"n": n, "r": r, "longest": np.minimum(prep.args.context_len - 1, n - 1),
            "conc": np.minimum(r, n // max(need_ctx, 1))}


def evaluate_points(plan0: Plan, model: ResolvedModel, prep: Prepared, grid: dict[str, np.ndarray],
                    draft: ModelSpec | None, needs: Needs, need_ctx: int) -> dict[str, np.ndarray]:
    """Every numeric point of ``grid`` for a prepared combination, as arrays: :func:`size_chain` (the function
    ``plan`` runs on scalars), pool bytes, post-pool needs and feasibility."""
    spec, args, state = model.spec, prep.args, prep.state
    n_pts = grid["mfs"].size
    inp, out, mfs = _chain(plan0, model, prep, grid, draft)
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
    total = sum(pool_bytes(args, state, geo, dgeo, n, out["r_pool"], m, out["available"]).values())  # 0.5.9: R_pool
    headroom = plan0.free_after_bytes - total
    # post-pool needs: constant per combination, except CUDA graphs (they scale with the captured bs)
    if prep.static_needs is None:
        prep.static_needs = _static_needs(plan0, model, prep, inp, draft)
    graph_need = np.zeros(n_pts, dtype=np.int64)
    if not args.disable_cuda_graph:  # the calibrated estimate, per point's captured list (headroom.cuda_graph_need)
        from planner.engines.sglang.pipeline.headroom import cuda_graph_need_array  # noqa: PLC0415

        graph_need = cuda_graph_need_array(args, spec, draft, r)
    need_total = prep.static_needs + graph_need
    left = headroom - need_total
    longest = np.minimum(args.context_len - 1, n - 1)
    conc = np.minimum(r, n // max(need_ctx, 1))
    fits = ok & (headroom - need_total * (1 + needs.margin) - needs.margin_bytes >= 0)
    meets = (longest >= need_ctx) & (conc >= needs.concurrency)
    return {"n": n, "r": r, "m": m, "spec_reserved": out["spec_reserved"], "available": out["available"],
            "ok": ok, "fail": fail, "pool_total": total, "headroom": headroom, "need_total": need_total,
            "left": left, "fits": fits, "feasible": fits & meets, "conc": conc, "longest": longest, "mfs": mfs}


def _static_needs(plan0: Plan, model: ResolvedModel, prep: Prepared, inp: dict, draft: ModelSpec | None) -> int:
    """The post-pool estimates (headroom.estimate_needs) that do not depend on the numeric point."""
    from planner.engines.sglang.pipeline.memory_profile import Profile  # noqa: PLC0415

    probe = Plan(gpu=plan0.gpu, model=model, flags=prep.combo, env=plan0.env, sglang_version=engine.VERSION,
                 free_before_bytes=plan0.free_before_bytes, free_after_bytes=plan0.free_after_bytes,
                 free_before_source="", free_after_source="", assumptions=[])
    probe.capture_bs = None
    fake = Profile(inp["pre_gib"], inp["post_gib"], 0.0, None, None, None, 0, inp["cell"], 1, 1)
    return sum(x.bytes for x in estimate_needs(probe, prep.args, model.spec, fake, draft))


@dataclass
class _Scan:
    evaluated: int = 0
    feasible: int = 0
    pruned: int = 0
    cands: list = field(default_factory=list)  # (rank key, Candidate) of feasible points
    closest: tuple | None = None
    no_radix: tuple | None = None
    best: tuple | None = None  # the best rank key in cands (what prune compares with)


def _scan(plan0: Plan, model: ResolvedModel, fixed_flags: list[str], axes, grid: dict[str, np.ndarray],
          draft: ModelSpec | None, needs: Needs, need_ctx: int, top: int, prune: bool) -> _Scan:
    """Every categorical combination (the product of ``axes``) over the numeric grid."""
    base = FlagBase(plan0.rules.flags, model.spec.name, fixed_flags)
    values = run_values(grid)
    bound = bound_grid(grid) if prune else None
    sc = _Scan()
    for choice in itertools.product(*[opts for _, opts in axes]):
        chosen = [t for part in choice for t in part]
        prep = prepare_combo(plan0, model, fixed_flags + chosen, base, values, draft=draft)
        sc.evaluated += grid["mfs"].size
        if isinstance(prep, Rejected):
            continue
        if bound is not None and not may_improve(bound_values(plan0, model, prep, bound, draft, need_ctx),
                                                 needs, need_ctx, sc.best):
            sc.pruned += 1
            continue
        _collect(sc, evaluate_points(plan0, model, prep, grid, draft, needs, need_ctx), grid, fixed_flags, chosen,
                 needs, need_ctx, top)
    return sc


def _collect(sc: _Scan, o: dict[str, np.ndarray], grid: dict[str, np.ndarray], fixed_flags: list[str],
             chosen: list[str], needs: Needs, need_ctx: int, top: int) -> None:
    """A combination's best points into the scan: feasible ones ranked, else the closest to feasible."""
    feas = o["feasible"]
    sc.feasible += int(feas.sum())
    idx = np.flatnonzero(feas) if feas.any() else np.flatnonzero(o["ok"])
    if idx.size == 0:
        return
    score = _score(o, needs.objective, need_ctx)
    for i in top_points(idx, score, max(top, 3)):
        pf = point_flags(chosen, grid["mfs"][i], grid["ratio"][i], grid["msize"][i], grid["run"][i])
        c = Candidate(flags=fixed_flags + pf, chosen=pf, concurrency=int(o["conc"][i]), kv_tokens=int(o["n"][i]),
                      running=int(o["r"][i]), longest=int(o["longest"][i]), headroom_left=int(o["left"][i]),
                      feasible=bool(feas[i]))
        key = _rank_key(c, needs.objective, pf, need_ctx)
        if c.feasible and not needs.allow_no_radix and "--disable-radix-cache" in pf:
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


def bound_grid(grid: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The points that bound the rest: on every line of the grid (ratio, mamba size and running requests fixed)
    the largest explicit mem_fraction_static and the unset one (SGLang's default, which can be larger). KV
    tokens, running requests, the longest request and the concurrency only grow with the fraction (more memory
    for the pools: the property ``test_search`` checks), so a line's values are at most these points'."""
    mfs = grid["mfs"]
    explicit = mfs[~np.isnan(mfs)]
    keep = np.isnan(mfs) if explicit.size == 0 else (np.isnan(mfs) | (mfs == explicit.max()))
    return {k: v[keep] for k, v in grid.items()}


def may_improve(b: dict[str, np.ndarray], needs: Needs, need_ctx: int, best: tuple | None) -> bool:
    """Whether a combination whose bounding points (:func:`bound_grid`) gave ``b`` can hold a feasible point
    that ranks above ``best``: some line must meet the needs at its bound, and the leading part of the rank key
    (concurrency, then KV in 4096-token buckets; for kv-tokens the other way round) must be able to reach
    ``best``'s. The headroom objective ranks by what shrinks with the fraction: only the needs prune there."""
    if b["n"].size == 0 or not ((b["longest"] >= need_ctx) & (b["conc"] >= needs.concurrency)).any():
        return False
    if best is None or needs.objective == "headroom":
        return True
    conc_ub, kv_ub = int(b["conc"].max()), int(b["n"].max()) // 4096
    if needs.objective == "kv-tokens":
        fill = np.minimum(b["n"], np.maximum(b["r"], 0) * max(need_ctx, 1))
        return (int(fill.max()) // 4096, conc_ub) >= best[:2]
    return (conc_ub, kv_ub) >= best[:2]


def _flag_count(flags: list[str]) -> int:
    return sum(1 for f in flags if f.startswith("--"))


def run_search(gpu: GpuProfile, model: ResolvedModel, flags: list[str], env: dict[str, str] | None = None,
               needs: Needs | None = None, free_before_gib: float | None = None,
               free_after_gib: float | None = None, draft: ModelSpec | None = None, top: int = 5,
               relax: bool = True, version: str | None = None, prune: bool = False) -> SearchResult:
    """The feasible configurations, best first. ``prune``: skip the combinations that cannot hold a feasible
    point or beat the best found so far (:func:`may_improve`): the same ``ranked[0]`` (and recommendation) as
    the exhaustive search, for callers that read only that (the counts, Pareto front and closest then cover the
    combinations evaluated)."""
    needs = needs or Needs()
    if needs.objective not in OBJECTIVES:
        raise BadInput(f"--objective: expected one of {', '.join(OBJECTIVES)}, got '{needs.objective}'")
    env = dict(env or {})
    fixed_flags = list(flags)
    if needs.speculative and needs.speculative != "off" and "--speculative-algorithm" not in flags:
        fixed_flags += ["--speculative-algorithm", needs.speculative]
        fixed_flags += default_draft_flags(needs.speculative, model, fixed_flags)
    elif _algo_in(fixed_flags) in ("DFLASH", "DSPARK"):  # SGLang rejects these without a draft: offer the catalog's
        try:
            fixed_flags += default_draft_flags(_algo_in(fixed_flags), model, fixed_flags)
        except BadInput:
            pass  # no catalog head: the plan says SGLang's own rejection
    if draft is None:
        draft = draft_from_flags(fixed_flags)
    plan0 = make_plan(gpu, model, fixed_flags, env, free_before_gib, free_after_gib, draft=draft, version=version)
    if plan0.stage == "model_config" and draft is not None and "--context-length" not in " ".join(fixed_flags) \
            and draft.derived_context_len < model.spec.derived_context_len:
        # the draft's ModelConfig refuses the target's longer context (_derive_context_length): every point of
        # the search would be rejected, so the context is capped at the draft's, as the user would have to
        fixed_flags += ["--context-length", str(draft.derived_context_len)]
        plan0 = make_plan(gpu, model, fixed_flags, env, free_before_gib, free_after_gib, draft=draft, version=version)
        if needs.context is None:  # the longest request is the context less one token
            needs = replace(needs, context=min(32768, draft.derived_context_len - 1))
    version = plan0.sglang_version
    fixed = given_dests(fixed_flags, plan0.rules)
    spec = model.spec
    derived = spec.derived_context_len
    need_ctx = needs.context if needs.context is not None else min(32768, derived)
    if need_ctx < 1:
        raise BadInput("--need-context: must be at least 1 token")
    # each algorithm's own draft-shape axis (_categorical_axes): EAGLE's steps/topk/draft tokens, NGRAM's D and
    # breadth; DFLASH / DSPARK keep the draft's D (steps = topk = 1 forced, D = the block size / gamma + 1)
    spec_on = (plan0.args.speculative_algorithm if plan0.args is not None else True) \
        if "--speculative-algorithm" in fixed_flags else False
    axes = _categorical_axes(spec, fixed, needs, spec_on, derived, need_ctx, plan0.rules,
                             gdn_blackwell=_default_backend_refused(plan0))
    grid = _numeric_grid(fixed, spec.is_mambaish)
    scan = _scan(plan0, model, fixed_flags, axes, grid, draft, needs, need_ctx, top, prune)
    evaluated, feasible_count, cands, closest, no_radix = (scan.evaluated, scan.feasible, scan.cands, scan.closest,
                                                           scan.no_radix)
    cands.sort(key=lambda kc: kc[0], reverse=True)
    ranked = [c for _, c in cands]
    ranked = _dedupe(ranked)
    ranked, first_plan = _drop_rejected(ranked, gpu, model, env, free_before_gib, free_after_gib, draft, version)
    if no_radix is not None and not _drop_rejected([no_radix[1]], gpu, model, env, free_before_gib, free_after_gib,
                                                   draft, version)[0]:
        no_radix = None
    result = SearchResult(needs=needs, fixed=fixed_flags, evaluated=evaluated, feasible=feasible_count,
                          ranked=ranked[:top], pareto=_pareto(ranked), closest=None if closest is None else closest[1],
                          recommended=None, no_radix_best=None if no_radix is None else no_radix[1],
                          pruned=scan.pruned)
    if ranked:
        best = ranked[0]
        result.recommended = first_plan
        result.why, result.runner_up = _why(best, ranked[1] if len(ranked) > 1 else None, needs, need_ctx)
        result.d_tradeoff = d_tradeoff(result.recommended, gpu, model, best.flags, env, free_before_gib,
                                       free_after_gib, draft, version)
    elif relax:
        result.relaxations = _relaxations(gpu, model, flags, env, needs, free_before_gib, free_after_gib, draft,
                                          version)
    return result


def top_points(idx: np.ndarray, score: np.ndarray, k: int) -> np.ndarray:
    """The first ``k`` of ``idx`` ordered by descending score, ties in ``idx`` order: what a stable sort of the
    whole of ``idx`` gives, from a partition to the k-th best score (every point below it cannot be in the
    first k) and a stable sort of what is left."""
    s = score[idx]
    if idx.size > k:
        kth = np.partition(s, idx.size - k)[idx.size - k]
        keep = s >= kth
        idx, s = idx[keep], s[keep]
    return idx[np.argsort(-s, kind="stable")][:k]


def _score(o: dict[str, np.ndarray], objective: str, need_ctx: int = 1) -> np.ndarray:
    conc = o["conc"].astype(np.float64)
    # kv-tokens ranks the KV tokens the running requests can fill (r x the needed context at most), so one
    # running request with a huge idle pool does not win
    kv = np.minimum(o["n"], np.maximum(o["r"], 0) * max(need_ctx, 1)).astype(np.float64) if objective == "kv-tokens" \
        else o["n"].astype(np.float64)
    left = o["left"].astype(np.float64)
    if objective == "kv-tokens":
        return kv * 1e6 + conc * 1e3 + left / GIB
    if objective == "headroom":
        return left / GIB * 1e9 + conc * 1e6 + kv / 1e3
    return conc * 1e12 + kv * 1e3 + left / GIB


def _rank_key(c: Candidate, objective: str, chosen: list[str], need_ctx: int = 1) -> tuple:
    """Objective first; near-equal KV (4096-token buckets) then prefers fewer and milder flag changes."""
    mild = -_flag_count(chosen) - 2 * sum(f in ("--disable-radix-cache", "--disable-overlap-schedule") for f in chosen)
    kv = c.kv_tokens // 4096
    if objective == "kv-tokens":  # the tokens the running requests can fill (see _score)
        kv = min(c.kv_tokens, c.running * max(need_ctx, 1)) // 4096
    left = c.headroom_left // (256 * MIB)
    if objective == "kv-tokens":
        return (kv, c.concurrency, mild, left)
    if objective == "headroom":
        return (left, c.concurrency, kv, mild)
    return (c.concurrency, kv, mild, left)


def _dedupe(cands: list[Candidate]) -> list[Candidate]:
    seen, out = set(), []
    for c in cands:
        key = (c.concurrency, c.kv_tokens // 4096, c.running, c.longest)
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


def _pareto(cands: list[Candidate]) -> list[Candidate]:
    front = []
    for c in cands:
        dominated = any(
            (o.concurrency >= c.concurrency and o.kv_tokens >= c.kv_tokens and o.headroom_left >= c.headroom_left)
            and (o.concurrency > c.concurrency or o.kv_tokens > c.kv_tokens or o.headroom_left > c.headroom_left)
            for o in cands)
        if not dominated:
            front.append(c)
    return front


def _why(best: Candidate, second: Candidate | None, needs: Needs, need_ctx: int) -> tuple[str, str]:
    obj = {"concurrency": f"the most requests of {need_ctx:,} tokens at once ({best.concurrency})",
           "kv-tokens": f"the most KV tokens ({best.kv_tokens:,})",
           "headroom": f"the most memory left after every allocation ({best.headroom_left / GIB:.2f} GiB)"}[needs.objective]
    why = f"It gives {obj}, with {best.running} running requests and {best.kv_tokens:,} KV tokens."
    costs = []
    if "--disable-radix-cache" in best.chosen:
        costs.append("the radix cache is off (no prefix reuse between requests)")
    if "--disable-overlap-schedule" in best.chosen:
        costs.append("the overlap schedule is off (lower decode throughput)")
    if "fp8_e4m3" in best.chosen:
        costs.append("the KV cache is fp8 (quality)")
    if "--mamba-ssm-dtype" in best.chosen:
        costs.append("the ssm state is bf16 (quality)")
    if costs:
        why += " Trade-offs: " + "; ".join(costs) + "."
    if second is None:
        return why, ""
    diff = []
    if second.concurrency != best.concurrency:
        diff.append(f"{second.concurrency} concurrent at {need_ctx:,} tokens")
    if second.kv_tokens != best.kv_tokens:
        diff.append(f"{second.kv_tokens:,} KV tokens")
    diff.append(f"{second.headroom_left / GIB:.2f} GiB spare vs {best.headroom_left / GIB:.2f}")
    return why, f"Runner-up ({' '.join(second.chosen) or 'defaults'}): {', '.join(diff)}."


def _relaxations(gpu, model, flags, env, needs, fb, fa, draft, version) -> list[str]:
    """What would make it fit, each with numbers: shorter context, bf16 ssm, fp8 KV, TP, a larger GPU."""
    from dataclasses import replace  # noqa: PLC0415

    from planner.hardware.profiles import load_profiles  # noqa: PLC0415

    out = []
    trials = []
    ctx = needs.context if needs.context is not None else min(32768, model.spec.derived_context_len)
    if ctx > 4096:
        trials.append((f"a shorter context ({ctx // 2:,} tokens)", flags, replace(needs, context=ctx // 2), gpu))
    if not needs.allow_bf16_ssm and model.spec.is_mambaish:
        trials.append(("bf16 ssm state (--mamba-ssm-dtype bfloat16)", flags, replace(needs, allow_bf16_ssm=True), gpu))
    if not needs.allow_fp8_kv:
        trials.append(("fp8 KV cache (--kv-cache-dtype fp8_e4m3)", flags, replace(needs, allow_fp8_kv=True), gpu))
    if "--tp-size" not in flags and "--tp" not in flags:
        for tp in (2, 4, 8):
            trials.append((f"{tp} GPUs with --tp-size {tp}", [*flags, "--tp-size", str(tp)], needs, gpu))
    bigger = sorted((p for p in load_profiles() if p.vendor == "nvidia" and p.capacity_mib > gpu.capacity_mib
                     and not p.unified_memory), key=lambda p: p.capacity_mib)
    if bigger:
        trials.append((f"a larger GPU ({bigger[0].id}, {bigger[0].capacity_mib:,} MiB)", flags, needs, bigger[0]))
    for label, fl, nd, g in trials:
        try:
            given = (fb, fa) if g is gpu and not any(f == "--tp-size" for f in fl) else (None, None)
            r = run_search(g, model, fl, env, nd, *given, draft=draft, top=1, relax=False, version=version,
                           prune=True)
        except BadInput:
            continue
        if r.ranked:
            c = r.ranked[0]
            out.append(f"{label}: {c.concurrency} concurrent at {(nd.context or ctx):,} tokens, {c.kv_tokens:,} KV tokens "
                       f"with {' '.join(c.chosen)}")
        else:
            out.append(f"{label}: still does not fit")
    return out


def launch_command(model: ResolvedModel, flags: list[str]) -> str:
    import shlex  # noqa: PLC0415

    path = model.path or (_hf_id(model) or model.spec.name)
    return shlex.join(["python", "-m", "sglang.launch_server", "--model-path", path, *flags])


def _hf_id(model: ResolvedModel) -> str | None:
    from planner.catalog.catalog import load_catalog  # noqa: PLC0415

    for e in load_catalog():
        if e.id == model.catalog_id:
            return e.hf_id
    return None


def recommendation_dict(res: SearchResult, model: ResolvedModel) -> dict[str, Any] | None:
    from planner.summary import build_summary  # noqa: PLC0415

    if res.recommended is None:
        return None
    best = res.ranked[0]
    return {"flags": best.flags, "chosen": best.chosen, "command": launch_command(model, best.flags),
            "why": res.why, "runner_up": res.runner_up, "summary": build_summary(res.recommended),
            "concurrency_at_need": best.concurrency, "kv_tokens": best.kv_tokens, "running": best.running,
            "longest_request": best.longest, "headroom_left_bytes": best.headroom_left}
