"""DP attention: one attention-DP rank of ``--tp-size T --dp-size D --enable-dp-attention`` (0.5.23 also
``--attn-dp-size D``), as SGLang sizes it. Verified against SGLang's own code (tests/golden/dp_ep/: cases,
random, wide) on 0.5.16 and 0.5.20-0.5.23 (:data:`DP_VERIFIED`) for MLA models (DeepSeek-V3 / R1, Kimi-K2; DeepSeek-V3.2 with the DSA
indexer, whose indexer projections are ReplicatedLinear either way, layers/attention/dsa/dsa_indexer.py:414-438
@0.5.16), NEXTN / EAGLE on DeepSeek-V3's own MTP layer, the GQA MoE architectures of :data:`GQA_ARCHS` and
--enable-dp-lm-head; every other combination is refused by name.

What changes per rank (each line cites the rule):
- the attention widths: attn_dp_size = D, attn_tp_size = T // D (layers/dp_attention.py:293-307 @0.5.16;
  arg_groups/parallel_hook.py:39-61 @0.5.23 turns the deprecated spelling into --attn-dp-size D, --dp-size 1);
  MLA's latent cache is one head at every attention-TP width, so the KV cell does not change;
- mem_fraction_static reserves max_bs x D x 3 MiB more, and max_bs x D x 1.5 MiB more again when the decode
  graph's max bs > 300 (srt/server_args.py:4175-4183 @0.5.16; arg_groups/memory_hook.py:369-378 @0.5.23);
- chunked_prefill_size // D, after the fraction was computed from the undivided size
  (srt/server_args.py:5605-5609 @0.5.16; arg_groups/parallel_hook.py:331 @0.5.23);
- --max-running-requests is per DP worker: R // D (mem_cache/kv_cache_configurator.py:1631 @0.5.16, :2272
  @0.5.20, :2301 @0.5.21, :2809 @0.5.22; max(1, R // D) only from 0.5.23, kv_cache_configurator.py:3128 @0.5.23), and the request
  pools are sized from it;
- the weights: attention (q_b / kv_b / o projections) and the vocabulary embedding are split over attn_tp instead
  of tp (models/deepseek_v2.py:1591-1707, layers/vocab_parallel_embedding.py:185 get_embedding_tp_kwargs @0.5.16;
  parallel_group="attn_tp", models/deepseek_v2.py:2078-2160, vocab_parallel_embedding.py:166-185 @0.5.23); the LM
  head stays split over tp unless --enable-dp-lm-head (then over attn_tp: weights.dp_lm_head_bytes; SGLang's
  sizing does not read it, tests/golden/dp_ep wide *_dplmhead), the dense MLP layers too (enable_moe_dense_fully_dp
  is off by default, models/deepseek_v2.py:2129-2142 @0.5.16);
- GQA MoE: the KV heads per attention-TP rank, get_num_kv_heads(attn_tp) with one head replicated below 1
  (models/qwen3_moe.py:453-496 @0.5.16), and q / k / v / o and the embedding split over attn_tp
  (weights.dp_attention_gqa_bytes);
- 0.5.16 turns the default prefill CUDA graph off (:func:`prefill_graph_off`), so its len(capture list) x 8 MiB
  reserve goes; 0.5.23 keeps it.

Expert parallel (--ep-size E dividing tp, DeepEP, redundant experts): see pipeline/expert_parallel.py
(ep_refusal moved there; re-exported here). EPLB and the other all-to-all backends stay refused by name.
"""

from __future__ import annotations

from typing import Any

from planner.engines.sglang.pipeline.expert_parallel import ep_refusal  # noqa: F401 (moved; re-exported)

VERIFIED = ("0.5.16", "0.5.23")  # expert parallel (ep_refusal)
# DP attention: the releases whose oracle adapters stamp the attention-DP widths (scripts/oracle/adapters/v0_5_16.py,
# v0_5_20.py, v0_5_21.py for 0.5.21 / 0.5.22, v0_5_23.py) and whose golden sets agree
# (tests/golden/dp_ep/sglang-<release>/). 0.5.9-0.5.15 and 0.5.17-0.5.19 are refused: 0.5.17-0.5.19 do not publish
# the resolved widths the stand-ins read, and the older adapters build their parallel state with attn_dp_size 1,
# so the oracle cannot check them.
DP_VERIFIED = ("0.5.16", "0.5.20", "0.5.21", "0.5.22", "0.5.23")


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
    """check_scope's part (no model needed): the release, DP attention without a DP width."""
    version = getattr(rules, "version", None)
    if version not in DP_VERIFIED:
        return (f"{_flag(raw)}: DP attention on SGLang {version} is not modelled by this planner yet; modelled: "
                f"{', '.join(DP_VERIFIED)}")
    if width(raw) <= 1:
        return ("--enable-dp-attention without --dp-size > 1: not modelled (SGLang turns DP attention off at dp 1; "
                "not verified here)")
    return None


# GQA MoE architectures verified with DP attention: their attention builds QKVParallelLinear / o_proj over the
# attention-TP group (attn_tp_size, with a KV head replicated when attn_tp > kv heads) and the embedding over it
# (models/qwen3_moe.py:453-496, qwen2_moe.py:837-841; glm4_moe.py:205-248, 1039-1042; minimax_m2.py:287-330,
# 1102-1106 @0.5.16)
GQA_ARCHS = {"Qwen3MoeForCausalLM": "Qwen3-MoE", "Glm4MoeForCausalLM": "GLM-4.x MoE",
             "MiniMaxM2ForCausalLM": "MiniMax-M2"}
# hybrid Gated DeltaNet MoE, text-only: the GDN projections and the mamba state over attn_tp (models/qwen3_next.py:
# 99-232, configs/qwen3_next.py:291-301 @0.5.16), the mamba slots per DP shard (max_mamba_cache_size // attn_dp,
# or R // attn_dp with the radix cache off: mem_cache/kv_cache_configurator.py:1713-1741 @0.5.16, :3304-3336 @0.5.23)
HYBRID_ARCHS = {"Qwen3NextForCausalLM": "Qwen3-Next", "Qwen3_5MoeForConditionalGeneration": "Qwen3.5-MoE"}
# Qwen3.5-MoE's vision tower is split over attn_tp as well (models/qwen3_vl.py:112-132, 264-295 @0.5.16;
# --mm-enable-dp-encoder, which replicates it, is refused by the flag audit)
VISION_ARCHS = ("Qwen3_5MoeForConditionalGeneration",)
MODELLED = ("MLA models (DeepSeek-V3 / R1, V3.2 with the DSA indexer, Kimi-K2), the GQA MoE models "
            + " / ".join(GQA_ARCHS.values()) + " and the hybrid GDN MoE " + " / ".join(HYBRID_ARCHS.values()))
# speculative decoding verified with DP attention: NEXTN / EAGLE on the checkpoint's own MTP layer (no separate
# draft) of an MLA model (DeepSeek-V3 / R1, V3.2) or GLM-4.x MoE; the draft's weights under DP attention are the
# planner's estimate (weights.dp_attention_draft_bytes)
SPEC = ("NEXTN", "EAGLE")
SPEC_GQA_ARCHS = ("Glm4MoeForCausalLM",)


def family(model) -> str | None:
    """'mla' (with or without DSA), 'gqa' (a verified GQA MoE architecture, text-only: full attention, or hybrid
    GDN), else None."""
    if model.mla is not None:
        return "mla"
    if (model.architecture in GQA_ARCHS and model.hybrid is None and model.sliding is None
            and model.vision is None):
        return "gqa"
    if model.architecture in HYBRID_ARCHS and model.hybrid == "gdn" and (model.vision is None
                                                                         or model.architecture in VISION_ARCHS):
        return "gqa"  # its full-attention layers as GQA, the GDN layers beside them
    return None


def _spec_refusal(raw: dict[str, Any], model) -> str | None:
    """Speculative decoding with DP attention: NEXTN / EAGLE on an MLA checkpoint's own MTP layer only."""
    algo = str(raw.get("speculative_algorithm") or "").upper()
    if not algo:
        return None
    if (algo in SPEC and (model.mla is not None or model.architecture in SPEC_GQA_ARCHS) and model.mtp_layers
            and not raw.get("speculative_draft_model_path")):
        return None
    return (f"{_flag(raw)}: DP attention with --speculative-algorithm {algo} on {model.name} is not modelled by this "
            "planner yet; modelled: NEXTN / EAGLE on the checkpoint's own MTP layer of DeepSeek-V3 / R1 / V3.2 and "
            "GLM-4.x MoE")


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
    if version not in DP_VERIFIED:
        return (f"{_flag(raw)}: DP attention on SGLang {version} is not modelled by this planner yet; modelled: "
                f"{', '.join(DP_VERIFIED)}")
    fam = family(model)
    if fam is None:
        return f"{_flag(raw)}: DP attention for {model.name} is not modelled yet; modelled: {MODELLED}"
    if fam == "gqa" and model.quant_method and not _block_fp8(model):
        return (f"{_flag(raw)}: DP attention on a {model.quant_method} checkpoint of {model.name} is not modelled "
                "yet (the attention weights' split over attn_tp is sized for bf16 / block-FP8 checkpoints only)")
    return _spec_refusal(raw, model)


def _block_fp8(model) -> bool:
    q = model.raw.get("quantization_config")
    return (isinstance(q, dict) and str(q.get("quant_method", "")).lower() == "fp8"
            and bool(q.get("weight_block_size")))


def attn_tp(tp: int, d: int) -> int:
    """attn_tp_size = tp // attn_dp_size (layers/dp_attention.py:293-307 @0.5.16): the width the attention
    layers (KV heads, q / o projections) are split over."""
    return max(1, tp // max(1, d))


def prefill_graph_off(raw: dict[str, Any], version: str) -> bool:
    """0.5.16 disables the default prefill CUDA graph (breakable, or tc_piecewise for validated multimodal archs)
    under DP attention unless the user set --cuda-graph-backend-prefill (the "DP attention" rules of
    _disable_tc_piecewise_cudagraph_if_incompatible / _disable_breakable_cudagraph_if_incompatible,
    srt/server_args.py:3649-3660, 3700, 3799 @0.5.16); 0.5.23's rules have no DP-attention entry
    (arg_groups/cuda_graph_hook.py @0.5.23), so its breakable prefill graph stays on (and its reserve with it)."""
    return (version == "0.5.16" and width(raw) > 1 and raw.get("cuda_graph_backend_prefill") is None)


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
