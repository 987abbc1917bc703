#!/usr/bin/env python3
"""Golden cases for DP attention (one attention-DP rank), made by SGLang's own code (the oracle with
the repository's adapters, which stamp attn_dp_size / attn_tp_size as SGLang computes them).

    bash scripts/oracle/oracle_copy.sh /tmp/oracle-dpep
    python3 scripts/oracle/dp_ep_cases.py regen --version 0.5.16 --oracle /tmp/oracle-dpep
    python3 scripts/oracle/dp_ep_cases.py regen --version 0.5.23 --oracle /tmp/oracle-dpep
    python3 scripts/oracle/dp_ep_cases.py regen --version 0.5.21 --oracle /tmp/oracle-dpep   # and 0.5.22
    python3 scripts/oracle/agree.py --family dpep --version 0.5.16 --seed 5 --count 40   # fresh random launches
    python3 scripts/oracle/dp_ep_cases.py regen --set wide --version 0.5.23 --oracle /tmp/oracle-dpep  # wide.jsonl
    python3 scripts/oracle/agree.py --family dpwide --version 0.5.23 --seed 11 --count 40 --oracle /tmp/oracle-dpep

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
# expert parallel is verified (and planned) on these releases only (pipeline/dp_attention.py ep_refusal); the other
# releases' sets leave its cases out
EP_RELEASES = ("0.5.16", "0.5.23")
# NEXTN / EAGLE on an MLA checkpoint's own MTP layer is refused by the planner on these releases, with or without DP
# attention (scripts/oracle/mla_cases.py NO_NEXTN): their sets leave those cases out
MLA_NO_NEXTN = ("0.5.15", "0.5.20", "0.5.21")
# DP attention beyond MLA without spec (the wide set, wide.jsonl): GQA MoE, DSA, hybrid GDN MoE
WIDE = {"qwen3-235b-a22b": CFG + "Qwen__Qwen3-235B-A22B.config.json",
        "qwen3-30b-a3b": CFG + "Qwen__Qwen3-30B-A3B.config.json",
        "glm-4.7": CFG + "zai-org__GLM-4.7.abbreviated.config.json",
        "minimax-m2": CFG + "MiniMaxAI__MiniMax-M2.reconstructed.config.json",
        "deepseek-v3.2": CFG + "deepseek-ai__DeepSeek-V3.2.config.json",
        "qwen3-next-80b-a3b": CFG + "Qwen__Qwen3-Next-80B-A3B-Instruct.config.json",
        "qwen3.5-35b-a3b": CFG + "Qwen__Qwen3.5-35B-A3B.config.json",
        "qwen3.5-397b-a17b": CFG + "Qwen__Qwen3.5-397B-A17B.config.json"}
EAGLE1 = ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
          "--speculative-num-draft-tokens", "4"]
HYBRID = ("qwen3.5-35b-a3b", "qwen3.5-397b-a17b")  # not in the random draws (multimodal: a ViT reserve)
GLM_NEXTN = "../../dense/configs/zai-org__GLM-4.7-FP8.abbreviated-nextn.config.json"  # relative to the cases file
NEXTN = ["--speculative-algorithm", "NEXTN"]
EAGLE = ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "2", "--speculative-eagle-topk", "4",
         "--speculative-num-draft-tokens", "8"]
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
    for gpu in ("h200", "b200") if version in EP_RELEASES else ():  # expert parallel (--moe-a2a-backend none)
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


def _case(cid, gpu, model, cfg, flags, frac=None):
    total, sm, name, fb, fa = GPUS[gpu]
    if frac is not None:
        fa = round(total / 1024 * frac, 2)
    return dict(id=cid, gpu=gpu, gpu_total_mib=total, gpu_sm=sm, gpu_name=name, planner_model=model,
                config_json=cfg, flags=flags, free_before_gib=fb, free_after_gib=fa, env={})


def wide_cases(version):
    """DP attention with speculative decoding on DeepSeek-V3 (NEXTN / EAGLE on the checkpoint's MTP layer), and
    without speculative decoding on GQA MoE (Qwen3-MoE, GLM-4.7, MiniMax-M2), DSA (DeepSeek-V3.2) and hybrid GDN
    MoE (Qwen3-Next, Qwen3.5-MoE) models."""
    out = []
    # 0.5.23's parser finds --cuda-graph-max-bs ambiguous (-decode / -prefill): its decode spelling there
    gmax = "--cuda-graph-max-bs-decode" if version == "0.5.23" else "--cuda-graph-max-bs"
    mla_spec = version not in MLA_NO_NEXTN
    for gpu in ("h200", "b200") if mla_spec else ():
        for tp, dp in ((8, 8), (8, 4), (8, 2), (4, 4)):
            for sname, spec in (("nextn", NEXTN), ("eagle", EAGLE)):
                for extra in ([], ["--max-running-requests", "256"], ["--kv-cache-dtype", "fp8_e4m3"],
                              [gmax, "64"]):
                    tag = "_".join(x.lstrip("-").replace("-", "") for x in extra) or "default"
                    out.append(_case(f"{gpu}_v3_tp{tp}_dp{dp}_{sname}_{tag}", gpu, "deepseek-v3", V3,
                                     ["--tp-size", str(tp), "--dp-size", str(dp), "--enable-dp-attention"] + spec
                                     + extra))
    for model, shapes in (("qwen3-235b-a22b", ((8, 8), (8, 4), (8, 2), (4, 4))),
                          ("qwen3-30b-a3b", ((4, 4), (4, 2), (2, 2), (8, 8))),
                          ("glm-4.7", ((8, 8), (8, 4), (8, 2))), ("minimax-m2", ((8, 8), (8, 4), (4, 2))),
                          ("deepseek-v3.2", ((8, 8), (8, 4), (8, 2)))):
        for gpu in ("h200", "h100-sxm"):
            for tp, dp in shapes:
                for extra in ([], ["--max-running-requests", "512"], ["--kv-cache-dtype", "fp8_e4m3"],
                              ["--chunked-prefill-size", "4096"]):
                    tag = "_".join(x.lstrip("-").replace("-", "") for x in extra) or "default"
                    out.append(_case(f"{gpu}_{model}_tp{tp}_dp{dp}_{tag}", gpu, model, WIDE[model],
                                     ["--tp-size", str(tp), "--dp-size", str(dp), "--enable-dp-attention"] + extra,
                                     frac=0.4))
    for gpu in ("h200", "b200", "h100-sxm") if mla_spec else ():  # EAGLE topk 1 (the public recipe's 3 / 1 / 4)
        for tp, dp in ((8, 8), (8, 4), (8, 2), (4, 4)):
            for extra in ([], ["--max-running-requests", "128"]):
                tag = "_".join(x.lstrip("-").replace("-", "") for x in extra) or "default"
                out.append(_case(f"{gpu}_v3_tp{tp}_dp{dp}_eagle1_{tag}", gpu, "deepseek-v3", V3,
                                 ["--tp-size", str(tp), "--dp-size", str(dp), "--enable-dp-attention"] + EAGLE1
                                 + extra))
    for gpu in ("h200", "b200"):  # --enable-dp-lm-head: the LM head split over attn_tp
        for model, cfg, tp, dp, spec in (("deepseek-v3", V3, 8, 8, []), ("deepseek-v3", V3, 8, 4, []),
                                         ("deepseek-v3", V3, 8, 8, NEXTN), ("deepseek-v3", V3, 8, 2, EAGLE),
                                         ("qwen3-235b-a22b", WIDE["qwen3-235b-a22b"], 8, 8, []),
                                         ("qwen3-235b-a22b", WIDE["qwen3-235b-a22b"], 8, 4, []),
                                         ("glm-4.7", WIDE["glm-4.7"], 8, 8, []),
                                         ("deepseek-v3.2", WIDE["deepseek-v3.2"], 8, 8, [])):
            if spec and not mla_spec:
                continue
            sname = spec[1].lower() if spec else "nospec"
            out.append(_case(f"{gpu}_{model}_tp{tp}_dp{dp}_{sname}_dplmhead", gpu, model, cfg,
                             ["--tp-size", str(tp), "--dp-size", str(dp), "--enable-dp-attention",
                              "--enable-dp-lm-head"] + spec, frac=0.4))
    # NEXTN / EAGLE on the own MTP layer of DeepSeek-V3.2 (DSA) and GLM-4.7-FP8 (the abbreviated config with the
    # checkpoint's num_nextn_predict_layers 1, tests/golden/dense/configs/SOURCES.md)
    for gpu in ("h200", "b200"):
        for model, cfg, tag in ((("deepseek-v3.2", WIDE["deepseek-v3.2"], "v32"),) if mla_spec else ()) + (
                (GLM_NEXTN, GLM_NEXTN, "glm47fp8"),):
            for tp, dp in ((8, 8), (8, 4), (8, 2)):
                for sname, spec in (("nextn", NEXTN), ("eagle1", EAGLE1)):
                    out.append(_case(f"{gpu}_{tag}_tp{tp}_dp{dp}_{sname}", gpu, model, cfg,
                                     ["--tp-size", str(tp), "--dp-size", str(dp), "--enable-dp-attention"] + spec,
                                     frac=0.4))
    return out + hybrid_cases(version)


def hybrid_cases(version, models=("qwen3-next-80b-a3b", "qwen3.5-35b-a3b", "qwen3.5-397b-a17b")):
    """Hybrid GDN MoE (Qwen3-Next, Qwen3.5-MoE) with DP attention: mamba state per attention-TP rank, slots per DP
    shard."""
    out = []
    shapes_of = {"qwen3-next-80b-a3b": ((4, 4), (4, 2), (8, 8)), "qwen3.5-35b-a3b": ((2, 2), (4, 4)),
                 "qwen3.5-397b-a17b": ((8, 8), (8, 4))}
    for model, shapes in ((m, shapes_of[m]) for m in models):
        for gpu in ("h200", "h100-sxm"):
            for tp, dp in shapes:
                for extra in ([], ["--max-running-requests", "512"], ["--max-mamba-cache-size", "400"],
                              ["--disable-radix-cache", "--max-running-requests", "256"],
                              ["--chunked-prefill-size", "4096"], ["--mamba-radix-cache-strategy", "extra_buffer"],
                              ["--max-running-requests", "64", "--max-mamba-cache-size", "300"],
                              ["--kv-cache-dtype", "fp8_e4m3"]):
                    tag = "_".join(x.lstrip("-").replace("-", "") for x in extra) or "default"
                    out.append(_case(f"{gpu}_{model}_tp{tp}_dp{dp}_{tag}", gpu, model, WIDE[model],
                                     ["--tp-size", str(tp), "--dp-size", str(dp), "--enable-dp-attention"] + extra,
                                     frac=0.4))
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
            ep = ["--ep-size", str(rng.choice([e for e in (2, 4, 8) if tp % e == 0]))]
            flags += ep if version in EP_RELEASES else []  # the same draws on every release
        fa = round(total / 1024 * rng.choice([0.1, 0.2, 0.35, 0.5]), 2)
        out.append(dict(id=f"r{seed}_{i:03d}", gpu=gpu, gpu_total_mib=total, gpu_sm=sm, gpu_name=name,
                        planner_model=model, config_json=MODELS[model], flags=flags, free_before_gib=fb,
                        free_after_gib=fa, env={}))
    return out


def random_wide_cases(version, seed, count):
    """Random launches of the wide set: DeepSeek-V3 with NEXTN / EAGLE (steps, topk, draft tokens), the GQA MoE
    models, DeepSeek-V3.2; (tp, dp), GPU, KV dtype, context, caps, chunk, graphs, --enable-dp-lm-head; 0.5.23 half in
    the --attn-dp-size spelling. Free memory after the weights: a fraction of the GPU (a measured value)."""
    import random

    rng = random.Random(seed)
    models = {"deepseek-v3": V3, **{k: v for k, v in WIDE.items() if k not in HYBRID}}
    out = []
    for i in range(count):
        model, gpu = rng.choice(sorted(models)), rng.choice(sorted(GPUS))
        tp, dp = rng.choice([(8, 8), (8, 4), (8, 2), (4, 4), (4, 2), (2, 2)])
        total = GPUS[gpu][0]
        dpf = ["--dp-size", str(dp), "--enable-dp-attention"]
        if version == "0.5.23" and rng.random() < 0.5:
            dpf = ["--attn-dp-size", str(dp)]
        flags = ["--tp-size", str(tp)] + dpf
        if model in ("deepseek-v3", "deepseek-v3.2") and rng.random() < 0.8:
            flags += [] if version in MLA_NO_NEXTN else rng.choice([NEXTN, ["--speculative-algorithm", "EAGLE",
                                         "--speculative-num-steps", str(rng.choice([1, 2, 3])),
                                         "--speculative-eagle-topk", str(rng.choice([1, 1, 2])),
                                         "--speculative-num-draft-tokens", str(rng.choice([2, 4, 6]))]])
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
        if rng.random() < 0.1:
            flags += ["--disable-radix-cache"]
        if rng.random() < 0.25:
            flags += ["--enable-dp-lm-head"]
        fa = round(total / 1024 * rng.choice([0.1, 0.2, 0.35, 0.5]), 2)
        out.append(_case(f"w{seed}_{i:03d}", gpu, model, models[model], flags) | {"free_after_gib": fa})
    return out


def build(version, mode, out_path, seed=1, count=40):
    """agree.py's entry: the cases (random, random-wide or curated), also written to out_path."""
    drawn = (random_cases(version, seed, count) if mode == "random" else
             random_wide_cases(version, seed, count) if mode == "random-wide" else cases(version))
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
    p.add_argument("--set", choices=("all", "main", "wide"), default="all",
                   help="main: cases.jsonl + random.jsonl (MLA); wide: wide.jsonl (spec, GQA MoE, DSA, dp-lm-head)")
    a = p.parse_args()
    d = os.path.join(REPO, "tests", "golden", "dp_ep", f"sglang-{a.version}")
    os.makedirs(d, exist_ok=True)
    py = a.py or os.path.expanduser(f"~/.cache/sglang-oracle/{a.version}/venv/bin/python")
    sets = [("cases", cases), ("wide", wide_cases)] if a.set == "all" else \
        [("cases", cases)] if a.set == "main" else [("wide", wide_cases)]
    for name, make in sets:
        with open(os.path.join(d, f"{name}.jsonl"), "w") as f:
            for c in make(a.version):
                f.write(json.dumps(c) + "\n")
        results = "results.jsonl" if name == "cases" else f"{name}_results.jsonl"
        _run(py, a.oracle, os.path.join(d, f"{name}.jsonl"), os.path.join(d, results))
        if name == "cases":
            build(a.version, "random", os.path.join(d, "random.jsonl"), a.seed, a.count)
            _run(py, a.oracle, os.path.join(d, "random.jsonl"), os.path.join(d, "random_results.jsonl"))


if __name__ == "__main__":
    main()
