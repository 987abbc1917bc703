#!/usr/bin/env python3
"""Golden cases for GLM-4.x (Glm4MoeForCausalLM, GQA) with NEXTN / EAGLE on the checkpoint's own MTP layer, made
by each SGLang release's own code (the oracle). SGLang points the draft path at the model itself
(srt/server_args.py:3492-3508 @0.5.11) and builds the draft as Glm4MoeForCausalLMNextN from the target's config
(srt/configs/model_config.py:349-354 @0.5.11); its KV pool has num_nextn_predict_layers layers
(srt/model_executor/model_runner.py:648-666 @0.5.11).

    # regenerate tests/golden/dense/sglang-<version>/glm_nextn.jsonl + glm_nextn_results.jsonl
    glm_nextn_cases.py regen --version 0.5.16 [--seed 1 --count 12]
    glm_nextn_cases.py cases --version 0.5.16 --random --seed 7 --count 20 --out /tmp/x.jsonl   # agree.py draws

Model: tests/golden/dense/configs/zai-org__GLM-4.7-FP8.abbreviated-nextn.config.json (the abbreviated GLM-4.7
config with the real checkpoint's ``num_nextn_predict_layers: 1``; see that folder's SOURCES.md). Free memory:
free_after = free_before - weights / tp - overhead, given to the oracle and the planner alike (the draft's MTP
weights are not taken off: both read the same given value).
"""
from __future__ import annotations

import argparse
import collections
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_cases as mc  # noqa: E402
import make_cases_v0516 as mcv  # noqa: E402

REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
GOLDEN = os.path.join(REPO, "tests", "golden", "dense")
CONFIGS = os.path.join(GOLDEN, "configs")
SHARED_ORACLE = "/work/shared/tools/sglang-oracle"
ADAPTED_ORACLE = "/tmp/oracle-glmnext"  # bash scripts/oracle/oracle_copy.sh /tmp/oracle-glmnext
SHARED_RELEASES = ("0.5.11", "0.5.16", "0.5.23")
GLM = "../configs/zai-org__GLM-4.7-FP8.abbreviated-nextn.config.json"
MODELS = {GLM: ("zai-org__GLM-4.7-FP8.abbreviated-nextn.config.json", 661.0)}
GPUS = ("h200", "b200")  # the bf16 checkpoint (661 GiB) fits 8 of these


def _builder(out_path):
    mc.MODELS.clear()
    mc.MODELS.update(MODELS)
    return mc.Builder(out_path, CONFIGS)


NEXTN = ["--speculative-algorithm", "NEXTN"]
EAGLE = ["--speculative-algorithm", "EAGLE"]


def curated(b):
    b.add("glm_h200_nextn", "h200", GLM, NEXTN, tp=8)
    b.add("glm_h200_eagle", "h200", GLM, EAGLE, tp=8)
    b.add("glm_b200_nextn", "b200", GLM, NEXTN, tp=8)
    b.add("glm_h200_nextn_ctx32k", "h200", GLM, NEXTN + ["--context-length", "32768"], tp=8)
    b.add("glm_h200_eagle_steps2_topk4", "h200", GLM, EAGLE + ["--speculative-num-steps", "2",
          "--speculative-eagle-topk", "4", "--speculative-num-draft-tokens", "6"], tp=8)
    b.add("glm_h200_nextn_fp8kv_mrr64", "h200", GLM, NEXTN + ["--kv-cache-dtype", "fp8_e4m3",
          "--max-running-requests", "64"], tp=8)
    b.add("glm_b200_nextn_nograph", "b200", GLM, NEXTN + ["--disable-cuda-graph"], tp=8)
    b.add("glm_h200_nextn_mfs085", "h200", GLM, NEXTN + ["--mem-fraction-static", "0.85"], tp=8)
    b.add("glm_h200_nextn_triton_page16", "h200", GLM, NEXTN + ["--attention-backend", "triton",
          "--page-size", "16"], tp=8)
    b.add("glm_h200_nextn_no_room", "h200", GLM, NEXTN, tp=8, free_before=138.0, free_after=1.0)
    b.add("glm_h200_nextn_measured", "h200", GLM, NEXTN + ["--chunked-prefill-size", "4096"], tp=8,
          free_before=138.0, free_after=40.0)


def random_cases(b, seed, count):
    rng = random.Random(seed)
    for i in range(count):
        gpu = rng.choice(GPUS)
        flags = list(rng.choice([NEXTN, EAGLE]))
        if rng.random() < 0.3:
            s, k = rng.choice([(1, 1), (2, 1), (3, 1), (5, 1), (2, 4), (3, 2)])
            flags += ["--speculative-num-steps", str(s), "--speculative-eagle-topk", str(k),
                      "--speculative-num-draft-tokens", str(s + 1 if k == 1 else rng.choice([4, 8]))]
        if rng.random() < 0.3:
            flags += ["--kv-cache-dtype", rng.choice(["fp8_e4m3", "fp8_e5m2", "auto"])]
        if rng.random() < 0.35:
            flags += ["--context-length", str(rng.choice([4096, 16384, 32768, 131072, 300000]))]
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
        room = mc.total_gib(gpu) - slack - MODELS[GLM][1] / 8
        overhead = min(rng.choice([0.2, 0.35, 0.8, 3.0]), max(0.05, room - 0.3))
        b.add(f"glm{seed}_{i:03d}", gpu, GLM, flags, tp=8, slack=slack, overhead=overhead)


def build(out_path, mode, seed=1, count=12):
    b = _builder(out_path)
    if mode == "curated":
        curated(b)
        random_cases(b, seed, count)
    else:
        random_cases(b, seed, count)
    return b.cases


def regen(a):
    out = os.path.join(GOLDEN, f"sglang-{a.version}")
    os.makedirs(out, exist_ok=True)
    py = a.py or os.path.expanduser(f"~/.cache/sglang-oracle/{a.version}/venv/bin/python")
    oracle = a.oracle or (SHARED_ORACLE if a.version in SHARED_RELEASES else ADAPTED_ORACLE)
    cases = build(os.path.join(out, "glm_nextn.jsonl"), "curated", a.seed, a.count)
    results = mcv.run_isolated(py, oracle, cases, out, 1, "glmnextn")
    kc, kr, dropped = mcv.filter_results(cases, results)
    for r in kr:
        r.pop("elapsed_s", None)
    mcv.write_jsonl(os.path.join(out, "glm_nextn.jsonl"), kc)
    mcv.write_jsonl(os.path.join(out, "glm_nextn_results.jsonl"), kr)
    mcv.write_jsonl(os.path.join(out, "glm_nextn_dropped.jsonl"), dropped)
    cnt = collections.Counter(r["summary"]["outcome"] for r in kr)
    print(f"[glm_nextn {a.version}] kept {len(kc)} of {len(cases)}: {dict(sorted(cnt.items()))}; dropped "
          f"{[(d['id'], d.get('reason')) for d in dropped]}", file=sys.stderr)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    pc = sub.add_parser("cases", help="write case lines only")
    pc.add_argument("--version", required=True)
    pc.add_argument("--random", action="store_true")
    pc.add_argument("--seed", type=int, default=1)
    pc.add_argument("--count", type=int, default=12)
    pc.add_argument("--out", required=True)
    pr = sub.add_parser("regen", help="run the oracle, write tests/golden/dense/sglang-<v>/glm_nextn*.jsonl")
    pr.add_argument("--version", required=True)
    pr.add_argument("--py", default=None)
    pr.add_argument("--oracle", default=None)
    pr.add_argument("--seed", type=int, default=1)
    pr.add_argument("--count", type=int, default=12)
    a = p.parse_args(argv)
    if a.cmd == "regen":
        regen(a)
        return
    cases = build(a.out, "random" if a.random else "curated", a.seed, a.count)
    mcv.write_jsonl(a.out, cases)
    print(f"glm_nextn_cases: wrote {len(cases)} cases to {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
