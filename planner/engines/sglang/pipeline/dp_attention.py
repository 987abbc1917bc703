"""DP attention: one attention-DP rank of ``--tp-size T --dp-size D --enable-dp-attention`` (0.5.23 also
``--attn-dp-size D``), as SGLang sizes it. Verified against SGLang's own code (tests/golden/dp_ep/) on 0.5.16
and 0.5.23 for MLA models (DeepSeek-V3 / R1, Kimi-K2) without speculative decoding; every other combination is
refused by name.

What changes per rank (each line cites the rule):
- the attention widths: attn_dp_size = D, attn_tp_size = T // D (layers/dp_attention.py:293-307 @0.5.16;
  arg_groups/parallel_hook.py:39-61 @0.5.23 turns the deprecated spelling into --attn-dp-size D, --dp-size 1);
  MLA's latent cache is one head at every attention-TP width, so the KV cell does not change;
- mem_fraction_static reserves max_bs x D x 3 MiB more, and max_bs x D x 1.5 MiB more again when the decode
  graph's max bs > 300 (srt/server_args.py:4175-4183 @0.5.16; arg_groups/memory_hook.py:369-378 @0.5.23);
- chunked_prefill_size // D, after the fraction was computed from the undivided size
  (srt/server_args.py:5605-5609 @0.5.16; arg_groups/parallel_hook.py:331 @0.5.23);
- --max-running-requests is per DP worker: R // D (mem_cache/kv_cache_configurator.py:1631 @0.5.16; max(1,
  R // D), kv_cache_configurator.py:3128 @0.5.23), and the request pools are sized from it;
- the weights: attention (q_b / kv_b / o projections) and the vocabulary embedding are split over attn_tp instead
  of tp (models/deepseek_v2.py:1591-1707, layers/vocab_parallel_embedding.py:185 get_embedding_tp_kwargs @0.5.16;
  parallel_group="attn_tp", models/deepseek_v2.py:2078-2160, vocab_parallel_embedding.py:166-185 @0.5.23); the LM
  head stays split over tp (--enable-dp-lm-head is refused), the dense MLP layers too (enable_moe_dense_fully_dp is
  off by default, models/deepseek_v2.py:2129-2142 @0.5.16).

Expert parallel (--ep-size E dividing tp, --moe-a2a-backend none): see pipeline/expert_parallel.py. DeepEP and the other
all-to-all backends, --ep-num-redundant-experts, EPLB and --enable-dp-lm-head stay refused by name.
"""

from __future__ import annotations

from typing import Any

from planner.engines.sglang.pipeline.expert_parallel import ep_refusal  # noqa: F401 (moved; re-exported)

VERIFIED = ("0.5.16", "0.5.23")


def width(raw: dict[str, Any]) -> int:
    """attn_dp_size: --dp-size with --enable-dp-attention, or 0.5.23's --attn-dp-size; 1 without DP attention."""
    adp = raw.get("attn_dp_size") or 1
    if adp > 1:
        return int(adp)
    dp = raw.get("dp_size") or raw.get("data_parallel_size") or 1
    return int(dp) if raw.get("enable_dp_attention") and dp > 1 else 1


def _flag(raw: dict[str, Any]) -> str:
    """The launch's DP-attention flags as the user spelled them."""
    if (raw.get("attn_dp_size") or 1) > 1:
        return f"--attn-dp-size {raw['attn_dp_size']}"
    dp = raw.get("dp_size") or raw.get("data_parallel_size") or 1
    return f"--dp-size {dp} --enable-dp-attention" if dp > 1 else "--enable-dp-attention"


def _standalone(raw: dict[str, Any]) -> bool:
    """STANDALONE with DP attention at dp > 1: SGLang rejects it itself (server_args.standalone_dp_attention)."""
    return str(raw.get("speculative_algorithm") or "").upper() == "STANDALONE" and width(raw) > 1


def scope_refusal(raw: dict[str, Any], rules) -> str | None:
    """check_scope's part (no model needed): the release, DP attention without a DP width, --enable-dp-lm-head."""
    version = getattr(rules, "version", None)
    if version not in VERIFIED:
        return (f"{_flag(raw)}: DP attention on SGLang {version} is not modelled by this planner yet; modelled: "
                f"{', '.join(VERIFIED)}")
    if width(raw) <= 1:
        return ("--enable-dp-attention without --dp-size > 1: not modelled (SGLang turns DP attention off at dp 1; "
                "not verified here)")
    if raw.get("enable_dp_lm_head"):
        return "--enable-dp-lm-head: the LM head split over the attention-TP group is not modelled yet"
    return None


def refusal(raw: dict[str, Any], model, version: str) -> str | None:
    """One line naming what is not verified for DP attention or expert parallelism, else None."""
    if _standalone(raw):
        return None  # SGLang rejects it itself (pipeline/arg_groups/speculative_hook.py)
    why = ep_refusal(raw, model, version)
    if why:
        return why
    d = width(raw)
    if d <= 1:
        return None
    tp = int(raw.get("tp_size") or raw.get("tensor_parallel_size") or 1)
    if version not in VERIFIED:
        return (f"{_flag(raw)}: DP attention on SGLang {version} is not modelled by this planner yet; modelled: "
                f"{', '.join(VERIFIED)}")
    if model.mla is None or model.mla.dsa:
        return (f"{_flag(raw)}: DP attention for {model.name} is not modelled yet; modelled: MLA models without the "
                "DSA indexer (DeepSeek-V3 / R1, Kimi-K2)")
    if raw.get("speculative_algorithm"):
        return f"{_flag(raw)}: DP attention with speculative decoding is not modelled by this planner yet"
    if tp % d:
        return None  # SGLang's own assertion rejects it (check_server_args)
    return None


def rank_note(args, profile) -> str:
    """The per-rank line: what one attention-DP rank (one GPU) gets, times the ranks."""
    d, tp = args.attn_dp_size, args.tp_size
    line = (f"per rank: DP attention, {d} attention-DP ranks of attn_tp {tp // d} over {tp} GPUs; the pools, "
            "verdict and capacity above are one rank's (one GPU's)")
    if profile is not None and profile.max_running_requests and profile.max_total_num_tokens:
        line += (f"; x {d} ranks: {profile.max_running_requests * d:,} running requests, "
                 f"{profile.max_total_num_tokens * d:,} KV tokens (each request lives on one rank)")
    return line + ("; the post-pool estimates (graphs, activations) are not calibrated for DP attention's gathered "
                   "buffers: SGLang holds back max_bs x D x 3-4.5 MiB for them in mem_fraction_static")


def reserve_mib(gmax: int, d: int) -> float:
    """The DP-attention term of mem_fraction_static's reserve (srt/server_args.py:4175-4183 @0.5.16;
    arg_groups/memory_hook.py:369-378 @0.5.23), decode graphs on or off alike."""
    if d <= 1:
        return 0.0
    extra = gmax * d * 3
    if gmax > 300:
        extra += gmax * d * 1.5
    return extra
