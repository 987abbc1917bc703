"""``_handle_a2a_moe``'s DeepEP part, after mem_fraction_static: the hook of pipeline/expert_parallel.py (kept apart so
that module imports nothing of the argument pipeline)."""

from __future__ import annotations

from planner.engines.sglang.pipeline import expert_parallel
from planner.engines.sglang.pipeline.server_args import ArgState, _NotModelled


def a2a_moe(s: ArgState) -> None:
    """``_handle_a2a_moe`` for DeepEP (srt/server_args.py:5801-5843 @0.5.16; arg_groups/moe_hook.py:361-397
    @0.5.23), after the fraction: --deepep-mode normal turns the decode and prefill CUDA graphs off; the launch
    is refused by name where not verified."""
    why = expert_parallel.ep_refusal(s.raw, s.model, s.rules.version)
    if why:
        raise _NotModelled(why)
    if expert_parallel.backend(s.a) != "deepep":
        return
    tokens = expert_parallel.dispatch_tokens(s.env)
    if isinstance(tokens, str):
        raise _NotModelled(tokens)
    if s.post_capture_kv:
        raise _NotModelled("SGLANG_ENABLE_POST_CAPTURE_KV_SIZING=1 with --moe-a2a-backend deepep is not modelled "
                           "by this planner yet")
    if not s.mfs_user and "mem_fraction_static" in s.why:  # the reserve terms the fraction took (memory_hook)
        a2a, bcg = expert_parallel.reserve_mib(s), expert_parallel.breakable_prefill_reserve_mib(s)
        if a2a or bcg:
            s.why["mem_fraction_static"] += (
                f"; the reserve holds DeepEP's {a2a:g} MiB (reserve_for_deepep_a2a_mb)"
                + (f" and {bcg:g} MiB breakable-prefill DeepEP delta (arg_groups/memory_hook.py:391-395)"
                   if bcg else ""))
    if expert_parallel.mode(s.a) == "normal":
        s.decode_graph_on = False
        s.prefill_graph_on = False
