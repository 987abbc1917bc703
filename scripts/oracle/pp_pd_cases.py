"""Golden cases for pipeline-parallel launches: every pp rank sized by SGLang's own code (the oracle, one process
per rank, scripts/oracle/adapters/pp_stage.py), with the pp all-reduce MIN of token capacity answered as the real
group answers it.

    bash scripts/oracle/oracle_copy.sh /tmp/oracle-pppd
    python3 scripts/oracle/pp_pd_cases.py regen --version 0.5.16 [--oracle /tmp/oracle-pppd]

Each rank runs twice: pass 1 logs the capacity the rank reaches at the all-reduce (kv_cache_configurator.py
_apply_token_constraints, :1610-1618 @0.5.16); pass 2 re-runs it with the minimum over all ranks, which is what
every rank of a real launch gets back. A rank rejected before the all-reduce (server-args checks) is recorded as
rejected in both passes. Writes tests/golden/pp_pd/sglang-<version>/cases.jsonl and results.jsonl.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CFG = "../../../../planner/catalog/configs/"
GPUS = {
    "rtx4090": dict(gpu_total_mib=24564, gpu_sm="8.9", gpu_name="NVIDIA GeForce RTX 4090"),
    "h100": dict(gpu_total_mib=81559, gpu_sm="9.0", gpu_name="NVIDIA H100 80GB HBM3"),
    "h200": dict(gpu_total_mib=143771, gpu_sm="9.0", gpu_name="NVIDIA H200"),
}

# free_after_gib: one value per pp rank (the ranks hold different layers, the embedding and the head)
CASES = [
    dict(id="qwen3_32b_4090_tp2_pp2", gpu="rtx4090", planner_model="qwen3-32b",
         config_json=CFG + "Qwen__Qwen3-32B.config.json",
         flags=["--tp-size", "2", "--pp-size", "2", "--disable-overlap-schedule"],
         free_before_gib=22.5, free_after_gib=[7.0, 6.5], env={}),
    dict(id="qwen3_32b_4090_tp2_pp2_overlap", gpu="rtx4090", planner_model="qwen3-32b",
         config_json=CFG + "Qwen__Qwen3-32B.config.json",
         flags=["--tp-size", "2", "--pp-size", "2"],
         free_before_gib=22.5, free_after_gib=[7.0, 6.5], env={}),
    dict(id="qwen3_32b_h100_pp2_partition", gpu="h100", planner_model="qwen3-32b",
         config_json=CFG + "Qwen__Qwen3-32B.config.json",
         flags=["--pp-size", "2", "--disable-overlap-schedule"],
         free_before_gib=78.0, free_after_gib=[47.0, 41.0], env={"SGLANG_PP_LAYER_PARTITION": "28,36"}),
    dict(id="qwen3_32b_h100_pp3", gpu="h100", planner_model="qwen3-32b",
         config_json=CFG + "Qwen__Qwen3-32B.config.json",
         flags=["--pp-size", "3", "--disable-overlap-schedule", "--max-running-requests", "64"],
         free_before_gib=78.0, free_after_gib=[57.0, 57.5, 56.0], env={}),
]

# The families users run with pp beyond dense Qwen3: MoE, FP8 checkpoints, hybrid GDN (Qwen3.5 / Qwen3.6: the
# heaviest stage's mamba share), MLA (DeepSeek-V3). Free memory after loading: about the weights' per-rank share.
FAMILY_CASES = [
    dict(id="qwen3_30b_a3b_h100_pp2", gpu="h100", planner_model="qwen3-30b-a3b",
         config_json=CFG + "Qwen__Qwen3-30B-A3B.config.json",
         flags=["--pp-size", "2"], free_before_gib=78.0, free_after_gib=[49.5, 49.0], env={}),
    dict(id="qwen3_30b_a3b_fp8_h100_tp2_pp2_partition", gpu="h100", planner_model="qwen3-30b-a3b-fp8",
         config_json=CFG + "Qwen__Qwen3-30B-A3B-FP8.config.json",
         flags=["--tp-size", "2", "--pp-size", "2", "--max-running-requests", "128"], free_before_gib=78.0,
         free_after_gib=[71.5, 70.0], env={"SGLANG_PP_LAYER_PARTITION": "20,28"}),
    dict(id="qwen3_32b_fp8_4090_pp2", gpu="rtx4090", planner_model="qwen3-32b-fp8",
         config_json=CFG + "Qwen__Qwen3-32B-FP8.config.json",
         flags=["--pp-size", "2", "--context-length", "16384"], free_before_gib=22.5, free_after_gib=[6.2, 5.6],
         env={}),
    dict(id="qwen36_27b_h100_pp2", gpu="h100", planner_model="qwen3.6-27b",
         config_json=CFG + "Qwen__Qwen3.6-27B.config.json",
         flags=["--pp-size", "2"], free_before_gib=78.0, free_after_gib=[51.5, 51.0], env={}),
    dict(id="qwen36_27b_h100_pp2_partition_mrr", gpu="h100", planner_model="qwen3.6-27b",
         config_json=CFG + "Qwen__Qwen3.6-27B.config.json",
         flags=["--pp-size", "2", "--max-running-requests", "48", "--mamba-radix-cache-strategy", "extra_buffer"],
         free_before_gib=78.0, free_after_gib=[60.0, 43.0], env={"SGLANG_PP_LAYER_PARTITION": "22,42"}),
    dict(id="qwen36_35b_a3b_h100_pp3", gpu="h100", planner_model="qwen3.6-35b-a3b",
         config_json=CFG + "Qwen__Qwen3.6-35B-A3B.config.json",
         flags=["--pp-size", "3", "--context-length", "65536"], free_before_gib=78.0,
         free_after_gib=[55.0, 56.0, 54.5], env={}),
    dict(id="qwen36_27b_fp8_4090_tp2_pp2", gpu="rtx4090", planner_model="qwen3.6-27b-fp8",
         config_json=CFG + "Qwen__Qwen3.6-27B-FP8.reconstructed.config.json",
         flags=["--tp-size", "2", "--pp-size", "2"], free_before_gib=22.5, free_after_gib=[14.8, 14.5], env={}),
    dict(id="deepseek_v3_h200_tp8_pp2", gpu="h200", planner_model="deepseek-v3",
         config_json=CFG + "deepseek-ai__DeepSeek-V3.config.json",
         flags=["--tp-size", "8", "--pp-size", "2"], free_before_gib=138.0, free_after_gib=[97.0, 98.5], env={}),
]


def _pp(flags: list[str]) -> int:
    return int(flags[flags.index("--pp-size") + 1]) if "--pp-size" in flags else 1


def _row(case: dict, rank: int, min_tokens: int | None, log: Path) -> dict:
    """One batch line: ``case`` played as pp rank ``rank`` (pp_stage.py reads the ORACLE_PP_* variables from the
    case's env, so one batch plays every rank of every launch)."""
    env = dict(case["env"], ORACLE_PP_RANK=str(rank), ORACLE_PP_SIZE=str(_pp(case["flags"])), ORACLE_PP_LOG=str(log))
    if min_tokens is not None:
        env["ORACLE_PP_MIN_TOKENS"] = str(min_tokens)
    return dict(id=f"{case['id']}#{rank}", flags=case["flags"], free_before_gib=case["free_before_gib"],
                free_after_gib=case["free_after_gib"][rank], env=env,
                config_json=str((REPO / "tests/golden/pp_pd/sglang-x" / case["config_json"]).resolve()),
                **GPUS[case["gpu"]])


def run_batch(oracle: Path, py: str, rows: list[dict]) -> dict[str, dict]:
    """One oracle batch (SGLang imported once): id -> the case's summary."""
    with tempfile.TemporaryDirectory() as td:
        inp, out = Path(td) / "in.jsonl", Path(td) / "out.jsonl"
        inp.write_text("".join(json.dumps(r) + "\n" for r in rows))
        proc = subprocess.run([py, str(oracle / "oracle.py"), "--batch", str(inp), "--summary-only", "--out", str(out)],
                              check=False, capture_output=True, text=True)
        print(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "", file=sys.stderr)
        res = {}
        for line in out.read_text().splitlines():
            o = json.loads(line)
            if o.get("batch_env_import_conflict"):
                raise SystemExit(f"{o['id']}: {o['batch_env_import_conflict']}: run that case singly")
            res[o["id"]] = o["summary"]
        return res


def run_launches(oracle: Path, py: str, cases: list[dict]) -> list[dict]:
    """Every rank of every launch, in two batches: pass 1 logs each rank's capacity at the all-reduce, pass 2
    re-runs the launches whose ranks all reached it with the minimum (what every rank of a real launch gets)."""
    with tempfile.TemporaryDirectory() as td:
        logs = {(c["id"], r): Path(td) / f"{i}_{r}.log" for i, c in enumerate(cases) for r in range(_pp(c["flags"]))}
        first = run_batch(oracle, py, [_row(c, r, None, logs[c["id"], r]) for c in cases for r in range(_pp(c["flags"]))])

        def own(c, r):
            f = logs[c["id"], r]
            return int(f.read_text().split()[0]) if f.exists() and f.read_text().strip() else None

        caps = {c["id"]: [own(c, r) for r in range(_pp(c["flags"]))] for c in cases}
        again = [c for c in cases if all(x is not None for x in caps[c["id"]])]
        second = run_batch(oracle, py, [_row(c, r, min(caps[c["id"]]), Path(td) / "pass2.log")
                                        for c in again for r in range(_pp(c["flags"]))]) if again else {}
    out = []
    for c in cases:
        pp, cap = _pp(c["flags"]), caps[c["id"]]
        m = min(cap) if all(x is not None for x in cap) else None
        src = second if m is not None else first
        out.append(dict(id=c["id"], rank_capacity_at_all_reduce=cap, pp_min_tokens=m,
                        stages=[src[f"{c['id']}#{r}"] for r in range(pp)]))
    return out


# random launches: planner catalog id -> (config, weight GiB the free memory is drawn around, GPUs, tp choices)
RANDOM_MODELS = {
    "qwen3-32b": ("Qwen__Qwen3-32B.config.json", 61.0, ["rtx4090", "h100"], [1, 2]),
    "qwen3-30b-a3b": ("Qwen__Qwen3-30B-A3B.config.json", 57.0, ["h100", "h200"], [1, 2]),
    "qwen3-30b-a3b-fp8": ("Qwen__Qwen3-30B-A3B-FP8.config.json", 29.0, ["rtx4090", "h100"], [1, 2]),
    "qwen3.6-27b": ("Qwen__Qwen3.6-27B.config.json", 51.7, ["h100", "h200"], [1, 2]),
    "qwen3.6-35b-a3b": ("Qwen__Qwen3.6-35B-A3B.config.json", 67.0, ["h100", "h200"], [1, 2]),
    "qwen3.6-27b-fp8": ("Qwen__Qwen3.6-27B-FP8.reconstructed.config.json", 28.7, ["rtx4090", "h100"], [1, 2]),
    "deepseek-v3": ("deepseek-ai__DeepSeek-V3.config.json", 641.0, ["h200"], [8]),
}


def random_cases(seed: int, count: int) -> list[dict]:
    """Random PP launches over the verified families (dense / MoE / FP8 Qwen3, hybrid GDN Qwen3.6, MLA
    DeepSeek-V3): pp 2-4, tp 1-2 (4090: tp 2; DeepSeek-V3: tp 8 on H200), an even or a random partition, a
    context length / max-running-requests / page size / mamba strategy now and then, per-rank free memory around
    the weights' share."""
    import random

    rng = random.Random(seed)
    out = []
    for i in range(count):
        model = rng.choice(sorted(RANDOM_MODELS))
        cfg, weights, gpus, tps = RANDOM_MODELS[model]
        gpu = rng.choice(gpus)
        pp = 2 if model == "deepseek-v3" else rng.choice([2, 3, 4])
        tp = 2 if gpu == "rtx4090" else rng.choice(tps)
        total = GPUS[gpu]["gpu_total_mib"] / 1024
        while weights / (tp * pp) > total * 0.8 and pp < 8:
            pp += 1
        flags = ["--tp-size", str(tp), "--pp-size", str(pp)]
        n = json.loads((REPO / "planner/catalog/configs" / cfg).read_text())
        n = (n.get("text_config") or n)["num_hidden_layers"]
        env = {}
        if rng.random() < 0.4:
            cuts = sorted(rng.sample(range(n // 8, n - n // 8), pp - 1))
            parts = [b - a for a, b in zip([0, *cuts], [*cuts, n])]
            env["SGLANG_PP_LAYER_PARTITION"] = ",".join(map(str, parts))
        if rng.random() < 0.3:
            flags += ["--max-running-requests", str(rng.choice([8, 64, 256]))]
        if rng.random() < 0.3:
            flags += ["--context-length", str(rng.choice([8192, 32768]))]
        if "qwen3.6" in model and rng.random() < 0.3:
            flags += ["--mamba-radix-cache-strategy", rng.choice(["no_buffer", "extra_buffer"])]
        elif rng.random() < 0.2 and "qwen3.6" not in model:
            flags += ["--page-size", str(rng.choice([16, 64]))]
        before = round(total - rng.uniform(1.0, 2.0), 2)
        share = weights / (tp * pp)
        after = [round(max(0.5, before - share * rng.uniform(0.85, 1.15)), 2) for _ in range(pp)]
        out.append(dict(id=f"random_{seed}_{i}", gpu=gpu, planner_model=model, config_json=CFG + cfg, flags=flags,
                        free_before_gib=before, free_after_gib=after, env=env))
    return out


def regen(version: str, oracle: Path, seed: int | None = None, count: int = 0, folder: Path | None = None) -> None:
    py = str(Path.home() / f".cache/sglang-oracle/{version}/venv/bin/python")
    folder = folder or REPO / "tests/golden/pp_pd" / f"sglang-{version}"
    folder.mkdir(parents=True, exist_ok=True)
    cases = CASES + FAMILY_CASES if seed is None else random_cases(seed, count)
    prefix = "" if seed is None else "random_"
    results = run_launches(oracle, py, cases)
    with open(folder / f"{prefix}cases.jsonl", "w") as f:
        f.writelines(json.dumps(dict(case, **GPUS[case["gpu"]])) + "\n" for case in cases)
    with open(folder / f"{prefix}results.jsonl", "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in results)
    for r in results:
        print(r["id"], r["rank_capacity_at_all_reduce"], r["pp_min_tokens"], [s["outcome"] for s in r["stages"]],
              file=sys.stderr)


def agree(version: str, oracle: Path, seed: int, count: int) -> int:
    """Fresh random launches: the oracle's ranks against the planner's, every summary field (run with the repo's
    venv python, which imports the planner). Prints one line per launch and the count equal."""
    sys.path.insert(0, str(REPO))
    from planner.catalog.catalog import resolve_model
    from planner.hardware.profiles import find_profile
    from planner.engines.sglang.pp import make_pp_plans, pp_size_of
    from planner.engines.sglang.summary import SUMMARY_FIELDS, build_summary

    with tempfile.TemporaryDirectory() as td:
        regen(version, oracle, seed, count, Path(td))
        cases = [json.loads(x) for x in (Path(td) / "random_cases.jsonl").read_text().splitlines()]
        results = [json.loads(x) for x in (Path(td) / "random_results.jsonl").read_text().splitlines()]
    from planner.errors import BadInput

    equal = refused = 0
    for c, r in zip(cases, results):
        try:
            stages = make_pp_plans(find_profile(c["gpu"]), resolve_model(c["planner_model"]), c["flags"], c["env"],
                                   pp_size_of(c["flags"]), c["free_before_gib"], c["free_after_gib"], version=version)
        except BadInput as exc:  # not modelled: refused by name (no number to compare)
            refused += 1
            print(c["id"], f"refused by the planner ({exc}); oracle: {[s['outcome'] for s in r['stages']]}")
            continue
        diffs = [{k: (e[k], g[k]) for k in SUMMARY_FIELDS if e[k] != g[k]}
                 for e, g in zip(r["stages"], (build_summary(s.plan) for s in stages))]
        ok = len(stages) == len(r["stages"]) and not any(diffs)
        equal += ok
        print(c["id"], "equal" if ok else diffs)
    print(f"{version} seed {seed}: {equal}/{len(cases) - refused} launches equal on every rank"
          + (f" ({refused} refused by name)" if refused else ""))
    return 0 if equal == len(cases) - refused else 1


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("regen")
    g.add_argument("--version", required=True)
    g.add_argument("--oracle", default="/tmp/oracle-pppd")
    g.add_argument("--seed", type=int, default=None, help="random launches instead of the curated set")
    g.add_argument("--count", type=int, default=6)
    g = sub.add_parser("agree")
    g.add_argument("--version", required=True)
    g.add_argument("--oracle", default="/tmp/oracle-pppd")
    g.add_argument("--seed", type=int, required=True)
    g.add_argument("--count", type=int, default=6)
    a = ap.parse_args()
    if a.cmd == "agree":
        sys.exit(agree(a.version, Path(a.oracle), a.seed, a.count))
    regen(a.version, Path(a.oracle), a.seed, a.count)


if __name__ == "__main__":
    main()
