#!/usr/bin/env python3
"""Golden cases for SGLang 0.5.16 memory sizing, made by SGLang 0.5.16's own code through the sizing
oracle (/work/shared/tools/sglang-oracle, adapter versions/v0_5_16.py).

Two jobs:

  # 1. only write case lines (deterministic), like make_cases.py
  make_cases_v0516.py cases --curated --out tests/golden/sglang-0.5.16/cases.jsonl
  make_cases_v0516.py cases --seed 1 --count 100 --out tests/golden/sglang-0.5.16/random.jsonl

  # 2. regenerate everything in tests/golden/sglang-0.5.16/ (cases, results, random, dropped)
  make_cases_v0516.py regen [--py ~/.cache/sglang-oracle/0.5.16/venv/bin/python] [--verify 10]

Case lines have the same format as tests/golden/sglang-0.5.11/cases.jsonl:
  {"id", "gpu", "gpu_total_mib", "gpu_sm", "gpu_name", "planner_model", "config_json",
   "flags", "free_before_gib", "free_after_gib", "env"}

Differences from make_cases.py (0.5.11):
  * 0.5.16 flag spellings: --mamba-radix-cache-strategy (the old --mamba-scheduler-strategy is a
    deprecated alias; some cases use it on purpose), --cuda-graph-max-bs-decode (old --cuda-graph-max-bs
    alias in a few cases), strategy choices auto / no_buffer / extra_buffer / extra_buffer_lazy.
  * free_after_gib: since 0.5.14 SGLang loads the draft weights BEFORE sizing the pools, so with
    speculative decoding free_after = free_before - (target + draft weights) / tp - overhead. The draft
    weights are estimated from the config (see draft_weights_gib): one MTP decoder layer + its fc for
    path-less EAGLE / NEXTN on Qwen3.5 / 3.6 / Next (embed_tokens and lm_head are shared with the target),
    or the draft checkpoint's own layers for --speculative-draft-model-path.
  * A few cases pass --speculative-draft-model-path drafts/<name>: a directory next to the cases file
    holding a copy of a planner catalog draft config. The path is relative to the cases file, so the
    oracle has to run with that directory as its working directory (regen does that).

Batch isolation (oracle issue, seen with 0.5.11): batch mode applies the FIRST case's env before it takes
its per-case snapshot, so that env leaks into the rest of the batch. regen therefore runs every case with
a non-empty "env" alone (a one-line batch in its own process) and all other cases in one batch, then puts
the results back in case order. --verify N re-runs N env-free cases alone and compares them with the
batch output (full result line).

Dropped (not written to cases.jsonl / results.jsonl, listed in dropped.jsonl): outcome oracle_error or
input_error, and startup_failed raised by an oracle stand-in (ORACLE_ARTIFACT_MARKERS: "cannot be called on
meta tensors", "PyTorch was compiled without CUDA support").
"""
import argparse
import collections
import concurrent.futures
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from filter_results import split_kept  # noqa: E402
import make_cases as mc  # noqa: E402  (tables only: GPUS, MODELS, DENSE_MODELS)

REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
DEFAULT_CONFIGS_DIR = os.path.join(REPO, "planner", "catalog", "configs")
DEFAULT_OUT = os.path.join(REPO, "tests", "golden", "sglang-0.5.16")
DEFAULT_PY = os.path.expanduser("~/.cache/sglang-oracle/0.5.16/venv/bin/python")
DEFAULT_ORACLE = "/work/shared/tools/sglang-oracle"
ORACLE_CACHE = "/tmp/sglang-oracle-cache"   # appears in inputs.sglang_argv: pinned for stable output

GPUS = dict(mc.GPUS)
DENSE_MODELS = dict(getattr(mc, "DENSE_MODELS", {}))
MODELS = dict(mc.MODELS)
MODELS.update(DENSE_MODELS)
RANDOM_MODELS = sorted(m for m in MODELS if m not in DENSE_MODELS)
TP_CHOICES = (1, 2, 4)

# --speculative-draft-model-path targets: drafts/<name>/config.json next to the cases file (copied from the
# planner catalog by regen / `cases --write-drafts`)
DRAFTS = {
    "qwen3.5-35b-a3b-eagle3": "sgl-project-SpecForge__qwen3.5-35b-a3b-eagle3.config.json",
    "qwen3.6-27b-dflash": "sgl-project-SpecForge__qwen3.6-27b-dflash.config.json",
    "qwen3.5-27b-dflash": "sgl-project-SpecForge__qwen3.5-27b-dflash.config.json",
    "qwen3-next-80b-a3b-eagle3": "sgl-project-SpecForge__qwen3-next-80b-a3b-eagle3.config.json",
}

EAGLE_FULL = ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3",
              "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"]
NEXTN_FULL = ["--speculative-algorithm", "NEXTN", "--speculative-num-steps", "3",
              "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"]
STRAT = "--mamba-radix-cache-strategy"
STRAT_OLD = "--mamba-scheduler-strategy"      # deprecated alias in 0.5.16 (removed in 0.5.20)
CGBS = "--cuda-graph-max-bs-decode"
CGBS_OLD = "--cuda-graph-max-bs"              # deprecated alias in 0.5.16 (removed in 0.5.20)

# startup_failed messages that come from the oracle's stand-ins, not from a decision SGLang makes on a GPU:
# the meta-device pools, and the CPU-only torch build (SGLANG_ENABLE_POST_CAPTURE_KV_SIZING=1 reaches
# a real CUDA call in _init_pools)
ORACLE_ARTIFACT_MARKERS = ("cannot be called on meta tensors", "PyTorch was compiled without CUDA support")


def total_gib(gpu):
    return GPUS[gpu][0] / 1024.0


def weights_gib(model, tp):
    return MODELS[model][1] / tp


# ----------------------------------------------------------------------------
# draft weight estimate (bf16), whole model (not per rank)
# ----------------------------------------------------------------------------
def _text_cfg(path):
    with open(path) as f:
        c = json.load(f)
    return c.get("text_config", c)


def _attn_params(t, h_in, gated):
    h = t["hidden_size"]
    nq, nkv = t["num_attention_heads"], t["num_key_value_heads"]
    hd = t.get("head_dim") or h // nq
    return h_in * nq * hd * (2 if gated else 1) + 2 * h_in * nkv * hd + nq * hd * h


def _mlp_params(t):
    h = t["hidden_size"]
    if t.get("num_experts"):
        p = t["num_experts"] * 3 * h * t["moe_intermediate_size"] + h * t["num_experts"]
        if t.get("shared_expert_intermediate_size"):
            p += 3 * h * t["shared_expert_intermediate_size"] + h
        return p
    return 3 * h * t["intermediate_size"]


def mtp_draft_params(config_path):
    """Path-less EAGLE / NEXTN on Qwen3.5 / 3.6 / Qwen3-Next: the MTP module = one full-attention decoder
    layer (gated attention) + fc (2h -> h) + norms; embed_tokens / lm_head are shared with the target."""
    t = _text_cfg(config_path)
    h = t["hidden_size"]
    n_layers = t.get("mtp_num_hidden_layers") or t.get("num_nextn_predict_layers") or 1
    return n_layers * (_attn_params(t, h, gated=True) + _mlp_params(t)) + 2 * h * h


def path_draft_params(config_path):
    """A draft checkpoint (EAGLE3 / DFLASH): its decoder layers + fc; EAGLE3 also has its own
    (draft-vocab) lm_head; embeddings are taken from the target."""
    t = _text_cfg(config_path)
    h = t["hidden_size"]
    arch = (t.get("architectures") or [""])[0]
    if "Eagle3" in arch:
        p = _attn_params(t, 2 * h, gated=False) + _mlp_params(t) + 3 * h * h
        p += (t.get("draft_vocab_size") or t["vocab_size"]) * h
        return p
    return t["num_hidden_layers"] * (_attn_params(t, h, gated=False) + _mlp_params(t)) + 5 * h * h


def _flag_value(flags, name):
    for i, f in enumerate(flags[:-1]):
        if f == name:
            return str(flags[i + 1])
    return None


def draft_weights_gib(model, flags, configs_dir):
    if _flag_value(flags, "--speculative-algorithm") is None:
        return 0.0
    path = _flag_value(flags, "--speculative-draft-model-path")
    if path:
        name = os.path.basename(path.rstrip("/"))
        return path_draft_params(os.path.join(configs_dir, DRAFTS[name])) * 2 / 2**30
    if model not in MODELS or model.startswith("nemotron") or model in DENSE_MODELS:
        return 0.0
    return mtp_draft_params(os.path.join(configs_dir, MODELS[model][0])) * 2 / 2**30


class Builder:
    def __init__(self, out_path, configs_dir):
        self.out_dir = os.path.dirname(os.path.abspath(out_path))
        self.configs_dir = os.path.abspath(configs_dir)
        self.cases = []
        self.ids = set()

    def add(self, cid, gpu, model, flags=(), tp=1, free_before=None, free_after=None, env=None,
            slack=None, overhead=0.35, digits=2):
        """free_after defaults to free_before - (target + draft weights)/tp - overhead (0.5.14+: the draft
        weights are resident before sizing)."""
        if cid in self.ids:
            raise SystemExit(f"duplicate case id {cid}")
        self.ids.add(cid)
        flags = [str(f) for f in flags]
        if tp != 1:
            flags = flags + ["--tp-size", str(tp)]
        if free_before is None:
            if slack is None:
                slack = 0.9 if tp == 1 else 1.4  # CUDA context (+ NCCL for tp>1)
            free_before = total_gib(gpu) - slack
        if free_after is None:
            draft = draft_weights_gib(model, flags, self.configs_dir)
            free_after = free_before - weights_gib(model, tp) - draft / tp - overhead
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
            "flags": flags,
            "free_before_gib": round(float(free_before), digits),
            "free_after_gib": round(float(free_after), digits),
            "env": dict(env or {}),
        })


# ----------------------------------------------------------------------------
# curated set
# ----------------------------------------------------------------------------
def curated(b):
    Q = "qwen3.6-27b"
    P = "rtxpro6000"
    XB = [STRAT, "extra_buffer"]
    XBL = [STRAT, "extra_buffer_lazy"]
    NB = [STRAT, "no_buffer"]
    AUTO = [STRAT, "auto"]
    DR = ["--disable-radix-cache"]
    NOOV = ["--disable-overlap-schedule"]

    def MRR(n):
        return ["--max-running-requests", str(n)]

    def MMCS(n):
        return ["--max-mamba-cache-size", str(n)]

    seed_tail = ["--max-mamba-cache-size", "24", "--mamba-full-memory-ratio", "0.4"]
    seed_flags = EAGLE_FULL + XB + seed_tail

    # --- the seed case (free_after 43.2 = the 0.5.11 seed's 44.0 minus the ~0.8 GiB MTP draft weights)
    b.add("seed", P, Q, seed_flags, free_before=95.0, free_after=43.2)
    b.add("seed_old_flag", P, Q, EAGLE_FULL + [STRAT_OLD, "extra_buffer"] + seed_tail,
          free_before=95.0, free_after=43.2)
    b.add("seed_fix_mrr4", P, Q, seed_flags + MRR(4), free_before=95.0, free_after=43.2)
    b.add("seed_mrr16", P, Q, seed_flags + MRR(16), free_before=95.0, free_after=43.2)
    # the 0.5.11 input (free memory after the target weights only): what a 0.5.11-style planner would feed
    b.add("seed_free_after_target_only", P, Q, seed_flags, free_before=95.0, free_after=44.0)
    b.add("seed_no_mmcs", P, Q, EAGLE_FULL + XB + ["--mamba-full-memory-ratio", "0.4"],
          free_before=95.0, free_after=43.2)

    # --- baseline / strategy / radix cache / overlap
    b.add("default", P, Q)
    b.add("strategy_auto", P, Q, AUTO)                         # 0.5.14+: auto -> extra_buffer (overlap on)
    b.add("strategy_auto_disable_overlap", P, Q, AUTO + NOOV)  # auto -> no_buffer
    b.add("strategy_auto_page16", P, Q, AUTO + ["--page-size", "16"])
    b.add("strategy_extra_buffer", P, Q, XB)
    b.add("strategy_extra_buffer_lazy", P, Q, XBL)
    b.add("reject_strategy_no_buffer_overlap", P, Q, NB)       # 0.5.16: assertion (overlap on)
    b.add("strategy_no_buffer_disable_overlap", P, Q, NB + NOOV)
    b.add("no_buffer_disable_radix", P, Q, NB + DR)
    b.add("disable_radix", P, Q, DR)
    b.add("disable_overlap", P, Q, NOOV)
    b.add("extra_buffer_disable_overlap", P, Q, XB + NOOV)
    b.add("fail_extra_buffer_lazy_disable_overlap", P, Q, XBL + NOOV)
    b.add("extra_buffer_disable_radix", P, Q, XB + DR)         # rejected in 0.5.11, accepted in 0.5.16
    b.add("reject_no_buffer_page16", P, Q, NB + NOOV + ["--page-size", "16"])
    # old spelling (deprecated alias)
    b.add("old_flag_auto", P, Q, [STRAT_OLD, "auto"])
    b.add("old_flag_extra_buffer", P, Q, [STRAT_OLD, "extra_buffer"])
    b.add("old_flag_no_buffer_disable_overlap", P, Q, [STRAT_OLD, "no_buffer"] + NOOV)
    b.add("old_flag_extra_buffer_lazy", P, Q, [STRAT_OLD, "extra_buffer_lazy"])
    b.add("old_flag_bogus", P, Q, [STRAT_OLD, "bogus"])        # the alias has no choices= in 0.5.16
    b.add("old_then_new_flag", P, Q, [STRAT_OLD, "no_buffer", STRAT, "extra_buffer"])
    b.add("reject_bad_strategy", P, Q, [STRAT, "bogus"])
    # cuda graph decode max bs
    b.add("cgbs_decode64", P, Q, [CGBS, "64"])
    b.add("cgbs_old_flag64", P, Q, [CGBS_OLD, "64"])
    b.add("cgbs_decode8_mrr32", P, Q, [CGBS, "8"] + MRR(32))
    b.add("cgbs_old_flag512", P, Q, [CGBS_OLD, "512"])

    # --- speculative decoding (0.5.16: spec + default strategy -> extra_buffer, no rejection; no 4 GiB spec
    # reserve in mem_fraction_static; joint mamba / intermediate solve; max_running_requests 48 when unset)
    b.add("eagle_default", P, Q, EAGLE_FULL)
    b.add("eagle_auto", P, Q, EAGLE_FULL + AUTO)
    b.add("eagle_extra_buffer", P, Q, EAGLE_FULL + XB)
    b.add("eagle_extra_buffer_mrr16", P, Q, EAGLE_FULL + XB + MRR(16))
    b.add("eagle_extra_buffer_mrr4", P, Q, EAGLE_FULL + XB + MRR(4))
    b.add("eagle_extra_buffer_mrr16_old_flag", P, Q, EAGLE_FULL + [STRAT_OLD, "extra_buffer"] + MRR(16))
    b.add("eagle_extra_buffer_mrr16_specv2_0", P, Q, EAGLE_FULL + XB + MRR(16),
          env={"SGLANG_ENABLE_SPEC_V2": "0"})     # the variable is gone since 0.5.14: expect no effect
    b.add("reject_eagle_no_buffer_radix", P, Q, EAGLE_FULL + NB)
    b.add("eagle_no_buffer_disable_overlap", P, Q, EAGLE_FULL + NB + NOOV)
    b.add("reject_eagle_extra_buffer_lazy", P, Q, EAGLE_FULL + XBL)
    b.add("eagle_disable_radix", P, Q, EAGLE_FULL + DR)
    b.add("eagle_disable_radix_mrr8", P, Q, EAGLE_FULL + DR + MRR(8))
    b.add("eagle_no_buffer_disable_radix_mrr24", P, Q, EAGLE_FULL + NB + DR + MRR(24))
    b.add("eagle_extra_buffer_disable_overlap_mrr16", P, Q, EAGLE_FULL + XB + NOOV + MRR(16))
    b.add("eagle_extra_buffer_mmcs40_mrr4", P, Q, EAGLE_FULL + XB + MMCS(40) + MRR(4))
    b.add("eagle_extra_buffer_ratio15", P, Q, EAGLE_FULL + XB + ["--mamba-full-memory-ratio", "1.5"])
    b.add("nextn_default", P, Q, NEXTN_FULL)
    b.add("nextn_extra_buffer_mrr12", P, Q, NEXTN_FULL + XB + MRR(12))
    b.add("nextn_auto_params_disable_radix_mrr8", P, Q, ["--speculative-algorithm", "NEXTN"] + DR + MRR(8))
    b.add("eagle_auto_params", P, Q, ["--speculative-algorithm", "EAGLE"])
    b.add("eagle_auto_params_mrr8", P, Q, ["--speculative-algorithm", "EAGLE"] + XB + MRR(8))
    b.add("eagle_topk4_dt8", P, Q, ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3",
                                    "--speculative-eagle-topk", "4", "--speculative-num-draft-tokens", "8"])
    b.add("eagle_topk4_disable_radix_mrr8", P, Q, ["--speculative-algorithm", "EAGLE", "--speculative-num-steps",
                                                   "3", "--speculative-eagle-topk", "4",
                                                   "--speculative-num-draft-tokens", "8"] + DR + MRR(8))
    b.add("eagle_topk2_extra_buffer_mrr8", P, Q, ["--speculative-algorithm", "EAGLE", "--speculative-num-steps",
                                                  "2", "--speculative-eagle-topk", "2",
                                                  "--speculative-num-draft-tokens", "4"] + XB + MRR(8))
    b.add("eagle_topk_without_steps", P, Q, ["--speculative-algorithm", "EAGLE", "--speculative-eagle-topk", "4"]
          + DR + MRR(4))
    b.add("eagle_steps5_dt6_extra_buffer_mrr8", P, Q, ["--speculative-algorithm", "EAGLE",
                                                       "--speculative-num-steps", "5", "--speculative-eagle-topk",
                                                       "1", "--speculative-num-draft-tokens", "6"] + XB + MRR(8))
    b.add("eagle_mrr64", P, Q, EAGLE_FULL + MRR(64))
    b.add("eagle_9b_default", P, "qwen3.5-9b", EAGLE_FULL)
    b.add("eagle_9b_mrr256", P, "qwen3.5-9b", EAGLE_FULL + MRR(256))
    b.add("eagle_cgbs_decode16", P, Q, EAGLE_FULL + [CGBS, "16"])
    # --speculative-draft-model-path (0.5.14+: EAGLE3 draft KV is charged in the target's KV cell)
    b.add("eagle3_draftpath_35b_a3b_mrr16", P, "qwen3.6-35b-a3b",
          ["--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "drafts/qwen3.5-35b-a3b-eagle3",
           "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"]
          + MRR(16))
    b.add("eagle3_draftpath_next80b_tp2", "h200", "qwen3-next-80b-a3b-instruct",
          ["--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path",
           "drafts/qwen3-next-80b-a3b-eagle3", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
           "--speculative-num-draft-tokens", "4"], tp=2)
    b.add("dflash_draftpath_27b_mrr8", P, Q, ["--speculative-algorithm", "DFLASH", "--speculative-draft-model-path",
                                              "drafts/qwen3.6-27b-dflash"] + MRR(8))
    b.add("dflash_draftpath_q35_27b_b200", "b200", "qwen3.5-27b",
          ["--speculative-algorithm", "DFLASH", "--speculative-draft-model-path", "drafts/qwen3.5-27b-dflash"])

    # --- max running requests: 0.5.14+ no longer caps an explicit value at the 2048..4096 estimate
    b.add("mrr8", P, Q, MRR(8))
    b.add("mrr256_mamba_capped", P, Q, MRR(256))
    b.add("disable_radix_mrr32", P, Q, DR + MRR(32))
    b.add("b200_9b_tp2_disable_radix_mrr3000", "b200", "qwen3.5-9b", DR + MRR(3000), tp=2)
    b.add("b200_9b_tp4_disable_radix_mrr5000", "b200", "qwen3.5-9b", DR + MRR(5000), tp=4)
    b.add("b200_9b_tp4_disable_radix_mrr5000_mtt8192", "b200", "qwen3.5-9b",
          DR + MRR(5000) + ["--max-total-tokens", "8192"], tp=4)

    # --- explicit mamba cache size vs ratio
    b.add("mmcs64", P, Q, MMCS(64))
    b.add("ratio05", P, Q, ["--mamba-full-memory-ratio", "0.5"])
    b.add("ratio15_extra_buffer", P, Q, XB + ["--mamba-full-memory-ratio", "1.5"])
    b.add("mmcs32_ratio06_extra_buffer", P, Q, XB + MMCS(32) + ["--mamba-full-memory-ratio", "0.6"])
    b.add("mmcs5_extra_buffer_exactly_one_req", P, Q, XB + MMCS(5))

    # --- the new startup errors
    # "Hybrid (mamba/linear-attention) state cache is too small to serve any requests" (K < ratio)
    b.add("fail_too_small_mmcs2", P, Q, MMCS(2))
    b.add("fail_too_small_mmcs4_extra_buffer", P, Q, XB + MMCS(4))
    b.add("fail_too_small_mmcs2_disable_cuda_graph", P, Q, MMCS(2) + ["--disable-cuda-graph"])
    b.add("fail_too_small_mmcs2_no_buffer_disable_overlap", P, Q, NB + NOOV + MMCS(2))
    # spec joint solve with little memory: K = floor(B / (S (1 + D/rho))) = 2 < rho
    b.add("fail_too_small_eagle_tight", P, Q, EAGLE_FULL, free_before=95.0, free_after=21.1)
    b.add("eagle_tight_one_request", P, Q, EAGLE_FULL, free_before=95.0, free_after=22.5)
    # "Not enough GPU memory for hybrid (mamba/linear-attention) state cache" (K <= 0)
    b.add("fail_hybrid_state_free_after2", P, Q, [], free_before=95.0, free_after=2.0)
    b.add("fail_hybrid_state_mmcs0", P, Q, MMCS(0))
    b.add("fail_hybrid_state_eagle_free_after12", P, Q, EAGLE_FULL + XB, free_before=95.0, free_after=12.0)
    b.add("fail_hybrid_state_h100_35b_barely", "h100-sxm", "qwen3.6-35b-a3b")
    # "Loaded weights leave no GPU memory for the KV cache" (rest <= 0 after the mamba / spec reservation)
    b.add("fail_loaded_weights_mmcs400", P, Q, MMCS(400))
    b.add("fail_loaded_weights_disable_radix_mrr256", P, Q, DR + MRR(256))
    b.add("fail_loaded_weights_eagle_disable_radix_mrr64", P, Q, EAGLE_FULL + DR + MRR(64))
    b.add("fail_loaded_weights_eagle_mmcs100", P, Q, EAGLE_FULL + XB + MMCS(100) + MRR(48))
    # the legacy "Not enough memory. Please try to increase --mem-fraction-static." (0 KV tokens after page
    # alignment): rest after the mamba state is ~2 MiB, less than one 64-token page (64 x 64 KiB)
    b.add("fail_zero_tokens_page64", P, Q, XB + MMCS(24) + ["--page-size", "64"],
          free_before=95.0, free_after=23.0653, digits=4)
    b.add("tight_free_after_25", P, Q, XB, free_before=95.0, free_after=25.0)

    # --- page size
    b.add("page1_extra_buffer", P, Q, XB + ["--page-size", "1"])
    b.add("page16_extra_buffer", P, Q, XB + ["--page-size", "16"])
    b.add("page64_extra_buffer", P, Q, XB + ["--page-size", "64"])

    # --- dtypes, context, prefill, misc
    b.add("kv_fp8", P, Q, ["--kv-cache-dtype", "fp8_e4m3"])
    b.add("mamba_ssm_bf16_flag", P, Q, ["--mamba-ssm-dtype", "bfloat16"])
    b.add("mamba_ssm_bf16_env", P, Q, [], env={"SGLANG_MAMBA_SSM_DTYPE": "bfloat16"})
    b.add("mamba_conv_fp32_env", P, Q, [], env={"SGLANG_MAMBA_CONV_DTYPE": "float32"})
    b.add("mfs085", P, Q, ["--mem-fraction-static", "0.85"])
    b.add("mfs070_eagle", P, Q, EAGLE_FULL + ["--mem-fraction-static", "0.70"])
    b.add("mtt100000", P, Q, ["--max-total-tokens", "100000"])
    b.add("ctx32k", P, Q, ["--context-length", "32768"])
    b.add("reject_ctx512k", P, Q, ["--context-length", "524288"])
    b.add("ctx512k_allow_env", P, Q, ["--context-length", "524288"],
          env={"SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN": "1"})
    b.add("chunked_prefill4096", P, Q, ["--chunked-prefill-size", "4096"])
    b.add("disable_cuda_graph", P, Q, ["--disable-cuda-graph"])
    b.add("reject_unknown_flag", P, Q, ["--no-such-flag", "1"])
    b.add("reject_bad_kv_dtype", P, Q, ["--kv-cache-dtype", "fp9"])
    b.add("post_capture_kv_sizing_env", P, Q, [], env={"SGLANG_ENABLE_POST_CAPTURE_KV_SIZING": "1"})

    # --- 0.5.15+ memory flags
    b.add("reject_unified_memory_flashinfer", P, Q, ["--enable-unified-memory"])
    b.add("unified_memory_triton", P, Q, ["--enable-unified-memory", "--attention-backend", "triton"])
    b.add("unified_memory_triton_no_prefill_graph", P, Q, ["--enable-unified-memory", "--attention-backend", "triton",
                                                           "--cuda-graph-backend-prefill", "disabled"])
    b.add("reject_unified_memory_eagle", P, Q, EAGLE_FULL + ["--enable-unified-memory", "--attention-backend",
                                                             "triton"])
    b.add("unified_memory_9b_h100", "h100-sxm", "qwen3.5-9b", ["--enable-unified-memory", "--attention-backend",
                                                               "triton"])
    b.add("page_major_kv_layout_triton", P, Q, ["--enable-page-major-kv-layout", "--attention-backend", "triton"])
    b.add("reject_page_major_kv_layout_flashinfer", P, Q, ["--enable-page-major-kv-layout"])

    # --- other GPUs
    b.add("h100_default", "h100-sxm", Q)
    b.add("h100_eagle_default", "h100-sxm", Q, EAGLE_FULL)
    b.add("h100_eagle_extra_buffer_mrr4", "h100-sxm", Q, EAGLE_FULL + XB + MRR(4))
    b.add("h100_122b_tp4_page64_extra_buffer", "h100-sxm", "qwen3.5-122b-a10b", XB + ["--page-size", "64"], tp=4)
    b.add("h100_next80b_tp2_barely", "h100-sxm", "qwen3-next-80b-a3b-instruct", tp=2)
    b.add("h200_default", "h200", Q)
    b.add("h200_eagle_mrr32", "h200", Q, EAGLE_FULL + MRR(32))
    b.add("h200_122b_tp2", "h200", "qwen3.5-122b-a10b", tp=2)
    b.add("h200_122b_tp2_mfs090", "h200", "qwen3.5-122b-a10b", ["--mem-fraction-static", "0.90"], tp=2)
    b.add("h200_122b_tp2_nextn", "h200", "qwen3.5-122b-a10b", ["--speculative-algorithm", "NEXTN"], tp=2)
    b.add("h200_9b_eagle_default", "h200", "qwen3.5-9b", EAGLE_FULL)
    b.add("b200_default", "b200", Q)
    b.add("b200_disable_overlap", "b200", Q, NOOV)
    b.add("b200_eagle_default", "b200", Q, EAGLE_FULL)
    b.add("b200_disable_radix", "b200", Q, DR)
    b.add("b200_extra_buffer_page64", "b200", Q, XB + ["--page-size", "64"])
    b.add("b200_next80b_tp1", "b200", "qwen3-next-80b-a3b-instruct")
    b.add("b200_next80b_tp2_nextn", "b200", "qwen3-next-80b-a3b-instruct", ["--speculative-algorithm", "NEXTN"], tp=2)
    b.add("a100_80_default", "a100-80gb", Q)
    b.add("a100_80_eagle_disable_radix_mrr8", "a100-80gb", Q, EAGLE_FULL + DR + MRR(8))
    b.add("a100_40_9b", "a100-40gb", "qwen3.5-9b")
    b.add("a100_40_27b_tp2_extra_buffer", "a100-40gb", "qwen3.5-27b", XB, tp=2)
    b.add("a100_40_35b_tp2_barely", "a100-40gb", "qwen3.6-35b-a3b", tp=2)
    b.add("l40s_9b_eagle_default", "l40s", "qwen3.5-9b", EAGLE_FULL)
    b.add("l40s_35b_tp2", "l40s", "qwen3.6-35b-a3b", tp=2)
    b.add("l40s_next80b_tp4", "l40s", "qwen3-next-80b-a3b-instruct", tp=4)
    b.add("rtx4090_9b", "rtx4090", "qwen3.5-9b")
    b.add("rtx4090_9b_mfs090", "rtx4090", "qwen3.5-9b", ["--mem-fraction-static", "0.90"])
    b.add("rtx4090_9b_kv_fp8_mfs090", "rtx4090", "qwen3.5-9b", ["--kv-cache-dtype", "fp8_e4m3",
                                                                 "--mem-fraction-static", "0.90"])
    b.add("rtx4090_27b_tp4_eagle_mrr8", "rtx4090", Q, EAGLE_FULL + MRR(8), tp=4)
    b.add("rtx5090_9b_eagle_default", "rtx5090", "qwen3.5-9b", EAGLE_FULL)
    b.add("rtx5090_9b_eagle_mrr8_old_flags", "rtx5090", "qwen3.5-9b",
          EAGLE_FULL + [STRAT_OLD, "extra_buffer", CGBS_OLD, "24"] + MRR(8))
    b.add("rtx5090_27b_tp2_barely", "rtx5090", Q, tp=2)
    b.add("rtx5090_27b_tp2_mfs092", "rtx5090", Q, ["--mem-fraction-static", "0.92"], tp=2)
    b.add("rtx5090_35b_tp4", "rtx5090", "qwen3.6-35b-a3b", tp=4)

    # --- other models on the RTX PRO 6000
    b.add("q35_27b_default", P, "qwen3.5-27b")
    b.add("q35_27b_eagle_mrr16", P, "qwen3.5-27b", EAGLE_FULL + MRR(16))
    b.add("q36_35b_default", P, "qwen3.6-35b-a3b")
    b.add("q36_35b_eagle_mrr16", P, "qwen3.6-35b-a3b", EAGLE_FULL + MRR(16))
    b.add("q35_9b_default", P, "qwen3.5-9b")
    b.add("q35_9b_tp2_extra_buffer_page16", P, "qwen3.5-9b", XB + ["--page-size", "16"], tp=2)
    b.add("q35_122b_tp4", P, "qwen3.5-122b-a10b", tp=4)
    b.add("q35_122b_tp4_eagle_default", P, "qwen3.5-122b-a10b", EAGLE_FULL, tp=4)
    b.add("next80b_tp2", P, "qwen3-next-80b-a3b-instruct", tp=2)
    b.add("next80b_tp2_nextn_mrr16", P, "qwen3-next-80b-a3b-instruct", ["--speculative-algorithm", "NEXTN"]
          + MRR(16), tp=2)
    b.add("next80b_tp4_disable_radix", P, "qwen3-next-80b-a3b-instruct", DR, tp=4)
    b.add("nemotron_default", P, "nemotron-3-nano-30b-a3b")           # 0.5.14+: auto -> extra_buffer
    b.add("nemotron_disable_radix", P, "nemotron-3-nano-30b-a3b", DR)
    b.add("nemotron_extra_buffer", P, "nemotron-3-nano-30b-a3b", XB)  # rejected in 0.5.11
    b.add("nemotron_disable_overlap", P, "nemotron-3-nano-30b-a3b", NOOV)
    b.add("nemotron_h200_mrr64", "h200", "nemotron-3-nano-30b-a3b", MRR(64))
    b.add("nemotron_h100_tp2_kv_fp8", "h100-sxm", "nemotron-3-nano-30b-a3b", ["--kv-cache-dtype", "fp8_e4m3"], tp=2)
    # --- dense models (0.5.11 oracle: oracle_error; kept here to see whether 0.5.16 does better)
    b.add("dense_qwen3_8b_default", "h100-sxm", "qwen3-8b")
    b.add("dense_qwen3_8b_disable_radix", "h100-sxm", "qwen3-8b", DR)
    b.add("dense_llama31_8b_default", "h100-sxm", "llama-3.1-8b-instruct")
    b.add("dense_llama31_8b_eagle_mrr16", "h100-sxm", "llama-3.1-8b-instruct", EAGLE_FULL + MRR(16))


# ----------------------------------------------------------------------------
# random mode: the 0.5.16 flag space, seeded
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
        flags = []
        env = {}
        tags = []

        # speculative decoding (Nemotron-3-Nano has no MTP head: never)
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
                      "--speculative-eagle-topk", topk, "--speculative-num-draft-tokens", rng.choice([4, 8, 16])]
        if spec != "none":
            tags.append(spec)
            if rng.random() < 0.08:
                env["SGLANG_ENABLE_SPEC_V2"] = "0"   # removed in 0.5.14: should have no effect

        # strategy / radix / overlap; the old spelling in ~25% of the cases that set one
        strat = rng.choices([None, "auto", "no_buffer", "extra_buffer", "extra_buffer_lazy"],
                            [35, 15, 15, 25, 10])[0]
        if strat:
            old = rng.random() < 0.25
            flags += [STRAT_OLD if old else STRAT, strat]
            tags.append(strat + ("_old" if old else ""))
        p_noradix = 0.05 if strat in ("extra_buffer", "extra_buffer_lazy") else (0.4 if spec != "none" else 0.15)
        if rng.random() < p_noradix:
            flags += ["--disable-radix-cache"]
            tags.append("noradix")
        # no_buffer needs overlap off with the radix cache on (0.5.16 asserts): mostly give it
        p_nooverlap = 0.8 if strat == "no_buffer" else 0.1
        if rng.random() < p_nooverlap:
            flags += ["--disable-overlap-schedule"]
            tags.append("nooverlap")

        # mamba cache sizing
        if rng.random() < 0.2:
            flags += ["--max-mamba-cache-size", rng.choice([2, 4, 8, 16, 24, 32, 48, 64, 128, 256])]
            tags.append("mmcs")
        if rng.random() < 0.2:
            flags += ["--mamba-full-memory-ratio", rng.choice([0.2, 0.4, 0.5, 0.7, 0.9, 1.5, 2.0])]
            tags.append("ratio")
        if rng.random() < (0.5 if spec != "none" else 0.3):
            flags += ["--max-running-requests", rng.choice([1, 4, 8, 16, 32, 64, 128, 256, 3000])]
            tags.append("mrr")
        if rng.random() < 0.2:
            flags += ["--page-size", rng.choice([1, 16, 64])]
            tags.append("page")

        # dtypes / env
        if rng.random() < 0.15:
            flags += ["--kv-cache-dtype", "fp8_e4m3"]
            tags.append("kvfp8")
        if rng.random() < 0.1:
            flags += ["--mamba-ssm-dtype", rng.choice(["bfloat16", "float32", "float16"])]
            tags.append("ssmflag")
        if rng.random() < 0.05:
            env["SGLANG_MAMBA_SSM_DTYPE"] = rng.choice(["bfloat16", "float16", "float32"])
        if rng.random() < 0.05:
            env["SGLANG_MAMBA_CONV_DTYPE"] = rng.choice(["float32", "float16", "bfloat16"])

        # memory / tokens / context / prefill / cuda graph
        if rng.random() < 0.25:
            flags += ["--mem-fraction-static", rng.choice([0.6, 0.7, 0.75, 0.8, 0.85, 0.88, 0.9, 0.93])]
            tags.append("mfs")
        if rng.random() < 0.1:
            flags += ["--max-total-tokens", rng.choice([16384, 32768, 100000, 262144, 500000, 2000000])]
            tags.append("mtt")
        if rng.random() < 0.12:
            ctx = rng.choice([8192, 32768, 65536, 131072, 524288])
            flags += ["--context-length", ctx]
            tags.append("ctx")
            if ctx > 262144 and rng.random() < 0.5:
                env["SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN"] = "1"
        if rng.random() < 0.12:
            flags += ["--chunked-prefill-size", rng.choice([-1, 2048, 4096, 8192, 16384])]
            tags.append("chunk")
        if rng.random() < 0.06:
            flags += ["--disable-cuda-graph"]
            tags.append("nocg")
        elif rng.random() < 0.18:
            old = rng.random() < 0.3
            flags += [CGBS_OLD if old else CGBS, rng.choice([8, 16, 32, 64, 128, 256, 512])]
            tags.append("cgbs" + ("_old" if old else ""))

        # rare invalid inputs
        r = rng.random()
        if r < 0.02:
            flags += ["--no-such-flag", "1"]
            tags.append("badflag")
        elif r < 0.04:
            flags += [rng.choice([STRAT, "--kv-cache-dtype", "--mamba-ssm-dtype"]), "bogus"]
            tags.append("badchoice")

        # free memory after the target (+ draft) weights
        draft = draft_weights_gib(model, [str(f) for f in flags], b.configs_dir)
        free_after = free_before - weights_gib(model, tp) - draft / tp - overhead
        r = rng.random()
        if r < 0.06:
            free_after = rng.uniform(0.3, 3.0)          # almost nothing left
        elif r < 0.14:
            free_after = min(free_after, rng.uniform(3.0, 8.0))  # tight

        n += 1
        cid = f"r{seed}_{n:04d}_{gpu}_{model}_tp{tp}" + ("_" + "_".join(tags) if tags else "")
        b.add(cid, gpu, model, flags, tp=tp, free_before=free_before, free_after=free_after, env=env)


def build(mode, out_path, configs_dir, seed=1, count=100):
    b = Builder(out_path, configs_dir)
    if mode == "curated":
        curated(b)
    else:
        random_cases(b, seed, count)
    return b.cases


def write_drafts(out_dir, configs_dir):
    for name, fn in DRAFTS.items():
        d = os.path.join(out_dir, "drafts", name)
        os.makedirs(d, exist_ok=True)
        shutil.copyfile(os.path.join(configs_dir, fn), os.path.join(d, "config.json"))


def write_jsonl(path, rows):
    with open(path, "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(ln) for ln in f if ln.strip()]


# ----------------------------------------------------------------------------
# running the oracle
# ----------------------------------------------------------------------------
def run_oracle(py, oracle, cases_path, out_dir):
    """One oracle process over a cases file (in out_dir, so relative config / draft paths resolve)."""
    env = dict(os.environ, SGLANG_ORACLE_CACHE=ORACLE_CACHE)
    p = subprocess.run([py, os.path.join(oracle, "oracle.py"), "--batch", cases_path, "--summary-only"],
                       cwd=out_dir, env=env, capture_output=True, text=True)
    if p.returncode not in (0, 3):
        raise SystemExit(f"oracle failed (rc {p.returncode}) on {cases_path}:\n{p.stderr[-3000:]}")
    tail = p.stderr.strip().splitlines()[-1:] or [""]
    return [json.loads(ln) for ln in p.stdout.splitlines() if ln.strip()], tail[0]


def run_isolated(py, oracle, cases, out_dir, jobs, tag):
    """Cases with an env (and any listed) each in their own process; the rest in one batch."""
    batch = [c for c in cases if not c["env"]]
    single = [c for c in cases if c["env"]]
    results = {}
    tmp = tempfile.mkdtemp(prefix=f".stage.{tag}.", dir=out_dir)
    try:
        if batch:
            bp = os.path.join(tmp, "batch.jsonl")
            write_jsonl(bp, batch)
            rs, tail = run_oracle(py, oracle, bp, out_dir)
            print(f"[{tag}] batch of {len(batch)}: {tail}", file=sys.stderr)
            for r in rs:
                results[r["id"]] = r

        def one(i_c):
            i, c = i_c
            sp = os.path.join(tmp, f"single{i:04d}.jsonl")
            write_jsonl(sp, [c])
            rs, _ = run_oracle(py, oracle, sp, out_dir)
            return rs

        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
            for rs in ex.map(one, enumerate(single)):
                for r in rs:
                    results[r["id"]] = r
        print(f"[{tag}] {len(single)} env cases run one per process", file=sys.stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    missing = [c["id"] for c in cases if c["id"] not in results]
    if missing:
        raise SystemExit(f"no result for {missing}")
    return [results[c["id"]] for c in cases]


def drop_reason(summary):
    oc = summary.get("outcome")
    if oc in ("oracle_error", "input_error"):
        return oc
    msg = summary.get("error_message") or ""
    if oc == "startup_failed" and any(m in msg for m in ORACLE_ARTIFACT_MARKERS):
        return "oracle_artifact(startup_failed in an oracle stand-in: " + msg[:60] + ")"
    return None


def filter_results(cases, results):
    return split_kept(cases, results, drop_reason)


def verify(py, oracle, cases, results, out_dir, n, jobs):
    """Re-run n env-free cases (spread over outcomes) one per process; compare full result lines."""
    by_oc = collections.defaultdict(list)
    for c, r in zip(cases, results):
        if not c["env"]:
            by_oc[r["summary"]["outcome"]].append((c, r))
    picked = []
    while len(picked) < n and any(by_oc.values()):
        for oc in sorted(by_oc):
            if by_oc[oc] and len(picked) < n:
                lst = by_oc[oc]
                picked.append(lst.pop(len(lst) // 2))
    tmp = tempfile.mkdtemp(prefix=".stage.verify.", dir=out_dir)
    try:
        def one(i_cr):
            i, (c, _) = i_cr
            sp = os.path.join(tmp, f"v{i:04d}.jsonl")
            write_jsonl(sp, [c])
            return run_oracle(py, oracle, sp, out_dir)[0][0]

        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
            singles = list(ex.map(one, enumerate(picked)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    report = []
    for (c, r), s in zip(picked, singles):
        s = dict(s)
        s.pop("elapsed_s", None)
        r = dict(r)
        r.pop("elapsed_s", None)
        report.append({"id": c["id"], "outcome": r["summary"]["outcome"], "identical": s == r})
    return report


def regen(a):
    out = os.path.abspath(a.out)
    os.makedirs(out, exist_ok=True)
    write_drafts(out, a.configs_dir)
    summary = {}
    for tag, mode, cases_fn, results_fn in (("curated", "curated", "cases", "results"),
                                            ("random", "random", "random", "random_results")):
        cases = build(mode, os.path.join(out, cases_fn + ".jsonl"), a.configs_dir, a.seed, a.count)
        results = run_isolated(a.py, a.oracle, cases, out, a.jobs, tag)
        kc, kr, dropped = filter_results(cases, results)
        write_jsonl(os.path.join(out, cases_fn + ".jsonl"), kc)
        write_jsonl(os.path.join(out, results_fn + ".jsonl"), kr)
        for d in dropped:
            d["set"] = tag
        summary[tag] = (kc, kr, dropped, cases, results)
        cnt = collections.Counter(r["summary"]["outcome"] for r in kr)
        print(f"[{tag}] kept {len(kc)} of {len(cases)}: {dict(sorted(cnt.items()))}; dropped "
              f"{[d['id'] for d in dropped]}", file=sys.stderr)
    write_jsonl(os.path.join(out, "dropped.jsonl"), summary["curated"][2] + summary["random"][2])
    if a.verify:
        rep = []
        for tag in ("curated", "random"):
            cases, results = summary[tag][0], summary[tag][1]   # kept cases only
            rep += verify(a.py, a.oracle, cases, results, out, (a.verify + 1) // 2 if tag == "curated"
                          else a.verify // 2, a.jobs)
        ok = sum(x["identical"] for x in rep)
        print(f"verify: {ok}/{len(rep)} env-free cases identical alone vs in the batch", file=sys.stderr)
        for x in rep:
            print(f"  {'same' if x['identical'] else 'DIFF'}  {x['outcome']:15s} {x['id']}", file=sys.stderr)
        if a.verify_out:
            write_jsonl(a.verify_out, rep)
    print(f"regen: done -> {out}", file=sys.stderr)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    pc = sub.add_parser("cases", help="write case lines only")
    pc.add_argument("--curated", action="store_true", help="the curated set instead of random cases")
    pc.add_argument("--seed", type=int, default=1)
    pc.add_argument("--count", type=int, default=100)
    pc.add_argument("--out", required=True)
    pc.add_argument("--configs-dir", default=DEFAULT_CONFIGS_DIR)
    pc.add_argument("--write-drafts", action="store_true",
                    help="also write drafts/<name>/config.json next to --out (needed by the draft-path cases)")
    pr = sub.add_parser("regen", help="write cases, run the oracle (env cases one per process), filter")
    pr.add_argument("--py", default=DEFAULT_PY)
    pr.add_argument("--oracle", default=DEFAULT_ORACLE)
    pr.add_argument("--out", default=DEFAULT_OUT)
    pr.add_argument("--configs-dir", default=DEFAULT_CONFIGS_DIR)
    pr.add_argument("--seed", type=int, default=1)
    pr.add_argument("--count", type=int, default=100)
    pr.add_argument("--jobs", type=int, default=2, help="parallel single-case oracle processes")
    pr.add_argument("--verify", type=int, default=0, help="re-run N env-free cases alone and compare")
    pr.add_argument("--verify-out", default=None)
    a = p.parse_args(argv)
    if a.cmd == "regen":
        regen(a)
        return
    cases = build("curated" if a.curated else "random", a.out, a.configs_dir, a.seed, a.count)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    write_jsonl(a.out, cases)
    if a.write_drafts:
        write_drafts(os.path.dirname(os.path.abspath(a.out)), a.configs_dir)
    print(f"make_cases_v0516: wrote {len(cases)} cases to {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
