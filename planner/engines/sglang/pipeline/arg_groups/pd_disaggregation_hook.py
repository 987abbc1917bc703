"""handle_pd_disaggregation (srt/arg_groups/pd_disaggregation_hook.py:15-96 @0.5.16, :39-200 @0.5.23): a PD
role's validations, the decode role's radix cache and its extra request slots (pipeline/disaggregation.py holds
the rest of what a role changes)."""

from __future__ import annotations

from planner.engines.sglang.pipeline import dp_attention
from planner.engines.sglang.pipeline.disaggregation import extra_slots_default, role
from planner.engines.sglang.pipeline.post_capture import ENV, requested
from planner.engines.sglang.pipeline.server_args import ArgState, Rejected, _NotModelled

# MLA roles checked against SGLang's code (tests/golden/pp_pd/*/pd_*: DeepSeek-V3 TP8 decode / prefill)
MLA_ARCHS = frozenset({"DeepseekV3ForCausalLM"})
# roles with DP attention checked against SGLang's code (tests/golden/pp_pd/*/pd_dp_*): DeepSeek-V3 / R1 (TP8, DP 2-8,
# NEXTN / EAGLE on decode), the GQA MoE and hybrid GDN MoE architectures DP attention models, text-only, without
# speculative decoding (Qwen3-235B-A22B / Qwen3-30B-A3B, GLM-4.7, MiniMax-M2, Qwen3-Next-80B-A3B)
DP_ARCHS = MLA_ARCHS | {"Qwen3MoeForCausalLM", "Glm4MoeForCausalLM", "MiniMaxM2ForCausalLM", "Qwen3NextForCausalLM"}

_HOOK = {"0.5.16": "srt/arg_groups/pd_disaggregation_hook.py:29-77 @0.5.16",
         "0.5.17": "srt/arg_groups/pd_disaggregation_hook.py:16-117 @0.5.17",
         "0.5.18": "srt/arg_groups/pd_disaggregation_hook.py:16-117 @0.5.18",
         "0.5.19": "srt/arg_groups/pd_disaggregation_hook.py:22-148 @0.5.19",
         "0.5.20": "srt/arg_groups/pd_disaggregation_hook.py:22-148 @0.5.20",
         "0.5.21": "srt/arg_groups/pd_disaggregation_hook.py:22-189 @0.5.21",
         "0.5.22": "srt/arg_groups/pd_disaggregation_hook.py:23-202 @0.5.22",
         "0.5.23": "srt/arg_groups/pd_disaggregation_hook.py:98-160 @0.5.23"}


def pd_hook(s: ArgState) -> None:
    """handle_pd_disaggregation: validations, the decode role's radix cache and its extra slots."""
    mode = role(s.raw)
    s.pd_mode = mode
    if mode == "null":
        return
    if requested(s.env, s.rules.version):
        raise _NotModelled(f"--disaggregation-mode {mode} with {ENV}=1 is not modelled by this planner yet")
    m = s.model
    if m.sliding is not None or (m.mla is not None and m.architecture not in MLA_ARCHS):
        kind = "sliding-window" if m.sliding is not None else "MLA"
        raise _NotModelled(f"--disaggregation-mode {mode} with a {kind} model ({m.architecture}) is not modelled "
                           "by this planner yet (dense, hybrid GDN / Mamba and DeepSeek-V3 / R1 MLA models are)")
    d = dp_attention.width(s.raw)
    if d > 1 and m.architecture not in DP_ARCHS:
        raise _NotModelled(f"--disaggregation-mode {mode} with DP attention on {m.name} ({m.architecture}) is not "
                           "modelled by this planner yet (modelled: DeepSeek-V3 / R1, Qwen3-MoE, GLM-4.x MoE, "
                           "MiniMax-M2, Qwen3-Next)")
    if d > 1 and m.architecture not in MLA_ARCHS and s.a.get("speculative_algorithm") is not None:
        raise _NotModelled(f"--disaggregation-mode {mode} with DP attention and --speculative-algorithm on "
                           f"{m.name} is not modelled by this planner yet (DeepSeek-V3 / R1's MTP is)")
    a, rule = s.a, _HOOK[s.rules.version]
    if mode == "prefill" and a.get("speculative_algorithm") is not None and s.rules.version != "0.5.16":
        # 0.5.22+'s prefill role skips the speculative mamba states in its pool and in the budget
        # (_pd_prefill_skips_mamba_spec_state, mem_cache/kv_cache_configurator.py:172-181, 1730-1734, 3294-3298
        # @0.5.23); 0.5.17-0.5.21 lack the rule but no prefill draft was checked there: refused on every one
        raise _NotModelled(f"--disaggregation-mode prefill with --speculative-algorithm on SGLang {s.rules.version} "
                           "is not modelled by this planner yet (its prefill pool drops the speculative states)")
    backend = a.get("disaggregation_transfer_backend") or "mooncake"
    if mode == "decode":
        if a.get("disaggregation_decode_enable_radix_cache"):
            if backend == "fake":
                raise Rejected("ValueError", "--disaggregation-decode-enable-radix-cache is incompatible with "
                               "--disaggregation-transfer-backend fake", rule)
            if a.get("speculative_algorithm") is not None:
                raise Rejected("ValueError", "--disaggregation-decode-enable-radix-cache is incompatible with "
                               f"speculative decoding (--speculative-algorithm {a['speculative_algorithm']})",
                               rule if s.rules.version == "0.5.16"
                               else "srt/arg_groups/speculative_hook.py:164-172 @0.5.23")
            if m.is_mambaish:
                raise _NotModelled("--disaggregation-decode-enable-radix-cache with a hybrid (mamba) model is not "
                                   "modelled by this planner yet")
            a["disable_radix_cache"] = False
            s.why["disable_radix_cache"] = f"--disaggregation-decode-enable-radix-cache ({rule})"
        else:
            a["disable_radix_cache"] = True
            s.why["disable_radix_cache"] = f"the decode role forces the chunk cache ({rule})"
        extra = a.get("disaggregation_decode_extra_slots")
        if extra is None:
            extra = extra_slots_default(a.get("max_running_requests"), d, s.rules.version)
            per = f" (R // {d} DP-attention workers)" if d > 1 else ""
            s.why["disaggregation_decode_extra_slots"] = (
                f"{extra}: 2 x the per-worker --max-running-requests{per} when given and <= 32, else 0 ({rule})")
        s.pd_extra = int(extra)
    elif backend == "fake":
        raise Rejected("AssertionError", "Prefill server does not support 'fake' as the transfer backend", rule)
