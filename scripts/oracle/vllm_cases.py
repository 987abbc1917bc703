#!/usr/bin/env python3
"""Golden launches for vLLM 0.33.0 / 0.34.0's KV-cache sizing, decided by the vLLM oracle (vLLM's own code on CPU).

    # write case lines only (deterministic: the curated set, or seeded random launches)
    vllm_cases.py cases --family dense --curated --out /tmp/x.jsonl
    vllm_cases.py cases --family dense --seed 1 --count 20 --out /tmp/y.jsonl

    # regenerate tests/golden/vllm/<version>/<family>/ (cases.jsonl, results.jsonl: summary only)
    vllm_cases.py regen --version 0.34.0 --family dense --seed 1 --count 20

Every case passes ``weights_gib`` explicitly (the planner's front end supplies the weights); the oracle still
records the meta model's ``weights_bytes_meta`` beside it, for the weights owner to compare. The measured inputs
(non-torch memory, activation peak, CUDA-graph memory, 0.34's warmup terms) are drawn as a real boot would report
them. Models are the oracle's own configs (``/work/shared/tools/vllm-oracle/models``); the ones the goldens use are
copied to ``tests/golden/vllm/configs/<name>.config.json`` so the tests do not need /work/shared.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
GOLDEN = os.path.join(REPO, "tests", "golden", "vllm")
ORACLE = os.environ.get("VLLM_ORACLE", "/work/shared/tools/vllm-oracle")


def oracle_python(version: str) -> str:
    return os.path.expanduser(f"~/.cache/vllm-oracle/{version}/venv/bin/python")


# name, NVML MiB, cudaMemGetInfo GiB, SM
GPUS = {
    "h100": (81559, 79.19, "9.0", "NVIDIA H100 80GB HBM3"),
    "h200": (143771, 139.81, "9.0", "NVIDIA H200"),
    "rtxpro6000": (97887, 94.97, "12.0", "NVIDIA RTX PRO 6000 Blackwell Workstation Edition"),
    "a100": (81920, 79.25, "8.0", "NVIDIA A100-SXM4-80GB"),
    # hwprofiles/b200.toml: NVML 183359 MiB; CUDA total 178.35 GiB (pytorch/ao#4002's "Total Global Memory")
    "b200": (183359, 178.35, "10.0", "NVIDIA B200"),
    # hwprofiles/b300.toml: NVML 275040 MiB, SM 10.3; no CUDA total reading: NVML less B200's 729 MiB reserve
    "b300": (275040, 267.88, "10.3", "NVIDIA B300 SXM6 AC"),
}

# family -> model -> weights GiB of the whole checkpoint as loaded (the case divides by TP x PP)
FAMILIES = {
    "dense": {"Llama-3.1-8B-Instruct": 14.99, "Qwen3-8B": 15.26, "Llama-3.3-70B-Instruct": 131.4},
    "moe": {"Qwen3-30B-A3B": 56.9, "Qwen3-30B-A3B-FP8": 30.2, "Mixtral-8x7B-v0.1": 87.0},
    "gdn": {"Qwen3.6-27B": 51.0, "Qwen3-Next-80B-A3B-Instruct": 148.5, "Qwen3.5-35B-A3B": 65.5},
    "mamba2": {"Nemotron-3-Nano-30B-A3B": 58.8},
    "swa": {"gpt-oss-20b": 12.8, "gpt-oss-120b": 60.8},
    "chunked": {"Llama-4-Scout-17B-16E-Instruct": 203.0},
    "mla": {"DeepSeek-V3": 627.0, "Kimi-K2-Instruct": 958.5},
}
MTP_MODELS = {"Qwen3.6-27B", "Qwen3-Next-80B-A3B-Instruct", "Qwen3.5-35B-A3B"}


def _mtp(rng: random.Random, model: str) -> dict:
    """The model's own MTP layers (DeepSeek-V3 also under the deprecated name deepseek_mtp)."""
    method = rng.choice(["mtp", "deepseek_mtp"]) if model == "DeepSeek-V3" else "mtp"
    return {"method": method, "num_speculative_tokens": rng.randint(1, 4)}


# EAGLE3 drafters per target: the SpecForge configs in /work/shared/models (planner/catalog/configs holds the same
# files), passed to the oracle as --speculative-config's "model" (a directory made by run_oracle)
EAGLE3_DRAFTS = {"Llama-3.1-8B-Instruct": "llama3-8B-eagle3", "Qwen3-8B": "qwen3-8b-eagle3",
                 "Llama-3.3-70B-Instruct": "llama3-70B-ealge3"}
SHARED_MODELS = os.environ.get("SHARED_MODELS", "/work/shared/models")


def _eagle3(rng: random.Random, model: str) -> dict:
    return {"method": "eagle3", "model": EAGLE3_DRAFTS[model], "num_speculative_tokens": rng.randint(1, 5)}


def _ngram(rng: random.Random, model: str) -> dict:
    sc = {"method": "ngram", "num_speculative_tokens": rng.randint(1, 6)}
    if rng.random() < 0.5:
        sc["prompt_lookup_max"] = rng.randint(2, 5)
        if rng.random() < 0.5:
            sc["prompt_lookup_min"] = rng.randint(1, sc["prompt_lookup_max"])
    return sc


# speculative sets (regen --spec NAME): family -> the models that take that drafter, and its --speculative-config
SPEC_SETS = {
    "mtp": {"mla": (["DeepSeek-V3"], _mtp)},
    "eagle3": {"dense": (sorted(EAGLE3_DRAFTS), _eagle3)},
    "ngram": {f: (sorted(FAMILIES[f]), _ngram) for f in ("dense", "moe", "swa", "chunked", "mla")},
}


def _measured(rng: random.Random, weights: float, version: str) -> dict:
    d = {
        "weights_gib": round(weights * rng.uniform(0.97, 1.03), 3),
        "non_torch_gib": round(rng.uniform(0.2, 1.5), 3),
        "peak_activation_gib": round(rng.uniform(0.5, 5.0), 3),
        "cudagraph_gib": round(rng.choice([0.0, rng.uniform(0.1, 1.5)]), 3),
        "startup_used_gib": round(rng.choice([0.5, rng.uniform(0.3, 1.2)]), 3),
    }
    if version == "0.34.0" and rng.random() < 0.4:
        d["cudagraph_actual_gib"] = round(d["cudagraph_gib"] * rng.uniform(0.6, 1.2), 3)
        d["warmup_peak_gib"] = round(d["peak_activation_gib"] * rng.uniform(0.7, 1.3), 3)
        d["torch_reserve_growth_gib"] = round(rng.choice([0.0, rng.uniform(0.0, 1.5)]), 3)
    if version == "0.34.0" and rng.random() < 0.1:
        d["vmm"] = "no"
    return d


def _case(cid, model, gpu, flags, meas) -> dict:
    mib, cuda, sm, name = GPUS[gpu]
    c = {"id": cid, "model": model, "flags": flags, "gpu_total_mib": mib, "cuda_total_gib": cuda, "gpu_sm": sm,
         "gpu_name": name}
    c.update(meas)
    return c


def random_case(rng: random.Random, family: str, version: str, i: int, only_gpu: str | None = None,
                spec: str | None = None) -> dict:
    models = FAMILIES[family]
    model = rng.choice(sorted(models) if spec is None else SPEC_SETS[spec][family][0])
    gpu = rng.choice(["h100", "h100", "h200", "rtxpro6000", "a100"] if family in ("dense", "moe") else
                     ["h100", "h200", "rtxpro6000"])
    flags: list[str] = []
    tp = rng.choice([1, 1, 2, 4, 8] if family in ("mla", "chunked") else [1, 1, 1, 2, 4])
    if family == "mla":
        tp = 8
        gpu = "h200"
    gpu = only_gpu or gpu
    pp = rng.choice([1, 1, 1, 1, 2])
    if tp > 1:
        flags += ["--tensor-parallel-size", str(tp)]
    if pp > 1:
        flags += ["--pipeline-parallel-size", str(pp)]
    if rng.random() < 0.15:
        flags += ["--data-parallel-size", "2"]
    r = rng.random()
    if r < 0.6:
        flags += ["--max-model-len", str(rng.choice([2048, 4096, 8192, 16384, 32768, 40960, 65536, 131072,
                                                     262144, rng.randint(1000, 140000)]))]
    elif r < 0.7:
        flags += ["--max-model-len", "-1"]
    if rng.random() < 0.5:
        flags += ["--max-num-seqs", str(rng.choice([1, 8, 16, 32, 64, 100, 128, 256, 512, rng.randint(1, 600)]))]
    if rng.random() < 0.5:
        flags += ["--gpu-memory-utilization", str(round(rng.uniform(0.5, 0.97), 2))]
    if rng.random() < 0.25:
        flags += ["--kv-cache-dtype", "fp8"]
    if rng.random() < 0.2:
        flags += ["--block-size", str(rng.choice([16, 32, 64, 128]))]
    if rng.random() < 0.2:
        flags += [rng.choice(["--enable-prefix-caching", "--no-enable-prefix-caching"])]
    if rng.random() < 0.15:
        flags += ["--enforce-eager"]
    if rng.random() < 0.2:
        flags += ["--max-num-batched-tokens", str(rng.choice([2048, 4096, 8192, 16384]))]
    if rng.random() < 0.06:
        flags += ["--kv-cache-memory-bytes", str(rng.randint(2, 30) * (1 << 30) + rng.randint(0, 1 << 20))]
    elif rng.random() < 0.06:
        flags += ["--num-gpu-blocks-override", str(rng.randint(50, 5000))]
    if model in MTP_MODELS and rng.random() < 0.4:
        flags += ["--speculative-config", json.dumps({"method": "mtp", "num_speculative_tokens": rng.randint(1, 4)})]
    if spec is not None:
        flags += ["--speculative-config", json.dumps(SPEC_SETS[spec][family][1](rng, model))]
    weights = models[model] / (tp * pp)
    tag = "".join(f"{t}-" for t in (spec, only_gpu) if t)
    return _case(f"{family}-{tag}r{i}", model, gpu, flags, _measured(rng, weights, version))


def curated(family: str, version: str) -> list[dict]:
    rng = random.Random(f"curated-{family}-{version}")
    out = []
    models = FAMILIES[family]
    for model in sorted(models):
        w = models[model]
        tp = 8 if family == "mla" else (4 if w > 120 else 1)
        gpu = "h200" if family == "mla" else "h100"
        base = ["--tensor-parallel-size", str(tp)] if tp > 1 else []
        m = _measured(random.Random(0), w / tp, "0.33.0")
        out.append(_case(f"{model}-defaults", model, gpu, base, m))
        out.append(_case(f"{model}-8k-64seqs", model, gpu, base + ["--max-model-len", "8192", "--max-num-seqs", "64"],
                         m))
        out.append(_case(f"{model}-fp8kv", model, gpu, base + ["--kv-cache-dtype", "fp8", "--max-model-len", "32768"],
                         m))
        out.append(_case(f"{model}-auto-len", model, gpu, base + ["--max-model-len", "-1",
                                                                  "--gpu-memory-utilization", "0.6"], m))
        out.append(_case(f"{model}-too-long", model, gpu, base + ["--gpu-memory-utilization", "0.3"], m))
        out.append(_case(f"{model}-eager", model, gpu, base + ["--enforce-eager", "--max-model-len", "16384"], m))
        out.append(_case(f"{model}-kvbytes", model, gpu, base + ["--kv-cache-memory-bytes", str(8 << 30)], m))
        out.append(_case(f"{model}-override", model, gpu, base + ["--num-gpu-blocks-override", "1000"], m))
        if model in MTP_MODELS:
            out.append(_case(f"{model}-mtp3", model, gpu, base + [
                "--max-model-len", "65536", "--max-num-seqs", "32", "--speculative-config",
                json.dumps({"method": "mtp", "num_speculative_tokens": 3})], m))
        if version == "0.34.0":
            m2 = dict(m, cudagraph_actual_gib=0.7, warmup_peak_gib=3.1, torch_reserve_growth_gib=0.4)
            out.append(_case(f"{model}-measured-warmup", model, gpu, base + ["--max-model-len", "32768"], m2))
            out.append(_case(f"{model}-novmm", model, gpu, base + ["--max-model-len", "32768"], dict(m, vmm="no")))
    del rng
    return out


def cases(family: str, version: str, seed: int | None, count: int, gpu: str | None = None,
          spec: str | None = None) -> list[dict]:
    """The curated set, or ``count`` seeded random launches (on ``gpu`` only when given: a per-GPU set; each with
    the ``spec`` set's drafter when given)."""
    if seed is None:
        return curated(family, version)
    rng = random.Random(f"{family}-{version}-{seed}" + "".join(f"-{t}" for t in (gpu, spec) if t))
    return [random_case(rng, family, version, i, gpu, spec) for i in range(count)]


def _draft_dirs(case: dict, workdir: str) -> dict:
    """The case as the oracle takes it: a drafter named in --speculative-config's "model" becomes a directory
    holding its config.json (the committed case keeps the name)."""
    flags = list(case["flags"])
    for i, f in enumerate(flags[:-1]):
        if f == "--speculative-config":
            sc = json.loads(flags[i + 1])
            if "model" in sc:
                d = os.path.join(workdir, "drafts", sc["model"])
                os.makedirs(d, exist_ok=True)
                shutil.copyfile(os.path.join(GOLDEN, "configs", f"{sc['model']}.config.json"),
                                os.path.join(d, "config.json"))
                flags[i + 1] = json.dumps(dict(sc, model=d))
    return dict(case, flags=flags)


def run_oracle(version: str, case_list: list[dict], workdir: str) -> list[dict]:
    os.makedirs(workdir, exist_ok=True)
    copy_drafts(case_list)
    path = os.path.join(workdir, "cases.jsonl")
    with open(path, "w") as f:
        for c in case_list:
            f.write(json.dumps(_draft_dirs(c, workdir)) + "\n")
    cmd = ["nice", "-n", "10", oracle_python(version), os.path.join(ORACLE, "oracle.py"), "--batch", path,
           "--summary-only"]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=ORACLE)
    if out.returncode not in (0, 3):
        sys.stderr.write(out.stderr[-3000:])
        raise SystemExit(f"oracle failed: rc {out.returncode}")
    sys.stderr.write(out.stderr.strip().splitlines()[-1] + "\n" if out.stderr.strip() else "")
    return [json.loads(line) for line in out.stdout.splitlines() if line.strip()]


def copy_configs(models) -> None:
    dst = os.path.join(GOLDEN, "configs")
    os.makedirs(dst, exist_ok=True)
    for m in models:
        shutil.copyfile(os.path.join(ORACLE, "models", m, "config.json"), os.path.join(dst, f"{m}.config.json"))


def copy_drafts(case_list) -> None:
    """The drafters the cases name, copied from the shared models to configs/<name>.config.json."""
    dst = os.path.join(GOLDEN, "configs")
    for name in sorted({n for m, n in EAGLE3_DRAFTS.items() if any(n in " ".join(c["flags"]) for c in case_list)}):
        shutil.copyfile(os.path.join(SHARED_MODELS, f"sgl-project-SpecForge__{name}.config.json"),
                        os.path.join(dst, f"{name}.config.json"))


def regen(version: str, family: str, seed: int, count: int, gpu: str | None = None, spec: str | None = None) -> None:
    """Both sets of a family; with ``gpu`` / ``spec``, only a random set on that GPU / with that drafter, written
    as ``<spec>-<gpu>.jsonl``."""
    folder = os.path.join(GOLDEN, version, family)
    os.makedirs(folder, exist_ok=True)
    name = "-".join(t for t in (spec, gpu) if t)
    sets = (((name, cases(family, version, seed, count, gpu, spec)),) if name else
            (("cases", cases(family, version, None, 0)), ("random", cases(family, version, seed, count))))
    for name, cl in sets:
        res = run_oracle(version, cl, f"/tmp/vkv-oracle-{version}-{family}-{name}")
        copy_configs(sorted({c["model"] for c in cl}))
        with open(os.path.join(folder, f"{name}.jsonl"), "w") as f:
            for c in cl:
                f.write(json.dumps(c) + "\n")
        with open(os.path.join(folder, f"{name}_results.jsonl"), "w") as f:
            for r in res:
                f.write(json.dumps({"id": r["id"], "summary": r["summary"]}) + "\n")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("cases")
    a.add_argument("--family", required=True, choices=sorted(FAMILIES))
    a.add_argument("--version", default="0.34.0")
    a.add_argument("--curated", action="store_true")
    a.add_argument("--seed", type=int, default=1)
    a.add_argument("--count", type=int, default=20)
    a.add_argument("--out", default="-")
    b = sub.add_parser("regen")
    b.add_argument("--family", required=True, choices=sorted(FAMILIES))
    b.add_argument("--version", required=True)
    b.add_argument("--seed", type=int, default=1)
    b.add_argument("--count", type=int, default=20)
    b.add_argument("--gpu", choices=sorted(GPUS), help="only a random set on this GPU, as <gpu>.jsonl")
    b.add_argument("--spec", choices=sorted(SPEC_SETS), help="only a random set with this drafter")
    ns = ap.parse_args(argv)
    if ns.cmd == "cases":
        cl = cases(ns.family, ns.version, None if ns.curated else ns.seed, ns.count)
        f = sys.stdout if ns.out == "-" else open(ns.out, "w")
        for c in cl:
            f.write(json.dumps(c) + "\n")
    else:
        regen(ns.version, ns.family, ns.seed, ns.count, ns.gpu, ns.spec)


if __name__ == "__main__":
    main()
