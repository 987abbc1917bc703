"""Plain-words explanation of a plan: the binding constraint and the flag that changes it.

Everything here re-runs the same pure pipeline (:func:`planner.engines.sglang.plan.make_plan`) with one flag
changed, so a suggestion is only printed when the pipeline says it boots.
"""

from __future__ import annotations

from planner.engines.sglang.plan import GIB, Plan, make_plan, without_flag


def _gib(n: int | float) -> str:
    return f"{n / GIB:.2f} GiB"


def _with_flag(flags: list[str], name: str, value: str) -> list[str]:
    return [*without_flag(flags, name), name, value]


def _replan(plan: Plan, flags: list[str]) -> Plan:
    return make_plan(plan.gpu, plan.model, flags, plan.env,
                     plan.free_before_bytes / GIB, plan.free_after_bytes / GIB, version=plan.sglang_version)


def best_max_running_requests(plan: Plan, exhaustive: bool = False) -> tuple[int, Plan] | None:
    """The --max-running-requests (<= the current value) that boots with the most running requests,
    then the most KV tokens (the largest such value on a tie): a larger value than the mamba slots allow only
    wastes reservation.

    Along r = 1..hi the plan is monotone (more requests, more reserved; tests/test_explain_fix.py checks this
    function against planning every value over the states it is asked for): the values that boot are a prefix
    1..b; R = min(r, g(r)) with the slots' share g shrinking as r grows, so R(r) = r on a prefix 1..r* and
    R <= r* after it, the KV tokens shrinking with r. The answer is r* (or the values after it with the same
    R and KV tokens, the largest of them): b, r* and that run are bisected, about 3 log2(hi) plans instead of
    hi. Where the default fraction moves with r (0.5.22+, r <= MOVES_UP_TO) the values are planned from there
    down, only while one can still win (R <= r); above it the stretch is bisected as before. ``exhaustive``: plan
    every value."""
    a = plan.args
    hi = a.max_running_requests if a and a.max_running_requests else 48
    plans: dict[int, Plan] = {}

    def at(r: int) -> Plan:
        if r not in plans:
            plans[r] = _replan(plan, _with_flag(plan.flags, "--max-running-requests", str(r)))
        return plans[r]

    def boots(r: int) -> bool:
        p = at(r)
        return p.outcome == "ok" and p.verdict == "fits"

    def key(r: int) -> tuple[int, int]:
        prof = at(r).profile
        return prof.max_running_requests, prof.max_total_num_tokens

    def runs_all(r: int) -> bool:  # R(r) = r: the slots are not what caps the running requests
        return boots(r) and key(r)[0] == r

    # 0.5.22+: the default mem_fraction_static moves with r (the graph max_bs is clipped to it,
    # srt/arg_groups/memory_hook.py:182-188 @0.5.22), so the KV tokens are not monotone in r there
    moves = a is not None and a.rules.graph_max_bs_clipped_to_mrr and not a.mem_fraction_static_user
    if exhaustive:
        return _scan_down(hi, 1, None, boots, key, at, exhaustive=True)
    if not moves:
        if hi > 1 and boots(hi) and not boots(1):
            # the values that boot are not a prefix: the post-pool needs (the draft's CUDA graphs, issue 23) can outgrow
            # the headroom at a small r while the headroom grows with r; plan them one by one
            return _scan_down(hi, 1, None, boots, key, at)
        found = _best_where_monotone(1, hi, boots, runs_all, key)
        return None if found is None else (found, at(found))
    # above MOVES_UP_TO the default fraction no longer moves with r: that stretch is monotone again
    best = None
    if hi > MOVES_UP_TO:
        found = _best_where_monotone(MOVES_UP_TO + 1, hi, boots, runs_all, key)
        best = None if found is None else (found, at(found))
        hi = MOVES_UP_TO
    return _scan_down(hi, 1, best, boots, key, at)


# The default fraction moves with --max-running-requests only below this: the decode graph's default max_bs is
# at most 512 in every GPU tier (srt/arg_groups/memory_hook.py:120-170 @0.5.22) and is clipped to a smaller
# explicit value (:182-188), and Qwen3-VL's raise to the value stops at 512 (model_overrides/qwen3_vl.py:46)
MOVES_UP_TO = 512


def _best_where_monotone(lo: int, hi: int, boots, runs_all, key) -> int | None:
    """On a stretch lo..hi where the plan is monotone in r (the values that boot are a prefix, R(r) = r on a
    prefix lo..r* and R <= r* after it, the KV tokens shrinking): the best value, the largest of the run of
    r*'s key after r*; None when none boots. When R(lo) < lo there is no such prefix: every later value has at
    most lo's R and KV tokens (R = min(r, g(r)) <= g(lo) = R(lo)), so the best is the run of lo's key."""
    top = hi
    if not boots(hi):
        if hi == lo or not boots(lo):
            return None
        top = _last_true(lo, hi, boots)  # boots(lo), not boots(hi)
    r = lo if not runs_all(lo) else top if runs_all(top) else _last_true(lo, top, runs_all)
    if r < top:  # a tie goes to the larger value, as the scan from hi gives: the run of r's key
        k = key(r)
        r = top if key(top) == k else _last_true(r, top, lambda x: key(x) == k)
    return r


def _scan_down(hi: int, lo: int, best, boots, key, at, exhaustive: bool = False):
    """From hi down to lo, the value with the largest key (a tie keeps the larger value, ``best`` included), only
    while one can still win: R(r) <= r (memory_profile._running_requests)."""
    for r in range(hi, lo - 1, -1):
        if not exhaustive and best is not None and r < key(best[0])[0]:
            break  # no value below beats the best R
        if boots(r) and (best is None or key(r) > key(best[0])):
            best = (r, at(r))
    return best


def _last_true(lo: int, hi: int, pred) -> int:
    """The largest x in [lo, hi) with pred(x), for pred true at lo, false at hi and monotone between."""
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if pred(mid) else (lo, mid)
    return lo


def running_requests_fix(plan: Plan) -> tuple[int, Plan] | None:
    """:func:`best_max_running_requests` for the Fix line, found once per plan (the report reads it for the Fix
    and again to say how the Fix and a recommendation relate)."""
    if "_running_requests_fix" not in plan.__dict__:
        plan.__dict__["_running_requests_fix"] = best_max_running_requests(plan)
    return plan.__dict__["_running_requests_fix"]


def fix_flags(plan: Plan) -> list[str]:
    """The flags the report's Fix line adds to the user's (``[]`` when it prints none)."""
    a = plan.args
    if plan.verdict != "rejected" or plan.stage != "resolve_memory_pool_config" or a is None or not a.spec_on \
            or plan.profile is None:
        return []
    found = running_requests_fix(plan)
    return [] if found is None else ["--max-running-requests", str(found[0])]


def explain(plan: Plan) -> tuple[str, list[str]]:
    """(binding constraint sentence, list of suggested changes with numbers)."""
    a, prof = plan.args, plan.profile
    advice: list[str] = []
    if plan.verdict == "rejected" and plan.stage in ("server_args", None):
        return (f"SGLang rejects these flags before touching the GPU ({plan.rule}).", advice)
    if plan.verdict == "rejected" and plan.stage == "resolve_memory_pool_config" and prof is not None:
        rest = prof.rest_gib_before_mamba * GIB
        parts = [f"After the weights SGLang has {_gib(rest)} to size pools from "
                 f"(free after load {prof.post_model_load_gib:.2f} - P {prof.pre_model_load_gib:.2f} x "
                 f"(1 - mem_fraction_static {a.mem_fraction_static:.4f}))."]
        if prof.spec_reserved_bytes:
            per = prof.mamba_cache_per_req_bytes
            parts.append(
                f"Speculative decoding first reserves {per / (1 << 20):.1f} MiB (mamba state per request) x "
                f"{a.max_running_requests} (max_running_requests{'' if a.max_running_requests_user else ', defaulted to 48 under spec'}) "
                f"x {a.speculative_num_draft_tokens} draft tokens = {_gib(prof.spec_reserved_bytes)} for intermediate "
                "states (model_runner_kv_cache_mixin.py:78-92).")
        if prof.max_mamba_cache_size is not None and prof.max_mamba_cache_size > 0 and per_ok(prof):
            parts.append(f"Then the mamba cache takes {prof.max_mamba_cache_size} x {prof.mamba_cache_per_req_bytes / (1 << 20):.1f} MiB"
                         f" = {_gib(prof.max_mamba_cache_size * prof.mamba_cache_per_req_bytes)}.")
        if a.max_mamba_cache_size is not None and "--mamba-full-memory-ratio" in " ".join(plan.flags):
            parts.append("--max-mamba-cache-size is explicit, so --mamba-full-memory-ratio is silently ignored.")
        if plan.error_type == "RuntimeError" and "hybrid (mamba" in (plan.error_message or "").lower():
            parts.append("That leaves no room for even one mamba slot" if "Computed max_mamba_cache_size" in
                         (plan.error_message or "") else "The mamba slots cannot hold one running request.")
        elif prof.available_kv_bytes is None:
            parts.append("Nothing is left for the KV cache once the weights and the mamba state are counted.")
        else:
            parts.append(f"That leaves {_gib(prof.available_kv_bytes)} for the KV cache: no room for a single token.")
        if prof.spec_reserved_bytes and prof.spec_reserved_bytes > rest * 0.25:
            parts.append("The flag that matters is --max-running-requests: it sizes that reservation.")
        found = running_requests_fix(plan) if a.spec_on else None
        if found:
            r, p = found
            pp = p.profile
            advice.append(f"add --max-running-requests {r}: the reservation drops to {_gib(pp.spec_reserved_bytes)}; "
                          f"{pp.max_running_requests} running requests, {pp.max_total_num_tokens:,} KV tokens "
                          f"(longest request {min(pp.max_total_num_tokens, a.context_len) - 1:,}); it boots")
        return (" ".join(parts), advice)
    if plan.verdict == "rejected":
        return (f"SGLang fails at startup in {plan.stage} ({plan.rule}).", advice)
    if prof is None:
        return ("", advice)
    n, r = prof.max_total_num_tokens, prof.max_running_requests
    est = max(min(int(n / a.context_len * 512), 4096), 2048)
    caps = {"estimate from KV tokens (clamp 2048..4096)": est}
    if a.max_running_requests is not None:
        caps[f"max_running_requests {a.max_running_requests}"] = a.max_running_requests
    else:
        caps["half the KV tokens"] = n // 2
    if prof.mamba_ratio is not None:
        caps[f"mamba slots {prof.max_mamba_cache_size} // ratio {prof.mamba_ratio}"] = \
            prof.max_mamba_cache_size // prof.mamba_ratio
    binding = min(caps, key=lambda k: caps[k])
    sentence = f"Running requests are capped at {r} by {binding}."
    if n - 1 < a.context_len - 1:
        sentence += (f" The KV pool ({n:,} tokens) is smaller than the context length ({a.context_len:,}), so no "
                     f"request may exceed {n - 1:,} tokens.")
    if plan.verdict == "oom_risk" and plan.headroom_bytes is not None and plan.headroom_bytes < 0:
        sentence += f" Out-of-memory risk: {plan.oom_allocation} exceed the memory the weights leave."
    elif plan.verdict == "oom_risk":
        sentence += f" Out-of-memory risk: {plan.oom_allocation} does not fit in what is left after the pools."
        fix = post_capture_fix(plan)
        if fix:
            advice.append(fix)
    return (sentence, advice)


def post_capture_fix(plan: Plan) -> str | None:
    """Where the risk is the CUDA-graph capture, on a release whose post-capture KV sizing is modelled: the same
    launch re-planned with SGLANG_ENABLE_POST_CAPTURE_KV_SIZING=1 (the pool sized from what the capture leaves,
    pipeline/post_capture.py), offered when that plan boots, with its numbers."""
    if "_post_capture_fix" not in plan.__dict__:
        plan.__dict__["_post_capture_fix"] = _post_capture_fix(plan)
    return plan.__dict__["_post_capture_fix"]


def _post_capture_fix(plan: Plan) -> str | None:
    from planner.engines.sglang.pipeline.post_capture import ENV, MODELLED  # noqa: PLC0415

    if "CUDA graph" not in (plan.oom_allocation or "") or plan.sglang_version not in MODELLED \
            or plan.post_capture is not None:
        return None
    try:
        p = make_plan(plan.gpu, plan.model, plan.flags, {**plan.env, ENV: "1"}, plan.free_before_bytes / GIB,
                      plan.free_after_bytes / GIB, version=plan.sglang_version)
    except Exception:  # noqa: BLE001  (a refusal of the re-plan, by name: no fix to offer)
        return None
    if p.post_capture is None or p.outcome != "ok" or p.verdict != "fits":
        return None
    pc, prof = p.post_capture, p.profile
    return (f"set {ENV}=1 in the server's environment (put '{ENV}=1 ' before the launch command; plan it with "
            f"--env {ENV}=1): SGLang then sizes the KV pool after capturing the graphs, {pc['tokens']:,} KV tokens "
            f"(now {plan.profile.max_total_num_tokens:,}, which leaves the graphs no room), {prof.max_running_requests} "
            f"running requests; it boots by the planner's graph estimate, on which that pool rests")


def per_ok(prof) -> bool:
    return prof.mamba_cache_per_req_bytes is not None
