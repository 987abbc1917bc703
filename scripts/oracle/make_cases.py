#!/usr/bin/env python3
"""Generate batch-mode case lines for the SGLang sizing oracle (/work/shared/tools/sglang-oracle).

Two modes, both deterministic:

  make_cases.py --curated --out tests/golden/sglang-0.5.11/cases.jsonl
  make_cases.py --seed 1 --count 150 --out tests/golden/sglang-0.5.11/random.jsonl

Each output line:
  {"id", "gpu", "gpu_total_mib", "gpu_sm", "gpu_name", "planner_model", "config_json",
   "flags", "free_before_gib", "free_after_gib", "env"}

"gpu" (planner hardware-profile id) and "planner_model" (catalog id) are ignored by the oracle
and used by the planner's tests. "config_json" is a path RELATIVE TO THE OUTPUT FILE pointing at
planner/catalog/configs/<file> (the oracle resolves relative paths against the cases file's dir).

Free memory model (what SGLang's get_available_gpu_memory would see):
  free_before_gib = total_GiB - slack   (slack ~0.5..1.5 GiB: CUDA context, NCCL for tp>1)
  free_after_gib  = free_before_gib - weights_GiB / tp - small overhead
plus some cases where little or nothing is left after the weights.
"""
import argparse
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_CONFIGS_DIR = os.path.normpath(os.path.join(HERE, "..", "..", "planner", "catalog", "configs"))

# planner profile id -> (nvidia-smi memory.total MiB, SM version, NVML name)
GPUS = {
    "rtxpro6000": (97887, "12.0", "NVIDIA RTX PRO 6000 Blackwell Workstation Edition"),
    "h100-sxm": (81559, "9.0", "NVIDIA H100 80GB HBM3"),
    "h200": (143771, "9.0", "NVIDIA H200"),
    "b200": (183359, "10.0", "NVIDIA B200"),
    "rtx5090": (32607, "12.0", "NVIDIA GeForce RTX 5090"),
    "rtx4090": (24564, "8.9", "NVIDIA GeForce RTX 4090"),
    "a100-80gb": (81920, "8.0", "NVIDIA A100-SXM4-80GB"),
    "l40s": (46068, "8.9", "NVIDIA L40S"),
    "a100-40gb": (40960, "8.0", "NVIDIA A100-SXM4-40GB"),
}

# catalog id -> (config file, approx. bf16 weights GiB for the whole model)
MODELS = {
    "qwen3.6-27b": ("Qwen__Qwen3.6-27B.config.json", 51.75),
    "qwen3.5-27b": ("Qwen__Qwen3.5-27B.config.json", 51.75),
    "qwen3.6-35b-a3b": ("Qwen__Qwen3.6-35B-A3B.config.json", 66.97),
    "qwen3.5-9b": ("Qwen__Qwen3.5-9B.config.json", 17.98),
    "qwen3.5-122b-a10b": ("Qwen__Qwen3.5-122B-A10B.config.json", 233.0),
    "qwen3-next-80b-a3b-instruct": ("Qwen__Qwen3-Next-80B-A3B-Instruct.config.json", 151.5),
    "nemotron-3-nano-30b-a3b": ("nvidia__NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.config.json", 58.8),
}
# Dense models: the 0.5.11 oracle ends in oracle_error for them ("'NoneType' object has no attribute
# 'mamba2_cache_params'", stage runner_setup) -- it models hybrid mamba / linear-attention models only.
# The curated set still tries them (the filter drops those lines); random mode never draws them.
DENSE_MODELS = {
    "qwen3-8b": ("Qwen__Qwen3-8B.config.json", 15.26),
    "llama-3.1-8b-instruct": ("meta-llama__Llama-3.1-8B-Instruct.config.json", 14.96),
}
RANDOM_MODELS = sorted(MODELS)
MODELS.update(DENSE_MODELS)

# Oracle workaround (sglang-oracle batch mode, as of this writing): bootstrap() writes the FIRST case's
# "env" into os.environ before case_isolation() snapshots it, so that env leaks into every later case of
# the batch. Running a case with an empty env first avoids it; filter_results.py drops this id.
BOOTSTRAP_ID = "_bootstrap_empty_env"

TP_CHOICES = (1, 2, 4)
EAGLE_FULL = ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3",
              "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"]


def total_gib(gpu):
    return GPUS[gpu][0] / 1024.0


def weights_gib(model, tp):
    return MODELS[model][1] / tp


class Builder:
    def __init__(self, out_path, configs_dir):
        self.out_dir = os.path.dirname(os.path.abspath(out_path))
        self.configs_dir = os.path.abspath(configs_dir)
        self.cases = []
        self.ids = set()

    def add(self, cid, gpu, model, flags=(), tp=1, free_before=None, free_after=None, env=None,
            slack=None, overhead=0.35):
        if cid in self.ids:
            raise SystemExit(f"duplicate case id {cid}")
        self.ids.add(cid)
        flags = list(flags)
        if tp != 1:
            flags = flags + ["--tp-size", str(tp)]
        if free_before is None:
            if slack is None:
                slack = 0.9 if tp == 1 else 1.4  # CUDA context (+ NCCL for tp>1)
            free_before = total_gib(gpu) - slack
        if free_after is None:
            free_after = free_before - weights_gib(model, tp) - overhead
        total, sm, name = GPUS[gpu]
        cfg = os.path.join(self.configs_dir, MODELS[model][0])
        self.cases.append({
            "id": cid,
            "gpu": gpu,
            "gpu_total_mib": total,
            "gpu_sm": sm,
            "gpu_name": name,
            "planner_model": model,
            "config_json": os.path.relpath(cfg, self.out_dir),
            "flags": [str(f) for f in flags],
            "free_before_gib": round(float(free_before), 2),
            "free_after_gib": round(float(free_after), 2),
            "env": dict(env or {}),
        })


# ----------------------------------------------------------------------------
# curated set
# ----------------------------------------------------------------------------
def curated(b):
    Q = "qwen3.6-27b"
    P = "rtxpro6000"
    XB = ["--mamba-scheduler-strategy", "extra_buffer"]
    NB = ["--mamba-scheduler-strategy", "no_buffer"]
    DR = ["--disable-radix-cache"]

    def MRR(n):
        return ["--max-running-requests", str(n)]
    seed_flags = EAGLE_FULL + XB + ["--max-mamba-cache-size", "24", "--mamba-full-memory-ratio", "0.4"]

    # --- the seed case and its fix
    b.add("seed", P, Q, seed_flags, free_before=95.0, free_after=44.0)
    b.add("seed_fix_mrr4", P, Q, seed_flags + ["--max-running-requests", "4"], free_before=95.0, free_after=44.0)

    # --- baseline / mamba scheduler strategy / radix cache / overlap
    b.add("default", P, Q)
    b.add("strategy_auto", P, Q, ["--mamba-scheduler-strategy", "auto"])
    b.add("strategy_no_buffer", P, Q, NB)
    b.add("strategy_extra_buffer", P, Q, XB)
    b.add("no_buffer_disable_radix", P, Q, NB + DR)
    b.add("disable_radix", P, Q, DR)
    b.add("disable_overlap", P, Q, ["--disable-overlap-schedule"])
    b.add("extra_buffer_disable_overlap", P, Q, XB + ["--disable-overlap-schedule"])
    b.add("reject_extra_buffer_disable_radix", P, Q, XB + DR)

    # --- speculative decoding
    # 0.5.11 forces max_running_requests=48 when spec is on and the flag is unset, and reserves
    # mamba_cache_per_req * 48 * num_draft_tokens for intermediate states: on a 96 GB card with a
    # 27B model that alone exhausts memory, so most spec cases here also set --max-running-requests.
    NEXTN_FULL = ["--speculative-algorithm", "NEXTN", "--speculative-num-steps", "3",
                  "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"]
    b.add("eagle_extra_buffer", P, Q, EAGLE_FULL + XB)
    b.add("eagle_extra_buffer_mrr16", P, Q, EAGLE_FULL + XB + MRR(16))
    b.add("eagle_extra_buffer_mrr16_specv1", P, Q, EAGLE_FULL + XB + MRR(16), env={"SGLANG_ENABLE_SPEC_V2": "0"})
    b.add("reject_eagle_no_buffer_radix", P, Q, EAGLE_FULL + NB)
    b.add("reject_eagle_default_strategy_radix", P, Q, EAGLE_FULL)
    b.add("reject_eagle_strategy_auto_radix", P, Q, EAGLE_FULL + ["--mamba-scheduler-strategy", "auto"])
    b.add("eagle_disable_radix", P, Q, EAGLE_FULL + DR)
    b.add("eagle_disable_radix_mrr8", P, Q, EAGLE_FULL + DR + MRR(8))
    b.add("eagle_no_buffer_disable_radix_mrr24", P, Q, EAGLE_FULL + NB + DR + MRR(24))
    b.add("eagle_extra_buffer_disable_overlap_mrr16", P, Q, EAGLE_FULL + XB + ["--disable-overlap-schedule"] + MRR(16))
    b.add("nextn_extra_buffer", P, Q, NEXTN_FULL + XB)
    b.add("nextn_extra_buffer_mrr12", P, Q, NEXTN_FULL + XB + MRR(12))
    b.add("nextn_auto_disable_radix_mrr8", P, Q, ["--speculative-algorithm", "NEXTN"] + DR + MRR(8))
    b.add("eagle_auto_params_extra_buffer", P, Q, ["--speculative-algorithm", "EAGLE"] + XB)
    b.add("eagle_auto_params_extra_buffer_mrr8", P, Q, ["--speculative-algorithm", "EAGLE"] + XB + MRR(8))
    b.add("eagle_auto_params_disable_radix_mrr16", P, Q, ["--speculative-algorithm", "EAGLE"] + DR + MRR(16))
    b.add("eagle_topk4_disable_radix_mrr8", P, Q, ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3",
                                                   "--speculative-eagle-topk", "4",
                                                   "--speculative-num-draft-tokens", "8"] + DR + MRR(8))
    b.add("eagle_topk2_extra_buffer_mrr8", P, Q, ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "2",
                                                  "--speculative-eagle-topk", "2",
                                                  "--speculative-num-draft-tokens", "4"] + XB + MRR(8))
    b.add("reject_eagle_topk_without_steps", P, Q, ["--speculative-algorithm", "EAGLE",
                                                              "--speculative-eagle-topk", "4"] + DR + MRR(4))
    b.add("eagle_steps5_dt6_extra_buffer_mrr8", P, Q, ["--speculative-algorithm", "EAGLE", "--speculative-num-steps",
                                                       "5", "--speculative-eagle-topk", "1",
                                                       "--speculative-num-draft-tokens", "6"] + XB + MRR(8))
    b.add("eagle_9b_extra_buffer", P, "qwen3.5-9b", EAGLE_FULL + XB)

    # --- explicit mamba cache size vs ratio, max running requests
    b.add("mmcs64", P, Q, ["--max-mamba-cache-size", "64"])
    b.add("ratio05", P, Q, ["--mamba-full-memory-ratio", "0.5"])
    b.add("ratio15_extra_buffer", P, Q, XB + ["--mamba-full-memory-ratio", "1.5"])
    b.add("mmcs32_ratio06_extra_buffer", P, Q, XB + ["--max-mamba-cache-size", "32", "--mamba-full-memory-ratio", "0.6"])
    b.add("mrr8", P, Q, ["--max-running-requests", "8"])
    b.add("mrr256", P, Q, ["--max-running-requests", "256"])
    b.add("disable_radix_mrr32", P, Q, DR + ["--max-running-requests", "32"])
    b.add("fail_mmcs2_lt_ratio", P, Q, ["--max-mamba-cache-size", "2"])
    b.add("fail_mmcs4_lt_ratio_extra_buffer", P, Q, XB + ["--max-mamba-cache-size", "4"])
    b.add("mmcs2_lt_ratio_disable_cuda_graph", P, Q, ["--max-mamba-cache-size", "2", "--disable-cuda-graph"])

    # --- page size
    b.add("page1_extra_buffer", P, Q, XB + ["--page-size", "1"])
    b.add("page16_extra_buffer", P, Q, XB + ["--page-size", "16"])
    b.add("page64_extra_buffer", P, Q, XB + ["--page-size", "64"])
    b.add("page16_no_buffer_forced_to_1", P, Q, ["--page-size", "16"])
    b.add("page64_disable_radix", P, Q, DR + ["--page-size", "64"])
    b.add("page64_eagle_extra_buffer_mrr8", P, Q, EAGLE_FULL + XB + ["--page-size", "64"] + MRR(8))

    # --- dtypes and env
    b.add("kv_fp8", P, Q, ["--kv-cache-dtype", "fp8_e4m3"])
    b.add("kv_fp8_eagle_extra_buffer_mrr16", P, Q, EAGLE_FULL + XB + ["--kv-cache-dtype", "fp8_e4m3"] + MRR(16))
    b.add("ssm_bf16_flag", P, Q, ["--mamba-ssm-dtype", "bfloat16"])
    b.add("ssm_bf16_env", P, Q, [], env={"SGLANG_MAMBA_SSM_DTYPE": "bfloat16"})
    b.add("ssm_fp16_env_eagle", P, Q, EAGLE_FULL + XB, env={"SGLANG_MAMBA_SSM_DTYPE": "float16"})
    b.add("conv_fp32_env", P, Q, [], env={"SGLANG_MAMBA_CONV_DTYPE": "float32"})

    # --- mem fraction / token caps / context / chunked prefill / cuda graph
    b.add("mfs085", P, Q, ["--mem-fraction-static", "0.85"])
    b.add("mfs070_eagle_extra_buffer", P, Q, EAGLE_FULL + XB + ["--mem-fraction-static", "0.70"])
    b.add("mfs090_eagle_extra_buffer_mrr16", P, Q, EAGLE_FULL + XB + ["--mem-fraction-static", "0.90"] + MRR(16))
    b.add("mfs093", P, Q, ["--mem-fraction-static", "0.93"])
    b.add("max_total_tokens_100k", P, Q, ["--max-total-tokens", "100000"])
    b.add("max_total_tokens_20k_eagle_mrr8", P, Q, EAGLE_FULL + XB + ["--max-total-tokens", "20000"] + MRR(8))
    b.add("max_total_tokens_over_profiled", P, Q, ["--max-total-tokens", "5000000"])
    b.add("ctx32k", P, Q, ["--context-length", "32768"])
    b.add("ctx131k_eagle_extra_buffer_mrr16", P, Q, EAGLE_FULL + XB + ["--context-length", "131072"] + MRR(16))
    b.add("reject_ctx_longer", P, Q, ["--context-length", "524288"])
    b.add("ctx_longer_allowed", P, Q, ["--context-length", "524288"],
          env={"SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN": "1"})
    b.add("chunked4096", P, Q, ["--chunked-prefill-size", "4096"])
    b.add("chunked16384_extra_buffer", P, Q, XB + ["--chunked-prefill-size", "16384"])
    b.add("chunked_off", P, Q, ["--chunked-prefill-size", "-1"])
    b.add("cgbs16", P, Q, ["--cuda-graph-max-bs", "16"])
    b.add("cgbs512_disable_radix", P, Q, DR + ["--cuda-graph-max-bs", "512"])
    b.add("disable_cuda_graph", P, Q, ["--disable-cuda-graph"])
    b.add("disable_cuda_graph_eagle_mrr16", P, Q, EAGLE_FULL + XB + ["--disable-cuda-graph"] + MRR(16))

    # --- memory pressure
    b.add("fail_not_enough_memory", P, Q, [], free_before=95.0, free_after=2.0)
    b.add("fail_not_enough_memory_eagle", P, Q, EAGLE_FULL + XB, free_before=95.0, free_after=12.0)
    b.add("tight_free_after_25", P, Q, XB, free_before=95.0, free_after=25.0)

    # --- argparse rejections
    b.add("reject_unknown_flag", P, Q, ["--no-such-flag", "1"])
    b.add("reject_bad_strategy", P, Q, ["--mamba-scheduler-strategy", "bogus"])
    b.add("reject_bad_kv_dtype", P, Q, ["--kv-cache-dtype", "fp9"])

    # --- other GPUs
    b.add("h100_default", "h100-sxm", Q)
    b.add("h100_eagle_extra_buffer", "h100-sxm", Q, EAGLE_FULL + XB)
    b.add("h100_eagle_extra_buffer_mrr4", "h100-sxm", Q, EAGLE_FULL + XB + MRR(4))
    b.add("h100_35b_a3b_barely", "h100-sxm", "qwen3.6-35b-a3b")
    b.add("h100_122b_tp4_page64_extra_buffer", "h100-sxm", "qwen3.5-122b-a10b", XB + ["--page-size", "64"], tp=4)
    b.add("h100_next80b_tp2_barely", "h100-sxm", "qwen3-next-80b-a3b-instruct", tp=2)
    b.add("h200_default", "h200", Q)
    b.add("h200_eagle_extra_buffer_mrr32", "h200", Q, EAGLE_FULL + XB + ["--max-running-requests", "32"])
    b.add("h200_122b_tp2", "h200", "qwen3.5-122b-a10b", tp=2)
    b.add("h200_122b_tp2_mfs090", "h200", "qwen3.5-122b-a10b", ["--mem-fraction-static", "0.90"], tp=2)
    b.add("h200_122b_tp2_nextn_extra_buffer", "h200", "qwen3.5-122b-a10b",
          ["--speculative-algorithm", "NEXTN"] + XB, tp=2)
    b.add("h200_9b_eagle_extra_buffer", "h200", "qwen3.5-9b", EAGLE_FULL + XB)
    b.add("b200_default", "b200", Q)
    b.add("b200_eagle_extra_buffer", "b200", Q, EAGLE_FULL + XB)
    b.add("b200_disable_radix", "b200", Q, DR)
    b.add("b200_next80b_tp1", "b200", "qwen3-next-80b-a3b-instruct")
    b.add("a100_80_default", "a100-80gb", Q)
    b.add("a100_80_eagle_disable_radix_mrr8", "a100-80gb", Q, EAGLE_FULL + DR + MRR(8))
    b.add("a100_40_9b", "a100-40gb", "qwen3.5-9b")
    b.add("a100_40_27b_tp2_extra_buffer", "a100-40gb", "qwen3.5-27b", XB, tp=2)
    b.add("a100_40_35b_tp2_barely", "a100-40gb", "qwen3.6-35b-a3b", tp=2)
    b.add("l40s_9b_eagle_extra_buffer", "l40s", "qwen3.5-9b", EAGLE_FULL + XB)
    b.add("l40s_35b_tp2", "l40s", "qwen3.6-35b-a3b", tp=2)
    b.add("l40s_next80b_tp4", "l40s", "qwen3-next-80b-a3b-instruct", tp=4)
    b.add("rtx4090_9b", "rtx4090", "qwen3.5-9b")
    b.add("rtx4090_9b_mfs090", "rtx4090", "qwen3.5-9b", ["--mem-fraction-static", "0.90"])
    b.add("rtx4090_9b_kv_fp8_mfs090", "rtx4090", "qwen3.5-9b", ["--kv-cache-dtype", "fp8_e4m3", "--mem-fraction-static", "0.90"])
    b.add("rtx4090_27b_tp4_eagle_extra_buffer_mrr8", "rtx4090", Q, EAGLE_FULL + XB + MRR(8), tp=4)
    b.add("rtx5090_9b_eagle_extra_buffer", "rtx5090", "qwen3.5-9b", EAGLE_FULL + XB)
    b.add("rtx5090_9b_eagle_extra_buffer_mrr8", "rtx5090", "qwen3.5-9b", EAGLE_FULL + XB + MRR(8))
    b.add("rtx5090_27b_tp2_barely", "rtx5090", Q, tp=2)
    b.add("rtx5090_27b_tp2_mfs092", "rtx5090", Q, ["--mem-fraction-static", "0.92"], tp=2)
    b.add("rtx5090_35b_tp4", "rtx5090", "qwen3.6-35b-a3b", tp=4)

    # --- other models on the RTX PRO 6000
    b.add("q35_27b_default", P, "qwen3.5-27b")
    b.add("q35_27b_eagle_extra_buffer_mrr16", P, "qwen3.5-27b", EAGLE_FULL + XB + MRR(16))
    b.add("q36_35b_default", P, "qwen3.6-35b-a3b")
    b.add("q36_35b_eagle_extra_buffer_mrr16", P, "qwen3.6-35b-a3b", EAGLE_FULL + XB + MRR(16))
    b.add("q35_9b_default", P, "qwen3.5-9b")
    b.add("q35_9b_tp2_extra_buffer_page16", P, "qwen3.5-9b", XB + ["--page-size", "16"], tp=2)
    b.add("q35_122b_tp4", P, "qwen3.5-122b-a10b", tp=4)
    b.add("q35_122b_tp4_eagle_extra_buffer", P, "qwen3.5-122b-a10b", EAGLE_FULL + XB, tp=4)
    b.add("next80b_tp2", P, "qwen3-next-80b-a3b-instruct", tp=2)
    b.add("next80b_tp2_nextn_extra_buffer_mrr16", P, "qwen3-next-80b-a3b-instruct",
          ["--speculative-algorithm", "NEXTN"] + XB + MRR(16), tp=2)
    b.add("next80b_tp4_disable_radix", P, "qwen3-next-80b-a3b-instruct", DR, tp=4)
    b.add("nemotron_default", P, "nemotron-3-nano-30b-a3b")
    b.add("nemotron_disable_radix", P, "nemotron-3-nano-30b-a3b", DR)
    b.add("nemotron_extra_buffer", P, "nemotron-3-nano-30b-a3b", XB)
    b.add("nemotron_nextn_disable_radix_mrr8", P, "nemotron-3-nano-30b-a3b",
          ["--speculative-algorithm", "NEXTN"] + DR + MRR(8))
    # --- dense models (expected: oracle_error -> dropped by filter_results.py)
    b.add("dense_qwen3_8b_default", "h100-sxm", "qwen3-8b")
    b.add("dense_qwen3_8b_disable_radix", "h100-sxm", "qwen3-8b", DR)
    b.add("dense_llama31_8b_default", "h100-sxm", "llama-3.1-8b-instruct")
    b.add("dense_llama31_8b_eagle_mrr16", "h100-sxm", "llama-3.1-8b-instruct", EAGLE_FULL + MRR(16))
    b.add("nemotron_h200_mrr64", "h200", "nemotron-3-nano-30b-a3b", ["--max-running-requests", "64"])
    b.add("nemotron_h100_tp2_kv_fp8", "h100-sxm", "nemotron-3-nano-30b-a3b", ["--kv-cache-dtype", "fp8_e4m3"], tp=2)


# ----------------------------------------------------------------------------
# random mode: same flag space, seeded
# ----------------------------------------------------------------------------
def random_cases(b, seed, count):
    rng = random.Random(seed)
    gpus = sorted(GPUS)
    models = RANDOM_MODELS
    n = 0
    attempts = 0
    while n < count:
        attempts += 1
        if attempts > count * 200:
            raise SystemExit("could not draw enough cases")
        gpu = rng.choice(gpus)
        model = rng.choice(models)
        tgib = total_gib(gpu)
        # smallest tp where the weights leave >= 30% of the card (SGLang keeps (1 - mem_fraction_static)
        # of it for activations/graphs); sometimes one step larger; sometimes a "barely fits" tp
        # that only leaves >= 2 GiB
        roomy = [tp for tp in TP_CHOICES if tgib - 1.5 - weights_gib(model, tp) >= 0.3 * tgib]
        barely = [tp for tp in TP_CHOICES if tgib - 1.5 - weights_gib(model, tp) >= 2.0]
        if not barely:
            continue
        if roomy and rng.random() >= 0.12:
            tp = roomy[0]
            if len(roomy) > 1 and rng.random() < 0.25:
                tp = roomy[1]
        else:
            tp = barely[0]
        slack = rng.uniform(0.5, 1.5)
        free_before = tgib - slack
        overhead = rng.uniform(0.1, 0.6)
        free_after = free_before - weights_gib(model, tp) - overhead
        r = rng.random()
        if r < 0.06:
            free_after = rng.uniform(0.3, 3.0)          # almost nothing left
        elif r < 0.14:
            free_after = min(free_after, rng.uniform(3.0, 8.0))  # tight
        flags = []
        env = {}
        tags = []

        # speculative decoding
        # Nemotron-3-Nano has no MTP head: no speculative decoding for it (with a draft it also hits an
        # oracle gap: MHATokenToKVPool._init_kv_copy_and_warmup calls .item() on a meta tensor)
        no_spec = model.startswith("nemotron")
        spec = "none" if no_spec else rng.choices(["none", "eagle", "eagle_auto", "nextn", "eagle_topk"],
                                                  [45, 25, 10, 10, 10])[0]
        if spec == "eagle":
            steps = rng.choice([1, 2, 3, 4, 5])
            flags += ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", steps,
                      "--speculative-eagle-topk", 1, "--speculative-num-draft-tokens", steps + 1]
        elif spec == "eagle_auto":
            flags += ["--speculative-algorithm", "EAGLE"]
        elif spec == "nextn":
            flags += ["--speculative-algorithm", "NEXTN"]
            if rng.random() < 0.5:
                flags += ["--speculative-num-steps", 3, "--speculative-eagle-topk", 1,
                          "--speculative-num-draft-tokens", 4]
        elif spec == "eagle_topk":
            topk = rng.choice([2, 4, 8])
            steps = rng.choice([2, 3, 4])
            flags += ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", steps,
                      "--speculative-eagle-topk", topk, "--speculative-num-draft-tokens",
                      rng.choice([4, 8, 16])]
        if spec != "none":
            tags.append(spec)
            if rng.random() < 0.2:
                env["SGLANG_ENABLE_SPEC_V2"] = "0"

        # mamba scheduler strategy / radix / overlap
        if spec != "none":
            strat = rng.choices([None, "auto", "no_buffer", "extra_buffer"], [10, 10, 10, 70])[0]
        elif no_spec:  # extra_buffer is rejected for NemotronH: keep it rare
            strat = rng.choices([None, "auto", "no_buffer", "extra_buffer"], [50, 20, 20, 10])[0]
        else:
            strat = rng.choices([None, "auto", "no_buffer", "extra_buffer"], [40, 15, 15, 30])[0]
        if strat:
            flags += ["--mamba-scheduler-strategy", strat]
            tags.append(strat)
        if strat == "extra_buffer":
            p_noradix = 0.05   # a rejection in SGLang; keep a few
        elif spec != "none":
            p_noradix = 0.6    # spec needs extra_buffer or a disabled radix cache
        else:
            p_noradix = 0.15
        if rng.random() < p_noradix:
            flags += ["--disable-radix-cache"]
            tags.append("noradix")
        if rng.random() < 0.1:
            flags += ["--disable-overlap-schedule"]
            tags.append("nooverlap")

        # mamba cache sizing
        if rng.random() < 0.2:
            flags += ["--max-mamba-cache-size", rng.choice([2, 4, 8, 16, 24, 32, 48, 64, 128, 256])]
            tags.append("mmcs")
        if rng.random() < 0.2:
            flags += ["--mamba-full-memory-ratio", rng.choice([0.2, 0.4, 0.5, 0.7, 0.9, 1.5, 2.0])]
            tags.append("ratio")
        # with spec, 0.5.11 forces max_running_requests=48 when unset (big spec reserve): set it more often
        if rng.random() < (0.6 if spec != "none" else 0.3):
            flags += ["--max-running-requests", rng.choice([1, 4, 8, 16, 32, 64, 128, 256])]
            tags.append("mrr")
        if rng.random() < 0.25:
            flags += ["--page-size", rng.choice([1, 16, 64])]
            tags.append("page")

        # dtypes / env
        if rng.random() < 0.15:
            flags += ["--kv-cache-dtype", "fp8_e4m3"]
            tags.append("kvfp8")
        if rng.random() < 0.1:
            flags += ["--mamba-ssm-dtype", rng.choice(["bfloat16", "float32", "float16"])]
            tags.append("ssmflag")
        if rng.random() < 0.06:
            env["SGLANG_MAMBA_SSM_DTYPE"] = rng.choice(["bfloat16", "float16", "float32"])
        if rng.random() < 0.06:
            env["SGLANG_MAMBA_CONV_DTYPE"] = rng.choice(["float32", "float16", "bfloat16"])

        # memory / tokens / context / prefill / cuda graph
        if rng.random() < 0.25:
            flags += ["--mem-fraction-static", rng.choice([0.6, 0.7, 0.75, 0.8, 0.85, 0.88, 0.9, 0.93])]
            tags.append("mfs")
        if rng.random() < 0.1:
            flags += ["--max-total-tokens", rng.choice([16384, 32768, 100000, 262144, 500000, 2000000])]
            tags.append("mtt")
        if rng.random() < 0.15:
            ctx = rng.choice([8192, 32768, 65536, 131072, 524288])
            flags += ["--context-length", ctx]
            tags.append("ctx")
            if ctx > 262144 and rng.random() < 0.5:
                env["SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN"] = "1"
        if rng.random() < 0.15:
            flags += ["--chunked-prefill-size", rng.choice([-1, 2048, 4096, 8192, 16384])]
            tags.append("chunk")
        if rng.random() < 0.08:
            flags += ["--disable-cuda-graph"]
            tags.append("nocg")
        elif rng.random() < 0.15:
            flags += ["--cuda-graph-max-bs", rng.choice([8, 16, 32, 64, 128, 256, 512])]
            tags.append("cgbs")

        # rare invalid inputs
        r = rng.random()
        if r < 0.02:
            flags += ["--no-such-flag", "1"]
            tags.append("badflag")
        elif r < 0.04:
            flags += [rng.choice(["--mamba-scheduler-strategy", "--kv-cache-dtype", "--mamba-ssm-dtype"]), "bogus"]
            tags.append("badchoice")

        n += 1
        cid = f"r{seed}_{n:04d}_{gpu}_{model}_tp{tp}" + ("_" + "_".join(tags) if tags else "")
        b.add(cid, gpu, model, flags, tp=tp, free_before=free_before, free_after=free_after, env=env)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--curated", action="store_true", help="write the curated set instead of random cases")
    p.add_argument("--seed", type=int, default=1, help="random mode: RNG seed (default 1)")
    p.add_argument("--count", type=int, default=150, help="random mode: number of cases (default 150)")
    p.add_argument("--out", required=True, help="output JSONL ('-' for stdout; config paths then relative to cwd)")
    p.add_argument("--configs-dir", default=DEFAULT_CONFIGS_DIR,
                   help="planner catalog config dir (default: planner/catalog/configs of this repo)")
    p.add_argument("--with-bootstrap", action="store_true",
                   help=f"prepend a case '{BOOTSTRAP_ID}' with an empty env (see BOOTSTRAP_ID); "
                        "filter_results.py removes it again")
    p.add_argument("--exclude-ids", default=None,
                   help="file with case ids (one per line) to leave out, e.g. cases that gave oracle_error")
    a = p.parse_args(argv)

    out_ref = os.path.join(os.getcwd(), "-") if a.out == "-" else a.out
    b = Builder(out_ref, a.configs_dir)
    if a.curated:
        curated(b)
    else:
        random_cases(b, a.seed, a.count)
    cases = b.cases
    if a.exclude_ids:
        with open(a.exclude_ids) as f:
            skip = {ln.strip() for ln in f if ln.strip() and not ln.startswith("#")}
        cases = [c for c in cases if c["id"] not in skip]
    if a.with_bootstrap:
        boot = Builder(out_ref, a.configs_dir)
        boot.add(BOOTSTRAP_ID, "rtxpro6000", "qwen3.6-27b", [], free_before=95.0, free_after=44.0, env={})
        cases = boot.cases + cases
    text = "".join(json.dumps(c) + "\n" for c in cases)
    if a.out == "-":
        sys.stdout.write(text)
    else:
        os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
        with open(a.out, "w") as f:
            f.write(text)
        print(f"make_cases: wrote {len(cases)} cases to {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
