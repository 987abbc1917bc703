#!/usr/bin/env python3
"""Golden cases for DP attention (one attention-DP rank) on MLA models, made by SGLang's own code (the oracle with
the repository's adapters, which stamp attn_dp_size / attn_tp_size as SGLang computes them).

    bash scripts/oracle/oracle_copy.sh /tmp/oracle-dpep
    python3 scripts/oracle/dp_ep_cases.py regen --version 0.5.16 --oracle /tmp/oracle-dpep
    python3 scripts/oracle/dp_ep_cases.py regen --version 0.5.23 --oracle /tmp/oracle-dpep

Free memory is given (free_after as a measured value would be): the cases test the per-rank sizing, not the weights.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
V3 = "../../../../planner/catalog/configs/deepseek-ai__DeepSeek-V3.config.json"
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
    if version == "0.5.23":  # the new spelling
        total, sm, name, fb, fa = GPUS["h200"]
        out.append(dict(id="h200_tp8_attn_dp8", gpu="h200", gpu_total_mib=total, gpu_sm=sm, gpu_name=name,
                        planner_model="deepseek-v3", config_json=V3,
                        flags=["--tp-size", "8", "--attn-dp-size", "8", "--max-running-requests", "1024"],
                        free_before_gib=fb, free_after_gib=fa, env={}))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("cmd", choices=["regen"])
    p.add_argument("--version", required=True)
    p.add_argument("--oracle", required=True)
    p.add_argument("--py", default=None)
    a = p.parse_args()
    d = os.path.join(REPO, "tests", "golden", "dp_ep", f"sglang-{a.version}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "cases.jsonl"), "w") as f:
        for c in cases(a.version):
            f.write(json.dumps(c) + "\n")
    py = a.py or os.path.expanduser(f"~/.cache/sglang-oracle/{a.version}/venv/bin/python")
    with open(os.path.join(d, "results.jsonl"), "w") as f:
        subprocess.run([py, "oracle.py", "--batch", os.path.join(d, "cases.jsonl"), "--summary-only"],
                       cwd=a.oracle, stdout=f, check=False)


if __name__ == "__main__":
    main()
