#!/usr/bin/env python3
"""Golden cases for quantized checkpoints, decided by SGLang 0.5.23's own code (issue 10, item 2).

The shared sglang-oracle's 0.5.23 adapter (/work/shared/tools/sglang-oracle/versions/v0_5_23.py) builds the
quant config SGLang's model loader builds from the checkpoint (``_get_quantization_config``) and puts it on
the empty model object, so ``configure_kv_cache_dtype`` sees the checkpoint's ``kv_cache_scheme`` /
``kv_cache_quant_algo`` exactly as on a GPU. NOTE: this is the SHARED oracle's adapter, not this
repository's scripts/oracle/adapters/v0_5_23.py (which reuses v0_5_21 and has no quant config):
``oracle_copy.sh`` would overwrite it, so regen runs a plain copy of the shared oracle.

    python3 scripts/oracle/make_quant_cases.py cases  --out tests/golden/quant/sglang-0.5.23
    python3 scripts/oracle/make_quant_cases.py regen  --out tests/golden/quant/sglang-0.5.23 \
        [--py ~/.cache/sglang-oracle/0.5.23/venv/bin/python] [--oracle /work/shared/tools/sglang-oracle]
    # 0.5.21 through this repository's adapter (scripts/oracle/adapters/v0_5_21.py builds the quant config too)
    bash scripts/oracle/oracle_copy.sh /tmp/oracle-quant
    python3 scripts/oracle/make_quant_cases.py regen  --out tests/golden/quant/sglang-0.5.21 \
        --py ~/.cache/sglang-oracle/0.5.21/venv/bin/python --oracle /tmp/oracle-quant

Checkpoints: the quantized catalog configs (the real nvidia Qwen3.6-27B-NVFP4 config.json, and the
RECONSTRUCTED Qwen FP8 / nvidia NVFP4 configs, planner/catalog/configs/SOURCES.md), plus configs/ beside the
cases: a catalog base config.json with one quantization_config added (compressed-tensors int8 W8A8 with and
without a static fp8 kv_cache_scheme, compressed-tensors w4a16, AWQ int4, fp8 with kv_cache_quant_algo,
modelopt FP8 with kv_cache_quant_algo). They are test inputs for SGLang's dtype code, not copies of
published checkpoints (configs/README.md says so per file).

free_after_gib = free_before - (the planner's weight bytes for the checkpoint) / tp - 0.35 GiB: the weights
only shift the pools; both sides are given the same free memory.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
CONFIGS = ROOT / "planner" / "catalog" / "configs"
ORACLE_CACHE = "/tmp/sglang-oracle-cache"
GIB = 1 << 30

GPUS = {
    "rtx5090": (32607, "12.0", "NVIDIA GeForce RTX 5090"),
    "rtxpro6000": (97887, "12.0", "NVIDIA RTX PRO 6000 Blackwell Workstation Edition"),
    "h100-sxm": (81559, "9.0", "NVIDIA H100 80GB HBM3"),
    "h200": (143771, "9.0", "NVIDIA H200"),
    "b200": (183359, "10.0", "NVIDIA B200"),
    "l40s": (46068, "8.9", "NVIDIA L40S"),
    "a100-80gb": (81920, "8.0", "NVIDIA A100-SXM4-80GB"),
}

_CT_INT8 = {"input_activations": {"actorder": None, "block_structure": None, "dynamic": True, "group_size": None,
                                  "num_bits": 8, "observer": None, "observer_kwargs": {}, "strategy": "token",
                                  "symmetric": True, "type": "int"},
            "output_activations": None, "targets": ["Linear"],
            "weights": {"actorder": None, "block_structure": None, "dynamic": False, "group_size": None,
                        "num_bits": 8, "observer": "minmax", "observer_kwargs": {}, "strategy": "channel",
                        "symmetric": True, "type": "int"}}
_CT_W4A16 = {"input_activations": None, "output_activations": None, "targets": ["Linear"],
             "weights": {"actorder": None, "block_structure": None, "dynamic": False, "group_size": 128,
                         "num_bits": 4, "observer": "minmax", "observer_kwargs": {}, "strategy": "group",
                         "symmetric": True, "type": "int"}}
_KV_FP8 = {"actorder": None, "block_structure": None, "dynamic": False, "group_size": None, "num_bits": 8,
           "observer": "minmax", "observer_kwargs": {}, "strategy": "tensor", "symmetric": True, "type": "float"}

# name -> (base config in planner/catalog/configs, quantization_config, what it stands for)
SYNTHETIC = {
    "qwen3-8b-ct-w8a8-kvfp8": ("Qwen__Qwen3-8B.config.json", {
        "quant_method": "compressed-tensors", "format": "int-quantized", "quantization_status": "compressed",
        "config_groups": {"group_0": _CT_INT8}, "ignore": ["lm_head"], "kv_cache_scheme": _KV_FP8,
        "global_compression_ratio": None, "sparsity_config": {}},
        "llm-compressor INT8 W8A8 (channel weights, dynamic token activations) with a static fp8 per-tensor KV scheme"),
    "qwen3-8b-ct-w8a8": ("Qwen__Qwen3-8B.config.json", {
        "quant_method": "compressed-tensors", "format": "int-quantized", "quantization_status": "compressed",
        "config_groups": {"group_0": _CT_INT8}, "ignore": ["lm_head"], "kv_cache_scheme": None,
        "global_compression_ratio": None, "sparsity_config": {}},
        "llm-compressor INT8 W8A8 without a KV scheme"),
    "llama31-8b-ct-w4a16": ("meta-llama__Llama-3.1-8B-Instruct.config.json", {
        "quant_method": "compressed-tensors", "format": "pack-quantized", "quantization_status": "compressed",
        "config_groups": {"group_0": _CT_W4A16}, "ignore": ["lm_head"], "kv_cache_scheme": None,
        "global_compression_ratio": None, "sparsity_config": {}},
        "llm-compressor W4A16 (int4 group 128, packed int32)"),
    "qwen3-8b-awq": ("Qwen__Qwen3-8B.config.json", {
        "quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "version": "gemm",
        "modules_to_not_convert": None}, "AutoAWQ int4 GEMM, group 128, zero points"),
    "llama31-8b-fp8-kvalgo": ("meta-llama__Llama-3.1-8B-Instruct.config.json", {
        "quant_method": "fp8", "activation_scheme": "dynamic", "fmt": "e4m3", "weight_block_size": [128, 128],
        "kv_cache_quant_algo": "FP8"}, "FP8 block 128x128 with kv_cache_quant_algo FP8 (read by Fp8Config since 0.5.18)"),
    "llama31-8b-modelopt-fp8": ("meta-llama__Llama-3.1-8B-Instruct.config.json", {
        "quant_method": "modelopt", "quant_algo": "FP8", "kv_cache_quant_algo": "FP8",
        "exclude_modules": ["lm_head"]}, "ModelOpt FP8 with kv_cache_quant_algo FP8"),
}

# planner catalog ids of quantized checkpoints with their config file
CATALOG = {
    "qwen3.6-27b-nvfp4": "nvidia__Qwen3.6-27B-NVFP4.config.json",
    "qwen3.6-27b-fp8": "Qwen__Qwen3.6-27B-FP8.reconstructed.config.json",
    "qwen3.6-35b-a3b-fp8": "Qwen__Qwen3.6-35B-A3B-FP8.reconstructed.config.json",
    "qwen3.5-397b-a17b-fp8": "Qwen__Qwen3.5-397B-A17B-FP8.reconstructed.config.json",
    "qwen3.5-122b-a10b-nvfp4": "nvidia__Qwen3.5-122B-A10B-NVFP4.reconstructed.config.json",
}

KV = {"auto": [], "bf16": ["--kv-cache-dtype", "bf16"], "fp8e4m3": ["--kv-cache-dtype", "fp8_e4m3"],
      "fp8e5m2": ["--kv-cache-dtype", "fp8_e5m2"], "autoexplicit": ["--kv-cache-dtype", "auto"]}

# (checkpoint, gpu, tp, kv variants, extra flags)
PLAN = [
    ("qwen3.6-27b-nvfp4", "rtx5090", 1, ("auto", "bf16", "fp8e4m3", "autoexplicit"), ["--max-running-requests", "4"]),
    ("qwen3.6-27b-nvfp4", "rtxpro6000", 1, ("auto", "bf16", "fp8e5m2"), []),
    ("qwen3.6-27b-nvfp4", "b200", 1, ("auto", "bf16"), []),
    ("qwen3.6-27b-nvfp4", "rtx5090", 2, ("auto", "fp8e4m3"), []),
    ("qwen3.6-27b-fp8", "rtxpro6000", 1, ("auto", "fp8e4m3", "bf16"), []),
    ("qwen3.6-27b-fp8", "h100-sxm", 1, ("auto", "fp8e4m3"), []),
    ("qwen3.6-27b-fp8", "h100-sxm", 2, ("auto",), []),
    ("qwen3.6-35b-a3b-fp8", "h200", 1, ("auto", "fp8e4m3"), []),
    ("qwen3.6-35b-a3b-fp8", "rtxpro6000", 1, ("auto", "bf16"), []),
    ("qwen3.5-397b-a17b-fp8", "h200", 4, ("auto", "fp8e4m3"), []),
    ("qwen3.5-397b-a17b-fp8", "b200", 4, ("auto",), []),
    ("qwen3.5-122b-a10b-nvfp4", "b200", 1, ("auto", "bf16"), []),
    ("qwen3.5-122b-a10b-nvfp4", "rtxpro6000", 2, ("auto", "fp8e4m3"), []),
    ("qwen3-8b-ct-w8a8-kvfp8", "l40s", 1, ("auto", "bf16", "fp8e5m2"), []),
    ("qwen3-8b-ct-w8a8-kvfp8", "h100-sxm", 2, ("auto",), []),
    ("qwen3-8b-ct-w8a8", "l40s", 1, ("auto", "fp8e4m3"), []),
    ("llama31-8b-ct-w4a16", "a100-80gb", 1, ("auto", "fp8e4m3"), []),
    ("qwen3-8b-awq", "rtx5090", 1, ("auto", "fp8e4m3"), []),
    ("llama31-8b-fp8-kvalgo", "h100-sxm", 1, ("auto", "bf16"), []),
    ("llama31-8b-modelopt-fp8", "b200", 1, ("auto", "bf16"), []),
    ("llama31-8b-modelopt-fp8", "h200", 2, ("auto",), []),
]


def write_synthetic_configs(out: Path) -> None:
    d = out / "configs"
    d.mkdir(parents=True, exist_ok=True)
    lines = ["# Quantized test configs (inputs for SGLang's quant-config and KV-dtype code)", "",
             "Each file is a planner catalog base config.json (planner/catalog/configs/, sources in SOURCES.md) with one",
             "`quantization_config` added by scripts/oracle/make_quant_cases.py. They stand for a checkpoint FORMAT; they",
             "are not copies of a published checkpoint's config.", ""]
    for name, (base, qcfg, what) in SYNTHETIC.items():
        cfg = json.loads((CONFIGS / base).read_text())
        cfg["quantization_config"] = copy.deepcopy(qcfg)
        (d / f"{name}.config.json").write_text(json.dumps(cfg, indent=2) + "\n")
        lines.append(f"- `{name}.config.json`: {base} + {what}")
    (d / "README.md").write_text("\n".join(lines) + "\n")


def config_path(name: str, out: Path) -> Path:
    return CONFIGS / CATALOG[name] if name in CATALOG else out / "configs" / f"{name}.config.json"


def planner_model(name: str, out: Path) -> str:
    return name if name in CATALOG else os.path.relpath(config_path(name, out), out)


def build(out: Path) -> list[dict]:
    from planner.catalog.catalog import resolve_model  # noqa: PLC0415

    write_synthetic_configs(out)
    cases = []
    for name, gpu, tp, kvs, extra in PLAN:
        total, sm, gname = GPUS[gpu]
        wbytes = resolve_model(name if name in CATALOG else str(config_path(name, out))).weight_bytes
        free_before = total / 1024 - (0.9 if tp == 1 else 1.4)
        free_after = free_before - wbytes / tp / GIB - 0.35
        for kv in kvs:
            flags = list(KV[kv]) + list(extra) + (["--tp-size", str(tp)] if tp != 1 else [])
            cases.append({"id": f"{name}_{gpu}_tp{tp}_kv{kv}", "gpu": gpu, "gpu_total_mib": total, "gpu_sm": sm,
                          "gpu_name": gname, "planner_model": planner_model(name, out),
                          "config_json": os.path.relpath(config_path(name, out), out), "flags": flags,
                          "free_before_gib": round(free_before, 2), "free_after_gib": round(free_after, 2),
                          "env": {}})
    return cases


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def regen(a) -> None:
    out = Path(a.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    cases = build(out)
    write_jsonl(out / "cases.jsonl", cases)
    oracle = Path(tempfile.mkdtemp(prefix="quant-oracle-"))
    shutil.rmtree(oracle)
    shutil.copytree(a.oracle, oracle)   # a plain copy: the shared 0.5.23 adapter, not this repo's
    env = dict(os.environ, SGLANG_ORACLE_CACHE=ORACLE_CACHE)
    p = subprocess.run([a.py, str(oracle / "oracle.py"), "--batch", str(out / "cases.jsonl"), "--summary-only"],
                       cwd=out, env=env, capture_output=True, text=True)
    shutil.rmtree(oracle, ignore_errors=True)
    if p.returncode not in (0, 3):
        raise SystemExit(f"oracle failed (rc {p.returncode}):\n{p.stderr[-3000:]}")
    results = [json.loads(ln) for ln in p.stdout.splitlines() if ln.strip()]
    for r in results:
        r.pop("elapsed_s", None)
    keep = {r["id"] for r in results if r["summary"].get("outcome") not in ("oracle_error", "input_error")}
    dropped = [{"id": r["id"], "outcome": r["summary"].get("outcome"),
                "error": (r["summary"].get("error_message") or "")[:300]} for r in results if r["id"] not in keep]
    write_jsonl(out / "cases.jsonl", [c for c in cases if c["id"] in keep])
    write_jsonl(out / "results.jsonl", [r for r in results if r["id"] in keep])
    write_jsonl(out / "dropped.jsonl", dropped)
    from collections import Counter  # noqa: PLC0415
    cnt = Counter(r["summary"]["outcome"] for r in results if r["id"] in keep)
    print(f"kept {len(keep)} of {len(cases)}: {dict(sorted(cnt.items()))}; dropped {[d['id'] for d in dropped]}",
          file=sys.stderr)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    pc = sub.add_parser("cases")
    pc.add_argument("--out", required=True)
    pr = sub.add_parser("regen")
    pr.add_argument("--out", required=True)
    pr.add_argument("--py", default=os.path.expanduser("~/.cache/sglang-oracle/0.5.23/venv/bin/python"))
    pr.add_argument("--oracle", default="/work/shared/tools/sglang-oracle")
    a = p.parse_args(argv)
    if a.cmd == "cases":
        out = Path(a.out).resolve()
        out.mkdir(parents=True, exist_ok=True)
        write_jsonl(out / "cases.jsonl", build(out))
    else:
        regen(a)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
