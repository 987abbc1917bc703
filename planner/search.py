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
    pruned: int = 0  # combinations skipped by run_search(prune=True) (their configurations not in evaluated)
    space: int = 0  # configurations in the searched space (evaluated + the skipped combinations')
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


_DEVICES: dict = {}


def _device(plan0: Plan):
    """engine.device_for(plan0), found once per GPU profile (the search asks it thousands of times)."""
    hit = _DEVICES.get(id(plan0.gpu))
    if hit is None or hit[0] is not plan0.gpu:
        hit = _DEVICES[id(plan0.gpu)] = (plan0.gpu, engine.device_for(plan0))
    return hit[1]


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
    dev = _device(plan0)
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


def ensure_table(prep: Prepared) -> None:
    """Find a lazily prepared combination's default mem_fraction_static table (:func:`_default_mfs_table`)."""
    if prep.lazy is not None:
        plan0, spec, raw, containers, draft = prep.lazy
        prep.mfs_table = _default_mfs_table(plan0, spec, raw, prep.args, prep.values, False, containers, draft,
                                            prep.memo)
        prep.lazy = None


def default_range(prep: Prepared) -> tuple[float, float]:
    """(lowest, highest) default mem_fraction_static over the grid's --max-running-requests values: the two
    ends of that monotone axis (the smallest value and the flag unset, :func:`_default_mfs_table`), without
    resolving the values between them."""
    a = prep.args.mem_fraction_static
    if not _default_moves(prep.args, prep.values):
        return a, a
    if prep.lazy is None:
        table = prep.mfs_table
        return min(a, float(table.min())), max(a, float(table.max()))
    plan0, spec, raw, containers, draft = prep.lazy
    v0 = _default_mfs_at(plan0, spec, raw, prep.args, containers, draft, prep.memo)(int(prep.values[0]))
    v0 = a if v0 is None else v0
    return min(a, v0), max(a, v0)


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
        args = resolve(raw, spec, _device(plan0), plan0.env, plan0.rules, draft)  # DFLASH reads D from it
        state = mamba_state(spec, args.tp_size, args.env)
        engine._check_heads(spec, args.tp_size)
    except Rejected as exc:
        return exc
    values = np.zeros(0, dtype=np.int64) if values is None else values
    containers = base.containers if base is not None and base.base is not None else None
    if lazy and not exhaustive:
        return Prepared(combo, args, state, values, None, lazy=(plan0, spec, raw, containers, draft))
    table = _default_mfs_table(plan0, spec, raw, args, values, exhaustive, containers, draft)
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
        cache[key] = (arrays, out, arrays["mfs"], grid)  # the grid kept alive: its id stays its own
        if grid_key is None:  # a whole grid's chain is about a MB: keep the latest _FULL_CHAINS of them
            full = cache.setdefault("_full", [])
            full.append(key)
            if len(full) > _FULL_CHAINS:
                cache.pop(full.pop(0), None)
    return inp, out, arrays["mfs"]


_FULL_CHAINS = 24


def _chain_key(prep: Prepared, grid: dict[str, np.ndarray], grid_key: tuple | None) -> tuple:
    """What the chain over ``grid`` depends on for a combination: its scalar inputs, the grid, the defaults."""
    args = prep.args
    defaults = bool(np.isnan(grid["mfs"]).any())  # points at SGLang's default fraction
    if defaults:
        ensure_table(prep)
    table = prep.mfs_table if defaults else None
    return ("chain", id(grid) if grid_key is None else grid_key, prep.inputs[1],
            args.mem_fraction_static if defaults else None, None if table is None else table.tobytes(),
            None if table is None else prep.values.tobytes(), args.mamba_full_memory_ratio,
            args.max_running_requests, args.max_mamba_cache_size)


def _point_inputs(prep: Prepared, grid: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The chain's per-point inputs over ``grid``: unset values take the combination's resolved ones."""
    args = prep.args
    n_pts = grid["mfs"].size
    mfs = grid["mfs"]
    if np.isnan(mfs).any():
        ensure_table(prep)
        mfs_default = np.full(n_pts, args.mem_fraction_static, dtype=np.float64)
        if prep.mfs_table is not None:
            run, vals = grid["run"], prep.values
            mfs_default = np.where(run >= 0, prep.mfs_table[np.minimum(np.searchsorted(vals, run), vals.size - 1)],
                                   mfs_default)
        mfs = np.where(np.isnan(mfs), mfs_default, mfs)
    ratio = np.where(np.isnan(grid["ratio"]), args.mamba_full_memory_ratio, grid["ratio"])
    # unset: the resolved value (48 under EAGLE, server_args.py:3454-3458 @0.5.11) or None (-1)
    r_default = -1 if args.max_running_requests is None else args.max_running_requests
    r_args = np.where(grid["run"] >= 0, grid["run"], r_default)
    m_exp = np.where(grid["msize"] >= 0, grid["msize"],
                     -1 if args.max_mamba_cache_size is None else args.max_mamba_cache_size)
    return dict(mfs=mfs, ratio=ratio, r_args=r_args, m_explicit=m_exp)


_SWITCHES = ("solve", "cap_by_estimate", "padding_slots", "min_one_running", "pools_sized_separately", "replay")


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
                inp[k] = np.repeat(np.array([prep.inputs[0][k] for _, prep, _ in members]), sizes)
        inp.update(zip(_SWITCHES, switches))
        out = size_chain(**inp)
        start = 0
        for (key, prep, grid), part, size in zip(members, parts, sizes):
            sl = slice(start, start + size)
            start += size
            cache[key] = (part, {k: v[sl] for k, v in out.items()}, part["mfs"], grid)


def _inputs(plan0: Plan, model: ResolvedModel, prep: Prepared, draft: ModelSpec | None) -> tuple[dict, tuple]:
    """(chain_inputs() of a combination, their scalar part as a cache key)."""
    inp = chain_inputs(prep.args, model.spec, prep.state, plan0.free_before_bytes, plan0.free_after_bytes, draft)
    return inp, tuple(sorted((k, v) for k, v in inp.items() if k != "mfs"))


def bound_values(plan0: Plan, model: ResolvedModel, prep: Prepared, grid: dict[str, np.ndarray],
                 draft: ModelSpec | None, need_ctx: int) -> dict[str, np.ndarray]:
    """What :func:`may_improve` reads (KV tokens, running requests, longest request, concurrency), from the chain
    alone: the numbers evaluate_points gives at those points, without the pools and needs."""
    _, out, _ = _chain(plan0, model, prep, grid, draft)
    n, r = out["n"], out["r"]
    return {"n": n, "r": r, "longest": np.minimum(prep.args.context_len - 1, n - 1),
            "conc": np.minimum(r, n // max(need_ctx, 1))}


def evaluate_points(plan0: Plan, model: ResolvedModel, prep: Prepared, grid: dict[str, np.ndarray],
                    draft: ModelSpec | None, needs: Needs, need_ctx: int,
                    cache: dict | None = None) -> dict[str, np.ndarray]:
    """Every numeric point of ``grid`` for a prepared combination, as arrays: :func:`size_chain` (the function
    ``plan`` runs on scalars), pool bytes, post-pool needs and feasibility."""
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
        engine.gdn_backend_check(args, spec, _device(plan0))
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

        graph_need = _graph_need(args, spec, draft, r, cache)
    need_total = prep.static_needs + graph_need
    left = headroom - need_total
    longest = np.minimum(args.context_len - 1, n - 1)
    conc = np.minimum(r, n // max(need_ctx, 1))
    fits = ok & (headroom - need_total * (1 + needs.margin) - needs.margin_bytes >= 0)
    meets = (longest >= need_ctx) & (conc >= needs.concurrency)
    return {"n": n, "r": r, "m": m, "spec_reserved": out["spec_reserved"], "available": out["available"],
            "ok": ok, "fail": fail, "pool_total": total, "headroom": headroom, "need_total": need_total,
            "left": left, "fits": fits, "feasible": fits & meets, "conc": conc, "longest": longest, "mfs": mfs}


def _graph_need(args: ResolvedArgs, spec: ModelSpec, draft: ModelSpec | None, r: np.ndarray,
                cache: dict | None) -> np.ndarray:
    """headroom.cuda_graph_need_array at the points' running requests; a pure function of the captured list, the
    graph inputs and ``r``, so combinations sharing a chain (:func:`_chain`, the same ``r`` array) and those
    inputs share it."""
    from planner.engines.sglang.pipeline.headroom import _graph_args, cuda_graph_need_array  # noqa: PLC0415

    if cache is None:
        return cuda_graph_need_array(args, spec, draft, r)
    key = ("graph", id(r), tuple(args.cuda_graph_bs), tuple(sorted(_graph_args(args, spec, draft).items())))
    hit = cache.get(key)
    if hit is None or hit[0] is not r:
        hit = cache[key] = (r, cuda_graph_need_array(args, spec, draft, r))
    return hit[1]


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
_SHARED_MAX = 2  # contexts kept (each holds a search's chains: a few MB to a few tens)


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


def _mildness(chosen: list[str]) -> int:
    """The rank key's preference for fewer and milder flag changes (:func:`_rank_key`)."""
    return -_flag_count(chosen) - 2 * sum(f in ("--disable-radix-cache", "--disable-overlap-schedule") for f in chosen)


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
        args, state = prep.args, prep.state
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
        return [(False, (0, 0, 0))] * len(items)
    col = (lambda v: np.array(v, dtype=np.int64)[:, None])
    n_ub, r_ub, m_lb = np.stack(hi_n), np.stack(hi_r), np.maximum(np.stack(lo_m), 0)
    ctx = max(need_ctx, 1)
    conc_ub = np.minimum(r_ub, n_ub // ctx)
    longest_ub = np.minimum(col(ctx_len) - 1, n_ub - 1)
    fill_ub = np.minimum(n_ub, np.maximum(r_ub, 0) * ctx)
    cap = np.where(col(capped), (col(room) - (m_lb + 1) * col(state_b)) // col(per_tok) + 1, np.iinfo(np.int64).max // 4)
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


def combo_bound(b: dict[str, np.ndarray], needs: Needs, need_ctx: int) -> tuple[bool, tuple[int, int]]:
    """(whether some line of a combination meets the needs at its bounding points (:func:`bound_grid`), the
    largest value the leading part of the rank key can take in it): concurrency, then KV in 4096-token buckets;
    for kv-tokens the other way round (the KV tokens the running requests can fill). Every point's rank key
    starts with at most this prefix; the headroom objective ranks by what shrinks with the fraction (its caller
    prunes there by the needs only)."""
    if b["n"].size == 0 or not ((b["longest"] >= need_ctx) & (b["conc"] >= needs.concurrency)).any():
        return False, (0, 0)
    conc_ub, kv_ub = int(b["conc"].max()), int(b["n"].max()) // 4096
    if needs.objective == "kv-tokens":
        fill = np.minimum(b["n"], np.maximum(b["r"], 0) * max(need_ctx, 1))
        return True, (int(fill.max()) // 4096, conc_ub)
    return True, (conc_ub, kv_ub)


def may_improve(b: dict[str, np.ndarray], needs: Needs, need_ctx: int, best: tuple | None) -> bool:
    """Whether a combination whose bounding points gave ``b`` can hold a feasible point that ranks at or above
    ``best`` (:func:`combo_bound`)."""
    meets, ub = combo_bound(b, needs, need_ctx)
    if not meets:
        return False
    return best is None or needs.objective == "headroom" or ub >= best[:2]


def _flag_count(flags: list[str]) -> int:
    return sum(1 for f in flags if f.startswith("--"))


def run_search(gpu: GpuProfile, model: ResolvedModel, flags: list[str], env: dict[str, str] | None = None,
               needs: Needs | None = None, free_before_gib: float | None = None,
               free_after_gib: float | None = None, draft: ModelSpec | None = None, top: int = 5,
               relax: bool = True, version: str | None = None, prune: bool = False,
               exact_top: int | None = None) -> SearchResult:
    """The feasible configurations, best first. ``prune``: branch and bound (:func:`_scan`): combinations that
    cannot hold a feasible point, or whose bound cannot reach the ``max(top, 2)``-th best point, are skipped,
    and the result is proved equal to the exhaustive search's (:func:`_proved`; when it cannot be, the skipped
    combinations are evaluated too): the same ``ranked`` (top list, recommendation, runner-up) and radix-off
    alternative, and with ``relax`` (the caller shows them when nothing is feasible) the same closest point
    and relaxations. ``evaluated`` and ``feasible`` then count the configurations evaluated (``space`` all of
    them), and the Pareto front covers the combinations evaluated. ``exact_top``: given, the branch and bound
    proves only the first ``exact_top`` ranked points (for a caller that reads only those, as the relaxations
    do: no runner-up, and the radix-off combinations, which never rank when not allowed, are skipped, so
    ``no_radix_best`` is None); by default ``max(top, 2)`` (the top list and the runner-up) and the radix-off
    alternative."""
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
    k = max(top, 2) if exact_top is None else max(1, exact_top)
    scan = _scan(plan0, model, fixed_flags, axes, grid, draft, needs, need_ctx, top, prune, k, exact_top is None)
    rank_args = (gpu, model, env, free_before_gib, free_after_gib, draft, version)
    ranked, first_plan, no_radix = _rank(scan, *rank_args)
    if scan.pending and not _proved(scan, ranked, needs, need_ctx, k, relax):
        complete_scan(scan, needs)
        ranked, first_plan, no_radix = _rank(scan, *rank_args)
    result = SearchResult(needs=needs, fixed=fixed_flags, evaluated=scan.evaluated, feasible=scan.feasible,
                          ranked=ranked[:top], pareto=_pareto(ranked),
                          closest=None if scan.closest is None else scan.closest[1], recommended=None,
                          no_radix_best=no_radix, pruned=scan.pruned, space=scan.space)
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


def _rank(scan: _Scan, gpu: GpuProfile, model: ResolvedModel, env: dict[str, str], free_before_gib: float | None,
          free_after_gib: float | None, draft: ModelSpec | None,
          version: str | None) -> tuple[list[Candidate], Plan | None, Candidate | None]:
    """(the feasible points best first, deduplicated, those SGLang would reject dropped; the first one's plan;
    the best radix-off point when that is not allowed, None when SGLang would reject it)."""
    cands = sorted(scan.cands, key=lambda kc: kc[0], reverse=True)  # stable: equal keys keep the product's order
    ranked, first_plan = _drop_rejected(_dedupe([c for _, c in cands]), gpu, model, env, free_before_gib,
                                        free_after_gib, draft, version)
    no_radix = None if scan.no_radix is None else scan.no_radix[1]
    if no_radix is not None and not _drop_rejected([no_radix], gpu, model, env, free_before_gib, free_after_gib,
                                                   draft, version)[0]:
        no_radix = None
    return ranked, first_plan, no_radix


def _proved(scan: _Scan, ranked: list[Candidate], needs: Needs, need_ctx: int, k: int, need_closest: bool) -> bool:
    """Whether the branch and bound's ranking is the exhaustive one: the ``k`` first ranked points (the top list
    and the runner-up) and the radix-off alternative all rank strictly above every skipped combination's bound,
    so no skipped point could come before them or tie with them. Nothing ranked: the closest point (and the
    relaxations) read every combination, so the proof holds only when the caller reads neither."""
    if not ranked and (need_closest or scan.pruned_ub is not None):
        return False
    if scan.pruned_ub is not None:
        if len(ranked) < k or _rank_key(ranked[k - 1], needs.objective, ranked[k - 1].chosen, need_ctx)[:3] \
                <= scan.pruned_ub:
            return False
    if scan.pruned_nr_ub is not None and (scan.no_radix is None or scan.no_radix[0][:3] <= scan.pruned_nr_ub):
        return False
    return True


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
    mild = _mildness(chosen)
    kv = c.kv_tokens // 4096
    if objective == "kv-tokens":  # the tokens the running requests can fill (see _score)
        kv = min(c.kv_tokens, c.running * max(need_ctx, 1)) // 4096
    left = c.headroom_left // (256 * MIB)
    if objective == "kv-tokens":
        return (kv, c.concurrency, mild, left)
    if objective == "headroom":
        return (left, c.concurrency, kv, mild)
    return (c.concurrency, kv, mild, left)


def _dedupe_key(c: Candidate) -> tuple:
    return (c.concurrency, c.kv_tokens // 4096, c.running, c.longest)


def _dedupe(cands: list[Candidate]) -> list[Candidate]:
    seen, out = set(), []
    for c in cands:
        key = _dedupe_key(c)
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
                           prune=True, exact_top=1)
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
