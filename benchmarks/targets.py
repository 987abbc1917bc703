"""Every figure of issue 12's targets next to its target, as ratios to a cold ``python -c "import numpy"``
measured in the same run (medians of several runs; the machine's load is printed, since the 2-core box is
shared).

    python benchmarks/targets.py [--runs 5] [--batch-lines 200] [--search-lines 10] [--oracle-python PATH] [--tui]

* cold-process time of each README example (``python -m planner ...``), and peak memory (ru_maxrss of
  the child) of the default command;
* the seed-style search (needs + EAGLE);
* ``--batch`` lines per second without and with a search per line;
* with ``--tui``: ``benchmarks/replan.py``'s rows (the "ui" row is edit -> redrawn screen) and the
  background search (the TUI's ``run_search`` on its seed flags) in process;
* with ``--oracle-python``: SGLang's own sizing code (the sglang-oracle in batch mode) per configuration,
  for the ratio; without it, "oracle not available".

No assertions: this prints figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
SEED = ("--speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 1 "
        "--speculative-num-draft-tokens 4")
DEFAULT = "--gpu rtxpro6000 --model qwen3.6-27b"
SEARCH = "--gpu rtxpro6000 --model qwen3.6-27b --need-context 131072 --need-concurrency 2 --speculative EAGLE"
README = [  # the README's plan commands that need no GPU, log or file
    DEFAULT,
    "--gpu rtxpro6000 --model qwen3.6-27b --sglang-version 0.5.11 " + SEED
    + " --mamba-scheduler-strategy extra_buffer --max-mamba-cache-size 24 --mamba-full-memory-ratio 0.4",
    SEARCH,
    "--gpu h100 --model qwen3.5-9b --objective kv-tokens --allow-fp8-kv --top 5",
    "--gpu rtxpro6000 --model qwen3.6-27b --sglang-version 0.5.11 --no-search " + SEED
    + " --mamba-scheduler-strategy extra_buffer",
    "--gpu rtxpro6000 --model qwen3.6-27b --sglang-version 0.5.23 --no-search " + SEED
    + " --mamba-radix-cache-strategy extra_buffer",
    "--gpu rtxpro6000 --model qwen3.6-27b --tp-size 1 --mamba-ssm-dtype bfloat16",
    "--gpu rtxpro6000 -- python -m sglang.launch_server --model-path Qwen/Qwen3.6-27B "
    "--speculative-algorithm EAGLE --mamba-scheduler-strategy extra_buffer --max-running-requests 8",
    "--gpu h100 --model qwen3.5-27b --free-before-load-gib 78.9 --free-after-load-gib 27.1",
    "--gpu b200 --model qwen3.6-27b --env SGLANG_MAMBA_SSM_DTYPE=bfloat16",
    "--gpu rtxpro6000 --model qwen3.6-27b --json",
]


def run_child(argv: list[str], stdin: bytes | None = None) -> tuple[float, int, int]:
    """(wall seconds, peak RSS in KiB, exit status) of one child process."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, env=ENV, cwd=ROOT, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if stdin is not None:
        p.stdin.write(stdin)
        p.stdin.close()
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - t0, usage.ru_maxrss, p.returncode


def median_run(argv: list[str], runs: int) -> tuple[float, int, int]:
    res = [run_child(argv) for _ in range(runs)]
    return statistics.median(r[0] for r in res), max(r[1] for r in res), res[-1][2]


def row(label: str, value: str, target: str, holds: bool | None) -> None:
    mark = "" if holds is None else ("  holds" if holds else "  MISSED")
    print(f"  {label:<58} {value:>16}   target {target}{mark}")


def batch_lines(n: int, search: bool) -> bytes:
    gpus = ["rtxpro6000", "h100", "h200", "b200", "l40s", "rtx5090"]
    models = ["qwen3.6-27b", "qwen3.5-9b", "llama-3.1-8b-instruct", "qwen3.6-35b-a3b"]
    lines = []
    for i in range(n):
        req = {"id": i, "gpu": gpus[i % len(gpus)], "model": models[(i // len(gpus)) % len(models)],
               "flags": ["--max-running-requests", str(8 + i % 32)] if not search else [], "search": search}
        lines.append(json.dumps(req))
    return ("\n".join(lines) + "\n").encode()


def batch_rate(n: int, search: bool, runs: int) -> float:
    data = batch_lines(n, search)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([PY, "-m", "planner", "--batch", "-"], input=data, env=ENV, cwd=ROOT,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - t0)
    return n / statistics.median(times)


def oracle_rate(oracle_python: str | None, n: int) -> float | None:
    """Configurations per second through SGLang's own sizing code (sglang-oracle batch mode), or None."""
    tool = Path("/work/shared/tools/sglang-oracle/oracle.py")
    if not oracle_python or not Path(oracle_python).exists() or not tool.exists():
        return None
    cases = [json.dumps({"id": i, "model": "Qwen3.6-27B", "gpu_total_mib": 97887, "gpu_sm": "12.0",
                         "free_before_gib": 95.0, "free_after_gib": 44.0,
                         "flags": ["--max-running-requests", str(8 + i % 32)]}) for i in range(n)]
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        f.write("\n".join(cases) + "\n")
    t0 = time.perf_counter()
    proc = subprocess.run([oracle_python, str(tool), "--batch", f.name, "--summary-only"], cwd=tool.parent,
                          capture_output=True, check=False)
    dt = time.perf_counter() - t0
    return n / dt if proc.returncode == 0 else None


def tui_rows() -> None:
    out = subprocess.run([PY, str(ROOT / "benchmarks" / "replan.py"), "--edits", "200", "--ui-edits", "30"],
                         env=ENV, cwd=ROOT, capture_output=True, text=True, check=False)
    print("  benchmarks/replan.py (target: ui row <= 50 ms beyond the harness idle time):")
    for line in out.stdout.splitlines():
        print("    " + line)
    sys.path.insert(0, str(ROOT))
    from planner.catalog.catalog import resolve_model  # noqa: PLC0415
    from planner.hardware.profiles import find_profile  # noqa: PLC0415
    from planner.search import run_search  # noqa: PLC0415

    gpu, model = find_profile("rtxpro6000"), resolve_model("qwen3.6-27b")
    flags = shlex.split(SEED + " --mamba-scheduler-strategy extra_buffer")
    run_search(gpu, model, flags, top=200)  # warm: parsers and tables, as in a running TUI
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        run_search(gpu, model, flags, top=200)
        times.append(time.perf_counter() - t0)
    med = statistics.median(times)
    row("TUI background search (run_search, warm process)", f"{med * 1000:.0f} ms", "<= 1 s", med <= 1.0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--batch-lines", type=int, default=200)
    ap.add_argument("--search-lines", type=int, default=10)
    ap.add_argument("--oracle-python", help="python of a set-up sglang-oracle venv (see /work/shared/tools)")
    ap.add_argument("--tui", action="store_true", help="also run benchmarks/replan.py and the TUI search")
    ns = ap.parse_args()
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} on {os.cpu_count()} CPUs;"
          f" medians of {ns.runs} runs")
    base, _, _ = median_run([PY, "-c", "import numpy"], ns.runs)
    print(f"  cold python -c 'import numpy': {base * 1000:.0f} ms (the unit below: x = times that)")
    print("README examples, cold process:")
    for cmd in README:
        wall, rss, rc = median_run([PY, "-m", "planner", *shlex.split(cmd)], ns.runs)
        target = 3.0 if cmd == DEFAULT else 5.0 if cmd == SEARCH else 6.0
        row(("plan " + cmd)[:58], f"{wall / base:.1f}x ({wall:.2f} s)", f"<= {target:g}x", wall / base <= target)
        if cmd == DEFAULT:
            row("  peak memory (ru_maxrss)", f"{rss / 1024:.0f} MB", "<= 100 MB", rss / 1024 <= 100)
    print("Batch (one process, stdin):")
    r0 = batch_rate(ns.batch_lines, False, max(1, ns.runs // 2))
    row(f"--batch without search ({ns.batch_lines} lines, incl. start-up)", f"{r0:,.0f} lines/s", ">= 2,000", r0 >= 2000)
    r1 = batch_rate(ns.search_lines, True, 1)
    row(f"--batch with search ({ns.search_lines} lines, incl. start-up)", f"{r1:,.1f} lines/s", ">= 20", r1 >= 20)
    orc = oracle_rate(ns.oracle_python, ns.batch_lines)
    if orc is None:
        print("  SGLang's own sizing code (oracle batch): oracle not available (pass --oracle-python)")
    else:
        row("SGLang's own sizing code (oracle batch)", f"{orc:,.0f} configs/s", f"planner/oracle = {r0 / orc:.1f}x", None)
    if ns.tui:
        print("TUI:")
        tui_rows()
    return 0


if __name__ == "__main__":
    sys.exit(main())
