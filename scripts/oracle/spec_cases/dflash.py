#!/usr/bin/env python3
"""DFLASH launches for the oracle: curated golden cases per release and fresh random ones (agree.py).

    python3 scripts/oracle/spec_cases/dflash.py cases --version 0.5.16          # print the curated cases
    python3 scripts/oracle/spec_cases/dflash.py regen --version 0.5.16 [--py PY] [--oracle DIR]
        # writes tests/golden/spec/dflash/sglang-<ver>/{cases,results}.jsonl (one oracle batch)

Every relative path in a case (config_json, drafts/...) resolves against tests/golden/spec/dflash/, where the
oracle runs (cwd). The drafts are in tests/golden/spec/dflash/drafts/ (README there: SpecForge training templates
and variants of them).

free_after_gib: 0.5.11-0.5.13 build the DFLASH draft worker after the target's pools (free after the target's
weights only); 0.5.14+ load the draft before sizing (the target's and the draft's weights are gone).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import make_cases_v0516 as mv  # noqa: E402  (GPUS, MODELS, Builder, path_draft_params)

REPO = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
FOLDER = os.path.join(REPO, "tests", "golden", "spec", "dflash")
DRAFT_DIR = os.path.join(FOLDER, "drafts")
DRAFTS = sorted(d for d in os.listdir(DRAFT_DIR) if os.path.isdir(os.path.join(DRAFT_DIR, d)))
# targets whose layer count covers the drafts' target_layer_ids (<= 61): 64-layer Qwen3.5/3.6-27B; the others
# are drawn rarely (SGLang rejects the out-of-range layer id: a rejection case)
TARGETS = ["qwen3.6-27b", "qwen3.5-27b"]
OTHER_TARGETS = ["qwen3.5-9b", "qwen3.6-35b-a3b", "qwen3-next-80b-a3b-instruct", "nemotron-3-nano-30b-a3b"]


def _v(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.split("."))


def strat_flag(version: str) -> str:
    return "--mamba-radix-cache-strategy" if _v(version) >= (0, 5, 14) else "--mamba-scheduler-strategy"


def window_flag(version: str) -> str:
    return "--speculative-draft-window-size" if _v(version) >= (0, 5, 12) else "--speculative-dflash-draft-window-size"


def dflash(draft: str = "qwen3.6-27b-dflash") -> list:
    return ["--speculative-algorithm", "DFLASH", "--speculative-draft-model-path", f"drafts/{draft}"]


def _flag(flags, name):
    for i, f in enumerate(flags[:-1]):
        if f == name:
            return str(flags[i + 1])
    return None


class Cases:
    """A list of oracle case lines; free_after from the target (+ draft, 0.5.14+) weights."""

    def __init__(self, version: str):
        self.version = version
        self.b = mv.Builder(os.path.join(FOLDER, "cases.jsonl"), mv.DEFAULT_CONFIGS_DIR)

    def add(self, cid, gpu, model, flags, tp=1, slack=None, overhead=0.35, free_before=None, free_after=None, env=None,
            keep_strategy=False):
        flags = [str(f) for f in flags]
        if _v(self.version) < (0, 5, 14) and not keep_strategy and strat_flag(self.version) not in flags:
            # <= 0.5.13 'auto' is no_buffer, which SGLang refuses with speculative decoding and the radix cache
            # (srt/server_args.py:1760-1775 @0.5.11): extra_buffer, as a user of these releases gives it
            flags += [strat_flag(self.version), "extra_buffer"]
        if free_after is None:
            fb = free_before if free_before is not None else mv.total_gib(gpu) - (slack if slack is not None else
                                                                                (0.9 if tp == 1 else 1.4))
            free_before = fb
            draft = 0.0
            path = _flag(flags, "--speculative-draft-model-path")
            if path and _v(self.version) >= (0, 5, 14):
                draft = mv.path_draft_params(os.path.join(FOLDER, path, "config.json")) * 2 / 2**30
            free_after = fb - mv.weights_gib(model, tp) - draft / tp - overhead
        self.b.add(cid, gpu, model, flags, tp=tp, free_before=free_before, free_after=free_after, env=env)

    @property
    def cases(self):
        for c in self.b.cases:
            c["config_json"] = os.path.relpath(os.path.join(mv.DEFAULT_CONFIGS_DIR, os.path.basename(c["config_json"])),
                                               FOLDER)
        return self.b.cases


def curated(version: str) -> list[dict]:
    c = Cases(version)
    S, W = strat_flag(version), window_flag(version)
    P, B2, H1, R5, L4 = "rtxpro6000", "b200", "h100-sxm", "rtx5090", "l40s"
    Q6, Q5 = "qwen3.6-27b", "qwen3.5-27b"
    # the issue's launch and its neighbours
    c.add("q36_pro6000_default", P, Q6, dflash(), keep_strategy=True)
    c.add("q36_pro6000_mrr8", P, Q6, dflash() + ["--max-running-requests", 8])
    c.add("q36_pro6000_mrr16_ctx32k", P, Q6, dflash() + ["--max-running-requests", 16, "--context-length", 32768])
    c.add("q36_pro6000_block8_flag", P, Q6, dflash() + ["--speculative-dflash-block-size", 8])
    c.add("q36_pro6000_block4_mrr32", P, Q6, dflash() + ["--speculative-dflash-block-size", 4, "--max-running-requests", 32])
    c.add("q36_pro6000_ndraft12", P, Q6, dflash() + ["--speculative-num-draft-tokens", 12])
    c.add("q36_pro6000_block_eq_ndraft", P, Q6, dflash() + ["--speculative-num-draft-tokens", 8,
                                                            "--speculative-dflash-block-size", 8])
    c.add("q36_pro6000_block_ne_ndraft", P, Q6, dflash() + ["--speculative-num-draft-tokens", 8,
                                                            "--speculative-dflash-block-size", 16])
    c.add("q36_pro6000_block0", P, Q6, dflash() + ["--speculative-dflash-block-size", 0])
    c.add("q36_pro6000_steps3_topk4", P, Q6, dflash() + ["--speculative-num-steps", 3, "--speculative-eagle-topk", 4])
    c.add("q36_pro6000_draft_b8", P, Q6, dflash("qwen3.6-27b-dflash-b8"))
    c.add("q36_pro6000_draft_noblock", P, Q6, dflash("qwen3.6-27b-dflash-noblock"))
    c.add("q36_pro6000_draft_kv2", P, Q6, dflash("qwen3.6-27b-dflash-kv2"))
    c.add("q36_pro6000_draft_kv2_mrr4", P, Q6, dflash("qwen3.6-27b-dflash-kv2") + ["--max-running-requests", 4])
    c.add("q36_pro6000_draft_8l", P, Q6, dflash("qwen3.6-27b-dflash-8l"))
    c.add("q36_pro6000_no_draft_path", P, Q6, ["--speculative-algorithm", "DFLASH"])
    c.add("q36_pro6000_lowercase", P, Q6, ["--speculative-algorithm", "dflash", "--speculative-draft-model-path",
                                           "drafts/qwen3.6-27b-dflash"])
    # strategies and radix
    c.add("q36_pro6000_no_buffer", P, Q6, dflash() + [S, "no_buffer"])
    c.add("q36_pro6000_no_buffer_noradix", P, Q6, dflash() + [S, "no_buffer", "--disable-radix-cache"])
    c.add("q36_pro6000_noradix_mrr8", P, Q6, dflash() + ["--disable-radix-cache", "--max-running-requests", 8])
    c.add("q36_pro6000_ratio05", P, Q6, dflash() + ["--mamba-full-memory-ratio", 0.5])
    c.add("q36_pro6000_mamba_size40", P, Q6, dflash() + ["--max-mamba-cache-size", 40])
    if _v(version) >= (0, 5, 14):
        c.add("q36_pro6000_lazy", P, Q6, dflash() + [S, "extra_buffer_lazy"])
        c.add("q36_pro6000_disable_overlap", P, Q6, dflash() + ["--disable-overlap-schedule"])
    c.add("q36_pro6000_spec_v2_off", P, Q6, dflash(), env={"SGLANG_ENABLE_SPEC_V2": "0"})
    # memory knobs
    c.add("q36_pro6000_mfs080", P, Q6, dflash() + ["--mem-fraction-static", 0.8])
    c.add("q36_pro6000_mfs060_oom", P, Q6, dflash() + ["--mem-fraction-static", 0.6])
    c.add("q36_pro6000_kv_fp8", P, Q6, dflash() + ["--kv-cache-dtype", "fp8_e4m3"])
    c.add("q36_pro6000_max_total_20k", P, Q6, dflash() + ["--max-total-tokens", 20000])
    c.add("q36_pro6000_page16", P, Q6, dflash() + ["--page-size", 16])
    c.add("q36_pro6000_page64_mrr8", P, Q6, dflash() + ["--page-size", 64, "--max-running-requests", 8])
    c.add("q36_pro6000_triton", P, Q6, dflash() + ["--attention-backend", "triton"])
    c.add("q36_pro6000_fa3", P, Q6, dflash() + ["--attention-backend", "fa3"])
    c.add("q36_pro6000_no_cuda_graph", P, Q6, dflash() + ["--disable-cuda-graph"])
    c.add("q36_pro6000_graph_bs8", P, Q6, dflash() + ["--cuda-graph-max-bs", 8])
    c.add("q36_pro6000_chunk4096", P, Q6, dflash() + ["--chunked-prefill-size", 4096])
    # window (compact draft cache): only the rejection
    c.add("q36_pro6000_window_lt_block", P, Q6, dflash() + [W, 8])
    # rejections
    c.add("q36_pro6000_pp2", P, Q6, dflash() + ["--pp-size", 2])
    c.add("q36_pro6000_dp_attention", P, Q6, dflash() + ["--enable-dp-attention", "--dp-size", 2], tp=2)
    # other GPUs / TP / targets
    c.add("q36_tp2_pro6000", P, Q6, dflash(), tp=2)
    c.add("q36_tp4_pro6000_kv2", P, Q6, dflash("qwen3.6-27b-dflash-kv2"), tp=4)
    c.add("q36_tp2_h100", H1, Q6, dflash() + ["--max-running-requests", 16], tp=2)
    c.add("q36_b200", B2, Q6, dflash())
    c.add("q35_b200", B2, Q5, dflash("qwen3.5-27b-dflash"))
    # SM100 with an fp8 KV cache: from 0.5.23 the target gets trtllm_mha and a draft that is not all-sliding gets
    # fa4, whose KV stays in the draft's own dtype (0.5.16+)
    c.add("q36_b200_kv_fp8", B2, Q6, dflash() + ["--kv-cache-dtype", "fp8_e4m3", "--max-running-requests", 8])
    c.add("q36_b200_kv2_fp8", B2, Q6, dflash("qwen3.6-27b-dflash-kv2") + ["--kv-cache-dtype", "fp8_e4m3"])
    c.add("q36_b200_triton_fp8", B2, Q6, dflash() + ["--kv-cache-dtype", "fp8_e4m3", "--attention-backend", "triton"])
    c.add("q35_pro6000_mrr8", P, Q5, dflash("qwen3.5-27b-dflash") + ["--max-running-requests", 8])
    c.add("q35_tp2_l40s", L4, Q5, dflash("qwen3.5-27b-dflash"), tp=2)
    c.add("q36_tp2_rtx5090", R5, Q6, dflash() + ["--max-running-requests", 4, "--context-length", 16384], tp=2)
    c.add("q36_tp4_rtx5090_kv2", R5, Q6, dflash("qwen3.6-27b-dflash-kv2") + ["--context-length", 65536], tp=4)
    c.add("q35_9b_pro6000", P, "qwen3.5-9b", dflash())
    c.add("q36_35b_pro6000", P, "qwen3.6-35b-a3b", dflash("qwen3.6-27b-dflash-b8"))
    c.add("next80b_tp2_h200", "h200", "qwen3-next-80b-a3b-instruct", dflash(), tp=2)
    c.add("nemotron_pro6000", P, "nemotron-3-nano-30b-a3b", dflash())
    if _v(version) < (0, 5, 13):
        # the classic solve reserves S x max_running_requests (48) x D before the mamba split: most launches above
        # do not boot, so the same knobs again with few running requests
        for cid, gpu, model, flags, tp in (
                ("mrr4_block8", P, Q6, dflash() + ["--speculative-dflash-block-size", 8], 1),
                ("mrr4_kv_fp8", P, Q6, dflash() + ["--kv-cache-dtype", "fp8_e4m3"], 1),
                ("mrr4_page16", P, Q6, dflash() + ["--page-size", 16], 1),
                ("mrr4_ratio05", P, Q6, dflash() + ["--mamba-full-memory-ratio", 0.5], 1),
                ("mrr4_draft_8l", P, Q6, dflash("qwen3.6-27b-dflash-8l"), 1),
                ("mrr4_draft_kv2", P, Q6, dflash("qwen3.6-27b-dflash-kv2"), 1),
                ("mrr4_no_cuda_graph", P, Q6, dflash() + ["--disable-cuda-graph"], 1),
                ("mrr4_tp2", P, Q6, dflash(), 2),
                ("mrr4_b200_q35", B2, Q5, dflash("qwen3.5-27b-dflash"), 1),
                ("mrr4_h100_tp2", H1, Q6, dflash(), 2),
                ("mrr4_mfs085", P, Q6, dflash() + ["--mem-fraction-static", 0.85], 1),
                ("mrr2_ctx32k", P, Q6, dflash() + ["--context-length", 32768], 1)):
            mrr = 2 if cid.startswith("mrr2") else 4
            c.add(cid, gpu, model, flags + ["--max-running-requests", mrr], tp=tp)
    return c.cases


def random_cases(version: str, seed: int, count: int) -> tuple[list[dict], str]:
    """count random DFLASH launches for `version` (relative paths resolve against the returned folder)."""
    rng = random.Random(seed)
    c = Cases(version)
    S, W = strat_flag(version), window_flag(version)
    gpus = ["rtxpro6000", "rtxpro6000", "h100-sxm", "h200", "b200", "rtx5090", "l40s", "a100-80gb"]
    n = 0
    while n < count:
        model = rng.choice(TARGETS) if rng.random() < 0.9 else rng.choice(OTHER_TARGETS)
        gpu = rng.choice(gpus)
        tgib = mv.total_gib(gpu)
        tps = [tp for tp in (1, 2, 4) if tgib - 1.5 - mv.weights_gib(model, tp) >= 4.0]
        if not tps:
            continue
        tp = tps[0] if rng.random() < 0.7 else rng.choice(tps)
        draft = rng.choice(DRAFTS) if model == "qwen3.6-27b" or rng.random() < 0.5 else \
            ("qwen3.5-27b-dflash" if model == "qwen3.5-27b" else rng.choice(DRAFTS))
        flags = dflash(draft)
        r = rng.random()
        if r < 0.2:
            flags += ["--speculative-dflash-block-size", rng.choice([2, 4, 8, 12, 16])]
        elif r < 0.3:
            flags += ["--speculative-num-draft-tokens", rng.choice([4, 8, 16])]
        if rng.random() < 0.5:
            flags += ["--max-running-requests", rng.choice([1, 4, 8, 16, 32, 64])]
        if rng.random() < 0.3:
            strat = rng.choice(["no_buffer", "extra_buffer"] + (["extra_buffer_lazy"] if _v(version) >= (0, 5, 14) else []))
            flags += [S, strat]
        if rng.random() < 0.15:
            flags += ["--disable-radix-cache"]
        if rng.random() < 0.2:
            flags += ["--mamba-full-memory-ratio", rng.choice([0.3, 0.5, 0.9, 2.0])]
        if rng.random() < 0.2:
            flags += ["--context-length", rng.choice([8192, 32768, 131072])]
        if rng.random() < 0.15:
            flags += ["--mem-fraction-static", rng.choice([0.7, 0.8, 0.85, 0.9])]
        if rng.random() < 0.1:
            flags += ["--kv-cache-dtype", "fp8_e4m3"]
        if rng.random() < 0.1:
            flags += ["--page-size", rng.choice([16, 64])]
        if rng.random() < 0.1:
            flags += ["--attention-backend", rng.choice(["triton", "flashinfer", "fa3"])]
        if rng.random() < 0.1:
            flags += ["--disable-cuda-graph"]
        if rng.random() < 0.05:
            flags += ["--speculative-num-steps", 2, "--speculative-eagle-topk", 2]
        if rng.random() < 0.03:
            flags += [W, rng.choice([4, 4096])]
        if rng.random() < 0.03:
            flags += ["--pp-size", 2]
        c.add(f"r{seed}_{n:03d}", gpu, model, flags, tp=tp, slack=rng.uniform(0.5, 1.5),
              overhead=rng.uniform(0.1, 0.6), keep_strategy=rng.random() < 0.1)
        n += 1
    return c.cases, FOLDER


def regen(version: str, py: str, oracle: str, seed: int, count: int) -> None:
    out = os.path.join(FOLDER, f"sglang-{version}")
    os.makedirs(out, exist_ok=True)
    cases = curated(version) + random_cases(version, seed, count)[0]
    cases_path = os.path.join(out, "cases.jsonl")
    with open(cases_path, "w") as f:
        f.writelines(json.dumps(x) + "\n" for x in cases)
    results = {}
    batch = [x for x in cases if not x["env"]]
    singles = [[x] for x in cases if x["env"]]
    env = dict(os.environ, SGLANG_ORACLE_CACHE=mv.ORACLE_CACHE)
    for group in [batch] + singles:
        tmp = os.path.join(FOLDER, f".batch-{os.getpid()}.jsonl")
        with open(tmp, "w") as f:
            f.writelines(json.dumps(x) + "\n" for x in group)
        p = subprocess.run([py, os.path.join(oracle, "oracle.py"), "--batch", tmp, "--summary-only"], cwd=FOLDER,
                           env=env, capture_output=True, text=True)
        os.remove(tmp)
        print(p.stderr.strip().splitlines()[-1:] if p.stderr else "", file=sys.stderr)
        for ln in p.stdout.splitlines():
            if ln.strip():
                r = json.loads(ln)
                results[r["id"]] = {"id": r["id"], "summary": r["summary"]}
    with open(os.path.join(out, "results.jsonl"), "w") as f:
        f.writelines(json.dumps(results[x["id"]]) + "\n" for x in cases if x["id"] in results)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["cases", "regen"])
    ap.add_argument("--version", required=True)
    ap.add_argument("--py", default=None)
    ap.add_argument("--oracle", default="/work/shared/tools/sglang-oracle")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=20)
    a = ap.parse_args(argv)
    if a.mode == "cases":
        for x in curated(a.version):
            print(json.dumps(x))
        return 0
    py = a.py or os.path.expanduser(f"~/.cache/sglang-oracle/{a.version}/venv/bin/python")
    regen(a.version, py, a.oracle, a.seed, a.count)
    return 0


if __name__ == "__main__":
    sys.exit(main())
