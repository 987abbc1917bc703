"""Memory defaults by GPU size: chunked prefill, CUDA-graph batch sizes, and mem_fraction_static.

SGLang: ``_handle_gpu_memory_settings`` (srt/server_args.py:1294-1495 @0.5.11; 4040-4190 @0.5.16); since
0.5.19 ``srt/arg_groups/memory_hook.py``.
"""

from __future__ import annotations

from planner.engines.sglang.pipeline import disaggregation, dp_attention, expert_parallel, mla
from planner.engines.sglang.pipeline.arg_groups.model_hook import large_hopper_qwen3_vl
from planner.engines.sglang.pipeline.post_capture import (
    ENV, GATE_CITE, MODELLED, fraction_reserve_mib, gate, requested, vlm_fixed_reserve,
)
from planner.engines.sglang.pipeline.server_args import (
    ArgState,
    _generate_cuda_graph_batch_sizes,
    _piecewise_tokens,
    vlm_factor,
)


def _tier(s: ArgState) -> tuple[int, int]:
    """(chunked_prefill_size, cuda_graph_max_bs) by nvidia-smi total (srt/server_args.py:1318-1381 @0.5.11)."""
    gpu_mem, tp = s.dev.total_mib, s.tp
    if gpu_mem < 20 * 1024:
        return (2048, 8)
    if gpu_mem < 35 * 1024:
        if s.rules.tier_20_35_gib_4096:  # srt/arg_groups/memory_hook.py:101-117 @0.5.20
            return (4096, 48 if tp < 4 else 160)
        return (2048, 24 if tp < 4 else 80)
    if gpu_mem < 60 * 1024:
        return (4096, 32 if tp < 4 else 160)
    if gpu_mem < 160 * 1024:
        return (8192, 256 if tp < 4 else 512)
    return (16384, 512)


def gpu_memory_defaults(s: ArgState) -> None:
    """0.3/0.4 _handle_gpu_memory_settings (srt/server_args.py:1294-1495 @0.5.11): the tier defaults, the
    decode capture list and the piecewise token list."""
    a, rules, why = s.a, s.rules, s.why
    gpu_mem = s.dev.total_mib
    cps, gmax = a["chunked_prefill_size"], a["cuda_graph_max_bs"]
    tier = _tier(s)
    if cps is None:
        cps = tier[0]
        why["chunked_prefill_size"] = f"GPU tier: nvidia-smi total {gpu_mem:.0f} MiB (server_args.py:1318-1381 @0.5.11)"
    if gmax is None:
        gmax = tier[1]
        why["cuda_graph_max_bs"] = f"GPU tier: nvidia-smi total {gpu_mem:.0f} MiB, tp={s.tp} (server_args.py:1318-1381 @0.5.11)"
        mrr_flag = a["max_running_requests"]
        if rules.graph_max_bs_clipped_to_mrr and mrr_flag is not None and gmax > mrr_flag:
            gmax = mrr_flag  # clipped to an explicit --max-running-requests (srt/arg_groups/memory_hook.py:182-188 @0.5.22)
            why["cuda_graph_max_bs"] = "clipped to --max-running-requests (srt/arg_groups/memory_hook.py:182-188 @0.5.22)"
        if (rules.qwen3_vl_graph_to_mrr and a["cuda_graph_bs"] is None and mrr_flag is not None
                and gmax < mrr_flag <= 512 and large_hopper_qwen3_vl(s)):
            gmax = mrr_flag  # expand_multimodal_decode_graph_to_running_limit (model_overrides/qwen3_vl.py:34-62 @0.5.22)
            why["cuda_graph_max_bs"] = ("Qwen3-VL on a large Hopper GPU: raised to --max-running-requests "
                                        "(srt/arg_groups/memory_hook.py:190-196 @0.5.22)")
    if a["cuda_graph_bs"] is None:
        s.graph_bs = _generate_cuda_graph_batch_sizes(gmax, s.spec_user, a["disable_cuda_graph_padding"],
                                                      append_max=rules.graph_bs_appends_max)
    else:
        s.graph_bs = list(a["cuda_graph_bs"])
        gmax = max(s.graph_bs)
    s.cps, s.gmax = cps, gmax
    pcg_max = a["piecewise_cuda_graph_max_tokens"]
    if pcg_max is None and rules.piecewise_graph_opt_in:
        pcg_max = cps  # non-MLA, no other cap (srt/server_args.py:1006-1013 @0.5.9)
        if s.model.mla is not None:
            pcg_max = mla.prefill_capture_max(s, cps)  # MLA: 2048 (srt/server_args.py:1010-1013 @0.5.9)
    elif pcg_max is None:
        pcg_max = cps  # non-MLA (srt/server_args.py:1400-1418 @0.5.11)
        if s.model.mla is not None:
            pcg_max = mla.prefill_capture_max(s, cps)  # MLA: 2048 (srt/server_args.py:1407-1414 @0.5.11)
        if a["max_total_tokens"] is not None:
            pcg_max = min(pcg_max, a["max_total_tokens"])
        if "llama-2" in str(a["model_path"]).lower():
            pcg_max = min(pcg_max, 4096)
    if rules.pcg_ctx_clamp and a["context_length"] is not None:  # srt/server_args.py:1579-1585 @0.5.13
        pcg_max = min(pcg_max, a["context_length"])
    s.pcg_tokens = a["piecewise_cuda_graph_tokens"] or _piecewise_tokens(pcg_max)


def mem_fraction_static(s: ArgState) -> None:
    """The mem_fraction_static default: total less the reserve, over total, rounded to 3 places."""
    a, rules, spec_user = s.a, s.rules, s.spec_user
    gpu_mem, cps = s.dev.total_mib, s.cps
    mfs = a["mem_fraction_static"]
    s.mfs_user = mfs is not None
    pc_on, pc_why = _post_capture_gate(s)
    s.post_capture_kv = pc_on
    if not pc_on and requested(s.env, rules.version) and rules.version in MODELLED:
        s.warn.append(f"{ENV}=1 has no effect here: {pc_why}, so SGLang sizes the KV pool before capture as usual "
                      f"(post_capture_kv_sizing_planned, {GATE_CITE[rules.version]})")
    if pc_on and dp_attention.width(s.raw) > 1:
        from planner.engines.sglang.pipeline.server_args import _NotModelled  # noqa: PLC0415

        raise _NotModelled(f"{ENV}=1 with DP attention is not modelled by this planner yet")
    if mfs is None and pc_on:
        # post-capture KV sizing: no activation / graph reserve, only the release's floor (post_capture.MODELLED)
        reserved = fraction_reserve_mib(s.tp, rules.version)
        mfs = round((gpu_mem - reserved) / gpu_mem, 3)
        s.why["mem_fraction_static"] = (
            f"round((total {gpu_mem:.0f} MiB - reserved {reserved:g} MiB) / total, 3) = {mfs}, post-capture KV "
            f"sizing: reserved = {MODELLED[rules.version]} + tp x pp / 8 x 1024 (post_capture_kv_sizing_planned "
            f"branch of the fraction @{rules.version})")
        if not vlm_fixed_reserve(rules.version):  # 0.5.16-0.5.19: the ViT factor, as without it
            mfs = _vit_factor(s, mfs)
        elif s.is_mm and not a["language_only"] and not a.get("language_model_only"):
            mfs = mfs - 8 * 1024 / gpu_mem  # adjust_mem_fraction_for_vlm (arg_groups/memory_hook.py:417-428 @0.5.23)
            s.why["mem_fraction_static"] += f" - 8192 / {gpu_mem:.0f} (multimodal, memory_hook.py:417-428)"
    elif mfs is None:
        # _handle_gpu_memory_settings (srt/server_args.py:1434-1482 @0.5.11; 4040-4090 and
        # reserve_for_graph_mb 4164-4190 @0.5.16). The terms are whole or half MiB, so their float
        # sum does not depend on the order the two releases add them in.
        decode_tokens = disaggregation.decode_activation_tokens(s)  # PD decode: R x draft tokens
        if decode_tokens is not None:
            reserved = 512.0 + decode_tokens * 1.5
        else:
            reserved = 512.0 + max(cps if cps > 0 else a["max_prefill_tokens"], 2048) * 1.5
        reserved += s.tp * (s.a.get("pp_size") or 1) / 8 * 1024  # tp_size * pp_size / 8 * 1024
        # 0.5.11-0.5.14 count it even with graphs disabled (srt/server_args.py:3285 @0.5.14)
        # reserve_for_graph_mb: no decode-graph term on a PD prefill role, no prefill-graph term on a decode role
        # (srt/server_args.py:4169-4191 @0.5.16, arg_groups/memory_hook.py:364-385 @0.5.23)
        if (s.decode_graph_on or rules.decode_term_always) and s.pd_mode != "prefill":
            reserved += s.gmax * 2
        prefill_term = s.prefill_graph_on and s.pd_mode != "decode"
        if prefill_term and s.model.mla is not None and mla.flat_prefill_reserve(s):
            reserved += mla.PREFILL_RESERVE_MIB  # flat for MLA (srt/arg_groups/memory_hook.py:384-389 @0.5.23)
        elif prefill_term:
            reserved += len(s.pcg_tokens) * 8
        reserved += dp_attention.reserve_mib(s.gmax, disaggregation.dp_reserve_width(s, dp_attention.width(s.raw)))
        reserved += expert_parallel.breakable_prefill_reserve_mib(s)  # 0.5.23: DeepEP's BCG delta, inside it too
        if gpu_mem > 60 * 1024:
            reserved = max(reserved, 10 * 1024)
        reserved += expert_parallel.reserve_mib(s)  # DeepEP's 2 GiB, on top of the floor (pipeline/expert_parallel.py)
        if spec_user is not None and not rules.cuda_graph_config:  # no speculative term since 0.5.14
            if spec_user == "STANDALONE":
                reserved += 6 * 1024
            elif spec_user != "NGRAM":  # 2 GiB in 0.5.9 (srt/server_args.py:1051-1057 @0.5.9)
                reserved += rules.spec_reserve_gib * 1024
        mfs = round((gpu_mem - reserved) / gpu_mem, 3)
        s.why["mem_fraction_static"] = (
            f"round((total {gpu_mem:.0f} MiB - reserved {reserved:g} MiB) / total, 3) = {mfs}"
            f" (_handle_gpu_memory_settings @{rules.version})")
        mfs = _vit_factor(s, mfs)
    s.mfs = mfs


def _vit_factor(s: ArgState, mfs: float) -> float:
    """adjust_mem_fraction_for_vlm's ViT factor on the fraction (server_args.py:7137-7173 @0.5.11)."""
    a = s.a
    if (s.is_mm and not a["language_only"] and s.model.raw.get("vision_config") is not None
            and disaggregation.vlm_factor_applies(s)):
        f = vlm_factor(s.model)
        mfs = mfs * f
        s.why["mem_fraction_static"] += f" x multimodal ViT factor {f!r} (server_args.py:7137-7173 @0.5.11)"
    return mfs


def dp_attention_chunked_prefill(s: ArgState) -> None:
    """DP attention: chunked_prefill_size // attn_dp_size, after the fraction (srt/server_args.py:5605-5609
    @0.5.16; arg_groups/parallel_hook.py:331 @0.5.23), and the launch refused by name where not verified."""
    from planner.engines.sglang.pipeline.server_args import _NotModelled  # noqa: PLC0415

    why = dp_attention.refusal(s.raw, s.model, s.rules.version)
    if why:
        raise _NotModelled(why)
    d = dp_attention.width(s.raw)
    if d > 1 and s.cps is not None and s.cps > 0:
        s.cps = s.cps // d
        s.why["chunked_prefill_size"] = f"// attn_dp_size {d} (DP attention, srt/server_args.py:5605-5609 @0.5.16)"


def _post_capture_gate(s: ArgState) -> tuple[bool, str]:
    """post_capture_kv_sizing_planned at the fraction's step (pipeline/post_capture.py); a condition the planner
    does not model refuses the launch by name."""
    from planner.engines.sglang.pipeline.server_args import _NotModelled  # noqa: PLC0415

    try:
        return gate(s)
    except ValueError as exc:
        raise _NotModelled(str(exc)) from None
