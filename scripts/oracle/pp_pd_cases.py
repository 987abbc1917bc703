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


def _pp(flags: list[str]) -> int:
    return int(flags[flags.index("--pp-size") + 1]) if "--pp-size" in flags else 1


def run_rank(oracle: Path, py: str, case: dict, rank: int, min_tokens: int | None) -> tuple[dict, int | None]:
    gpu = GPUS[case["gpu"]]
    with tempfile.TemporaryDirectory() as td:
        out, log = Path(td) / "out.json", Path(td) / "pp.log"
        env = dict(os.environ, ORACLE_PP_RANK=str(rank), ORACLE_PP_LOG=str(log))
        if min_tokens is not None:
            env["ORACLE_PP_MIN_TOKENS"] = str(min_tokens)
        cmd = [py, str(oracle / "oracle.py"), "--free-before-gib", str(case["free_before_gib"]),
               "--free-after-gib", str(case["free_after_gib"][rank]), "--gpu-total-mib", str(gpu["gpu_total_mib"]),
               "--gpu-sm", gpu["gpu_sm"], "--gpu-name", gpu["gpu_name"],
               "--config-json", str((REPO / "tests/golden/pp_pd/sglang-x" / case["config_json"]).resolve()),
               "--quiet", "--out", str(out)]
        for k, v in case["env"].items():
            cmd += ["--env", f"{k}={v}"]
        cmd += ["--", *case["flags"]]
        subprocess.run(cmd, env=env, check=False, capture_output=True, text=True)
        summary = json.loads(out.read_text())["summary"]
        own = int(log.read_text().split()[0]) if log.exists() and log.read_text().strip() else None
        return summary, own


def random_cases(seed: int, count: int) -> list[dict]:
    """Random PP launches of Qwen3-32B: pp 2-4, tp 1-2 (4090: tp 2), an even or a random partition, a context
    length / max-running-requests / page size now and then, per-rank free memory around the weights' share."""
    import random

    rng = random.Random(seed)
    out = []
    for i in range(count):
        gpu = rng.choice(["rtx4090", "h100"])
        pp = rng.choice([2, 3, 4])
        tp = 2 if gpu == "rtx4090" else rng.choice([1, 2])
        flags = ["--tp-size", str(tp), "--pp-size", str(pp)]
        env = {}
        if rng.random() < 0.4:
            cuts = sorted(rng.sample(range(8, 57), pp - 1))
            parts = [b - a for a, b in zip([0, *cuts], [*cuts, 64])]
            env["SGLANG_PP_LAYER_PARTITION"] = ",".join(map(str, parts))
        if rng.random() < 0.3:
            flags += ["--max-running-requests", str(rng.choice([8, 64, 256]))]
        if rng.random() < 0.3:
            flags += ["--context-length", str(rng.choice([8192, 32768]))]
        if rng.random() < 0.2:
            flags += ["--page-size", str(rng.choice([16, 64]))]
        total = GPUS[gpu]["gpu_total_mib"] / 1024
        before = round(total - rng.uniform(1.0, 2.0), 2)
        share = 61.0 / (tp * pp)
        after = [round(max(0.5, before - share * rng.uniform(0.85, 1.15)), 2) for _ in range(pp)]
        out.append(dict(id=f"random_{seed}_{i}", gpu=gpu, planner_model="qwen3-32b",
                        config_json=CFG + "Qwen__Qwen3-32B.config.json", flags=flags,
                        free_before_gib=before, free_after_gib=after, env=env))
    return out


def regen(version: str, oracle: Path, seed: int | None = None, count: int = 0, folder: Path | None = None) -> None:
    py = str(Path.home() / f".cache/sglang-oracle/{version}/venv/bin/python")
    folder = folder or REPO / "tests/golden/pp_pd" / f"sglang-{version}"
    folder.mkdir(parents=True, exist_ok=True)
    cases = CASES if seed is None else random_cases(seed, count)
    prefix = "" if seed is None else "random_"
    results = []
    # written as each launch completes, so a stopped run keeps what it finished
    (folder / f"{prefix}cases.jsonl").write_text("")
    (folder / f"{prefix}results.jsonl").write_text("")
    for case in cases:
        pp = _pp(case["flags"])
        first = [run_rank(oracle, py, case, r, None) for r in range(pp)]
        caps = [own for _, own in first]
        if all(c is not None for c in caps):
            m = min(caps)
            stages = [run_rank(oracle, py, case, r, m)[0] for r in range(pp)]
        else:
            m, stages = None, [s for s, _ in first]
        results.append(dict(id=case["id"], rank_capacity_at_all_reduce=caps, pp_min_tokens=m, stages=stages))
        print(case["id"], caps, m, [s["outcome"] for s in stages], file=sys.stderr)
        with open(folder / f"{prefix}cases.jsonl", "a") as f:
            f.write(json.dumps(dict(case, **GPUS[case["gpu"]])) + "\n")
        with open(folder / f"{prefix}results.jsonl", "a") as f:
            f.write(json.dumps(results[-1]) + "\n")


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
    equal = 0
    for c, r in zip(cases, results):
        stages = make_pp_plans(find_profile(c["gpu"]), resolve_model(c["planner_model"]), c["flags"], c["env"],
                               pp_size_of(c["flags"]), c["free_before_gib"], c["free_after_gib"], version=version)
        diffs = [{k: (e[k], g[k]) for k in SUMMARY_FIELDS if e[k] != g[k]}
                 for e, g in zip(r["stages"], (build_summary(s.plan) for s in stages))]
        ok = len(stages) == len(r["stages"]) and not any(diffs)
        equal += ok
        print(c["id"], "equal" if ok else diffs)
    print(f"{version} seed {seed}: {equal}/{len(cases)} launches equal on every rank")
    return 0 if equal == len(cases) else 1


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
