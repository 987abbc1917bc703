#!/usr/bin/env python3
"""Golden cases for DP attention (one attention-DP rank) on MLA models, made by SGLang's own code (the oracle with
the repository's adapters, which stamp attn_dp_size / attn_tp_size as SGLang computes them).

    bash scripts/oracle/oracle_copy.sh /tmp/oracle-dpep
    python3 scripts/oracle/dp_ep_cases.py regen --version 0.5.16 --oracle /tmp/oracle-dpep
    python3 scripts/oracle/dp_ep_cases.py regen --version 0.5.23 --oracle /tmp/oracle-dpep
    python3 scripts/oracle/agree.py --family dpep --version 0.5.16 --seed 5 --count 40   # fresh random launches

Free memory is given (free_after as a measured value would be): the cases test the per-rank sizing, not the weights.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
CFG = "../../../../planner/catalog/configs/"
V3 = CFG + "deepseek-ai__DeepSeek-V3.config.json"
MODELS = {"deepseek-v3": V3, "kimi-k2-instruct": CFG + "moonshotai__Kimi-K2-Instruct.config.json"}
GOLDEN = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "..", "tests", "golden", "dp_ep")
ORACLE = "/tmp/oracle-dpep"  # bash scripts/oracle/oracle_copy.sh /tmp/oracle-dpep
GPUS = {"h200": (143771, "9.0", "NVIDIA H200", 139.0, 60.28), "b200": (183359, "10.0", "NVIDIA B200", 177.66, 98.94),
        "h100-sxm": (81559, "9.0", "NVIDIA H100 80GB HBM3", 78.25, 19.56)}


def cases(version):
    out = []
    for gpu in GPUS:
        for tp, dp in ((8, 8), (8, 4), (8, 2), (4, 4)):
            for extra in ([], ["--max-running-requests", "1024"], ["--max-running-requests", "100"],
                          ["--chunked-prefill-size", "4096"], ["--disable-cuda-graph"], ["--cuda-graph-max-bs", "64"],
                          ["--kv-cache-dtype", "fp8_e4m3"]):
                dpf = ["--dp-size", str(dp), "--enable-dp-attention"]
                total, sm, name, fb, fa = GPUS[gpu]
                cid = f"{gpu}_tp{tp}_dp{dp}_" + ("_".join(x.lstrip("-").replace("-", "") for x in extra) or "default")
                out.append(dict(id=cid, gpu=gpu, gpu_total_mib=total, gpu_sm=sm, gpu_name=name,
                                planner_model="deepseek-v3", config_json=V3, flags=["--tp-size", str(tp)] + dpf + extra,
                                free_before_gib=fb, free_after_gib=fa, env={}))
    for gpu in ("h200", "b200"):  # expert parallel (--moe-a2a-backend none), with and without DP attention
        total, sm, name, fb, fa = GPUS[gpu]
        for tp, dp, ep in ((8, 1, 8), (8, 1, 4), (8, 1, 2), (8, 8, 8), (8, 4, 8), (8, 2, 4), (4, 4, 4)):
            for extra in ([], ["--max-running-requests", "512"], ["--kv-cache-dtype", "fp8_e4m3"]):
                dpf = ["--dp-size", str(dp), "--enable-dp-attention"] if dp > 1 else []
                cid = f"{gpu}_tp{tp}_dp{dp}_ep{ep}_" + ("_".join(x.lstrip("-").replace("-", "") for x in extra) or "default")
                out.append(dict(id=cid, gpu=gpu, gpu_total_mib=total, gpu_sm=sm, gpu_name=name,
                                planner_model="deepseek-v3", config_json=V3,
                                flags=["--tp-size", str(tp)] + dpf + ["--ep-size", str(ep)] + extra,
                                free_before_gib=fb, free_after_gib=fa, env={}))
    if version == "0.5.23":  # the new spelling
        total, sm, name, fb, fa = GPUS["h200"]
        out.append(dict(id="h200_tp8_attn_dp8", gpu="h200", gpu_total_mib=total, gpu_sm=sm, gpu_name=name,
                        planner_model="deepseek-v3", config_json=V3,
                        flags=["--tp-size", "8", "--attn-dp-size", "8", "--max-running-requests", "1024"],
                        free_before_gib=fb, free_after_gib=fa, env={}))
    return out


def random_cases(version, seed, count):
    """Random DP-attention launches: model, GPU, (tp, dp), KV dtype, context, caps, chunk, graphs, page size,
    backend, radix; 0.5.23 also spells half of them --attn-dp-size. Free memory after the weights is given as a
    fraction of the GPU (a measured value)."""
    import random

    rng = random.Random(seed)
    out = []
    for i in range(count):
        model, gpu = rng.choice(sorted(MODELS)), rng.choice(sorted(GPUS))
        tp, dp = rng.choice([(8, 8), (8, 4), (8, 2), (4, 4), (4, 2), (2, 2)])
        total, sm, name, fb, _ = GPUS[gpu]
        dpf = ["--dp-size", str(dp), "--enable-dp-attention"]
        if version == "0.5.23" and rng.random() < 0.5:
            dpf = ["--attn-dp-size", str(dp)]
        flags = ["--tp-size", str(tp)] + dpf
        if rng.random() < 0.3:
            flags += ["--kv-cache-dtype", rng.choice(["fp8_e4m3", "auto", "bfloat16"])]
        if rng.random() < 0.3:
            flags += ["--context-length", str(rng.choice([4096, 32768, 131072]))]
        if rng.random() < 0.2:
            flags += ["--mem-fraction-static", str(rng.choice([0.6, 0.75, 0.85]))]
        if rng.random() < 0.4:
            flags += ["--max-running-requests", str(rng.choice([1, 7, 64, 100, 256, 1000, 4096]))]
        if rng.random() < 0.2:
            flags += ["--chunked-prefill-size", str(rng.choice([2048, 4096, 16384]))]
        if rng.random() < 0.15:
            flags += ["--cuda-graph-max-bs", str(rng.choice([16, 64, 160, 400]))]
        if rng.random() < 0.1:
            flags += ["--disable-cuda-graph"]
        if rng.random() < 0.15:
            flags += ["--page-size", str(rng.choice([1, 16, 64]))]
        if rng.random() < 0.15:
            flags += ["--attention-backend", rng.choice(["triton", "flashinfer", "fa3", "flashmla", "trtllm_mla"])]
        if rng.random() < 0.1:
            flags += ["--disable-radix-cache"]
        if rng.random() < 0.4:
            flags += ["--ep-size", str(rng.choice([e for e in (2, 4, 8) if tp % e == 0]))]
        fa = round(total / 1024 * rng.choice([0.1, 0.2, 0.35, 0.5]), 2)
        out.append(dict(id=f"r{seed}_{i:03d}", gpu=gpu, gpu_total_mib=total, gpu_sm=sm, gpu_name=name,
                        planner_model=model, config_json=MODELS[model], flags=flags, free_before_gib=fb,
                        free_after_gib=fa, env={}))
    return out


def build(version, mode, out_path, seed=1, count=40):
    """agree.py's entry: the cases (random or curated), also written to out_path."""
    drawn = random_cases(version, seed, count) if mode == "random" else cases(version)
    with open(out_path, "w") as f:
        for c in drawn:
            f.write(json.dumps(c) + "\n")
    return drawn


def _run(py, oracle, cases_path, results_path):
    with open(results_path, "w") as f:
        subprocess.run([py, "oracle.py", "--batch", cases_path, "--summary-only"], cwd=oracle, stdout=f, check=False)
    # the oracle's elapsed time is not a result
    rows = [json.loads(x) for x in open(results_path) if x.strip()]
    with open(results_path, "w") as f:
        for r in rows:
            r.pop("elapsed_s", None)
            f.write(json.dumps(r) + "\n")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("cmd", choices=["regen"])
    p.add_argument("--version", required=True)
    p.add_argument("--oracle", required=True)
    p.add_argument("--py", default=None)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--count", type=int, default=40)
    a = p.parse_args()
    d = os.path.join(REPO, "tests", "golden", "dp_ep", f"sglang-{a.version}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "cases.jsonl"), "w") as f:
        for c in cases(a.version):
            f.write(json.dumps(c) + "\n")
    py = a.py or os.path.expanduser(f"~/.cache/sglang-oracle/{a.version}/venv/bin/python")
    _run(py, a.oracle, os.path.join(d, "cases.jsonl"), os.path.join(d, "results.jsonl"))
    build(a.version, "random", os.path.join(d, "random.jsonl"), a.seed, a.count)
    _run(py, a.oracle, os.path.join(d, "random.jsonl"), os.path.join(d, "random_results.jsonl"))


if __name__ == "__main__":
    main()
