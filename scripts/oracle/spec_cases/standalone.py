#!/usr/bin/env python3
"""STANDALONE speculative decoding launches for the oracle: a full separate draft model (a smaller model of the
same vocabulary, e.g. Qwen3-8B drafting Qwen3-32B, Qwen3.5-9B drafting Qwen3.6-27B) given by
--speculative-draft-model-path drafts/<name> (a copy of the planner catalog's config.json).

    # write the committed cases of every release with an oracle venv (curated + random, deterministic)
    python3 scripts/oracle/spec_cases/standalone.py cases
    # ... and run the oracle on them (results.jsonl next to each cases.jsonl)
    python3 scripts/oracle/spec_cases/standalone.py regen [--versions 0.5.9 0.5.16] [--oracle /tmp/oracle-x]

    # fresh random launches (scripts/oracle/agree.py --algorithm STANDALONE uses this module)
    random_cases(version, seed, count) -> (cases, folder)

Every path in a case line (config_json, drafts/<name>) is relative to tests/golden/spec/standalone/, where the
oracle runs (its working directory). free_after_gib follows each release's load order: up to 0.5.13 the
pools are sized after the target's weights only; 0.5.14+ builds the draft worker first, so the draft's
weights are gone too (managers/scheduler.py:846-853 @0.5.16). Weight bytes are the planner catalog's exact
safetensors totals (planner/catalog/catalog.toml).
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
REPO = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, REPO)
from filter_results import drop_reason, split_kept  # noqa: E402
import make_cases as mc  # noqa: E402  (GPUS table)

FOLDER = os.path.join(REPO, "tests", "golden", "spec", "standalone")
CONFIGS = os.path.join(REPO, "planner", "catalog", "configs")
# releases with an oracle venv (~/.cache/sglang-oracle/<v>/venv); the rule ranges they stand for are in README.md
VERSIONS = ("0.5.9", "0.5.11", "0.5.14", "0.5.16", "0.5.21", "0.5.23")
GPUS = dict(mc.GPUS)

# catalog id -> config file (planner/catalog/configs)
CFG = {
    "qwen3-32b": "Qwen__Qwen3-32B.config.json",
    "qwen3-8b": "Qwen__Qwen3-8B.config.json",
    "llama-3.3-70b-instruct": "meta-llama__Llama-3.3-70B-Instruct.config.json",
    "llama-3.1-8b-instruct": "meta-llama__Llama-3.1-8B-Instruct.config.json",
    "qwen3.6-27b": "Qwen__Qwen3.6-27B.config.json",
    "qwen3.5-27b": "Qwen__Qwen3.5-27B.config.json",
    "qwen3.5-9b": "Qwen__Qwen3.5-9B.config.json",
    "qwen3.6-35b-a3b": "Qwen__Qwen3.6-35B-A3B.config.json",
    "qwen3-next-80b-a3b-instruct": "Qwen__Qwen3-Next-80B-A3B-Instruct.config.json",
    "nemotron-h-56b-base-8k": "nvidia__Nemotron-H-56B-Base-8K.config.json",
    "nemotron-3-nano-30b-a3b": "nvidia__NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.config.json",
}
# target -> drafts it is drafted by (same vocabulary; Qwen3-Next / 35B-A3B with a draft of another per-layer KV
# shape: the case where SGLang's layer ratio under-budgets the draft pool)
PAIRS = {
    "qwen3-32b": ("qwen3-8b",),
    "llama-3.3-70b-instruct": ("llama-3.1-8b-instruct",),
    "qwen3.6-27b": ("qwen3.5-9b",),
    "qwen3.5-27b": ("qwen3.5-9b",),
    "qwen3.6-35b-a3b": ("qwen3.5-9b",),
    "qwen3-next-80b-a3b-instruct": ("qwen3-8b",),
    "nemotron-h-56b-base-8k": ("nemotron-3-nano-30b-a3b",),
}
DRAFTS = sorted({d for ds in PAIRS.values() for d in ds})


def _v(version):
    return tuple(int(x) for x in version.split("."))


def weight_gib(model):
    """Exact checkpoint bytes from the planner catalog (safetensors totals), in GiB."""
    from planner.catalog.catalog import resolve_model  # noqa: PLC0415

    return resolve_model(model).weight_bytes / 2**30


def write_drafts():
    for name in DRAFTS:
        d = os.path.join(FOLDER, "drafts", name)
        os.makedirs(d, exist_ok=True)
        shutil.copyfile(os.path.join(CONFIGS, CFG[name]), os.path.join(d, "config.json"))


def _case(version, cid, gpu, target, draft, flags, tp, free_before, overhead, env=None, free_after=None):
    flags = ["--speculative-algorithm", "STANDALONE", *(["--speculative-draft-model-path", f"drafts/{draft}"] if draft
                                                        else []), *[str(f) for f in flags]]
    if tp != 1:
        flags += ["--tp-size", str(tp)]
    if free_after is None:
        w = weight_gib(target) + (weight_gib(draft or target) if _v(version) >= (0, 5, 14) else 0.0)
        free_after = free_before - w / tp - overhead
    total, sm, name = GPUS[gpu]
    return {"id": cid, "gpu": gpu, "gpu_total_mib": total, "gpu_sm": sm, "gpu_name": name,
            "planner_model": target, "config_json": os.path.relpath(os.path.join(CONFIGS, CFG[target]), FOLDER),
            "flags": flags, "free_before_gib": round(float(free_before), 2),
            "free_after_gib": round(float(free_after), 2), "env": dict(env or {})}


def _derived_ctx(model):
    from planner.catalog.catalog import resolve_model  # noqa: PLC0415

    return resolve_model(model).spec.derived_context_len


def adapter_skips_draft_context(version):
    """The adapters this repository runs 0.5.14-0.5.15 (v0_5_14.py) and 0.5.17-0.5.23 (v0_5_19.py) with build
    the draft's ModelConfig without the target's context length, which SGLang's STANDALONE worker passes
    (speculative/standalone_worker_v2.py:181 @0.5.14, :80-87 @0.5.18, :93 @0.5.23): for those releases a draft
    whose context is shorter than the target's is not drawn (the oracle would say ok where SGLang raises)."""
    v = _v(version)
    return (0, 5, 14) <= v <= (0, 5, 15) or v >= (0, 5, 17)


def _draft_context_short(target, draft, flags):
    ctx = next((int(flags[i + 1]) for i, f in enumerate(flags[:-1]) if f == "--context-length"), None)
    return (ctx if ctx is not None else _derived_ctx(target)) > _derived_ctx(draft)


def _strat_flag(version):
    return "--mamba-radix-cache-strategy" if _v(version) >= (0, 5, 14) else "--mamba-scheduler-strategy"


def _graph_flag(version):
    return "--cuda-graph-max-bs-decode" if _v(version) >= (0, 5, 14) else "--cuda-graph-max-bs"


def _hybrid(model):
    return model.startswith(("qwen3.5", "qwen3.6", "qwen3-next", "nemotron"))


def curated(version):
    """Fixed launches: the typical user cases, the defaults, the rejections, the per-layer-KV mismatch."""
    c = []
    s = _strat_flag(version)

    def add(cid, gpu, target, draft, flags=(), tp=1, slack=0.9, overhead=0.35, **kw):
        c.append(_case(version, cid, gpu, target, draft, flags, tp, GPUS[gpu][0] / 1024 - slack, overhead, **kw))

    # defaults: (3, 1, 4) for STANDALONE whatever the target's architecture (also Llama), 48 running requests
    add("dense_qwen3_32b_8b_h200_defaults", "h200", "qwen3-32b", "qwen3-8b")
    add("dense_qwen3_32b_8b_h100_tp2", "h100-sxm", "qwen3-32b", "qwen3-8b", tp=2, slack=1.4)
    add("dense_llama70b_8b_h200_tp2_defaults", "h200", "llama-3.3-70b-instruct", "llama-3.1-8b-instruct", tp=2,
        slack=1.4)
    add("dense_llama70b_8b_b200_steps5_topk1", "b200", "llama-3.3-70b-instruct", "llama-3.1-8b-instruct",
        ["--speculative-num-steps", 5, "--speculative-eagle-topk", 1, "--speculative-num-draft-tokens", 6], tp=1)
    add("dense_qwen3_32b_8b_h200_topk4", "h200", "qwen3-32b", "qwen3-8b",
        ["--speculative-num-steps", 3, "--speculative-eagle-topk", 4, "--speculative-num-draft-tokens", 8])
    add("dense_qwen3_32b_8b_h200_mrr8", "h200", "qwen3-32b", "qwen3-8b", ["--max-running-requests", 8])
    add("dense_qwen3_32b_8b_h200_mfs085", "h200", "qwen3-32b", "qwen3-8b", ["--mem-fraction-static", 0.85])
    add("dense_qwen3_32b_8b_rtxpro_kvfp8", "rtxpro6000", "qwen3-32b", "qwen3-8b", ["--kv-cache-dtype", "fp8_e4m3"])
    add("dense_qwen3_32b_8b_h100_oom", "h100-sxm", "qwen3-32b", "qwen3-8b")  # 61 + 15 GiB on 80 GB
    add("dense_qwen3_32b_8b_h200_steps_only", "h200", "qwen3-32b", "qwen3-8b", ["--speculative-num-steps", 3])
    add("dense_qwen3_32b_8b_h200_page16_topk2", "h200", "qwen3-32b", "qwen3-8b",
        ["--speculative-num-steps", 2, "--speculative-eagle-topk", 2, "--speculative-num-draft-tokens", 4,
         "--page-size", 16])
    add("dense_qwen3_32b_8b_h200_nocg", "h200", "qwen3-32b", "qwen3-8b", ["--disable-cuda-graph"])
    add("dense_qwen3_32b_8b_h200_cgbs64", "h200", "qwen3-32b", "qwen3-8b", [_graph_flag(version), 64])
    # DP attention: SGLang's own ValueError for STANDALONE
    add("reject_dp_attention", "h200", "qwen3-32b", "qwen3-8b", ["--enable-dp-attention", "--dp-size", 2], tp=2,
        slack=1.4)
    # hybrid targets, hybrid draft (the user's case: Qwen3.5-9B drafting Qwen3.6-27B / Qwen3.5-27B)
    add("hybrid_36_27b_9b_rtxpro_defaults", "rtxpro6000", "qwen3.6-27b", "qwen3.5-9b")
    add("hybrid_36_27b_9b_rtxpro_extra_buffer", "rtxpro6000", "qwen3.6-27b", "qwen3.5-9b", [s, "extra_buffer"])
    add("hybrid_36_27b_9b_rtxpro_no_buffer", "rtxpro6000", "qwen3.6-27b", "qwen3.5-9b",
        [s, "no_buffer", "--disable-overlap-schedule"])
    add("hybrid_36_27b_9b_h200_mrr16", "h200", "qwen3.6-27b", "qwen3.5-9b", ["--max-running-requests", 16])
    add("hybrid_36_27b_9b_h100_tp2_steps2", "h100-sxm", "qwen3.6-27b", "qwen3.5-9b",
        ["--speculative-num-steps", 2, "--speculative-eagle-topk", 1, "--speculative-num-draft-tokens", 3], tp=2,
        slack=1.4)
    add("hybrid_35_27b_9b_rtxpro_ctx32k", "rtxpro6000", "qwen3.5-27b", "qwen3.5-9b", ["--context-length", 32768])
    add("hybrid_35_27b_9b_rtxpro_mmcs", "rtxpro6000", "qwen3.5-27b", "qwen3.5-9b",
        ["--max-mamba-cache-size", 64, "--mamba-full-memory-ratio", 0.5])
    add("hybrid_35_27b_9b_rtx5090_tp4", "rtx5090", "qwen3.5-27b", "qwen3.5-9b", tp=4, slack=1.4)
    add("hybrid_36_27b_9b_rtxpro_noradix_mrr8", "rtxpro6000", "qwen3.6-27b", "qwen3.5-9b",
        ["--disable-radix-cache", "--max-running-requests", 8])
    add("hybrid_36_27b_9b_rtxpro_tight", "rtxpro6000", "qwen3.6-27b", "qwen3.5-9b", free_after=2.0)
    # per-layer KV of the draft differs from the target's (2 KV heads of 256 vs 4 x 256 / 8 x 128)
    add("mismatch_36_35b_a3b_9b_h200", "h200", "qwen3.6-35b-a3b", "qwen3.5-9b")
    add("mismatch_36_35b_a3b_9b_rtxpro_tp2", "rtxpro6000", "qwen3.6-35b-a3b", "qwen3.5-9b", tp=2, slack=1.4)
    add("mismatch_next80b_8b_h200_tp2_ctx32k", "h200", "qwen3-next-80b-a3b-instruct", "qwen3-8b",
        ["--context-length", 32768], tp=2, slack=1.4)
    # the draft's max_position_embeddings (40960) is shorter than the target's context (262144)
    if not adapter_skips_draft_context(version):
        add("reject_next80b_8b_draft_context", "h200", "qwen3-next-80b-a3b-instruct", "qwen3-8b", tp=2, slack=1.4)
    # no draft path: the draft worker's ModelConfig falls back to the target's own path
    add("pathless_qwen3_32b_b200_self_draft", "b200", "qwen3-32b", None)
    # (SGLang loads the hybrid target's MTP head as the draft: 4.24 GiB from 0.5.14, not the checkpoint again)
    add("pathless_36_27b_rtxpro_mtp_head", "rtxpro6000", "qwen3.6-27b", None,
        free_after=GPUS["rtxpro6000"][0] / 1024 - 0.9 - weight_gib("qwen3.6-27b") - 0.35
        - (4.24 if _v(version) >= (0, 5, 14) else 0.0))
    add("mamba2_nemotron56b_nano_h200_tp2", "h200", "nemotron-h-56b-base-8k", "nemotron-3-nano-30b-a3b", tp=2,
        slack=1.4)
    return c


def random_cases(version, seed, count):
    """Fresh random STANDALONE launches for one release: (cases, folder their paths are relative to)."""
    rng = random.Random(f"standalone-{version}-{seed}")
    gpus = sorted(GPUS)
    targets = sorted(PAIRS)
    s, g = _strat_flag(version), _graph_flag(version)
    out, n, tries = [], 0, 0
    while n < count and tries < count * 200:
        tries += 1
        gpu, target = rng.choice(gpus), rng.choice(targets)
        draft = rng.choice(PAIRS[target])
        tgib = GPUS[gpu][0] / 1024
        need = weight_gib(target) + weight_gib(draft)
        tps = [tp for tp in (1, 2, 4, 8) if tgib - 1.5 - need / tp >= 2.0]
        if not tps:
            continue
        tp = tps[0] if rng.random() < 0.7 or len(tps) == 1 else tps[1]
        flags, tags = [], []
        shape = rng.choices(["auto", "chain", "topk", "steps_only"], [35, 40, 20, 5])[0]
        if shape == "chain":
            st = rng.choice([1, 2, 3, 4, 5])
            flags += ["--speculative-num-steps", st, "--speculative-eagle-topk", 1,
                      "--speculative-num-draft-tokens", rng.choice([st + 1, st + 1, 8])]
        elif shape == "topk":
            flags += ["--speculative-num-steps", rng.choice([2, 3, 4]), "--speculative-eagle-topk",
                      rng.choice([2, 4, 8]), "--speculative-num-draft-tokens", rng.choice([4, 8, 16])]
        elif shape == "steps_only":
            flags += ["--speculative-num-steps", rng.choice([2, 3])]
        tags.append(shape)
        if _hybrid(target):
            strat = rng.choices([None, "auto", "no_buffer", "extra_buffer"] +
                                (["extra_buffer_lazy"] if _v(version) >= (0, 5, 13) else []),
                                [35, 10, 20, 25] + ([10] if _v(version) >= (0, 5, 13) else []))[0]
            if strat:
                flags += [s, strat]
                tags.append(strat)
            if rng.random() < (0.8 if strat == "no_buffer" else 0.1):
                flags += ["--disable-overlap-schedule"]
                tags.append("nooverlap")
            if rng.random() < 0.15:
                flags += ["--max-mamba-cache-size", rng.choice([8, 16, 48, 128])]
                tags.append("mmcs")
            if rng.random() < 0.15:
                flags += ["--mamba-full-memory-ratio", rng.choice([0.3, 0.5, 0.9, 2.0])]
                tags.append("ratio")
        if rng.random() < 0.15:
            flags += ["--disable-radix-cache"]
            tags.append("noradix")
        if rng.random() < 0.4:
            flags += ["--max-running-requests", rng.choice([1, 4, 8, 16, 32, 64, 128])]
            tags.append("mrr")
        if rng.random() < 0.15:
            flags += ["--page-size", rng.choice([16, 64])]
            tags.append("page")
        if rng.random() < 0.12:
            flags += ["--kv-cache-dtype", "fp8_e4m3"]
            tags.append("kvfp8")
        if rng.random() < 0.2:
            flags += ["--mem-fraction-static", rng.choice([0.7, 0.8, 0.85, 0.9, 0.93])]
            tags.append("mfs")
        ctx_short = target == "qwen3-next-80b-a3b-instruct" and rng.random() < 0.8
        if ctx_short or rng.random() < 0.1:
            flags += ["--context-length", rng.choice([8192, 32768])]
            tags.append("ctx")
        if rng.random() < 0.05:
            flags += ["--disable-cuda-graph"]
            tags.append("nocg")
        elif rng.random() < 0.12:
            flags += [g, rng.choice([8, 32, 64, 160])]
            tags.append("cgbs")
        if rng.random() < 0.03:
            flags += ["--enable-dp-attention", "--dp-size", 2]
            tp = max(tp, 2)
            tags.append("dpattn")
        if _draft_context_short(target, draft, [str(f) for f in flags]):
            # SGLang's own failure in the draft's ModelConfig: one curated case per release whose adapter has it;
            # random draws stay clear of it (the oracle leaves three target fields null there, see README.md)
            continue
        free_before = tgib - rng.uniform(0.5, 1.5)
        free_after = None
        if rng.random() < 0.08:
            free_after = rng.uniform(0.5, 4.0)
        n += 1
        cid = f"s{seed}_{n:03d}_{gpu}_{target}_{draft}_tp{tp}_" + "_".join(tags)
        out.append(_case(version, cid, gpu, target, draft, flags, tp, free_before, rng.uniform(0.1, 0.6),
                         free_after=free_after))
    return out, FOLDER


def committed_cases(version):
    cases, _ = random_cases(version, 1, 40)
    return curated(version) + cases


def _write(path, rows):
    with open(path, "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=("cases", "regen"))
    ap.add_argument("--versions", nargs="*", default=list(VERSIONS))
    ap.add_argument("--oracle", default="/tmp/sglang-oracle-adapted",
                    help="a copy made by scripts/oracle/oracle_copy.sh")
    a = ap.parse_args(argv)
    write_drafts()
    for v in a.versions:
        d = os.path.join(FOLDER, f"sglang-{v}")
        os.makedirs(d, exist_ok=True)
        cases = committed_cases(v)
        if a.mode == "cases":
            _write(os.path.join(d, "cases.jsonl"), cases)
            continue
        tmp = os.path.join(FOLDER, f".regen-{v}.jsonl")
        _write(tmp, cases)
        py = os.path.expanduser(f"~/.cache/sglang-oracle/{v}/venv/bin/python")
        try:
            out = subprocess.run(["nice", "-n", "10", py, os.path.join(a.oracle, "oracle.py"), "--batch", tmp,
                                  "--summary-only"], cwd=FOLDER, capture_output=True, text=True, check=False)
        finally:
            os.remove(tmp)
        results = [json.loads(x) for x in out.stdout.splitlines() if x.strip()]
        for r in results:
            r.pop("elapsed_s", None)
        kept_cases, kept_results, dropped = split_kept(cases, results, drop_reason)
        _write(os.path.join(d, "cases.jsonl"), kept_cases)
        _write(os.path.join(d, "results.jsonl"), kept_results)
        _write(os.path.join(d, "dropped.jsonl"), dropped)
        print(f"{v}: {len(kept_cases)} kept, {len(dropped)} dropped; {out.stderr.strip().splitlines()[-1:]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
