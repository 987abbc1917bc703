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

Under DP attention (with EP / DeepEP) every point is one attention-DP rank's, as ``plan`` reports it: the grid's
--max-running-requests is divided per DP worker (memory_profile.per_dp_worker, the plan's own rule), the capture
lists are padded to attn_tp (search_eval._graphs_per_point), and the needed concurrency is the launch's over the D ranks (run_search).
A PD role is searched as its own server; the decode role's --max-running-requests is categorical (it sets the
extra decode slots and the fraction's decode reserve). tests/test_search_dp.py and tests/test_search_pd.py hold
the evaluation equal to make_plan there.

Flags the user gave stay fixed. A point is feasible when SGLang accepts the flags, every pool is
allocated, the bytes left after the pools cover the estimated later allocations with the stated
margin, and the stated needs (longest request, concurrency at that length) are met.

The parts: :mod:`planner.engines.sglang.search_space` (axes, needs, rank key), :mod:`planner.engines.sglang.search_eval` (one combination's
evaluation), :mod:`planner.engines.sglang.search_scan` (the scan over combinations: exhaustive or branch and bound),
:mod:`planner.engines.sglang.search_bound` (the branch and bound's bounds),
:mod:`planner.engines.sglang.search_spec` (speculative decoding's helpers); this module runs the search and explains it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from planner.catalog.catalog import ResolvedModel
from planner.catalog.spec import ModelSpec
from planner.engines.sglang import pipeline as engine
from planner.engines.sglang.calibration import profile_class, search_margin
from planner.engines.sglang.cli_flags import load_flag_table
from planner.engines.sglang.rules import RULES, Rules
from planner.engines.sglang.pipeline.server_args import Rejected
from planner.errors import BadInput
from planner.hardware.profiles import GpuProfile
from planner.engines.sglang.plan import GIB, Plan, draft_from_flags, make_plan
from planner.engines.sglang.search_spec import _algo_in, _drop_rejected, d_tradeoff, default_draft_flags, trade_offs

# the search's parts (split by size), re-exported: callers import them from planner.engines.sglang.search
from planner.engines.sglang.search_eval import (  # noqa: F401
    Evaluation,
    FlagBase,
    Prepared,
    _chain,
    _default_mfs_table,
    default_range,
    ensure_table,
    evaluate_combo,
    evaluate_points,
    prepare_combo,
    run_values,
    solve_monotone,
)
from planner.engines.sglang.search_bound import bound_all, bound_grid, bound_lines, bound_parts, line_bound  # noqa: F401
from planner.engines.sglang.search_scan import _SHARED, _Scan, _scan, complete_closest, complete_scan, shared_for  # noqa: F401
from planner.engines.sglang.search_space import (  # noqa: F401
    MAMBA_SIZES,
    MFS_VALUES,
    MIB,
    OBJECTIVES,
    RATIO_VALUES,
    RUNNING,
    Candidate,
    Needs,
    _dedupe_key,
    _flag_count,
    _mildness,
    _numeric_grid,
    _rank_key,
    _score,
    point_flags,
    top_points,
)


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
    skipped_why: str = ""  # set when the branch and bound evaluated nothing, proved without it (why)
    closest_refused: str = ""  # the closest point's own plan, when SGLang refuses it (closest is then None)


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
    if model.sliding is not None and "disable_hybrid_swa_memory" not in fixed:
        # a hybrid SWA pool (pipeline/swa.py): a smaller sliding sub-pool leaves more full tokens; the concurrency
        # counts no more requests than the sliding layers hold (swa.request_capacity)
        add("swa_full_tokens_ratio", [[], ["--swa-full-tokens-ratio", "0.5"], ["--swa-full-tokens-ratio", "0.25"]])
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


def run_search(gpu: GpuProfile, model: ResolvedModel, flags: list[str], env: dict[str, str] | None = None,
               needs: Needs | None = None, free_before_gib: float | None = None,
               free_after_gib: float | None = None, draft: ModelSpec | None = None, top: int = 5,
               relax: bool = True, version: str | None = None, prune: bool = False,
               exact_top: int | None = None) -> SearchResult:
    """The feasible configurations, best first. ``prune``: branch and bound (:func:`_scan`): combinations that
    cannot hold a feasible point, or whose bound cannot reach the ``max(top, 2)``-th best point, are skipped,
    and the result is proved equal to the exhaustive search's (:func:`_proof`; when it cannot be, the skipped
    combinations are evaluated too): the same ``ranked`` (top list, recommendation, runner-up) and radix-off
    alternative, and with ``relax`` (the caller shows them when nothing is feasible) the same closest point
    and relaxations. ``evaluated`` and ``feasible`` then count the configurations evaluated (``space`` all of
    them), and the Pareto front covers the combinations evaluated. ``exact_top``: given, the branch and bound
    proves only the first ``exact_top`` ranked points (for a caller that reads only those, as the relaxations
    do: no runner-up, and the radix-off combinations, which never rank when not allowed, are skipped, so
    ``no_radix_best`` is None); by default ``max(top, 2)`` (the top list and the runner-up) and the radix-off
    alternative."""
    needs = needs or Needs()
    if needs.margin_class is None and needs.margin_bytes == search_margin()[0]:  # the default: the launch's class
        cls = profile_class(gpu)
        needs = replace(needs, margin_bytes=search_margin(cls)[0], margin_class=cls)
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
    from planner.engines.sglang.pipeline.post_capture import (  # noqa: PLC0415
        HYBRID_DP_SEARCH_SKIPPED, SEARCH_SKIPPED, hybrid_dp, search_requested)

    if plan0.post_capture is not None or search_requested(env, version) or hybrid_dp(plan0):
        # the grid sizes the pool before capture / does not divide the mamba slots per DP shard
        return SearchResult(needs=needs, fixed=fixed_flags, evaluated=0, feasible=0, ranked=[], pareto=[],
                            closest=None, recommended=None,
                            skipped_why=HYBRID_DP_SEARCH_SKIPPED if hybrid_dp(plan0) else SEARCH_SKIPPED)
    fixed = given_dests(fixed_flags, plan0.rules)
    if plan0.args is not None and plan0.args.disaggregation_mode == "decode" and plan0.args.disable_radix_cache:
        fixed.add("disable_radix_cache")  # the decode role's forced chunk cache (pd_disaggregation_hook.py): no axis
    if plan0.args is not None and plan0.args.disaggregation_mode == "decode":
        # no prefill forward on a decode role (its prefill graph is off, its activations and fraction reserve are the
        # decode batch's: disaggregation.py), so the chunk size changes none of its numbers: no axis
        fixed.add("chunked_prefill_size")
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
    if plan0.args is not None and plan0.args.disaggregation_mode == "decode" and "max_running_requests" not in fixed:
        # a PD decode role: --max-running-requests sets the extra decode slots (2 x R when R <= 32,
        # pd_disaggregation_hook.py:50-62 @0.5.16) and the fraction's decode reserve (max(R x draft tokens, 2048) x
        # 1.5 MiB, memory_hook.py:298-303 @0.5.23), so each value is its own combination, resolved as plan resolves it
        axes.append(("max_running_requests", [[], *[["--max-running-requests", str(v)] for v in RUNNING if v > 0]]))
        fixed = fixed | {"max_running_requests"}
    grid = _numeric_grid(fixed, spec.is_mambaish)
    k = max(top, 2) if exact_top is None else max(1, exact_top)
    if prune and plan0.free_after_bytes <= 0:
        return _weights_do_not_fit(plan0, axes, grid, needs, fixed_flags, gpu, model, flags, env, free_before_gib,
                                   free_after_gib, draft, version, relax)
    ranks = plan0.args.attn_dp_size if plan0.args is not None else 1
    # DP attention: the points are one rank's (as plan's profile is); a request lives on one rank, so the launch's
    # needed concurrency is met when one rank holds ceil(need / D) of them (pipeline/dp_attention.rank_note)
    rank_needs = replace(needs, concurrency=-(-needs.concurrency // ranks)) if ranks > 1 else needs
    scan = _scan(plan0, model, fixed_flags, axes, grid, draft, rank_needs, need_ctx, top, prune, k, exact_top is None)
    rank_args = (gpu, model, env, free_before_gib, free_after_gib, draft, version)
    ranked, first_plan, no_radix = _rank(scan, *rank_args)
    proof = _proof(scan, ranked, rank_needs, need_ctx, k, relax) if scan.pending else "proved"
    if proof != "proved":
        (complete_closest if proof == "closest" else complete_scan)(scan, rank_needs)
        ranked, first_plan, no_radix = _rank(scan, *rank_args)
    result = SearchResult(needs=needs, fixed=fixed_flags, evaluated=scan.evaluated, feasible=scan.feasible,
                          ranked=ranked[:top], pareto=_pareto(ranked),
                          closest=None if scan.closest is None else scan.closest[1], recommended=None,
                          no_radix_best=no_radix, pruned=scan.pruned, space=scan.space)
    if ranked:
        best = ranked[0]
        result.recommended = first_plan
        result.why, result.runner_up = _why(best, ranked[1] if len(ranked) > 1 else None, needs, need_ctx, ranks)
        if costs := trade_offs(first_plan, plan0, flags):
            result.why += " Trade-offs: " + "; ".join(costs) + "."
        result.d_tradeoff = d_tradeoff(result.recommended, gpu, model, best.flags, env, free_before_gib,
                                       free_after_gib, draft, version)
    elif relax:
        _check_closest(result, gpu, model, env, free_before_gib, free_after_gib, draft, version)
        result.relaxations = _relaxations(gpu, model, flags, env, needs, free_before_gib, free_after_gib, draft,
                                          version)
    return result


def _check_closest(result: SearchResult, gpu, model, env, free_before_gib, free_after_gib, draft, version) -> None:
    """The closest point is planned in full, as the ranked ones are (_drop_rejected): the scan sizes the pools,
    and a check it does not run (a checkpoint's quant config SGLang cannot load, say) refuses every point alike,
    so a refused closest point is no guide; it is replaced by SGLang's refusal."""
    c = result.closest
    if c is None:
        return
    p = make_plan(gpu, model, c.flags, env, free_before_gib, free_after_gib, draft=draft, version=version)
    if p.verdict == "rejected":
        result.closest = None
        result.closest_refused = f"{' '.join(c.chosen) or '(defaults)'}: {p.stage}: {p.error_type}: {p.error_message}"


def _weights_do_not_fit(plan0: Plan, axes, grid, needs: Needs, fixed_flags: list[str], gpu, model, flags, env,
                        free_before_gib, free_after_gib, draft, version, relax: bool) -> SearchResult:
    """The branch and bound's answer when the weights leave no free memory: every point of every combination
    fails (evaluate_points: ``free_after_bytes <= 0``; the search's free memory after the weights is the
    launch's, which no searched flag changes), so nothing is feasible and no point is ok (no closest one); what
    the exhaustive scan finds, without resolving a combination (``tests/test_search_pruning.py`` compares)."""
    n_combos = 1
    for _, opts in axes:
        n_combos *= len(opts)
    result = SearchResult(needs=needs, fixed=fixed_flags, evaluated=0, feasible=0, ranked=[], pareto=[],
                          closest=None, recommended=None, pruned=n_combos, space=n_combos * grid["mfs"].size,
                          skipped_why=f"loading the weights leaves {plan0.free_after_bytes / GIB:.2f} GiB per GPU, "
                                      "and no searched flag changes that")
    if relax:
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


def _proof(scan: _Scan, ranked: list[Candidate], needs: Needs, need_ctx: int, k: int, need_closest: bool) -> str:
    """Whether the branch and bound's result is the exhaustive one: "proved" when the ``k`` first ranked points
    (the top list and the runner-up) and the radix-off alternative all rank strictly above every skipped
    combination's bound, so no skipped point could come before them or tie with them; "closest" when that holds
    but nothing is ranked and the caller reads the closest point (complete_closest finds it); else "all" (a
    ranked point is missing or not proved: complete_scan evaluates every skipped combination)."""
    if scan.pruned_ub is not None:
        if len(ranked) < k or _rank_key(ranked[k - 1], needs.objective, ranked[k - 1].chosen, need_ctx)[:3] \
                <= scan.pruned_ub:
            return "all"
    if scan.pruned_nr_ub is not None and (scan.no_radix is None or scan.no_radix[0][:3] <= scan.pruned_nr_ub):
        return "all"
    return "closest" if not ranked and need_closest else "proved"


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


def _why(best: Candidate, second: Candidate | None, needs: Needs, need_ctx: int, ranks: int = 1) -> tuple[str, str]:
    obj = {"concurrency": f"the most requests of {need_ctx:,} tokens at once ({best.concurrency})",
           "kv-tokens": f"the most KV tokens ({best.kv_tokens:,})",
           "headroom": f"the most memory left after every allocation ({best.headroom_left / GIB:.2f} GiB)"}[needs.objective]
    # what it gives up against the user's flags / SGLang's defaults: run_search adds it (search_spec.trade_offs)
    why = f"It gives {obj}, with {best.running} running requests and {best.kv_tokens:,} KV tokens."
    if ranks > 1:  # DP attention: the numbers are one attention-DP rank's; the launch holds D x them
        why = (f"It gives {obj} per attention-DP rank, with {best.running} running requests and "
               f"{best.kv_tokens:,} KV tokens per rank; x {ranks} ranks: {best.concurrency * ranks} requests of "
               f"{need_ctx:,} tokens, {best.running * ranks:,} running requests, {best.kv_tokens * ranks:,} KV tokens "
               "(each request lives on one rank).")
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
    from pathlib import Path  # noqa: PLC0415

    from planner.catalog.drafts import launch_flags  # noqa: PLC0415

    path = model.path or (_hf_id(model) or model.spec.name)
    if model.path and Path(model.path).name == "config.json":
        path = str(Path(model.path).parent)  # SGLang loads the checkpoint directory, not its config.json
    # Hugging Face ids, not catalog names: the line runs as printed (a catalog draft -> its published head)
    return shlex.join(["python", "-m", "sglang.launch_server", "--model-path", path, *launch_flags(flags)])


def _hf_id(model: ResolvedModel) -> str | None:
    from planner.catalog.catalog import load_catalog  # noqa: PLC0415

    for e in load_catalog():
        if e.id == model.catalog_id:
            return e.hf_id
    return None


def recommendation_dict(res: SearchResult, model: ResolvedModel) -> dict[str, Any] | None:
    from planner.engines.sglang.summary import build_summary  # noqa: PLC0415

    if res.recommended is None:
        return None
    best = res.ranked[0]
    return {"flags": best.flags, "chosen": best.chosen, "command": launch_command(model, best.flags),
            "why": res.why, "runner_up": res.runner_up, "summary": build_summary(res.recommended),
            "concurrency_at_need": best.concurrency, "kv_tokens": best.kv_tokens, "running": best.running,
            "longest_request": best.longest, "headroom_left_bytes": best.headroom_left}


def search_dict(res: SearchResult) -> dict[str, Any]:
    def cand(c):
        return {"flags": c.flags, "chosen": c.chosen, "concurrency_at_need": c.concurrency, "kv_tokens": c.kv_tokens,
                "running": c.running, "longest_request": c.longest, "headroom_left_bytes": c.headroom_left}

    # space: configurations in the searched space; pruned: combinations the branch and bound skipped (proved)
    out = {"evaluated": res.evaluated, "space": res.space, "pruned": res.pruned, "feasible": res.feasible,
           "needs": vars(res.needs),
            "top": [cand(c) for c in res.ranked], "pareto": [cand(c) for c in res.pareto[:20]],
           "closest": None if res.closest is None else cand(res.closest), "would_fit_with": res.relaxations}
    if res.skipped_why:  # nothing evaluated: proved without it (run_search)
        out["none_evaluated_because"] = res.skipped_why
    if res.closest_refused:  # the closest point's plan is refused by SGLang (run_search._check_closest)
        out["closest_refused"] = res.closest_refused
    return out
