#!/usr/bin/env python3
"""Golden cases for MLA models (DeepSeek-V3 / R1, Kimi-K2) and DeepSeek-V3.2's DSA indexer, made by each SGLang
release's own code (the oracle).

    # write case lines only (deterministic)
    mla_cases.py cases --version 0.5.23 --curated --out /tmp/x.jsonl
    mla_cases.py cases --version 0.5.23 --seed 1 --count 40 --out /tmp/y.jsonl

    # regenerate tests/golden/mla/sglang-<version>/ (cases, results, random, random_results, dropped)
    mla_cases.py regen --version 0.5.23 [--py ~/.cache/sglang-oracle/0.5.23/venv/bin/python]
                       [--oracle /work/shared/tools/sglang-oracle] [--seed 1] [--count 40]

0.5.11 / 0.5.16 / 0.5.23 run through the shared oracle; the other releases through the repository's adapters
(``bash scripts/oracle/oracle_copy.sh /tmp/oracle-mla``).

Models: the catalog's block-FP8 DeepSeek-V3, Kimi-K2-Instruct and DeepSeek-V3.2 configs, and DeepSeek-V3's config
without its quantization_config (a bf16 test input, tests/golden/mla/configs/). Free memory: make_cases.Builder's
model (free_after = free_before - weights / tp - overhead) where the checkpoint fits the GPUs; where it does not
(H100 / A100 / RTX PRO 6000 and small TP: these checkpoints are 641-958 GiB) free_after is given as a measured value
would be, a fraction of the GPU, so that SGLang's MLA defaults and pools on SM80 / SM90 / SM120 are exercised: those
cases check the sizing from free memory, not that the weights fit. Kimi-K2's config carries an ``auto_map`` to remote
code: SGLang 0.5.9-0.5.11 reject it without the checkpoint's .py files (kept: the planner refuses it there by name).
Flags are spelled the same in 0.5.11, 0.5.16 and 0.5.23. Speculative decoding: NEXTN / EAGLE on the checkpoint's own
MTP layer (DeepSeek-V3, V3.2; not Kimi-K2, whose config has none; not on NO_NEXTN's releases).
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
CONFIGS = os.path.join(REPO, "planner", "catalog", "configs")
GOLDEN = os.path.join(REPO, "tests", "golden", "mla")
SHARED_ORACLE = "/work/shared/tools/sglang-oracle"
ADAPTED_ORACLE = "/tmp/oracle-mla"  # bash scripts/oracle/oracle_copy.sh /tmp/oracle-mla (0.5.9's adapter)
SHARED_RELEASES = ("0.5.11", "0.5.16", "0.5.23")
RELEASES = tuple(f"0.5.{n}" for n in range(9, 24))  # every release 0.5.9-0.5.23
# releases where the oracle's draft worker cannot build DeepseekV3ForCausalLMNextN (its model registry stand-in):
# no NEXTN cases there, and the planner refuses NEXTN on MLA there by name
NO_NEXTN = ("0.5.15", "0.5.20", "0.5.21")

BF16 = "../configs/deepseek-ai__DeepSeek-V3.bf16-test.config.json"
# catalog id (or a test-input path relative to the cases file) -> (config file under CONFIGS, weights GiB as loaded:
# the planner's block-FP8 tensor model without the MTP layer; bf16: 671B parameters x 2 B)
MODELS = {
    "deepseek-v3": ("deepseek-ai__DeepSeek-V3.config.json", 627.0),
    "kimi-k2-instruct": ("moonshotai__Kimi-K2-Instruct.config.json", 958.5),
    "deepseek-v3.2": ("deepseek-ai__DeepSeek-V3.2.config.json", 628.0),
    BF16: (os.path.join("..", "..", "..", "tests", "golden", "mla", "configs",
                        "deepseek-ai__DeepSeek-V3.bf16-test.config.json"), 1250.0),
}
GPUS = ("h100-sxm", "h200", "b200", "a100-80gb", "rtxpro6000")
TP = (1, 2, 4, 8)


def _install_models():
    mc.MODELS.clear()
    mc.MODELS.update(MODELS)


def _free(gpu, model, tp, slack, overhead, frac):
    """(free_before, free_after): the weights' share where it fits, else a measured-like fraction of the GPU."""
    fb = mc.total_gib(gpu) - slack
    w = MODELS[model][1] / tp
    if w < fb - 4.0:
        return fb, fb - w - overhead
    return fb, round(fb * frac, 2)


class Cases:
    def __init__(self, out_path, version=""):
        _install_models()
        self.b = mc.Builder(out_path, CONFIGS)
        self.nextn = version not in NO_NEXTN

    def add(self, cid, gpu, model, flags=(), tp=8, frac=0.25, slack=None, overhead=0.35, **kw):
        slack = (0.9 if tp == 1 else 1.4) if slack is None else slack
        if "free_after" not in kw:
            fb, fa = _free(gpu, model, tp, slack, overhead, frac)
            kw.setdefault("free_before", fb)
            kw["free_after"] = fa
        self.b.add(cid, gpu, model, list(flags), tp=tp, **kw)

    @property
    def cases(self):
        return self.b.cases


def curated(c: Cases):
    V3, K2, V32 = "deepseek-v3", "kimi-k2-instruct", "deepseek-v3.2"
    for m, tag in ((V3, "v3"), (K2, "k2"), (V32, "v32")):
        c.add(f"{tag}_h200_tp8", "h200", m)
        c.add(f"{tag}_b200_tp8", "b200", m)
        c.add(f"{tag}_h100_tp8_measured", "h100-sxm", m)
        c.add(f"{tag}_a100_tp8_measured", "a100-80gb", m)
        c.add(f"{tag}_pro6000_tp8_measured", "rtxpro6000", m)
        c.add(f"{tag}_h200_tp8_fp8kv", "h200", m, ["--kv-cache-dtype", "fp8_e4m3"])
        c.add(f"{tag}_b200_tp4_ctx32k", "b200", m, ["--context-length", "32768"], tp=4)
        c.add(f"{tag}_h200_tp8_mrr64", "h200", m, ["--max-running-requests", "64"])
        c.add(f"{tag}_h200_tp8_mfs085", "h200", m, ["--mem-fraction-static", "0.85"])
        c.add(f"{tag}_h200_tp8_nograph", "h200", m, ["--disable-cuda-graph"])
        c.add(f"{tag}_b200_tp8_mtt", "b200", m, ["--max-total-tokens", "200000"])
        c.add(f"{tag}_h200_tp8_no_room", "h200", m, free_before=138.0, free_after=2.0)
    # the MLA backends' page sizes and device checks
    c.add("v3_h200_triton_page16", "h200", V3, ["--attention-backend", "triton", "--page-size", "16"])
    c.add("v3_h200_flashinfer", "h200", V3, ["--attention-backend", "flashinfer"])
    c.add("v3_h200_flashmla", "h200", V3, ["--attention-backend", "flashmla"])
    c.add("v3_b200_cutlass_mla", "b200", V3, ["--attention-backend", "cutlass_mla"])
    c.add("v3_b200_trtllm_page32", "b200", V3, ["--page-size", "32"])
    c.add("v3_h200_trtllm_rejected", "h200", V3, ["--attention-backend", "trtllm_mla"])
    c.add("v3_h200_fp8e5m2", "h200", V3, ["--kv-cache-dtype", "fp8_e5m2"])
    c.add("v3_h200_chunk4096", "h200", V3, ["--chunked-prefill-size", "4096"])
    c.add("v3_h200_ctx_too_long", "h200", V3, ["--context-length", "200000"])
    c.add("v3_h200_radix_off", "h200", V3, ["--disable-radix-cache"])
    c.add("v32_h200_fp8e5m2_rejected", "h200", V32, ["--kv-cache-dtype", "fp8_e5m2"])
    c.add("v32_b200_bf16kv", "b200", V32, ["--kv-cache-dtype", "bfloat16"])
    # NEXTN / EAGLE on the checkpoint's own MTP layer (DeepseekV3ForCausalLMNextN): the draft's one-layer MLA pool
    nextn = ["--speculative-algorithm", "NEXTN"]
    eagle = ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "2", "--speculative-eagle-topk", "4",
             "--speculative-num-draft-tokens", "8"]
    if c.nextn:
        c.add("v3_h200_nextn", "h200", V3, nextn)
        c.add("v3_b200_nextn", "b200", V3, nextn)
        c.add("v3_h100_nextn_measured", "h100-sxm", V3, nextn)
        c.add("v3_h200_eagle_topk4", "h200", V3, eagle)
        c.add("v3_b200_eagle_topk4_rejected", "b200", V3, eagle)
        c.add("v3_h200_nextn_fp8kv_mrr16", "h200", V3, nextn + ["--kv-cache-dtype", "fp8_e4m3",
                                                                "--max-running-requests", "16"])
        c.add("v32_h200_nextn", "h200", V32, nextn)
        c.add("v32_b200_nextn", "b200", V32, nextn)
    # bf16 DeepSeek-V3 (test input): two H200 / B200 nodes' worth of weights, so free memory is given
    c.add("v3bf16_b200_tp8", "b200", BF16)
    c.add("v3bf16_h200_tp8_measured", "h200", BF16, frac=0.3)


def random_cases(c: Cases, seed: int, count: int):
    rng = random.Random(seed)
    names = sorted(MODELS)
    for i in range(count):
        model, gpu, tp = rng.choice(names), rng.choice(GPUS), rng.choice(TP)
        flags: list[str] = []
        if rng.random() < 0.3:
            flags += ["--kv-cache-dtype", rng.choice(["fp8_e4m3", "fp8_e5m2", "auto", "bfloat16"])]
        if rng.random() < 0.35:
            flags += ["--context-length", str(rng.choice([2048, 4096, 16384, 32768, 65536, 131072, 163840]))]
        if rng.random() < 0.2:
            flags += ["--mem-fraction-static", str(rng.choice([0.6, 0.75, 0.85, 0.9]))]
        if rng.random() < 0.2:
            flags += ["--max-running-requests", str(rng.choice([1, 8, 32, 128, 512]))]
        if rng.random() < 0.15:
            flags += ["--chunked-prefill-size", str(rng.choice([1024, 4096, 8192, 16384]))]
        if rng.random() < 0.1:
            flags += ["--max-total-tokens", str(rng.choice([50000, 200000]))]
        if rng.random() < 0.15:
            flags += ["--page-size", str(rng.choice([1, 16, 32, 64]))]
        if rng.random() < 0.15 and "v3.2" not in model:
            flags += ["--attention-backend", rng.choice(["triton", "flashinfer", "fa3", "flashmla", "cutlass_mla",
                                                         "trtllm_mla"])]
        if rng.random() < 0.1:
            flags += ["--disable-radix-cache"]
        if rng.random() < 0.1:
            flags += ["--disable-cuda-graph"]
        if rng.random() < 0.3 and "kimi" not in model and c.nextn:  # Kimi-K2 has no MTP layer (nextn layers 0)
            flags += rng.choice([["--speculative-algorithm", "NEXTN"],
                                 ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", str(rng.choice([1, 2, 3])),
                                  "--speculative-eagle-topk", str(rng.choice([1, 1, 2])),
                                  "--speculative-num-draft-tokens", str(rng.choice([2, 4, 6]))]])
        c.add(f"r{seed}_{i:03d}", gpu, model, flags, tp=tp, slack=rng.choice([0.6, 0.9, 1.4, 2.0]),
              overhead=rng.choice([0.2, 0.35, 0.8, 3.0]), frac=rng.choice([0.1, 0.2, 0.35, 0.5]))


def build(version, mode, out_path, seed=1, count=40):
    c = Cases(out_path, version)
    curated(c) if mode == "curated" else random_cases(c, seed, count)
    return c.cases


def regen(a):
    out = os.path.join(GOLDEN, f"sglang-{a.version}")
    os.makedirs(out, exist_ok=True)
    py = a.py or os.path.expanduser(f"~/.cache/sglang-oracle/{a.version}/venv/bin/python")
    oracle = a.oracle or (SHARED_ORACLE if a.version in SHARED_RELEASES else ADAPTED_ORACLE)
    dropped_all = []
    for tag, mode, cases_fn, results_fn in (("curated", "curated", "cases", "results"),
                                            ("random", "random", "random", "random_results")):
        cases = build(a.version, mode, os.path.join(out, cases_fn + ".jsonl"), a.seed, a.count)
        results = mcv.run_isolated(py, oracle, cases, out, 1, tag)
        kc, kr, dropped = mcv.filter_results(cases, results)
        for r in kr:
            r.pop("elapsed_s", None)
        mcv.write_jsonl(os.path.join(out, cases_fn + ".jsonl"), kc)
        mcv.write_jsonl(os.path.join(out, results_fn + ".jsonl"), kr)
        for d in dropped:
            d["set"] = tag
        dropped_all += dropped
        cnt = collections.Counter(r["summary"]["outcome"] for r in kr)
        print(f"[{tag}] kept {len(kc)} of {len(cases)}: {dict(sorted(cnt.items()))}; dropped "
              f"{[d['id'] for d in dropped]}", file=sys.stderr)
    mcv.write_jsonl(os.path.join(out, "dropped.jsonl"), dropped_all)
    print(f"regen: SGLang {a.version} via {oracle} -> {out}", file=sys.stderr)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    pc = sub.add_parser("cases", help="write case lines only")
    pc.add_argument("--version", required=True)
    pc.add_argument("--curated", action="store_true")
    pc.add_argument("--seed", type=int, default=1)
    pc.add_argument("--count", type=int, default=40)
    pc.add_argument("--out", required=True)
    pr = sub.add_parser("regen", help="write cases, run the oracle, filter, write tests/golden/mla/sglang-<v>/")
    pr.add_argument("--version", required=True)
    pr.add_argument("--py", default=None)
    pr.add_argument("--oracle", default=None)
    pr.add_argument("--seed", type=int, default=1)
    pr.add_argument("--count", type=int, default=40)
    a = p.parse_args(argv)
    if a.cmd == "regen":
        regen(a)
        return
    cases = build(a.version, "curated" if a.curated else "random", a.out, a.seed, a.count)
    mcv.write_jsonl(a.out, cases)
    print(f"mla_cases: wrote {len(cases)} cases to {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
