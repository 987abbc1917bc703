#!/usr/bin/env python3
"""NGRAM launches for the sizing oracle: SGLang's own code decides every number.

NGRAM drafts from a token trie in host memory: no draft model, no draft KV pool. What changes the GPU picture
is the resolution in ``_handle_ngram`` (max_running_requests 48, topk = --speculative-ngram-max-bfs-breadth,
D = --speculative-num-draft-tokens or the release default, 0.5.14+ steps = D // topk, overlap off up to
0.5.13, topk > 1 with page > 1 only on flashinfer) and the mamba speculative intermediates sized for D.
The release ranges where those rules differ: 0.5.9 (D defaults to --speculative-ngram-max-match-window-size),
0.5.10-0.5.13 (D 12, overlap off), 0.5.14+ (overlap kept, steps = D // topk).

    # write the committed cases for one release (tests/golden/spec/ngram/sglang-<ver>/cases.jsonl)
    python3 scripts/oracle/spec_cases/ngram.py cases --version 0.5.9 [--seed 1 --count 40]
    # run the oracle on them and write results.jsonl next to them
    python3 scripts/oracle/spec_cases/ngram.py regen --version 0.5.9 [--py VENV_PY] [--oracle DIR]

``random_cases(version, seed, count)`` is what ``scripts/oracle/agree.py --algorithm NGRAM`` draws from.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ORACLE_DIR = os.path.dirname(HERE)
REPO = os.path.normpath(os.path.join(ORACLE_DIR, "..", ".."))
sys.path.insert(0, ORACLE_DIR)
import make_cases as mc  # noqa: E402  (tables only: GPUS, MODELS, DENSE_MODELS)
from filter_results import split_kept  # noqa: E402
from make_cases_v0516 import drop_reason  # noqa: E402  (oracle errors and the meta / CPU-torch artifacts)

CONFIGS = os.path.join(REPO, "planner", "catalog", "configs")
GOLDEN = os.path.join(REPO, "tests", "golden", "spec", "ngram")

GPUS = dict(mc.GPUS)
HYBRID = sorted(m for m in mc.MODELS if m not in mc.DENSE_MODELS)
DENSE = sorted(mc.DENSE_MODELS)


def _v(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.split("."))


def folder(version: str) -> str:
    return os.path.join(GOLDEN, f"sglang-{version}")


def _spellings(version: str) -> tuple[str, str, list[str]]:
    """(strategy flag, decode graph max-bs flag, strategies) as the release's argparse spells them."""
    new = _v(version) >= (0, 5, 14)
    strat = "--mamba-radix-cache-strategy" if new else "--mamba-scheduler-strategy"
    cgbs = "--cuda-graph-max-bs-decode" if new else "--cuda-graph-max-bs"
    choices = ["auto", "no_buffer", "extra_buffer"] + (["extra_buffer_lazy"] if _v(version) >= (0, 5, 13) else [])
    return strat, cgbs, choices


def _case(version: str, cid: str, gpu: str, model: str, flags: list, tp: int = 1, free_before: float | None = None,
          free_after: float | None = None, slack: float | None = None, overhead: float = 0.35) -> dict:
    """One oracle batch line. NGRAM loads no draft: free after = free before - target weights / tp - overhead."""
    flags = [str(f) for f in flags]
    if tp != 1:
        flags += ["--tp-size", str(tp)]
    total, sm, name = GPUS[gpu]
    if free_before is None:
        free_before = total / 1024.0 - (slack if slack is not None else (0.9 if tp == 1 else 1.4))
    if free_after is None:
        free_after = free_before - mc.MODELS[model][1] / tp - overhead
    return {"id": cid, "gpu": gpu, "gpu_total_mib": total, "gpu_sm": sm, "gpu_name": name, "planner_model": model,
            "config_json": os.path.relpath(os.path.join(CONFIGS, mc.MODELS[model][0]), folder(version)),
            "flags": flags, "free_before_gib": round(float(free_before), 2),
            "free_after_gib": round(float(free_after), 2), "env": {}}


def _fits(model: str, gpu: str, tp: int) -> bool:
    return GPUS[gpu][0] / 1024.0 - 1.5 - mc.MODELS[model][1] / tp >= 2.0


def curated(version: str) -> list[dict]:
    """Named cases for each rule of NGRAM's, in this release's flag spellings."""
    strat, cgbs, strategies = _spellings(version)
    ng = ["--speculative-algorithm", "NGRAM"]
    q = "qwen3.6-27b"
    out = [
        _case(version, "ngram_default_27b_rtxpro", "rtxpro6000", q, ng),
        _case(version, "ngram_default_27b_h200", "h200", q, ng),
        _case(version, "ngram_default_35b_b200", "b200", "qwen3.6-35b-a3b", ng),
        _case(version, "ngram_default_next_tp2_h200", "h200", "qwen3-next-80b-a3b-instruct", ng, tp=2),
        _case(version, "ngram_default_nemotron_h100", "h100-sxm", "nemotron-3-nano-30b-a3b", ng),
        _case(version, "ngram_default_9b_rtx5090", "rtx5090", "qwen3.5-9b", ng),
        _case(version, "ngram_default_qwen3_8b_h100", "h100-sxm", "qwen3-8b", ng),
        _case(version, "ngram_default_llama_l40s", "l40s", "llama-3.1-8b-instruct", ng),
        _case(version, "ngram_d8_27b", "rtxpro6000", q, ng + ["--speculative-num-draft-tokens", 8]),
        _case(version, "ngram_d24_27b_h200", "h200", q, ng + ["--speculative-num-draft-tokens", 24]),
        _case(version, "ngram_breadth1_d4", "rtxpro6000", q, ng + ["--speculative-ngram-max-bfs-breadth", 1,
                                                                     "--speculative-num-draft-tokens", 4]),
        _case(version, "ngram_breadth3_default_d", "rtxpro6000", q, ng + ["--speculative-ngram-max-bfs-breadth", 3]),
        _case(version, "ngram_breadth16_d8", "h200", q, ng + ["--speculative-ngram-max-bfs-breadth", 16,
                                                                "--speculative-num-draft-tokens", 8]),
        _case(version, "ngram_window6", "rtxpro6000", q, ng + ["--speculative-ngram-max-match-window-size", 6]),
        _case(version, "ngram_window20_d5", "h200", q, ng + ["--speculative-ngram-max-match-window-size", 20,
                                                               "--speculative-num-draft-tokens", 5]),
        _case(version, "ngram_steps_given", "rtxpro6000", q, ng + ["--speculative-num-steps", 3]),
        _case(version, "ngram_topk_flag_ignored", "rtxpro6000", q, ng + ["--speculative-eagle-topk", 2,
                                                                          "--speculative-num-draft-tokens", 6]),
        _case(version, "ngram_mrr8", "rtxpro6000", q, ng + ["--max-running-requests", 8]),
        _case(version, "ngram_mrr128_h200", "h200", q, ng + ["--max-running-requests", 128]),
        _case(version, "ngram_no_buffer_nooverlap", "rtxpro6000", q, ng + [strat, "no_buffer", "--disable-overlap-schedule"]),
        _case(version, "ngram_no_buffer", "rtxpro6000", q, ng + [strat, "no_buffer"]),
        _case(version, "ngram_extra_buffer", "rtxpro6000", q, ng + [strat, "extra_buffer"]),
        _case(version, "ngram_noradix", "rtxpro6000", q, ng + ["--disable-radix-cache"]),
        _case(version, "ngram_noradix_mrr16", "rtxpro6000", q, ng + ["--disable-radix-cache", "--max-running-requests", 16]),
        _case(version, "ngram_page16_triton", "rtxpro6000", q, ng + ["--page-size", 16, "--attention-backend", "triton"]),
        _case(version, "ngram_page16_flashinfer", "h200", "qwen3-8b", ng + ["--page-size", 16, "--attention-backend", "flashinfer"]),
        _case(version, "ngram_page16_breadth1", "rtxpro6000", q, ng + ["--page-size", 16, "--speculative-ngram-max-bfs-breadth", 1]),
        _case(version, "ngram_page64_fa3_h100", "h100-sxm", "qwen3-8b", ng + ["--page-size", 64, "--attention-backend", "fa3"]),
        _case(version, "ngram_mfs080", "rtxpro6000", q, ng + ["--mem-fraction-static", 0.8]),
        _case(version, "ngram_cgbs16", "rtxpro6000", q, ng + [cgbs, 16]),
        _case(version, "ngram_disable_graph", "rtxpro6000", q, ng + ["--disable-cuda-graph"]),
        _case(version, "ngram_capacity_1m", "rtxpro6000", q, ng + ["--speculative-ngram-capacity", 1000000]),
        _case(version, "ngram_mmcs32", "rtxpro6000", q, ng + ["--max-mamba-cache-size", 32]),
        _case(version, "ngram_ratio05", "h200", q, ng + ["--mamba-full-memory-ratio", 0.5]),
        _case(version, "ngram_tight_27b", "rtxpro6000", q, ng, free_after=2.0),
        _case(version, "ngram_oom_27b", "rtx5090", "qwen3.5-9b", ng + ["--mem-fraction-static", 0.5]),
        _case(version, "ngram_lower_case", "rtxpro6000", q, ["--speculative-algorithm", "ngram"]),
        _case(version, "ngram_tp4_35b_rtx5090", "rtx5090", "qwen3.6-35b-a3b", ng, tp=4),
        _case(version, "ngram_kv_fp8", "rtxpro6000", q, ng + ["--kv-cache-dtype", "fp8_e4m3"]),
        # the radix cache off: what 0.5.10-0.5.13 need for a hybrid model under speculative decoding
        # (their no_buffer refuses it with the radix cache on)
        _case(version, "ngram_noradix_mrr8_35b", "rtxpro6000", "qwen3.6-35b-a3b", ng + ["--disable-radix-cache",
                                                                                       "--max-running-requests", 8]),
        _case(version, "ngram_noradix_next_tp2", "h200", "qwen3-next-80b-a3b-instruct", ng + ["--disable-radix-cache"], tp=2),
        _case(version, "ngram_noradix_nemotron_mrr32", "h100-sxm", "nemotron-3-nano-30b-a3b",
              ng + ["--disable-radix-cache", "--max-running-requests", 32]),
        _case(version, "ngram_noradix_breadth1_d4", "rtxpro6000", q, ng + ["--disable-radix-cache", "--speculative-ngram-max-bfs-breadth",
                                                                            1, "--speculative-num-draft-tokens", 4]),
        _case(version, "ngram_noradix_d16_mrr4_h200", "h200", q, ng + ["--disable-radix-cache", "--speculative-num-draft-tokens", 16,
                                                                        "--max-running-requests", 4]),
        _case(version, "ngram_noradix_9b_4090", "rtx4090", "qwen3.5-9b", ng + ["--disable-radix-cache", "--max-running-requests", 16]),
        _case(version, "ngram_noradix_27b_tp2_5090", "rtx5090", q, ng + ["--disable-radix-cache", "--max-running-requests", 8], tp=4),
        _case(version, "ngram_noradix_mmcs64", "b200", q, ng + ["--disable-radix-cache", "--max-mamba-cache-size", 64]),
        _case(version, "ngram_extra_buffer_nooverlap_mrr8", "rtxpro6000", q, ng + [strat, "extra_buffer", "--disable-overlap-schedule",
                                                                                    "--max-running-requests", 8]),
        _case(version, "ngram_extra_buffer_mrr16_h200", "h200", "qwen3.6-35b-a3b", ng + [strat, "extra_buffer",
                                                                                          "--max-running-requests", 16]),
        # backends that force a page size: the tree (topk 10) then needs flashinfer
        _case(version, "ngram_trtllm_mha_b200", "b200", q, ng + ["--attention-backend", "trtllm_mha"]),
        _case(version, "ngram_trtllm_mha_breadth1_b200", "b200", q, ng + ["--attention-backend", "trtllm_mha",
                                                                          "--speculative-ngram-max-bfs-breadth", 1]),
        _case(version, "ngram_fa3_h200_dense", "h200", "qwen3-8b", ng + ["--attention-backend", "fa3"]),
        # breadth 0: 0.5.14+'s own D // topk raises; a given --speculative-num-steps skips it
        _case(version, "ngram_breadth0", "rtxpro6000", q, ng + ["--speculative-ngram-max-bfs-breadth", 0,
                                                                  "--disable-radix-cache", "--max-running-requests", 4]),
        _case(version, "ngram_breadth0_steps2", "rtxpro6000", q, ng + ["--speculative-ngram-max-bfs-breadth", 0,
                                                                         "--speculative-num-steps", 2, "--disable-radix-cache",
                                                                         "--max-running-requests", 4]),
    ]
    if "extra_buffer_lazy" in strategies:
        out.append(_case(version, "ngram_extra_buffer_lazy", "rtxpro6000", q, ng + [strat, "extra_buffer_lazy"]))
    return out


def random_cases(version: str, seed: int, count: int) -> tuple[list[dict], str]:
    """Random NGRAM launches in the release's spellings, and the folder their config paths are relative to."""
    strat, cgbs, strategies = _spellings(version)
    rng = random.Random(f"ngram-{version}-{seed}")
    old_d = _v(version) < (0, 5, 10)  # --speculative-ngram-max-match-window-size exists (and is the default D)
    classic = _v(version) < (0, 5, 14)
    models = HYBRID * 3 + DENSE  # mostly hybrid: the mamba intermediates are what D costs
    out: list[dict] = []
    while len(out) < count:
        gpu, model = rng.choice(sorted(GPUS)), rng.choice(models)
        tps = [tp for tp in (1, 2, 4) if _fits(model, gpu, tp)]
        if not tps:
            continue
        tp = tps[0] if rng.random() < 0.75 or len(tps) == 1 else tps[1]
        flags: list = ["--speculative-algorithm", rng.choice(["NGRAM"] * 9 + ["ngram"])]
        if rng.random() < 0.6:
            flags += ["--speculative-num-draft-tokens", rng.choice([2, 3, 4, 6, 8, 12, 16, 24])]
        if rng.random() < 0.5:
            flags += ["--speculative-ngram-max-bfs-breadth", rng.choice([1, 1, 2, 4, 8, 10, 16])]
        if old_d and rng.random() < 0.3:  # 0.5.9 only: the default D
            flags += ["--speculative-ngram-max-match-window-size", rng.choice([4, 8, 16])]
        if not old_d and rng.random() < 0.1:  # trie settings with no GPU effect
            flags += ["--speculative-ngram-max-trie-depth", rng.choice([8, 24])]
        if rng.random() < 0.1:
            flags += ["--speculative-ngram-capacity", rng.choice([100000, 1000000, 50000000])]
        if rng.random() < 0.1:
            flags += ["--speculative-num-steps", rng.choice([1, 2, 5])]
        if rng.random() < (0.6 if classic else 0.4):
            flags += ["--max-running-requests", rng.choice([1, 4, 8, 16, 32, 64, 128])]
        s = rng.choice([None, None] + strategies)
        if s:
            flags += [strat, s]
        # up to 0.5.13 a hybrid target needs the radix cache off (or extra_buffer) under speculative decoding
        if rng.random() < (0.55 if classic and s != "extra_buffer" else 0.15):
            flags += ["--disable-radix-cache"]
        if rng.random() < (0.7 if s == "no_buffer" else 0.15):
            flags += ["--disable-overlap-schedule"]
        if rng.random() < 0.2:
            flags += ["--page-size", rng.choice([16, 64])]
            if rng.random() < 0.6:
                flags += ["--attention-backend", rng.choice(["flashinfer", "triton", "fa3"])]
        if rng.random() < 0.15:
            flags += ["--mem-fraction-static", rng.choice([0.6, 0.75, 0.85, 0.9])]
        if rng.random() < 0.1:
            flags += ["--mamba-full-memory-ratio", rng.choice([0.3, 0.5, 2.0])]
        if rng.random() < 0.1:
            flags += [cgbs, rng.choice([8, 24, 64])]
        if rng.random() < 0.05:
            flags += ["--max-mamba-cache-size", rng.choice([8, 64])]
        slack = rng.uniform(0.5, 1.5)
        overhead = rng.uniform(0.1, 0.6)
        free_after = None
        if rng.random() < 0.08:
            free_after = rng.uniform(0.5, 4.0)
        out.append(_case(version, f"r{seed}_{len(out):03d}", gpu, model, flags, tp=tp, slack=slack,
                         overhead=overhead, free_after=free_after))
    return out, folder(version)


def _write(path: str, rows: list[dict]) -> None:
    with open(path, "w") as f:
        for r in rows:
            f.write(json.dumps(r, sort_keys=True) + "\n")


ADAPTER = {"0.5.11": "the shared oracle's own versions/v0_5_11.py", "0.5.16": "the shared oracle's own versions/v0_5_16.py",
           "0.5.23": "the shared oracle's own versions/v0_5_23.py"}


def write_readme(version: str, seed: int, count: int) -> None:
    """README.md of one release's golden set: the commands that made it, the oracle, the counts."""
    import collections  # noqa: PLC0415

    d = folder(version)
    res = [json.loads(x)["summary"] for x in open(os.path.join(d, "results.jsonl")) if x.strip()]
    dropped = [json.loads(x) for x in open(os.path.join(d, "dropped.jsonl")) if x.strip()]
    outcomes = collections.Counter(r["outcome"] for r in res)
    adapter = ADAPTER.get(version, f"this repository's scripts/oracle/adapters/v0_5_{version.split('.')[-1]}.py "
                                   "(copied in by scripts/oracle/oracle_copy.sh)")
    text = f"""# NGRAM golden cases, SGLang {version}

Made by SGLang {version}'s own code through the sglang-oracle (`/work/shared/tools/sglang-oracle`, adapter: {adapter};
venv `~/.cache/sglang-oracle/{version}/venv`, torch CPU build, simulated GPU):

```bash
bash scripts/oracle/oracle_copy.sh /tmp/oracle-ngram
python3 scripts/oracle/spec_cases/ngram.py cases --version {version} --seed {seed} --count {count}
python3 scripts/oracle/spec_cases/ngram.py regen --version {version} --oracle /tmp/oracle-ngram
```

`cases` writes the named cases of `curated()` and {count} random ones (seed {seed}) of
`scripts/oracle/spec_cases/ngram.py`; `regen` runs them in one oracle batch (`--summary-only`, every case
env-free), keeps SGLang's decisions and drops oracle errors and stand-in artifacts (`dropped.jsonl`,
`make_cases_v0516.drop_reason`){"; 0.5.23's K and V, the two halves of one tensor per layer, are filed apart as SGLang reports them (scripts/oracle/kv_one_tensor_split.py)" if _v(version) >= (0, 5, 23) else ""}.
Free memory after the weights = free before - target weights / tp - overhead: NGRAM loads no draft model.

Kept: {len(res)} cases ({", ".join(f"{k} {v}" for k, v in sorted(outcomes.items()))}); dropped: {len(dropped)}.
Checked field by field (every `planner/engines/sglang/summary.py` SUMMARY_FIELDS field) by `tests/test_golden_ngram.py`.
"""
    with open(os.path.join(d, "README.md"), "w") as f:
        f.write(text)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["cases", "regen", "readme"])
    ap.add_argument("--version", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=40)
    ap.add_argument("--py", default=None)
    ap.add_argument("--oracle", default="/tmp/oracle-ngram")
    a = ap.parse_args(argv)
    d = folder(a.version)
    os.makedirs(d, exist_ok=True)
    cases_path = os.path.join(d, "cases.jsonl")
    if a.mode == "cases":
        _write(cases_path, curated(a.version) + random_cases(a.version, a.seed, a.count)[0])
        return 0
    if a.mode == "readme":
        write_readme(a.version, a.seed, a.count)
        return 0
    py = a.py or os.path.expanduser(f"~/.cache/sglang-oracle/{a.version}/venv/bin/python")
    cases = [json.loads(x) for x in open(cases_path) if x.strip()]
    out = subprocess.run(["nice", "-n", "10", py, os.path.join(a.oracle, "oracle.py"), "--batch", cases_path,
                          "--summary-only"], cwd=d, capture_output=True, text=True, check=False)
    sys.stderr.write(out.stderr[-2000:])
    results = [json.loads(x) for x in out.stdout.splitlines() if x.strip()]
    kept_c, kept_r, dropped = split_kept(cases, results, drop_reason)
    _write(cases_path, kept_c)
    _write(os.path.join(d, "results.jsonl"), kept_r)
    _write(os.path.join(d, "dropped.jsonl"), dropped)
    write_readme(a.version, a.seed, a.count)
    print(f"{a.version}: {len(kept_c)} kept, {len(dropped)} dropped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
