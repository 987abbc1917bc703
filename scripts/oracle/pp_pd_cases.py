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


def regen(version: str, oracle: Path) -> None:
    py = str(Path.home() / f".cache/sglang-oracle/{version}/venv/bin/python")
    folder = REPO / "tests/golden/pp_pd" / f"sglang-{version}"
    folder.mkdir(parents=True, exist_ok=True)
    results = []
    for case in CASES:
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
    with open(folder / "cases.jsonl", "w") as f:
        for case in CASES:
            f.write(json.dumps(dict(case, **GPUS[case["gpu"]])) + "\n")
    with open(folder / "results.jsonl", "w") as f:
        for r in results:
            f.write(json.dumps(r) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("regen")
    g.add_argument("--version", required=True)
    g.add_argument("--oracle", default="/tmp/oracle-pppd")
    a = ap.parse_args()
    regen(a.version, Path(a.oracle))


if __name__ == "__main__":
    main()
