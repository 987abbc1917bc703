"""Plain-words explanation of a plan: the binding constraint and the flag that changes it.

Everything here re-runs the same pure pipeline (:func:`planner.plan.make_plan`) with one flag
changed, so a suggestion is only printed when the pipeline says it boots.
"""

from __future__ import annotations

from planner.plan import GIB, Plan, make_plan


def _gib(n: int | float) -> str:
    return f"{n / GIB:.2f} GiB"


def _with_flag(flags: list[str], name: str, value: str) -> list[str]:
    out, skip = [], False
    for i, f in enumerate(flags):
        if skip:
            skip = False
            continue
        if f == name:
            skip = True
            continue
        if f.startswith(name + "="):
            continue
        out.append(f)
    return out + [name, value]


def _replan(plan: Plan, flags: list[str]) -> Plan:
    return make_plan(plan.gpu, plan.model, flags, plan.env,
                     plan.free_before_bytes / GIB, plan.free_after_bytes / GIB, version=plan.sglang_version)


def best_max_running_requests(plan: Plan) -> tuple[int, Plan] | None:
    """The --max-running-requests (<= the current value) that boots with the most running requests,
    then the most KV tokens: a larger value than the mamba slots allow only wastes reservation."""
    a = plan.args
    hi = a.max_running_requests if a and a.max_running_requests else 48
    best: tuple[int, Plan] | None = None
    for r in range(hi, 0, -1):
        p = _replan(plan, _with_flag(plan.flags, "--max-running-requests", str(r)))
        if p.outcome != "ok" or p.verdict != "fits":
            continue
        key = (p.profile.max_running_requests, p.profile.max_total_num_tokens)
        if best is None or key > (best[1].profile.max_running_requests, best[1].profile.max_total_num_tokens):
            best = (r, p)
    return best


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
        found = best_max_running_requests(plan) if a.spec_on else None
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
    if plan.verdict == "oom_risk":
        sentence += f" Out-of-memory risk: {plan.oom_allocation} does not fit in what is left after the pools."
    return (sentence, advice)


def per_ok(prof) -> bool:
    return prof.mamba_cache_per_req_bytes is not None
