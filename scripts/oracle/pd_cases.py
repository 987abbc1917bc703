"""Golden cases for PD disaggregation roles: each role (``--disaggregation-mode prefill`` / ``decode``) sized by
SGLang's own code, one oracle batch per release (SGLang imported once).

    bash scripts/oracle/oracle_copy.sh /tmp/oracle-pd
    python3 scripts/oracle/pd_cases.py regen --version 0.5.16 [--oracle /tmp/oracle-pd]            # curated set
    python3 scripts/oracle/pd_cases.py regen --version 0.5.16 --seed 1 --count 12                  # random launches
    python scripts/oracle/pd_cases.py agree --version 0.5.23 --seed 7 --count 8    # fresh seed vs the planner
    python3 scripts/oracle/pd_cases.py regen --set dp --version 0.5.23                              # DP-attention roles
    python scripts/oracle/pd_cases.py agree --set dp --version 0.5.16 --seed 21 --count 12

The oracle runs SGLang's own handle_pd_disaggregation, CUDA-graph roles, mem_fraction_static reserve and
``_build_req_to_token_pool`` (DecodeReqToTokenPool / HybridMambaDecodeReqToTokenPool on meta tensors); the
repo's adapters (scripts/oracle/adapters/v0_5_16.py, v0_5_23.py) only make the decode-graph capture list follow
the decode phase's backend, as SGLang's capture_device_graphs does. Writes
tests/golden/pp_pd/sglang-<version>/pd_cases.jsonl and pd_results.jsonl (pd_random_* for a seed).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CFG = "planner/catalog/configs/"
GPUS = {
    "h100": dict(gpu_total_mib=81559, gpu_sm="9.0", gpu_name="NVIDIA H100 80GB HBM3"),
    "h200": dict(gpu_total_mib=143771, gpu_sm="9.0", gpu_name="NVIDIA H200"),
    "b200": dict(gpu_total_mib=183359, gpu_sm="10.0", gpu_name="NVIDIA B200"),
}
MODELS = {  # planner catalog id -> config the oracle reads
    "qwen3-32b": CFG + "Qwen__Qwen3-32B.config.json",
    "qwen3.6-27b": CFG + "Qwen__Qwen3.6-27B.config.json",
    "qwen3.5-397b-a17b-fp8": CFG + "Qwen__Qwen3.5-397B-A17B-FP8.reconstructed.config.json",
    "deepseek-v3": CFG + "deepseek-ai__DeepSeek-V3.config.json",
    "deepseek-r1": CFG + "deepseek-ai__DeepSeek-R1.config.json",
    # GQA MoE and hybrid GDN MoE with DP attention (pipeline/dp_attention.py GQA_ARCHS / HYBRID_ARCHS)
    "qwen3-235b-a22b": CFG + "Qwen__Qwen3-235B-A22B.config.json",
    "qwen3-30b-a3b": CFG + "Qwen__Qwen3-30B-A3B.config.json",
    "glm-4.7": CFG + "zai-org__GLM-4.7.abbreviated.config.json",
    "minimax-m2": CFG + "MiniMaxAI__MiniMax-M2.reconstructed.config.json",
    "qwen3-next-80b-a3b": CFG + "Qwen__Qwen3-Next-80B-A3B-Instruct.config.json",
    "kimi-k2-instruct": CFG + "moonshotai__Kimi-K2-Instruct.config.json",  # DeepseekV3ForCausalLM, 61 layers, 384 experts
}

# The Qwen3.5-397B-A17B-FP8 1P1D recipe (prefill TP4 / decode TP4 on B200, MTP on decode): SemiAnalysisAI/InferenceX
# benchmarks/multi_node/srt-slurm-recipes/qwen3.5/sglang/b200-fp8/agentx/disagg-1p1d-p-tp4-d-tp4-mtp.yaml @10f1a60c,
# "adapted from" the SGLang cookbook docs/cookbook/autoregressive/Qwen/Qwen3.5.mdx @191172fa. Its
# --moe-runner-backend flashinfer_trtllm is refused by the planner by name (a kernel whose workspace it does not
# model); RECIPE_* are the roles with SGLang's default MoE kernels.
_RECIPE_COMMON = ["--tp-size", "4", "--quantization", "fp8", "--kv-cache-dtype", "fp8_e4m3",
                  "--mamba-ssm-dtype", "bfloat16", "--attention-backend", "trtllm_mha",
                  "--linear-attn-decode-backend", "flashinfer", "--page-size", "64", "--mem-fraction-static", "0.8",
                  "--context-length", "262144", "--chunked-prefill-size", "16384", "--max-prefill-tokens", "16384",
                  "--max-running-requests", "32", "--disaggregation-transfer-backend", "mooncake"]
RECIPE_PREFILL = _RECIPE_COMMON + ["--disaggregation-mode", "prefill", "--disable-cuda-graph"]
RECIPE_DECODE = _RECIPE_COMMON + ["--disaggregation-mode", "decode", "--disable-radix-cache",
                                  "--speculative-algorithm", "NEXTN", "--speculative-num-steps", "3",
                                  "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4",
                                  "--cuda-graph-max-bs-decode", "16"]
RECIPE_ENV = {"SGLANG_ENABLE_SPEC_V2": "1"}
RECIPE_PUBLISHED_EXTRA = ["--moe-runner-backend", "flashinfer_trtllm"]


def _c(id_, gpu, model, flags, before, after, env=None):
    return dict(id=id_, gpu=gpu, planner_model=model, flags=flags, free_before_gib=before, free_after_gib=after,
                env=env or {})


DEC, PRE = ["--disaggregation-mode", "decode"], ["--disaggregation-mode", "prefill"]
CASES = [
    _c("dense_decode_default", "h100", "qwen3-32b", ["--tp-size", "2", *DEC], 78.5, 47.0),
    _c("dense_prefill_default", "h100", "qwen3-32b", ["--tp-size", "2", *PRE], 78.5, 47.0),
    _c("dense_decode_mrr16", "h100", "qwen3-32b", ["--tp-size", "2", *DEC, "--max-running-requests", "16"], 78.5, 47.0),
    _c("dense_decode_mrr48", "h100", "qwen3-32b", ["--tp-size", "2", *DEC, "--max-running-requests", "48"], 78.5, 47.0),
    _c("dense_decode_extra_radix", "h100", "qwen3-32b",
       ["--tp-size", "2", *DEC, "--disaggregation-decode-extra-slots", "100",
        "--disaggregation-decode-enable-radix-cache"], 78.5, 47.0),
    _c("dense_decode_fake", "h100", "qwen3-32b",
       ["--tp-size", "2", *DEC, "--disaggregation-transfer-backend", "fake", "--max-running-requests", "8"], 78.5, 47.0),
    _c("dense_prefill_decode_graph_locked", "h100", "qwen3-32b",
       ["--tp-size", "2", *PRE, "--cuda-graph-backend-decode", "full"], 78.5, 47.0),
    _c("dense_prefill_fake_rejected", "h100", "qwen3-32b",
       ["--tp-size", "2", *PRE, "--disaggregation-transfer-backend", "fake"], 78.5, 47.0),
    _c("dense_decode_radix_spec_rejected", "h100", "qwen3-32b",
       ["--tp-size", "2", *DEC, "--disaggregation-decode-enable-radix-cache", "--speculative-algorithm", "NGRAM"],
       78.5, 47.0),
    _c("hybrid_decode_mrr16", "h100", "qwen3.6-27b", ["--tp-size", "2", *DEC, "--max-running-requests", "16"],
       78.5, 50.0),
    _c("hybrid_decode_default", "h100", "qwen3.6-27b", ["--tp-size", "2", *DEC], 78.5, 50.0),
    _c("hybrid_prefill_default", "h100", "qwen3.6-27b", ["--tp-size", "2", *PRE], 78.5, 50.0),
    _c("hybrid_decode_mtp_mrr8", "h100", "qwen3.6-27b",
       ["--tp-size", "2", *DEC, "--max-running-requests", "8", "--speculative-algorithm", "NEXTN",
        "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"],
       78.5, 50.0),
    _c("hybrid_decode_tight_mrr32", "h100", "qwen3.6-27b",
       ["--tp-size", "1", *DEC, "--max-running-requests", "32", "--mem-fraction-static", "0.9"], 78.5, 24.0),
    _c("recipe_qwen35_397b_fp8_prefill", "b200", "qwen3.5-397b-a17b-fp8", RECIPE_PREFILL, 175.9, 82.87, RECIPE_ENV),
    _c("recipe_qwen35_397b_fp8_decode", "b200", "qwen3.5-397b-a17b-fp8", RECIPE_DECODE, 175.9, 80.38, RECIPE_ENV),
]

# MLA roles (DeepSeek-V3, FP8 checkpoint, TP8: the most common PD deployment without DP attention)
_MTP = ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "1", "--speculative-eagle-topk", "1",
        "--speculative-num-draft-tokens", "2"]
MLA_CASES = [
    _c("mla_decode_default", "h200", "deepseek-v3", ["--tp-size", "8", *DEC], 138.0, 56.5),
    _c("mla_prefill_default", "h200", "deepseek-v3", ["--tp-size", "8", *PRE], 138.0, 56.5),
    _c("mla_decode_mrr32", "h200", "deepseek-v3", ["--tp-size", "8", *DEC, "--max-running-requests", "32"],
       138.0, 56.5),
    _c("mla_decode_mtp_mrr16", "h200", "deepseek-v3",
       ["--tp-size", "8", *DEC, "--max-running-requests", "16", *_MTP], 138.0, 56.5),
    _c("mla_prefill_page64_ctx", "b200", "deepseek-v3",
       ["--tp-size", "8", *PRE, "--page-size", "64", "--context-length", "65536"], 175.9, 94.0),
    _c("mla_decode_extra_slots_b200", "b200", "deepseek-v3",
       ["--tp-size", "8", *DEC, "--disaggregation-decode-extra-slots", "64", "--max-running-requests", "128"],
       175.9, 94.0),
]


# DP attention roles (DeepSeek-V3 FP8 with --dp-size D --enable-dp-attention, --moe-a2a-backend none): the decode
# (and often prefill) role of the public DeepSeek PD deployments (SGLang's large-scale EP blog, Dynamo / llm-d
# DeepSeek recipes run DP attention 8 per node). One oracle rank = one attention-DP worker; the repo's DP adapters
# stamp attn_dp_size / attn_tp_size as SGLang resolves them. MLA_NO_NEXTN: the releases whose oracle cannot build
# DeepSeek-V3's NextN draft (the planner refuses it there): their sets leave the MTP cases out.
MLA_NO_NEXTN = ("0.5.20", "0.5.21")
_DPA = ["--tp-size", "8", "--dp-size", "8", "--enable-dp-attention"]
DP_CASES = [
    _c("dpa_decode_default", "h200", "deepseek-v3", [*_DPA, *DEC], 138.0, 56.5),
    _c("dpa_prefill_default", "h200", "deepseek-v3", [*_DPA, *PRE], 138.0, 56.5),
    _c("dpa_decode_mrr256", "h200", "deepseek-v3", [*_DPA, *DEC, "--max-running-requests", "256"], 138.0, 56.5),
    _c("dpa_decode_mrr512", "h200", "deepseek-v3", [*_DPA, *DEC, "--max-running-requests", "512"], 138.0, 56.5),
    _c("dpa_decode_mrr4", "h200", "deepseek-v3", [*_DPA, *DEC, "--max-running-requests", "4"], 138.0, 56.5),
    _c("dpa_decode_extra_slots", "h200", "deepseek-v3",
       [*_DPA, *DEC, "--max-running-requests", "1024", "--disaggregation-decode-extra-slots", "64"], 138.0, 56.5),
    _c("dpa_decode_graph_bs512", "h200", "deepseek-v3", [*_DPA, *DEC, "--cuda-graph-max-bs-decode", "512"], 138.0, 56.5),
    _c("dpa_decode_fp8kv", "h200", "deepseek-v3",
       [*_DPA, *DEC, "--kv-cache-dtype", "fp8_e4m3", "--max-running-requests", "2048"], 138.0, 56.5),
    _c("dpa_prefill_chunk16k", "h200", "deepseek-v3", [*_DPA, *PRE, "--chunked-prefill-size", "16384"], 138.0, 56.5),
    _c("dpa_prefill_decode_graph_locked", "h200", "deepseek-v3",
       [*_DPA, *PRE, "--cuda-graph-backend-decode", "full"], 138.0, 56.5),
    _c("dpa4_decode_mrr64", "h200", "deepseek-v3",
       ["--tp-size", "8", "--dp-size", "4", "--enable-dp-attention", *DEC, "--max-running-requests", "64"],
       138.0, 56.5),
    _c("dpa4_prefill_b200_page64", "b200", "deepseek-v3",
       ["--tp-size", "8", "--dp-size", "4", "--enable-dp-attention", *PRE, "--page-size", "64"], 175.9, 94.0),
    _c("kimi_k2_decode_mrr128", "b200", "kimi-k2-instruct", [*_DPA, *DEC, "--max-running-requests", "128"],
       175.9, 48.88),
    _c("kimi_k2_prefill_default", "b200", "kimi-k2-instruct", [*_DPA, *PRE], 175.9, 48.88),
    _c("dpa_decode_b200_radix", "b200", "deepseek-v3",
       [*_DPA, *DEC, "--disaggregation-decode-enable-radix-cache", "--max-running-requests", "128"], 175.9, 94.0),
]
DP_MTP_CASES = [
    _c("dpa_decode_mtp_mrr128", "h200", "deepseek-v3", [*_DPA, *DEC, "--max-running-requests", "128", *_MTP],
       138.0, 56.5),
    _c("dpa_decode_nextn3_b200", "b200", "deepseek-v3",
       [*_DPA, *DEC, "--speculative-algorithm", "NEXTN", "--speculative-num-steps", "3", "--speculative-eagle-topk",
        "1", "--speculative-num-draft-tokens", "4", "--max-running-requests", "256"], 175.9, 94.0),
]
DP_EP_CASES = [  # --ep-size with --moe-a2a-backend none: verified by expert_parallel.py on these releases only
    _c("dpa_decode_ep8", "h200", "deepseek-v3", [*_DPA, "--ep-size", "8", *DEC, "--max-running-requests", "256"],
       138.0, 56.5),
]
DP_ATTN_SPELLING = [  # 0.5.23's own spelling
    _c("attn_dp8_decode_mrr128", "h200", "deepseek-v3",
       ["--tp-size", "8", "--attn-dp-size", "8", *DEC, "--max-running-requests", "128"], 138.0, 56.5),
]


# The public DeepSeek-R1 1P1D recipe on 8x H200 per role: ai-dynamo/dynamo
# recipes/deepseek-r1/sglang/disagg-8gpu/deploy.yaml @0044eb90 (decode: DP attention 8 + EP 8; prefill: TP 8 + EP 8;
# --moe-a2a-backend left at none; the recipe's own spellings --tp / --dp, SGLang's argparse abbreviations).
# --prefill-round-robin-balance (deprecated in 0.5.16, server_args.py:7154-7156 @0.5.16) is gone from 0.5.20:
# SGLang 0.5.23 rejects it, so DSR1_DECODE_0523 drops it. The free memory is the planner's own weight model.
_DSR1_TAIL = ["--disaggregation-bootstrap-port", "30001", "--mem-fraction-static", "0.75", "--host", "0.0.0.0"]
DSR1_PREFILL = ["--tp", "8", "--ep-size", "8", "--trust-remote-code", "--disaggregation-mode", "prefill", *_DSR1_TAIL,
                "--load-balance-method", "round_robin"]
DSR1_DECODE = ["--tp", "8", "--dp", "8", "--enable-dp-attention", "--ep-size", "8", "--trust-remote-code",
               "--disaggregation-mode", "decode", *_DSR1_TAIL, "--prefill-round-robin-balance"]
DSR1_DECODE_0523 = DSR1_DECODE[:-1]
DSR1_FREE = {"prefill": (137.27, 57.98), "decode": (137.27, 47.92)}


def dsr1_published(version: str) -> dict[str, list[str]]:
    return {"prefill": DSR1_PREFILL, "decode": DSR1_DECODE if version == "0.5.16" else DSR1_DECODE_0523}


def dsr1_cases(version: str) -> list[dict]:
    """The recipe's roles for the oracle, less --trust-remote-code: with it, transformers looks for the checkpoint's
    own configuration_deepseek.py (its auto_map), which the oracle's config-only folder lacks; without it the config
    loads as transformers' DeepseekV3Config, the same fields SGLang sizes from (tests/test_golden_pd.py plans the
    published flags, --trust-remote-code included, against these results)."""
    out = [_c(f"recipe_dsr1_{r}", "h200", "deepseek-r1", [f for f in flags if f != "--trust-remote-code"],
              *DSR1_FREE[r]) for r, flags in dsr1_published(version).items()]
    if version != "0.5.16":  # the decode role as published: SGLang's argparse rejects the removed flag
        out.append(_c("recipe_dsr1_decode_published", "h200", "deepseek-r1",
                      [f for f in DSR1_DECODE if f != "--trust-remote-code"], *DSR1_FREE["decode"]))
    return out


# GQA MoE / hybrid GDN MoE roles with DP attention, no speculative decoding (free memory: the planner's weight model,
# which splits attention over attn_tp, weights.dp_attention_gqa_bytes)
_GQA = [("qwen3-235b-a22b", "h200", 8, 8, 137.27, 70.59), ("qwen3-30b-a3b", "h100", 2, 2, 76.75, 47.19),
        ("glm-4.7", "h200", 8, 8, 137.27, 33.42), ("minimax-m2", "h200", 8, 8, 137.27, 107.25),
        ("qwen3-next-80b-a3b", "h200", 4, 4, 137.27, 96.81)]
GQA_DP_CASES = [
    _c(f"gqa_{m}_dp{d}_{mode}{'_mrr' + str(8 * d) if mrr else ''}", g, m,
       ["--tp-size", str(t), "--dp-size", str(d), "--enable-dp-attention", "--disaggregation-mode", mode,
        *(["--max-running-requests", str(8 * d)] if mrr else [])], fb, fa)
    for m, g, t, d, fb, fa in _GQA for mode in ("decode", "prefill") for mrr in (False, True)
] + [
    _c("gqa_qwen3-next-80b-a3b_dp4_decode_extra_buffer", "h200", "qwen3-next-80b-a3b",
       ["--tp-size", "4", "--dp-size", "4", "--enable-dp-attention", "--disaggregation-mode", "decode",
        "--max-running-requests", "64", "--mamba-scheduler-strategy", "extra_buffer"], 137.27, 96.81),
    _c("gqa_qwen3-235b-a22b_dp4_decode_mrr256", "h200", "qwen3-235b-a22b",
       ["--tp-size", "8", "--dp-size", "4", "--enable-dp-attention", "--disaggregation-mode", "decode",
        "--max-running-requests", "256", "--kv-cache-dtype", "fp8_e4m3"], 137.27, 65.0),
]


def dp_cases(version: str) -> list[dict]:
    out = list(DP_CASES) + GQA_DP_CASES
    if version not in MLA_NO_NEXTN:
        out += DP_MTP_CASES
    if version in ("0.5.16", "0.5.23"):
        out += DP_EP_CASES + dsr1_cases(version)
    if version == "0.5.23":
        out += DP_ATTN_SPELLING
    return out


def dp_random_cases(seed: int, count: int, version: str) -> list[dict]:
    """Random DP-attention roles: DeepSeek-V3 (FP8) on H200 / B200, tp 8, dp 2 / 4 / 8, or a GQA / hybrid GDN MoE
    role at its _GQA layout (no MTP, no --ep-size, default attention backend); prefill or decode; a
    request cap (some per worker <= 32, so the extra slots default on), extra slots, the graph's max bs, page
    size, context length, chunked prefill, FP8 KV, the fraction, the attention backend, graphs off, --ep-size
    (0.5.16 / 0.5.23), MTP on decode where the release's oracle builds it."""
    import random

    rng = random.Random(seed)
    out = []
    for i in range(count):
        model = rng.choice(["deepseek-v3", "deepseek-v3", "gqa"])
        gqa = model == "gqa"
        if gqa:  # a GQA / hybrid GDN MoE role at its _GQA layout, free memory around the planner's weight model
            model, gpu, tp, dp, before, after0 = rng.choice(_GQA)
        else:
            gpu, tp, dp = rng.choice(["h200", "b200"]), 8, rng.choice([2, 4, 8, 8])
        mode = rng.choice(["prefill", "decode"])
        flags = ["--tp-size", str(tp), "--dp-size", str(dp), "--enable-dp-attention", "--disaggregation-mode", mode]
        if rng.random() < 0.6:
            flags += ["--max-running-requests", str(rng.choice([8, 64, 128, 256, 257, 1024]))]
        if mode == "decode" and rng.random() < 0.25:
            flags += ["--disaggregation-decode-extra-slots", str(rng.choice([0, 16, 128]))]
        if rng.random() < 0.3:
            flags += ["--cuda-graph-max-bs-decode", str(rng.choice([32, 128, 320]))]
        if rng.random() < 0.25:
            flags += ["--page-size", str(rng.choice([16, 64]))]
        if rng.random() < 0.25:
            flags += ["--context-length", str(rng.choice([8192, 32768]))]
        if mode == "prefill" and rng.random() < 0.4:
            flags += ["--chunked-prefill-size", str(rng.choice([4096, 16384, 32768]))]
        if rng.random() < 0.25:
            flags += ["--kv-cache-dtype", "fp8_e4m3"]
        if rng.random() < 0.2:
            flags += ["--mem-fraction-static", str(rng.choice([0.6, 0.75, 0.85]))]
        if rng.random() < 0.15 and not gqa:
            flags += ["--attention-backend", rng.choice(["triton", "flashinfer", "fa3", "flashmla", "trtllm_mla"])]
        if rng.random() < 0.1:
            flags += ["--disable-cuda-graph"]
        if version in ("0.5.16", "0.5.23") and rng.random() < 0.3 and not gqa:  # --ep-size: expert_parallel.py's
            flags += ["--ep-size", str(rng.choice([2, 4, 8]))]
        if mode == "decode" and version not in MLA_NO_NEXTN and rng.random() < 0.3 and not gqa:
            flags += ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "2",
                      "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "3"]
        if gqa:
            after = round(after0 * rng.uniform(0.9, 1.05), 2)
        else:
            total = GPUS[gpu]["gpu_total_mib"] / 1024
            before = round(total - rng.uniform(1.0, 2.5), 2)
            after = round(max(1.0, before - 82.0 * rng.uniform(0.95, 1.1)), 2)
        out.append(_c(f"pd_dp_random_{seed}_{i}", gpu, model, flags, before, after))
    return out


def random_cases(seed: int, count: int) -> list[dict]:
    """Random roles: dense Qwen3-32B or hybrid Qwen3.6-27B on H100 / H200, tp 1-2, or MLA DeepSeek-V3 (FP8) on
    H200 / B200, tp 8 (EAGLE / MTP on its decode role now and then); prefill or decode, a request cap,
    extra slots, page size, context length, NEXTN on a hybrid decode role now and then; free memory around the
    weights' share."""
    import random

    rng = random.Random(seed)
    out = []
    for i in range(count):
        model = rng.choice(["qwen3-32b", "qwen3.6-27b", "deepseek-v3"])
        mla = model == "deepseek-v3"
        gpu = rng.choice(["h200", "b200"] if mla else ["h100", "h200"])
        tp = 8 if mla else rng.choice([1, 2])
        mode = rng.choice(["prefill", "decode"])
        flags = ["--tp-size", str(tp), "--disaggregation-mode", mode]
        if rng.random() < 0.6:
            flags += ["--max-running-requests", str(rng.choice([4, 16, 32, 33, 128]))]
        if mode == "decode" and rng.random() < 0.3:
            flags += ["--disaggregation-decode-extra-slots", str(rng.choice([0, 8, 64]))]
        if rng.random() < 0.3:
            flags += ["--page-size", str(rng.choice([16, 64]))]
        if rng.random() < 0.3:
            flags += ["--context-length", str(rng.choice([8192, 32768]))]
        if model != "qwen3-32b" and mode == "decode" and rng.random() < 0.3:
            flags += ["--speculative-algorithm", "EAGLE" if mla else "NEXTN", "--speculative-num-steps", "2",
                      "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "3"]
        total = GPUS[gpu]["gpu_total_mib"] / 1024
        before = round(total - rng.uniform(1.0, 2.5), 2)
        share = {"qwen3-32b": 61.0, "qwen3.6-27b": 52.0, "deepseek-v3": 656.0}[model] / tp
        after = round(max(1.0, before - share * rng.uniform(0.95, 1.1)), 2)
        out.append(_c(f"pd_random_{seed}_{i}", gpu, model, flags, before, after))
    return out


def regen(version: str, oracle: Path, seed: int | None = None, count: int = 0, folder: Path | None = None,
          dp: bool = False) -> None:
    py = str(Path.home() / f".cache/sglang-oracle/{version}/venv/bin/python")
    folder = folder or REPO / "tests/golden/pp_pd" / f"sglang-{version}"
    folder.mkdir(parents=True, exist_ok=True)
    if dp:
        cases = dp_cases(version) if seed is None else dp_random_cases(seed, count, version)
        prefix = "pd_dp_" if seed is None else "pd_dp_random_"
    else:
        cases = CASES + MLA_CASES if seed is None else random_cases(seed, count)
        prefix = "pd_" if seed is None else "pd_random_"
    with tempfile.TemporaryDirectory() as td:
        batch = Path(td) / "cases.jsonl"
        batch.write_text("".join(json.dumps(dict(id=c["id"], config_json=str(REPO / MODELS[c["planner_model"]]),
                                                 flags=c["flags"], free_before_gib=c["free_before_gib"],
                                                 free_after_gib=c["free_after_gib"], env=c["env"],
                                                 **GPUS[c["gpu"]])) + "\n" for c in cases))
        out = subprocess.run([py, str(oracle / "oracle.py"), "--batch", str(batch), "--summary-only"],
                             check=False, capture_output=True, text=True)
    print(out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "", file=sys.stderr)
    results = {r["id"]: r for r in (json.loads(x) for x in out.stdout.splitlines() if x.strip())}
    with open(folder / f"{prefix}cases.jsonl", "w") as fc, open(folder / f"{prefix}results.jsonl", "w") as fr:
        for c in cases:
            fc.write(json.dumps(dict(c, **GPUS[c["gpu"]])) + "\n")
            fr.write(json.dumps(dict(id=c["id"], summary=results[c["id"]]["summary"])) + "\n")
            print(c["id"], results[c["id"]]["summary"]["outcome"], file=sys.stderr)


def planner_summary(case: dict, version: str) -> dict:
    """The planner's summary for one role (run with the repo's venv)."""
    sys.path.insert(0, str(REPO))
    from planner.catalog.catalog import resolve_model
    from planner.hardware.profiles import find_profile
    from planner.engines.sglang.plan import make_plan
    from planner.engines.sglang.summary import build_summary

    plan = make_plan(find_profile(case["gpu"]), resolve_model(case["planner_model"]), case["flags"], case["env"],
                     case["free_before_gib"], case["free_after_gib"], version=version)
    return build_summary(plan)


def agree(version: str, oracle: Path, seed: int, count: int, dp: bool = False) -> int:
    """Fresh random roles: the oracle's summary against the planner's, every field. One line per launch."""
    sys.path.insert(0, str(REPO))
    from planner.engines.sglang.summary import SUMMARY_FIELDS

    with tempfile.TemporaryDirectory() as td:
        regen(version, oracle, seed, count, Path(td), dp)
        pre = "pd_dp_random_" if dp else "pd_random_"
        cases = [json.loads(x) for x in (Path(td) / f"{pre}cases.jsonl").read_text().splitlines()]
        results = [json.loads(x) for x in (Path(td) / f"{pre}results.jsonl").read_text().splitlines()]
    from planner.errors import BadInput

    equal = refused = 0
    for c, r in zip(cases, results):
        exp = r["summary"]
        try:
            got = planner_summary(c, version)
        except BadInput as exc:  # not modelled: refused by name (no number to compare)
            refused += 1
            print(c["id"], " ".join(c["flags"]), f"refused by the planner ({exc}); oracle: {exp['outcome']}")
            continue
        diff = {k: (exp[k], got[k]) for k in SUMMARY_FIELDS if exp[k] != got[k]}
        equal += not diff
        print(c["id"], " ".join(c["flags"]), "equal" if not diff else diff)
    print(f"{version} seed {seed}: {equal}/{len(cases) - refused} roles equal on every field"
          + (f" ({refused} refused by name)" if refused else ""))
    return 0 if equal == len(cases) - refused else 1


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("regen", "agree"):
        g = sub.add_parser(name)
        g.add_argument("--version", required=True)
        g.add_argument("--oracle", default="/tmp/oracle-pd")
        g.add_argument("--seed", type=int, default=None, required=name == "agree")
        g.add_argument("--count", type=int, default=12)
        g.add_argument("--set", choices=("pd", "dp"), default="pd", help="dp: the DP-attention roles (pd_dp_*)")
    a = ap.parse_args()
    if a.cmd == "agree":
        sys.exit(agree(a.version, Path(a.oracle), a.seed, a.count, a.set == "dp"))
    regen(a.version, Path(a.oracle), a.seed, a.count, dp=a.set == "dp")


if __name__ == "__main__":
    main()
