#!/usr/bin/env python3
"""Golden cases for dense and MoE full-attention models, made by each SGLang release's own code (the oracle).

    # write case lines only (deterministic)
    dense_cases.py cases --version 0.5.16 --curated --out /tmp/x.jsonl
    dense_cases.py cases --version 0.5.16 --seed 1 --count 40 --out /tmp/y.jsonl

    # regenerate tests/golden/dense/sglang-<version>/ (cases, results, random, random_results, dropped)
    dense_cases.py regen --version 0.5.16 [--py ~/.cache/sglang-oracle/0.5.16/venv/bin/python]
                         [--oracle /work/shared/tools/sglang-oracle] [--seed 1] [--count 40]

Models: the catalog's dense and MoE models (Llama 3.x, Qwen2.5, Qwen3 dense, Qwen3-MoE, Mixtral, Mistral, Qwen3-VL dense / MoE with their vision tower) and one GLM-4.x MoE config
kept only as a test input (tests/golden/dense/configs/, see its SOURCES.md). Speculative cases use the
SpecForge EAGLE3 heads of the catalog (training templates, not published HF heads: see
planner/catalog/configs/SOURCES.md), copied to tests/golden/dense/drafts/<name>/config.json.

The case format, the free-memory model and the oracle runner are make_cases.py's / make_cases_v0516.py's
(imported, not copied): free_after = free_before - weights / tp - overhead, and since 0.5.14 minus the
draft's weights too (SGLang loads the draft before sizing the pools). Flags are the ones every release
0.5.9-0.5.23 spells the same way. Dtypes vary through the checkpoints (bf16 targets, fp16 / bf16 EAGLE3
heads) and the KV cache (auto, fp8_e4m3, fp8_e5m2): --dtype itself is refused by the planner (not modelled). Cases with an env run one per process (the batch-isolation caveat of
make_cases_v0516.py); oracle errors and stand-in artifacts are dropped and listed in dropped.jsonl.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import random
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_cases as mc  # noqa: E402
import make_cases_v0516 as mcv  # noqa: E402

REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
CONFIGS = os.path.join(REPO, "planner", "catalog", "configs")
GOLDEN = os.path.join(REPO, "tests", "golden", "dense")
SHARED_ORACLE = "/work/shared/tools/sglang-oracle"
ADAPTED_ORACLE = "/tmp/oracle-dense"  # bash scripts/oracle/oracle_copy.sh /tmp/oracle-dense
# releases the shared oracle runs itself; the others run through the repo's adapters (oracle_copy.sh)
SHARED_RELEASES = ("0.5.11", "0.5.16", "0.5.23")

# catalog id -> (config file under planner/catalog/configs, approx. weights GiB of the whole checkpoint)
DENSE = {
    "llama-3.1-8b-instruct": ("meta-llama__Llama-3.1-8B-Instruct.config.json", 14.96),
    "llama-3.1-70b-instruct": ("meta-llama__Llama-3.1-70B-Instruct.config.json", 131.42),
    "llama-3.3-70b-instruct": ("meta-llama__Llama-3.3-70B-Instruct.config.json", 131.42),
    "qwen3-8b": ("Qwen__Qwen3-8B.config.json", 15.26),
    "qwen3-32b": ("Qwen__Qwen3-32B.config.json", 61.02),
    "qwen2.5-7b-instruct": ("Qwen__Qwen2.5-7B-Instruct.config.json", 14.19),
    "qwen2.5-32b-instruct": ("Qwen__Qwen2.5-32B-Instruct.config.json", 61.03),
    "qwen2.5-72b-instruct": ("Qwen__Qwen2.5-72B-Instruct.config.json", 135.4),
    "mistral-7b-instruct-v0.3": ("mistralai__Mistral-7B-Instruct-v0.3.config.json", 13.5),
    "qwen3-vl-8b-instruct": ("Qwen__Qwen3-VL-8B-Instruct.config.json", 16.33),
}
MOE = {
    "qwen3-30b-a3b": ("Qwen__Qwen3-30B-A3B.config.json", 56.9),
    "qwen3-235b-a22b": ("Qwen__Qwen3-235B-A22B.config.json", 437.9),
    "mixtral-8x7b-v0.1": ("mistralai__Mixtral-8x7B-v0.1.config.json", 86.99),
    "mixtral-8x22b-v0.1": ("mistralai__Mixtral-8x22B-v0.1.config.json", 262.6),
    "qwen3-vl-30b-a3b-instruct": ("Qwen__Qwen3-VL-30B-A3B-Instruct.config.json", 58.3),
    # a test input only (not a catalog model): planner_model is this path, relative to the cases file
    "../configs/zai-org__GLM-4.7-FP8.abbreviated.config.json":
        (os.path.join("..", "..", "..", "tests", "golden", "dense", "configs",
                      "zai-org__GLM-4.7-FP8.abbreviated.config.json"), 661.0),
}
MODELS = {**DENSE, **MOE}
# models added by issue #22 (the config audit branch): their own set, new_models.jsonl, so the curated and random
# sets above (and their seeds' draws) stay as they were
NEW = {
    "minimax-m2.7": ("MiniMaxAI__MiniMax-M2.7.config.json", 214.32),
    "minimax-m2": ("MiniMaxAI__MiniMax-M2.reconstructed.config.json", 214.32),
}
# EAGLE3 heads: drafts/<name>/config.json, their target, approx. weights GiB (one decoder layer + fc + lm_head)
DRAFTS = {
    "llama3-8b-eagle3": ("sgl-project-SpecForge__llama3-8B-eagle3.config.json", "llama-3.1-8b-instruct", 0.8),
    "llama3-70b-eagle3": ("sgl-project-SpecForge__llama3-70B-ealge3.config.json", "llama-3.1-70b-instruct", 2.3),
    "qwen3-8b-eagle3": ("sgl-project-SpecForge__qwen3-8b-eagle3.config.json", "qwen3-8b", 0.8),
    "qwen3-32b-eagle3": ("sgl-project-SpecForge__qwen3-32b-eagle3.config.json", "qwen3-32b", 1.5),
}
GPUS = ("h100-sxm", "h200", "b200", "a100-80gb", "l40s", "rtx4090", "rtxpro6000", "rtx5090")
TP = (1, 2, 4, 8)


def _install_models():
    """make_cases.Builder reads make_cases.MODELS: give it this family's models."""
    mc.MODELS.clear()
    mc.MODELS.update({**MODELS, **NEW})


def _new_gen(version):
    return tuple(int(x) for x in version.split(".")) >= (0, 5, 14)


def eagle3(draft, steps=3, topk=1, tokens=4):
    return ["--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", f"../drafts/{draft}",
            "--speculative-num-steps", str(steps), "--speculative-eagle-topk", str(topk),
            "--speculative-num-draft-tokens", str(tokens)]


class Cases:
    """make_cases.Builder, with the draft's weights taken off free_after from 0.5.14 on."""

    def __init__(self, out_path, version):
        _install_models()
        self.b = mc.Builder(out_path, CONFIGS)
        self.version = version

    def add(self, cid, gpu, model, flags=(), tp=1, draft=None, **kw):
        flags = list(flags)
        if draft is not None:
            if "free_after" not in kw:
                fb = kw.get("free_before")
                if fb is None:
                    fb = mc.total_gib(gpu) - (0.9 if tp == 1 else 1.4)
                    kw["free_before"] = fb
                dw = DRAFTS[draft][2] if _new_gen(self.version) else 0.0
                kw["free_after"] = fb - MODELS[model][1] / tp - dw - kw.pop("overhead", 0.35)
        self.b.add(cid, gpu, model, flags, tp=tp, **kw)

    @property
    def cases(self):
        return self.b.cases


def curated(c: Cases):
    L8, L70, Q8, Q32 = "llama-3.1-8b-instruct", "llama-3.1-70b-instruct", "qwen3-8b", "qwen3-32b"
    # dense: defaults per GPU, TP with kv-head replication, dtypes, fp8 KV, context lengths, caps
    c.add("llama8b_h100_default", "h100-sxm", L8)
    c.add("llama8b_h200_tp2", "h200", L8, tp=2)
    c.add("llama8b_l40s_default", "l40s", L8)
    c.add("llama8b_4090_ctx8k", "rtx4090", L8, ["--context-length", "8192"])
    c.add("llama8b_4090_default", "rtx4090", L8)
    c.add("llama8b_a100_fp8kv", "a100-80gb", L8, ["--kv-cache-dtype", "fp8_e4m3"])
    c.add("llama8b_b200_default", "b200", L8)
    c.add("llama8b_b200_fp8e5m2", "b200", L8, ["--kv-cache-dtype", "fp8_e5m2", "--context-length", "32768"])
    c.add("llama8b_pro6000_mrr64", "rtxpro6000", L8, ["--max-running-requests", "64"])
    c.add("llama8b_h100_tp8_kvrepl", "h100-sxm", L8, tp=8)
    c.add("llama8b_h100_mfs07", "h100-sxm", L8, ["--mem-fraction-static", "0.7"])
    c.add("llama8b_h100_mtt", "h100-sxm", L8, ["--max-total-tokens", "100000"])
    c.add("llama8b_h100_triton_page16", "h100-sxm", L8, ["--attention-backend", "triton", "--page-size", "16"])
    c.add("llama8b_h100_flashinfer", "h100-sxm", L8, ["--attention-backend", "flashinfer", "--disable-radix-cache"])
    c.add("llama8b_h100_nograph", "h100-sxm", L8, ["--disable-cuda-graph", "--chunked-prefill-size", "4096"])
    c.add("llama8b_h100_ctx_too_long", "h100-sxm", L8, ["--context-length", "200000"])
    c.add("llama8b_h100_ctx_env", "h100-sxm", L8, ["--context-length", "200000"],
          env={"SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN": "1"})
    c.add("llama8b_4090_no_room", "rtx4090", L8, free_before=22.8, free_after=0.6)
    c.add("llama70b_h100_tp4", "h100-sxm", L70, tp=4)
    c.add("llama70b_h100_tp8", "h100-sxm", L70, tp=8)
    c.add("llama70b_h200_tp2_fp8kv", "h200", L70, ["--kv-cache-dtype", "fp8_e4m3"], tp=2)
    c.add("llama70b_a100_tp4_ctx64k", "a100-80gb", L70, ["--context-length", "65536"], tp=4)
    c.add("llama70b_b200_tp2", "b200", L70, tp=2)
    c.add("llama33_70b_h100_tp4", "h100-sxm", "llama-3.3-70b-instruct", tp=4)
    c.add("qwen3_8b_h100_default", "h100-sxm", Q8)
    c.add("qwen3_8b_4090_fp8kv", "rtx4090", Q8, ["--kv-cache-dtype", "fp8_e4m3"])
    c.add("qwen3_8b_5090_default", "rtx5090", Q8)
    c.add("qwen3_32b_h100_tp2", "h100-sxm", Q32, tp=2)
    c.add("qwen3_32b_h100_tp8_kvrepl", "h100-sxm", Q32, tp=8)
    c.add("qwen3_32b_pro6000", "rtxpro6000", Q32)
    c.add("qwen25_7b_l40s", "l40s", "qwen2.5-7b-instruct")
    # (28 heads over tp 8 fails in the QKV layer's construction, which the oracle does not run: not a case)
    c.add("qwen25_7b_h100_tp4_kv1", "h100-sxm", "qwen2.5-7b-instruct", tp=4)
    c.add("qwen25_32b_h100_tp2", "h100-sxm", "qwen2.5-32b-instruct", tp=2)
    c.add("qwen25_72b_h100_tp4", "h100-sxm", "qwen2.5-72b-instruct", tp=4)
    c.add("qwen25_72b_h200_tp2_fp8kv", "h200", "qwen2.5-72b-instruct", ["--kv-cache-dtype", "fp8_e4m3"], tp=2)
    c.add("mistral7b_4090", "rtx4090", "mistral-7b-instruct-v0.3")
    c.add("mistral7b_h100_tp2", "h100-sxm", "mistral-7b-instruct-v0.3", tp=2)
    c.add("qwen3vl_8b_h100", "h100-sxm", "qwen3-vl-8b-instruct")
    c.add("qwen3vl_8b_h100_ctx32k", "h100-sxm", "qwen3-vl-8b-instruct", ["--context-length", "32768"])
    c.add("qwen3vl_8b_l40s_tp2", "l40s", "qwen3-vl-8b-instruct", tp=2)
    # MoE
    c.add("qwen3_30b_a3b_h100", "h100-sxm", "qwen3-30b-a3b")
    c.add("qwen3_30b_a3b_h100_tp2", "h100-sxm", "qwen3-30b-a3b", tp=2)
    c.add("qwen3_30b_a3b_h100_tp8_kvrepl", "h100-sxm", "qwen3-30b-a3b", tp=8)
    c.add("qwen3_30b_a3b_b200", "b200", "qwen3-30b-a3b")
    c.add("qwen3_30b_a3b_4090_tp4_ctx16k", "rtx4090", "qwen3-30b-a3b", ["--context-length", "16384"], tp=4)
    c.add("qwen3_235b_h200_tp4", "h200", "qwen3-235b-a22b", tp=4)
    c.add("qwen3_235b_b200_tp4_fp8kv", "b200", "qwen3-235b-a22b", ["--kv-cache-dtype", "fp8_e4m3"], tp=4)
    c.add("mixtral_8x7b_h100_tp2", "h100-sxm", "mixtral-8x7b-v0.1", tp=2)
    c.add("mixtral_8x7b_a100_tp4", "a100-80gb", "mixtral-8x7b-v0.1", tp=4)
    c.add("mixtral_8x22b_h100_tp8", "h100-sxm", "mixtral-8x22b-v0.1", tp=8)
    c.add("qwen3vl_30b_a3b_h100", "h100-sxm", "qwen3-vl-30b-a3b-instruct")
    c.add("qwen3vl_30b_a3b_h200_tp2", "h200", "qwen3-vl-30b-a3b-instruct", tp=2)
    glm = "../configs/zai-org__GLM-4.7-FP8.abbreviated.config.json"
    c.add("glm47_b200_tp8", "b200", glm, tp=8)
    c.add("glm47_h200_tp8_ctx32k", "h200", glm, ["--context-length", "32768"], tp=8)
    # EAGLE3 heads (SpecForge training templates) with speculative decoding
    c.add("llama8b_eagle3_h100", "h100-sxm", L8, ["--context-length", "2048", *eagle3("llama3-8b-eagle3")],
          draft="llama3-8b-eagle3")
    c.add("llama8b_eagle3_h100_topk4", "h100-sxm", L8,
          ["--context-length", "2048", *eagle3("llama3-8b-eagle3", 5, 4, 8)], draft="llama3-8b-eagle3")
    c.add("llama8b_eagle3_ctx_env", "h100-sxm", L8, eagle3("llama3-8b-eagle3"), draft="llama3-8b-eagle3",
          env={"SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN": "1"})
    c.add("llama8b_eagle3_ctx_rejected", "h100-sxm", L8, eagle3("llama3-8b-eagle3"), draft="llama3-8b-eagle3")
    c.add("llama70b_eagle3_h100_tp4", "h100-sxm", L70, ["--context-length", "4096", *eagle3("llama3-70b-eagle3")],
          tp=4, draft="llama3-70b-eagle3")
    c.add("qwen3_8b_eagle3_h100", "h100-sxm", Q8, eagle3("qwen3-8b-eagle3"), draft="qwen3-8b-eagle3")
    c.add("qwen3_8b_eagle3_4090_mrr8", "rtx4090", Q8, ["--max-running-requests", "8", *eagle3("qwen3-8b-eagle3")],
          draft="qwen3-8b-eagle3")
    c.add("qwen3_8b_eagle3_b200", "b200", Q8, eagle3("qwen3-8b-eagle3"), draft="qwen3-8b-eagle3")
    c.add("qwen3_32b_eagle3_h100_tp2_fp8kv", "h100-sxm", Q32,
          ["--kv-cache-dtype", "fp8_e4m3", *eagle3("qwen3-32b-eagle3")], tp=2, draft="qwen3-32b-eagle3")


def new_models(c: Cases, seed: int = 1, count: int = 20, curated_too: bool = True):
    """MiniMax-M2 / M2.7 (block-FP8 checkpoints, GQA 48 / 8 x 128, 62 MoE layers): curated launches, then ``count``
    random ones drawn as random_cases draws (KV dtype, context, caps, page size, radix cache, graphs, TP, GPU)."""
    M27, M2 = "minimax-m2.7", "minimax-m2"
    if curated_too:
        _new_curated(c, M27, M2)
    _new_random(c, seed, count)


def _new_curated(c: Cases, M27: str, M2: str):
    c.add("mm27_h200_tp4", "h200", M27, tp=4)
    c.add("mm27_h200_tp8", "h200", M27, tp=8)
    c.add("mm27_h100_tp4", "h100-sxm", M27, tp=4)
    c.add("mm27_h100_tp8_fp8kv", "h100-sxm", M27, ["--kv-cache-dtype", "fp8_e4m3"], tp=8)
    c.add("mm27_b200_tp2", "b200", M27, tp=2)
    c.add("mm27_b200_tp4_ctx64k", "b200", M27, ["--context-length", "65536"], tp=4)
    c.add("mm27_h200_tp4_mrr128", "h200", M27, ["--max-running-requests", "128"], tp=4)
    c.add("mm27_h200_tp8_ctx_too_long", "h200", M27, ["--context-length", "300000"], tp=8)
    c.add("mm27_h200_tp8_ctx_env", "h200", M27, ["--context-length", "300000"], tp=8,
          env={"SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN": "1"})
    c.add("mm27_h100_tp8_triton_page16", "h100-sxm", M27, ["--attention-backend", "triton", "--page-size", "16"], tp=8)
    c.add("mm27_h100_tp4_mfs080", "h100-sxm", M27, ["--mem-fraction-static", "0.80"], tp=4)
    c.add("mm27_a100_tp8", "a100-80gb", M27, tp=8)
    c.add("mm27_pro6000_tp4_fp8e5m2", "rtxpro6000", M27, ["--kv-cache-dtype", "fp8_e5m2"], tp=4)
    c.add("mm27_h200_tp4_no_room", "h200", M27, tp=4, free_before=138.0, free_after=0.5)
    c.add("m2_h200_tp8", "h200", M2, tp=8)
    c.add("m2_h100_tp8", "h100-sxm", M2, tp=8)
    c.add("m2_b200_tp4_fp8kv", "b200", M2, ["--kv-cache-dtype", "fp8_e4m3"], tp=4)
    c.add("m2_h200_tp4_nograph_chunk4k", "h200", M2, ["--disable-cuda-graph", "--chunked-prefill-size", "4096"], tp=4)


def _new_random(c: Cases, seed: int, count: int):
    rng = random.Random(seed)
    for i in range(count):
        while True:
            model, gpu, tp = rng.choice(sorted(NEW)), rng.choice(GPUS), rng.choice(TP)
            if 48 % tp == 0 and NEW[model][1] / tp < mc.total_gib(gpu) - 4.0:
                break
        flags: list[str] = []
        if rng.random() < 0.3:
            flags += ["--kv-cache-dtype", rng.choice(["fp8_e4m3", "fp8_e5m2", "auto"])]
        if rng.random() < 0.35:
            flags += ["--context-length", str(rng.choice([4096, 16384, 32768, 65536, 131072, 196608]))]
        if rng.random() < 0.2:
            flags += ["--mem-fraction-static", str(rng.choice([0.75, 0.85, 0.9]))]
        if rng.random() < 0.2:
            flags += ["--max-running-requests", str(rng.choice([8, 32, 128, 512]))]
        if rng.random() < 0.15:
            flags += ["--chunked-prefill-size", str(rng.choice([2048, 8192, 16384]))]
        if rng.random() < 0.15:
            flags += ["--page-size", str(rng.choice([1, 16, 64]))]
        if rng.random() < 0.1:
            flags += ["--disable-radix-cache"]
        if rng.random() < 0.1:
            flags += ["--disable-cuda-graph"]
        slack = rng.choice([0.9, 1.4, 2.0])
        room = mc.total_gib(gpu) - slack - NEW[model][1] / tp
        overhead = min(rng.choice([0.2, 0.35, 0.8, 3.0]), max(0.05, room - 0.3))
        c.add(f"new{seed}_{i:03d}", gpu, model, flags, tp=tp, slack=slack, overhead=overhead)


def random_cases(c: Cases, seed: int, count: int):
    rng = random.Random(seed)
    names = sorted(MODELS)
    for i in range(count):
        # a launch whose weights fit the GPUs (free_after > 0: SGLang's load_model would OOM first otherwise,
        # which the oracle does not run) and whose heads split over tp
        while True:
            model = rng.choice(names)
            gpu = rng.choice(GPUS)
            tp = rng.choice(TP)
            heads = _heads(model)
            if heads % tp == 0 and MODELS[model][1] / tp < mc.total_gib(gpu) - 4.0:
                break
        flags: list[str] = []
        draft = None
        if rng.random() < 0.3:
            flags += ["--kv-cache-dtype", rng.choice(["fp8_e4m3", "fp8_e5m2", "auto"])]
        if rng.random() < 0.35:
            flags += ["--context-length", str(rng.choice([2048, 4096, 8192, 16384, 32768, 65536, 131072]))]
        if rng.random() < 0.2:
            flags += ["--mem-fraction-static", str(rng.choice([0.6, 0.75, 0.85, 0.9]))]
        if rng.random() < 0.2:
            flags += ["--max-running-requests", str(rng.choice([1, 8, 32, 128, 512]))]
        if rng.random() < 0.15:
            flags += ["--chunked-prefill-size", str(rng.choice([1024, 4096, 8192, 16384]))]
        if rng.random() < 0.15:
            flags += ["--page-size", str(rng.choice([1, 16, 32, 64]))]
        if rng.random() < 0.1:
            flags += ["--disable-radix-cache"]
        if rng.random() < 0.1:
            flags += ["--disable-cuda-graph"]
        targets = [d for d, v in DRAFTS.items() if v[1] == model]
        if targets and rng.random() < 0.4:
            draft = targets[0]
            flags += eagle3(draft, rng.choice([1, 2, 3, 5]), rng.choice([1, 1, 2, 4]), rng.choice([2, 4, 8]))
            if "llama" in model and "--context-length" not in flags:
                flags = ["--context-length", "2048"] + flags
        slack = rng.choice([0.6, 0.9, 1.4, 2.0])
        overhead = rng.choice([0.2, 0.35, 0.8, 3.0])
        room = mc.total_gib(gpu) - slack - MODELS[model][1] / tp - (DRAFTS[draft][2] if draft else 0)
        overhead = min(overhead, max(0.05, room - 0.3))  # keep free_after positive
        c.add(f"r{seed}_{i:03d}", gpu, model, flags, tp=tp, draft=draft, slack=slack, overhead=overhead)


def _heads(model):
    with open(os.path.join(CONFIGS, MODELS[model][0])) as f:
        cfg = json.load(f)
    return (cfg.get("text_config") or cfg)["num_attention_heads"]


def build(version, mode, out_path, seed=1, count=40):
    c = Cases(out_path, version)
    if mode in ("new", "new-random"):  # new-random: the draws alone (scripts/oracle/agree.py --family minimax)
        new_models(c, seed, count, curated_too=mode == "new")
    else:
        curated(c) if mode == "curated" else random_cases(c, seed, count)
    return c.cases


def write_drafts():
    for name, (fn, _, _) in DRAFTS.items():
        d = os.path.join(GOLDEN, "drafts", name)
        os.makedirs(d, exist_ok=True)
        shutil.copyfile(os.path.join(CONFIGS, fn), os.path.join(d, "config.json"))


def regen(a):
    out = os.path.join(GOLDEN, f"sglang-{a.version}")
    os.makedirs(out, exist_ok=True)
    write_drafts()
    py = a.py or os.path.expanduser(f"~/.cache/sglang-oracle/{a.version}/venv/bin/python")
    oracle = a.oracle or (SHARED_ORACLE if a.version in SHARED_RELEASES else ADAPTED_ORACLE)
    dropped_all = []
    for tag, mode, cases_fn, results_fn in (("curated", "curated", "cases", "results"),
                                            ("random", "random", "random", "random_results"),
                                            ("new", "new", "new_models", "new_models_results")):
        if (a.only and tag != a.only) or (tag == "new" and a.only != "new"):
            continue  # the new models' set is made only when asked for (--only new --count 20)
        cases = build(a.version, mode, os.path.join(out, cases_fn + ".jsonl"), a.seed, a.count)
        results = mcv.run_isolated(py, oracle, cases, out, a.jobs, tag)
        kc, kr, dropped = mcv.filter_results(cases, results)
        for r in kr:
            r.pop("elapsed_s", None)
        mcv.write_jsonl(os.path.join(out, cases_fn + ".jsonl"), kc)
        mcv.write_jsonl(os.path.join(out, results_fn + ".jsonl"), kr)
        for d in dropped:
            d["set"] = tag
        dropped_all += dropped
        cnt = collections.Counter(r["summary"]["outcome"] for r in kr)
        print(f"[{tag}] kept {len(kc)} of {len(cases)}: {dict(sorted(cnt.items()))}; dropped "
              f"{[d['id'] for d in dropped]}", file=sys.stderr)
    mcv.write_jsonl(os.path.join(out, "dropped.jsonl" if not a.only else f"dropped-{a.only}.jsonl"), dropped_all)
    print(f"regen: SGLang {a.version} via {oracle} -> {out}", file=sys.stderr)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    pc = sub.add_parser("cases", help="write case lines only")
    pc.add_argument("--version", required=True)
    pc.add_argument("--curated", action="store_true")
    pc.add_argument("--seed", type=int, default=1)
    pc.add_argument("--count", type=int, default=40)
    pc.add_argument("--out", required=True)
    pr = sub.add_parser("regen", help="write cases, run the oracle, filter, write tests/golden/dense/sglang-<v>/")
    pr.add_argument("--version", required=True)
    pr.add_argument("--py", default=None)
    pr.add_argument("--oracle", default=None)
    pr.add_argument("--seed", type=int, default=1)
    pr.add_argument("--count", type=int, default=40)
    pr.add_argument("--jobs", type=int, default=1)
    pr.add_argument("--only", choices=("curated", "random", "new"), default=None)
    a = p.parse_args(argv)
    if a.cmd == "regen":
        regen(a)
        return
    cases = build(a.version, "curated" if a.curated else "random", a.out, a.seed, a.count)
    mcv.write_jsonl(a.out, cases)
    print(f"dense_cases: wrote {len(cases)} cases to {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
