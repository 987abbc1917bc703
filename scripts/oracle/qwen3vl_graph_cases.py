"""Cases for Qwen3-VL's decode-graph expansion to --max-running-requests (0.5.20+, large Hopper GPUs only):
SGLang raises the default decode CUDA graph max_bs to an explicit --max-running-requests <= 512 for a multimodal
Qwen3-VL on an SM90 GPU of >= 60 GiB (srt/arg_groups/model_overrides/qwen3_vl.py:34-62, memory_hook.py:190-196
@0.5.22), which moves the default mem_fraction_static and the KV pool.

    python3 scripts/oracle/qwen3vl_graph_cases.py > cases.jsonl

138 launches: H100 SXM, H200 (SM90, >= 60 GiB), B200 (SM100) and L40S (SM89, < 60 GiB); Qwen3-VL-8B and
Qwen3-VL-30B-A3B; TP 1 / 2 / 4; --max-running-requests 100 / 300 / 512 / 513, and 400 / 450 with the decode
graph's max_bs or batch sizes given (SGLang then leaves them). free_after_gib = free_before - weights / tp - 0.35
(both sides are given the same free memory). config_json paths are relative to the cases file's folder
(tests/golden/dense/sglang-<ver>/)."""

from __future__ import annotations

import json

GPUS = {"h100-sxm": (81559, "9.0", "NVIDIA H100 80GB HBM3", 78.75), "h200": (143771, "9.0", "NVIDIA H200", 139.5),
        "b200": (183359, "10.0", "NVIDIA B200", 178.0), "l40s": (46068, "8.9", "NVIDIA L40S", 43.59)}
MODELS = {"qwen3-vl-8b-instruct": ("Qwen__Qwen3-VL-8B-Instruct.config.json", 16.5),
          "qwen3-vl-30b-a3b-instruct": ("Qwen__Qwen3-VL-30B-A3B-Instruct.config.json", 57.5)}
FLAGS = (["--max-running-requests", "300"], ["--max-running-requests", "512"], ["--max-running-requests", "513"],
         ["--max-running-requests", "100"], ["--max-running-requests", "400", "--cuda-graph-max-bs-decode", "128"],
         ["--max-running-requests", "450", "--cuda-graph-bs-decode", "1", "2", "4", "8"])


def cases() -> list[dict]:
    out = []
    for g, (total, sm, name, fb) in GPUS.items():
        for m, (cfg, weights_gib) in MODELS.items():
            for tp in (1, 2, 4):
                if g == "l40s" and m.startswith("qwen3-vl-30b") and tp == 1:
                    continue  # the weights do not fit
                for fl in FLAGS:
                    flags = fl + (["--tp-size", str(tp)] if tp > 1 else [])
                    out.append({"id": f"{g}_{m}_tp{tp}_{'_'.join(fl)}", "gpu": g, "gpu_total_mib": total, "gpu_sm": sm,
                                "gpu_name": name, "planner_model": m,
                                "config_json": f"../../../../planner/catalog/configs/{cfg}", "flags": flags,
                                "free_before_gib": fb, "free_after_gib": round(fb - weights_gib / tp - 0.35, 2),
                                "env": {}})
    return out


if __name__ == "__main__":
    print("\n".join(json.dumps(c) for c in cases()))
