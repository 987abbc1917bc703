#!/usr/bin/env python3
"""Golden cases for the hybrid sliding-window (SWA) models, made by each SGLang release's own code (the oracle).

    # write case lines only (deterministic)
    swa_cases.py cases --version 0.5.23 --curated --out /tmp/x.jsonl
    swa_cases.py cases --version 0.5.23 --seed 1 --count 40 --out /tmp/y.jsonl

    # regenerate tests/golden/swa/sglang-<version>/ (cases, results, random, random_results, dropped)
    swa_cases.py regen --version 0.5.23 [--py ~/.cache/sglang-oracle/0.5.23/venv/bin/python]
                       [--oracle /tmp/oracle-swa] [--seed 1] [--count 40]

Models: the catalog's gpt-oss-20b and gpt-oss-120b (GptOssForCausalLM: sliding layers of window 128 with attention
sinks between full-attention layers, MXFP4 experts) and Llama 4 Scout / Maverick (Llama4ForConditionalGeneration:
chunked local attention of 8192 tokens in three of every four layers, a 10M / 1M-token default context, the vision
tower that --enable-multimodal turns on) and Gemma 2 2B (Gemma2ForCausalLM: sliding layers of window 4096 that
SGLang keeps in one plain pool, its hybrid SWA memory turned off). The oracle is the repository's adapter copy
(``bash scripts/oracle/oracle_copy.sh /tmp/oracle-swa``) for every release, 0.5.11 / 0.5.16 / 0.5.23 included: its
0.5.16+ adapters give the empty model the class's own ``get_attention_sliding_window_size`` (gpt-oss: window - 1,
scripts/oracle/adapters/standins.py give_model_sliding_window), which SGLang's loader asks before the config; the
shared oracle's empty model has none, so its validate_swa_pool_size message says 128 where a real server says 127.

The case format, the free-memory model and the oracle runner are make_cases.py's / make_cases_v0516.py's:
free_after = free_before - weights / tp - overhead. Flags are spelled the same in every release 0.5.11-0.5.23.
Not drawn: speculative decoding (refused for these models). --disable-radix-cache with --max-running-requests
(0.5.14+ sizes the SWA pool from the request cap: SWAChunkCapPoolConfigurator, 0.5.23 SWARequestCapPoolConfigurator)
is in the curated set and drawn in the random one (its own random stream per launch).
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
GOLDEN = os.path.join(REPO, "tests", "golden", "swa")
ORACLE = "/tmp/oracle-swa"  # bash scripts/oracle/oracle_copy.sh /tmp/oracle-swa

# catalog id -> (config file under planner/catalog/configs, weights GiB of the whole checkpoint)
MODELS = {
    "gpt-oss-20b": ("openai__gpt-oss-20b.config.json", 12.82),
    "gpt-oss-120b": ("openai__gpt-oss-120b.config.json", 60.77),
    "llama-4-scout-17b-16e-instruct": ("meta-llama__Llama-4-Scout-17B-16E-Instruct.config.json", 202.36),
    "llama-4-maverick-17b-128e-instruct": ("meta-llama__Llama-4-Maverick-17B-128E-Instruct.config.json", 748.0),
    "gemma-2-2b-it": ("google__gemma-2-2b-it.transcribed.config.json", 4.87),
}
GPUS = ("h100-sxm", "h200", "b200", "a100-80gb", "l40s", "rtxpro6000", "rtx5090", "rtx4090")
TP = (1, 2, 4, 8)


def _install_models():
    """make_cases.Builder reads make_cases.MODELS: give it this family's models."""
    mc.MODELS.clear()
    mc.MODELS.update(MODELS)


def curated(b):
    S, B = "gpt-oss-20b", "gpt-oss-120b"
    b.add("oss120_h200_tp8", "h200", B, tp=8)
    b.add("oss120_h200_tp1", "h200", B)
    b.add("oss120_h200_tp2", "h200", B, tp=2)
    b.add("oss120_h100_tp4", "h100-sxm", B, tp=4)
    b.add("oss120_b200_tp2", "b200", B, tp=2)  # SM100: trtllm_mha, page 64
    b.add("oss120_b200_tp8_page16", "b200", B, ["--page-size", "16"], tp=8)
    b.add("oss120_a100_tp4", "a100-80gb", B, tp=4)  # SM80: triton
    b.add("oss120_pro6000", "rtxpro6000", B)  # SM120: triton
    b.add("oss120_h200_tp8_fp8kv", "h200", B, ["--kv-cache-dtype", "fp8_e4m3"], tp=8)
    b.add("oss120_h200_tp8_ratio05", "h200", B, ["--swa-full-tokens-ratio", "0.5"], tp=8)
    b.add("oss120_h200_tp8_ratio1", "h200", B, ["--swa-full-tokens-ratio", "1.0"], tp=8)
    b.add("oss120_h200_tp8_no_hybrid", "h200", B, ["--disable-hybrid-swa-memory"], tp=8)
    b.add("oss120_h200_tp8_ctx32k", "h200", B, ["--context-length", "32768"], tp=8)
    b.add("oss20_h100", "h100-sxm", S)
    b.add("oss20_h100_no_hybrid", "h100-sxm", S, ["--disable-hybrid-swa-memory"])
    b.add("oss20_h100_mtt", "h100-sxm", S, ["--max-total-tokens", "100000"])
    b.add("oss20_h100_page16", "h100-sxm", S, ["--page-size", "16"])
    b.add("oss20_h100_triton", "h100-sxm", S, ["--attention-backend", "triton"])
    b.add("oss20_h100_flashinfer_rejected", "h100-sxm", S, ["--attention-backend", "flashinfer"])
    b.add("oss20_h100_fp8e5m2", "h100-sxm", S, ["--kv-cache-dtype", "fp8_e5m2"])
    b.add("oss20_h100_radix_off", "h100-sxm", S, ["--disable-radix-cache"])
    b.add("oss20_h100_mrr32", "h100-sxm", S, ["--max-running-requests", "32"])
    b.add("oss20_h100_tiny_swa_pool", "h100-sxm", S, ["--swa-full-tokens-ratio", "0.01", "--max-total-tokens", "5000"])
    # validate_swa_pool_size (0.5.16+): SWA 129 > window 127 + page 1 starts (the config's 128 would not);
    # SWA 128 does not
    b.add("oss20_h100_swa_pool_above_floor", "h100-sxm", S,
          ["--swa-full-tokens-ratio", "0.1", "--max-total-tokens", "1290"])
    b.add("oss20_h100_swa_pool_at_floor", "h100-sxm", S,
          ["--swa-full-tokens-ratio", "0.1", "--max-total-tokens", "1280"])
    b.add("oss20_b200", "b200", S)
    b.add("oss20_l40s", "l40s", S)
    b.add("oss20_4090", "rtx4090", S)
    b.add("oss20_5090_ctx16k", "rtx5090", S, ["--context-length", "16384"])
    b.add("oss20_a100_tp2", "a100-80gb", S, tp=2)
    b.add("oss20_h100_tp8", "h100-sxm", S, tp=8)
    b.add("oss20_h100_no_room", "h100-sxm", S, free_before=78.8, free_after=0.5)
    b.add("oss20_h100_mfs06", "h100-sxm", S, ["--mem-fraction-static", "0.6"])
    # 0.5.14+: --disable-radix-cache with --max-running-requests sizes the SWA pool from the request cap
    # (SWAChunkCapPoolConfigurator / SWARequestCapPoolConfigurator); before 0.5.14 the ratio pool as usual
    b.add("oss20_h100_reqcap32", "h100-sxm", S, ["--disable-radix-cache", "--max-running-requests", "32"])
    b.add("oss120_h200_tp8_reqcap256", "h200", B, ["--disable-radix-cache", "--max-running-requests", "256"], tp=8)
    b.add("oss20_b200_reqcap8_page64", "b200", S, ["--disable-radix-cache", "--max-running-requests", "8"])
    b.add("oss20_h100_reqcap_mtt", "h100-sxm", S,
          ["--disable-radix-cache", "--max-running-requests", "16", "--max-total-tokens", "5000"])
    b.add("oss20_h100_reqcap_no_overlap", "h100-sxm", S, ["--disable-radix-cache", "--max-running-requests", "64",
                                                           "--disable-overlap-schedule", "--chunked-prefill-size", "2048"])
    b.add("oss20_h100_reqcap_no_chunking", "h100-sxm", S,
          ["--disable-radix-cache", "--max-running-requests", "32", "--chunked-prefill-size", "-1"])
    b.add("oss20_h100_reqcap0", "h100-sxm", S, ["--disable-radix-cache", "--max-running-requests", "0"])
    b.add("oss20_h100_reqcap_no_room", "h100-sxm", S, ["--disable-radix-cache", "--max-running-requests", "20000"])
    b.add("oss20_h100_reqcap_no_hybrid", "h100-sxm", S, ["--disable-radix-cache", "--max-running-requests", "32",
                                                          "--disable-hybrid-swa-memory"])
    b.add("scout_h200_tp8_reqcap64", "h200", "llama-4-scout-17b-16e-instruct",
          ["--disable-radix-cache", "--max-running-requests", "64", "--context-length", "131072"], tp=8)
    # Llama 4: chunked local attention (chunk 8192) in 3 of every 4 layers, the 10M-token default context
    L, M = "llama-4-scout-17b-16e-instruct", "llama-4-maverick-17b-128e-instruct"
    b.add("scout_h200_tp8", "h200", L, tp=8)
    b.add("scout_h200_tp8_ctx128k", "h200", L, ["--context-length", "131072"], tp=8)
    b.add("scout_h100_tp8_ctx64k", "h100-sxm", L, ["--context-length", "65536"], tp=8)
    b.add("scout_b200_tp2", "b200", L, ["--context-length", "131072"], tp=2)  # SM100: trtllm_mha, page 64
    b.add("scout_b200_tp4", "b200", L, tp=4)
    b.add("scout_a100_tp8_ctx32k", "a100-80gb", L, ["--context-length", "32768"], tp=8)  # triton
    b.add("scout_h200_tp4_fp8kv", "h200", L, ["--kv-cache-dtype", "fp8_e4m3", "--context-length", "131072"], tp=4)
    b.add("scout_h200_tp8_ratio05", "h200", L, ["--swa-full-tokens-ratio", "0.5"], tp=8)
    b.add("scout_h200_tp8_no_hybrid", "h200", L, ["--disable-hybrid-swa-memory", "--context-length", "131072"], tp=8)
    b.add("scout_h200_tp8_multimodal", "h200", L, ["--enable-multimodal", "--context-length", "131072"], tp=8)
    b.add("scout_h200_tp8_flashinfer_rejected", "h200", L, ["--attention-backend", "flashinfer"], tp=8)
    b.add("scout_h200_tp8_mtt_chunk_floor", "h200", L,  # SWA 8192 tokens: at the 0.5.16+ floor (chunk + page)
          ["--swa-full-tokens-ratio", "0.5", "--max-total-tokens", "16384", "--context-length", "8192"], tp=8)
    b.add("scout_h200_tp8_mtt_above_floor", "h200", L,
          ["--swa-full-tokens-ratio", "0.5", "--max-total-tokens", "16388", "--context-length", "8192"], tp=8)
    b.add("maverick_h200_tp8", "h200", M, tp=8)
    b.add("maverick_b200_tp8_ctx128k", "b200", M, ["--context-length", "131072"], tp=8)
    # Gemma 2: sliding layers (window 4096) that SGLang sizes in one plain pool (hybrid SWA memory turned off)
    G = "gemma-2-2b-it"
    b.add("gemma2_h100", "h100-sxm", G)
    b.add("gemma2_b200", "b200", G)  # trtllm_mha, page 64
    b.add("gemma2_a100_tp2", "a100-80gb", G, tp=2)
    b.add("gemma2_4090", "rtx4090", G)
    b.add("gemma2_l40s_fp8kv", "l40s", G, ["--kv-cache-dtype", "fp8_e4m3"])
    b.add("gemma2_h100_no_hybrid_flag", "h100-sxm", G, ["--disable-hybrid-swa-memory"])
    b.add("gemma2_5090_ctx4k_ratio", "rtx5090", G, ["--context-length", "4096", "--swa-full-tokens-ratio", "0.5"])


def random_cases(b, seed: int, count: int):
    rng = random.Random(seed)
    names = sorted(MODELS)
    for i in range(count):
        while True:  # weights that fit the GPUs (free_after > 0)
            model, gpu, tp = rng.choice(names), rng.choice(GPUS), rng.choice(TP)
            if MODELS[model][1] / tp < mc.total_gib(gpu) - 6.0:
                break
        flags: list[str] = []
        if rng.random() < 0.3:
            flags += ["--kv-cache-dtype", rng.choice(["fp8_e4m3", "fp8_e5m2", "auto"])]
        if rng.random() < (0.7 if model.startswith("llama-4") else 0.3):
            flags += ["--context-length", str(rng.choice([2048, 8192, 32768, 65536, 131072]))]
        if model.startswith("llama-4") and rng.random() < 0.2:
            flags += ["--enable-multimodal"]
        if rng.random() < 0.2:
            flags += ["--mem-fraction-static", str(rng.choice([0.6, 0.75, 0.85, 0.9]))]
        radix_off = rng.random() < 0.1
        if radix_off:
            flags += ["--disable-radix-cache"]
            # the request-capped SWA pool (0.5.14+): its own stream, so the other draws of a seed stay as they were
            cap_rng = random.Random(f"reqcap-{seed}-{i}")
            if cap_rng.random() < 0.6:
                flags += ["--max-running-requests", str(cap_rng.choice([1, 8, 32, 128, 512]))]
        elif rng.random() < 0.2:
            flags += ["--max-running-requests", str(rng.choice([1, 8, 32, 128, 512]))]
        if rng.random() < 0.35:
            flags += ["--swa-full-tokens-ratio", str(rng.choice([0.05, 0.1, 0.25, 0.5, 0.8, 1.0]))]
        if rng.random() < 0.1:
            flags += ["--disable-hybrid-swa-memory"]
        if rng.random() < 0.15:
            flags += ["--max-total-tokens", str(rng.choice([2000, 20000, 100000, 500000]))]
        if rng.random() < 0.15:
            flags += ["--page-size", str(rng.choice([1, 16, 32, 64]))]
        if rng.random() < 0.1:
            flags += ["--attention-backend", rng.choice(["triton", "fa3", "flashinfer", "trtllm_mha"])]
        if rng.random() < 0.15:
            flags += ["--chunked-prefill-size", str(rng.choice([1024, 4096, 8192, 16384]))]
        if rng.random() < 0.1:
            flags += ["--disable-cuda-graph"]
        slack = rng.choice([0.6, 0.9, 1.4, 2.0])
        overhead = rng.choice([0.2, 0.35, 0.8, 3.0])
        room = mc.total_gib(gpu) - slack - MODELS[model][1] / tp
        overhead = min(overhead, max(0.05, room - 0.3))
        b.add(f"r{seed}_{i:03d}", gpu, model, flags, tp=tp, slack=slack, overhead=overhead)


def build(version, mode, out_path, seed=1, count=40):
    _install_models()
    b = mc.Builder(out_path, CONFIGS)
    curated(b) if mode == "curated" else random_cases(b, seed, count)
    return b.cases


def regen(a):
    out = os.path.join(GOLDEN, f"sglang-{a.version}")
    os.makedirs(out, exist_ok=True)
    py = a.py or os.path.expanduser(f"~/.cache/sglang-oracle/{a.version}/venv/bin/python")
    oracle = a.oracle or ORACLE
    dropped_all = []
    for tag, mode, cases_fn, results_fn in (("curated", "curated", "cases", "results"),
                                            ("random", "random", "random", "random_results")):
        cases = build(a.version, mode, os.path.join(out, cases_fn + ".jsonl"), a.seed, a.count)
        if tag not in a.sets:
            continue
        if a.only:  # run only the cases whose id starts with one of these; keep the committed lines of the rest
            if mode != "curated":
                continue
            cases = [c for c in cases if c["id"].startswith(tuple(a.only))]
        results = mcv.run_isolated(py, oracle, cases, out, 1, tag)
        kc, kr, dropped = mcv.filter_results(cases, results)
        if a.only:
            kc, kr = _merge(os.path.join(out, cases_fn + ".jsonl"), kc), _merge(os.path.join(out, results_fn + ".jsonl"), kr)
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
    partial = bool(a.only) or len(a.sets) < 2
    if partial and dropped_all:
        dropped_all = _merge(os.path.join(out, "dropped.jsonl"), dropped_all)
    if not partial or dropped_all:
        mcv.write_jsonl(os.path.join(out, "dropped.jsonl"), dropped_all)
    print(f"regen: SGLang {a.version} via {oracle} -> {out}", file=sys.stderr)


def _merge(path, new_lines):
    """The committed lines of ``path`` with ``new_lines`` replacing those of the same id, new ids appended."""
    import json  # noqa: PLC0415

    old = [json.loads(x) for x in open(path)] if os.path.exists(path) else []
    by_id = {x["id"]: x for x in new_lines}
    merged = [by_id.pop(x["id"], x) for x in old]
    return merged + list(by_id.values())


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    pc = sub.add_parser("cases", help="write case lines only")
    pc.add_argument("--version", required=True)
    pc.add_argument("--curated", action="store_true")
    pc.add_argument("--seed", type=int, default=1)
    pc.add_argument("--count", type=int, default=40)
    pc.add_argument("--out", required=True)
    pr = sub.add_parser("regen", help="write cases, run the oracle, filter, write tests/golden/swa/sglang-<v>/")
    pr.add_argument("--version", required=True)
    pr.add_argument("--py", default=None)
    pr.add_argument("--oracle", default=None)
    pr.add_argument("--seed", type=int, default=1)
    pr.add_argument("--count", type=int, default=40)
    pr.add_argument("--only", nargs="+", default=None,
                    help="curated case id prefixes: run these only, merged into the committed set")
    pr.add_argument("--sets", nargs="+", choices=("curated", "random"), default=["curated", "random"],
                    help="which sets to regenerate (the others keep their committed lines)")
    a = p.parse_args(argv)
    if a.cmd == "regen":
        regen(a)
        return
    cases = build(a.version, "curated" if a.curated else "random", a.out, a.seed, a.count)
    mcv.write_jsonl(a.out, cases)
    print(f"swa_cases: wrote {len(cases)} cases to {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
