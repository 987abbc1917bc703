#!/usr/bin/env python3
"""Golden cases for decode context parallel (--dcp-size, one rank) on GQA models, made by SGLang's own code (the
oracle with the repository's adapters; adapters/v0_5_23.py stamps dcp_enabled / attn_dcp_size as SGLang publishes
them, runtime_context.py:144-169 @0.5.23).

    bash scripts/oracle/oracle_copy.sh /tmp/oracle-cp
    python3 scripts/oracle/cp_cases.py regen --version 0.5.23 --oracle /tmp/oracle-cp
    python3 scripts/oracle/cp_cases.py random --version 0.5.23 --oracle /tmp/oracle-cp --seed 7 --count 30

`random` draws fresh launches and counts how many of SGLang's per-rank KV cells equal
layers x dcp_kv_heads(H, tp, dcp) x (head_dim + v_head_dim) x KV bytes (pipeline/context_parallel.py).

Free memory is given (free_after as a measured value would be): the cases test the per-rank sizing, not the weights.
Each --dcp-size case has its --dcp-size 1 twin (same id with dcp1) so the effect of the flag is in the set.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
CFG = os.path.join(REPO, "planner", "catalog", "configs")
MODELS = {"qwen3-32b": "Qwen__Qwen3-32B.config.json", "qwen3-30b-a3b": "Qwen__Qwen3-30B-A3B.config.json",
          "llama-3.1-70b-instruct": "meta-llama__Llama-3.1-70B-Instruct.config.json"}
GPUS = {"h200": (143771, "9.0", "NVIDIA H200", 139.0, 100.0), "h100-sxm": (81559, "9.0", "NVIDIA H100 80GB HBM3", 78.25, 60.0)}
EXTRAS = ([], ["--max-running-requests", "256"], ["--kv-cache-dtype", "fp8_e4m3"], ["--page-size", "16"],
          ["--disable-cuda-graph"], ["--context-length", "131072"])


def _case(cid, gpu, model, flags, fa=None):
    total, sm, name, fb, fa0 = GPUS[gpu]
    return dict(id=cid, gpu=gpu, gpu_total_mib=total, gpu_sm=sm, gpu_name=name, planner_model=model,
                config_json=os.path.join(CFG, MODELS[model]), flags=flags, free_before_gib=fb,
                free_after_gib=fa0 if fa is None else fa, env={})


def cases(version):
    out = []
    for model in MODELS:
        for gpu in GPUS:
            for tp, dcp in ((8, 1), (8, 2), (8, 4), (8, 8), (4, 1), (4, 2)):
                for extra in EXTRAS:
                    tag = "_".join(x.lstrip("-").replace("-", "") for x in extra) or "default"
                    out.append(_case(f"{model}_{gpu}_tp{tp}_dcp{dcp}_{tag}", gpu, model,
                                     ["--tp-size", str(tp), "--dcp-size", str(dcp)] + extra))
    return out


def random_cases(version, seed, count):
    rng = random.Random(seed)
    out = []
    for i in range(count):
        model, gpu = rng.choice(sorted(MODELS)), rng.choice(sorted(GPUS))
        tp = rng.choice([2, 4, 8])
        dcp = rng.choice([d for d in (2, 4, 8) if tp % d == 0])
        flags = ["--tp-size", str(tp), "--dcp-size", str(dcp)]
        if rng.random() < 0.3:
            flags += ["--kv-cache-dtype", rng.choice(["fp8_e4m3", "auto"])]
        if rng.random() < 0.3:
            flags += ["--max-running-requests", str(rng.choice([1, 16, 100, 512, 2048]))]
        if rng.random() < 0.3:
            flags += ["--page-size", str(rng.choice([1, 16, 64]))]
        if rng.random() < 0.2:
            flags += ["--mem-fraction-static", str(rng.choice([0.6, 0.8, 0.9]))]
        if rng.random() < 0.2:
            flags += ["--chunked-prefill-size", str(rng.choice([2048, 4096, 16384]))]
        if rng.random() < 0.15:
            flags += ["--disable-cuda-graph"]
        total = GPUS[gpu][0]
        fa = round(total / 1024 * rng.choice([0.3, 0.5, 0.7]), 2)
        out.append(_case(f"r{seed}_{i:03d}", gpu, model, flags, fa))
    return out


def _run(py, oracle, cases_path, results_path):
    with open(results_path, "w") as f:
        subprocess.run([py, "oracle.py", "--batch", cases_path, "--summary-only"], cwd=oracle, stdout=f, check=False)
    rows = [json.loads(x) for x in open(results_path) if x.strip()]
    with open(results_path, "w") as f:  # the oracle's elapsed time is not a result
        for r in rows:
            r.pop("elapsed_s", None)
            f.write(json.dumps(r) + "\n")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("cmd", choices=["regen", "random"])
    p.add_argument("--version", required=True)
    p.add_argument("--oracle", required=True)
    p.add_argument("--py", default=None)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--count", type=int, default=30)
    a = p.parse_args()
    py = a.py or os.path.expanduser(f"~/.cache/sglang-oracle/{a.version}/venv/bin/python")
    if a.cmd == "regen":
        d = os.path.join(REPO, "tests", "golden", "cp", f"sglang-{a.version}")
        drawn = cases(a.version)
    else:
        d = os.path.join("/tmp", f"cp-random-{a.version}-{a.seed}")
        drawn = random_cases(a.version, a.seed, a.count)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "cases.jsonl"), "w") as f:
        for c in drawn:
            f.write(json.dumps(c) + "\n")
    _run(py, a.oracle, os.path.join(d, "cases.jsonl"), os.path.join(d, "results.jsonl"))
    print(d)
    if a.cmd == "random":
        print(agree(drawn, os.path.join(d, "results.jsonl")))


def agree(drawn, results_path):
    """(agreeing, ok cases, SGLang rejections): the per-rank KV cell against dcp_kv_heads."""
    import sys

    sys.path.insert(0, REPO)
    from planner.engines.sglang.pipeline.context_parallel import dcp_kv_heads

    by_id = {c["id"]: c for c in drawn}
    good = ok = rejected = 0
    for line in open(results_path):
        r = json.loads(line)
        s, c = r["summary"], by_id[r["id"]]
        if s["outcome"] != "ok":
            rejected += 1
            continue
        ok += 1
        cfg = json.load(open(c["config_json"]))
        f = c["flags"]
        tp, dcp = int(f[f.index("--tp-size") + 1]), int(f[f.index("--dcp-size") + 1])
        hd = cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]
        nbytes = 1 if "fp8_e4m3" in f else 2
        cell = cfg["num_hidden_layers"] * dcp_kv_heads(cfg["num_key_value_heads"], tp, dcp) * 2 * hd * nbytes
        if cell == s["kv_cell_bytes_per_token"]:
            good += 1
        else:
            print("DISAGREE", r["id"], cell, s["kv_cell_bytes_per_token"])
    return f"agree {good}/{ok} ok cases ({rejected} rejected by SGLang)"


if __name__ == "__main__":
    main()
