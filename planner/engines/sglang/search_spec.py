"""The search's speculative-decoding helpers (issue 14): the catalog's draft head when none is given, what a
DFLASH / DSPARK draft's D costs beside the recommendation, and the full re-plan that keeps a point whose whole
plan SGLang would reject (a check the vectorised scan does not run) out of the recommendations; and what a
recommendation trades against the user's flags and SGLang's defaults (:func:`trade_offs`)."""

from __future__ import annotations

from typing import Any

from planner.catalog.catalog import ResolvedModel
from planner.catalog.spec import ModelSpec
from planner.errors import BadInput
from planner.hardware.profiles import GpuProfile
from planner.engines.sglang.plan import Plan, make_plan, without_flag


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


def trade_offs(rec: Plan, base: Plan, user_flags: list[str]) -> list[str]:
    """What the recommended launch ``rec`` gives up against ``base`` (the plan of the user's own flags: SGLang's
    defaults for what they left out), each with what it costs; only what is true of this recommendation. A
    setting the user gave is "yours", one SGLang picked "SGLang's default"."""
    a, b = rec.args, base.args
    if a is None:
        return []
    flags = rec.flags
    given = " ".join(user_flags)

    def whose(*names: str) -> str:
        return "yours" if any(n in given for n in names) else "SGLang's default"

    out: list[str] = []
    if b is not None and a.speculative_algorithm and a.speculative_algorithm == b.speculative_algorithm \
            and a.speculative_algorithm not in ("DFLASH", "DSPARK"):
        d0, d1 = b.speculative_num_draft_tokens, a.speculative_num_draft_tokens
        s0, s1 = b.speculative_num_steps, a.speculative_num_steps
        if d0 and d1 and (d1 < d0 or (s0 and s1 and s1 < s0)):
            parts = ([f"steps {s0} -> {s1}"] if s0 and s1 and s1 != s0 else []) + \
                ([f"{'BFS breadth' if a.speculative_algorithm == 'NGRAM' else 'top-k'} {b.speculative_eagle_topk} -> "
                  f"{a.speculative_eagle_topk}"]
                 if b.speculative_eagle_topk != a.speculative_eagle_topk else []) + \
                ([f"draft tokens {d0} -> {d1}"] if d1 != d0 else [])
            who = whose("--speculative-num-steps", "--speculative-num-draft-tokens", "--speculative-eagle-topk")
            out.append(f"a shorter draft than {who} ({', '.join(parts)}): at most {d1} tokens per verify step, "
                       f"not {d0} (slower decoding when the draft guesses well)")
    if a.disable_overlap_schedule and not (b.disable_overlap_schedule if b is not None
                                           else "--disable-overlap-schedule" in given):
        out.append("the overlap schedule is off (lower decode throughput)")
    if a.disable_radix_cache and not (b.disable_radix_cache if b is not None else "--disable-radix-cache" in given):
        out.append("the radix cache is off (no prefix reuse: a shared prompt prefix is computed again per request)")
    kv0 = str(b.kv_cache_dtype if b is not None else "auto")
    if str(a.kv_cache_dtype).startswith("fp8") and not kv0.startswith("fp8"):
        was = "the model's dtype" if kv0 == "auto" else f"{kv0} ({whose('--kv-cache-dtype')})"
        out.append(f"the KV cache is {a.kv_cache_dtype} instead of {was}: fewer bytes per token, some quality loss")
    if rec.state is not None and base.state is not None and rec.state.ssm_dtype != base.state.ssm_dtype \
            and "bfloat16" in str(rec.state.ssm_dtype):
        out.append(f"the mamba ssm state is {rec.state.ssm_dtype} instead of {base.state.ssm_dtype}: half the "
                   "state bytes, some quality loss")
    if b is not None:
        c0, c1 = b.chunked_prefill_size, a.chunked_prefill_size
        if c0 and c1 and 0 < c1 < c0:
            out.append(f"prefill chunks of {c1:,} tokens, not {whose('--chunked-prefill-size')} {c0:,} (slower first "
                       "token on long prompts)")
        g0, g1 = b.cuda_graph_max_bs, a.cuda_graph_max_bs
        r = rec.profile.max_running_requests if rec.profile is not None else None
        if g0 and g1 and g1 < g0 and r and r > g1:
            out.append(f"CUDA graphs up to batch {g1} instead of {g0} ({whose('--cuda-graph-max-bs')}): decode "
                       f"batches of {g1 + 1}-{r} run without graphs (slower)")
        if a.page_size and b.page_size and a.page_size > b.page_size and not a.disable_radix_cache:
            out.append(f"page size {a.page_size} instead of {b.page_size} ({whose('--page-size')}): prefixes are "
                       f"reused in whole pages of {a.page_size} tokens")
    elif "--chunked-prefill-size" in flags and "--chunked-prefill-size" not in given:
        out.append("a smaller prefill chunk than SGLang's default: a long prompt takes more forward passes")
    return out
