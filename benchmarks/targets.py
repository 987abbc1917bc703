"""Every figure of issue 12's targets next to its target, as ratios to a cold ``python -c "import numpy"``
measured in the same run (medians of several runs; the machine's load is printed, since the 2-core box is
shared).

    python benchmarks/targets.py [--runs 5] [--batch-lines 200] [--search-lines 24] [--oracle-python PATH] [--tui]

* cold-process time of each README example (``python -m planner ...``), and peak memory (ru_maxrss of
  the child) of the default command;
* the seed-style search (needs + EAGLE), and in process whether the CLI's search (branch and bound,
  ``run_search(prune=True)``) gives what the exhaustive one does, with both searches' CPU time;
* ``--batch`` lines per second without and with a search per line (without: the start-up alone, a batch of
  ``--batch-lines``, one ten times longer, and the rate of the lines beyond the first batch's, i.e. without the
  start-up; with: ``--search-lines`` lines, each a GPU x model pair no earlier line had (24 pairs), in one
  process and with ``--jobs 2``, and a sweep of the needs on one GPU and model);
* with ``--tui``: ``benchmarks/replan.py``'s rows (the "ui" row is edit -> redrawn screen) and the
  background search (the TUI's ``run_search`` on its seed flags) in process;
* with ``--oracle-python``: SGLang's own sizing code (the sglang-oracle in batch mode, its count line's batch
  time) per configuration, and the planner's ``--batch`` on the same launches and release, for the ratio;
  without it, "oracle not available".

Each child runs with its bytecode cached, as after ``pip install`` (a private PYTHONPYCACHEPREFIX, one warm-up
run per command first; PYTHONDONTWRITEBYTECODE is dropped for the children), and both its wall time and its CPU
time (user + system, from wait4) are printed as ratios to the same figures of ``python -c "import numpy"``: on a
loaded box the wall ratio mostly measures the other processes, the CPU ratio what the command itself costs.
The "holds" marks are for the wall ratio (the issue's definition); "cpu ok" marks the CPU ratio.

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
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
ENV.update(PYTHONPATH=str(ROOT), PYTHONPYCACHEPREFIX=tempfile.mkdtemp(prefix="planner-bench-pyc-"))
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
    # vLLM (README "## vLLM"): the seed model under vLLM's defaults (rejected, then searched), a paste, both engines
    "--engine vllm --gpu rtxpro6000 --model qwen3.6-27b",
    "--gpu h100 -- vllm serve Qwen/Qwen3-8B --max-model-len 32768",
    "--gpu rtxpro6000 --model qwen3.6-27b --compare-engines",
]


def run_child(argv: list[str], stdin: bytes | None = None) -> tuple[float, int, int, float]:
    """(wall seconds, peak RSS in KiB, exit status, CPU seconds: user + system) of one child process."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, env=ENV, cwd=ROOT, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if stdin is not None:
        p.stdin.write(stdin)
        p.stdin.close()
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - t0, usage.ru_maxrss, p.returncode, usage.ru_utime + usage.ru_stime


def median_run(argv: list[str], runs: int, stdin: bytes | None = None) -> tuple[float, int, int, float]:
    """Medians of wall and CPU time over ``runs`` runs after one warm-up run (which caches the bytecode)."""
    run_child(argv, stdin)
    res = [run_child(argv, stdin) for _ in range(runs)]
    return (statistics.median(r[0] for r in res), max(r[1] for r in res), res[-1][2],
            statistics.median(r[3] for r in res))


def row(label: str, value: str, target: str, holds: bool | None, cpu_ok: bool | None = None) -> None:
    mark = "" if holds is None else ("  holds" if holds else "  MISSED")
    if cpu_ok is not None:
        mark += "  (cpu ok)" if cpu_ok else "  (cpu MISSED)"
    print(f"  {label:<58} {value:>30}   target {target}{mark}")


def batch_lines(n: int, search: bool) -> bytes:
    gpus = ["rtxpro6000", "h100", "h200", "b200", "l40s", "rtx5090"]
    models = ["qwen3.6-27b", "qwen3.5-9b", "llama-3.1-8b-instruct", "qwen3.6-35b-a3b"]
    lines = []
    for i in range(n):
        req = {"id": i, "gpu": gpus[i % len(gpus)], "model": models[(i // len(gpus)) % len(models)],
               "flags": ["--max-running-requests", str(8 + i % 32)] if not search else [], "search": search}
        lines.append(json.dumps(req))
    return ("\n".join(lines) + "\n").encode()


def sweep_lines(n: int) -> bytes:
    """A sweep of the needs on one GPU and model (what a capacity study runs): contexts x concurrencies, the
    EAGLE seed's model on the RTX PRO 6000; about a fifth of the points fit nothing (their relaxations run)."""
    pairs = [(ctx, conc) for ctx in (8192, 32768, 65536, 131072, 262144) for conc in (1, 2, 4, 8)]
    reqs = [{"id": i, "gpu": "rtxpro6000", "model": "qwen3.6-27b", "search": True, "need_context": ctx,
             "need_concurrency": conc} for i, (ctx, conc) in enumerate((pairs * (n // len(pairs) + 1))[:max(n, 20)])]
    return ("\n".join(json.dumps(r) for r in reqs) + "\n").encode()


def batch_rate(n: int, search: bool, runs: int, data: bytes | None = None, jobs: int = 1) -> tuple[float, float]:
    """(lines per wall second, lines per CPU second: the process's and its workers') of one ``--batch -``
    process, start-up included."""
    data = batch_lines(n, search) if data is None else data
    extra = ["--jobs", str(jobs)] if jobs > 1 else []
    wall, _, _, cpu = median_run([PY, "-m", "planner", "--batch", "-", *extra], runs, stdin=data)
    return n / wall, n / cpu


def oracle_cases(n: int) -> list[dict]:
    """The same launches for the oracle and for the planner's batch: Qwen3.6-27B on an RTX PRO 6000, memory given."""
    return [{"id": i, "model": "Qwen3.6-27B", "gpu_total_mib": 97887, "gpu_sm": "12.0", "free_before_gib": 95.0,
             "free_after_gib": 44.0, "flags": ["--max-running-requests", str(8 + i % 32)]} for i in range(n)]


def oracle_rate(oracle_python: str | None, n: int) -> tuple[float, float] | None:
    """(configurations per second of batch time, per wall second including SGLang's import) through SGLang's own
    sizing code (the sglang-oracle in batch mode), or None."""
    import re  # noqa: PLC0415

    tool = Path("/work/shared/tools/sglang-oracle/oracle.py")
    if not oracle_python or not Path(oracle_python).exists() or not tool.exists():
        return None
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        f.write("\n".join(json.dumps(c) for c in oracle_cases(n)) + "\n")
    t0 = time.perf_counter()
    proc = subprocess.run([oracle_python, str(tool), "--batch", f.name, "--summary-only"], cwd=tool.parent,
                          capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    m = re.search(r"oracle batch: (\d+) cases in ([0-9.]+) s", proc.stderr)
    if proc.returncode != 0 or m is None:
        return None
    return int(m.group(1)) / float(m.group(2)), n / wall


def planner_oracle_cases(n: int, version: str) -> bytes:
    """oracle_cases as planner --batch lines (the profile id, the release the oracle venv runs)."""
    lines = [json.dumps({"id": c["id"], "gpu": "rtxpro6000", "model": "qwen3.6-27b", "sglang_version": version,
                         "free_before_gib": c["free_before_gib"], "free_after_gib": c["free_after_gib"],
                         "flags": c["flags"], "search": False}) for c in oracle_cases(n)]
    return ("\n".join(lines) + "\n").encode()


def tui_rows() -> None:
    out = subprocess.run([PY, str(ROOT / "benchmarks" / "replan.py"), "--edits", "200", "--ui-edits", "30"],
                         env=ENV, cwd=ROOT, capture_output=True, text=True, check=False)
    print("  benchmarks/replan.py (target: ui row <= 50 ms beyond the harness idle time):")
    for line in out.stdout.splitlines():
        print("    " + line)
    sys.path.insert(0, str(ROOT))
    from planner.catalog.catalog import resolve_model  # noqa: PLC0415
    from planner.hardware.profiles import find_profile  # noqa: PLC0415
    from planner.engines.sglang.search import run_search  # noqa: PLC0415

    gpu, model = find_profile("rtxpro6000"), resolve_model("qwen3.6-27b")
    flags = shlex.split(SEED + " --mamba-scheduler-strategy extra_buffer")
    run_search(gpu, model, flags, top=200)  # warm: parsers and tables, as in a running TUI
    walls, cpus = [], []
    shared = sys.modules["planner.engines.sglang.search"]._SHARED
    for _ in range(3):
        shared.clear()  # a re-search after an edit finds other flags: no search cache to lean on
        t0, c0 = time.perf_counter(), time.process_time()
        run_search(gpu, model, flags, top=200)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    med, cpu = statistics.median(walls), statistics.median(cpus)
    row("TUI background search (run_search, warm process)", f"{med * 1000:.0f} ms wall, {cpu * 1000:.0f} ms cpu",
        "<= 1 s", med <= 1.0, cpu <= 1.0)


def seed_search_equals_exhaustive() -> None:
    """The seed question's result: the search as the CLI runs it (branch and bound, run_search(prune=True)) and
    the exhaustive one (every combination evaluated), against each other (everything the CLI shows: top list,
    runner-up, radix-off alternative), and how long each takes in a warm process from empty search caches."""
    import importlib  # noqa: PLC0415

    sys.path.insert(0, str(ROOT))
    from planner.catalog.catalog import resolve_model  # noqa: PLC0415
    from planner.hardware.profiles import find_profile  # noqa: PLC0415

    search_mod = importlib.import_module("planner.engines.sglang.search")  # the module (planner.search is the API function)
    gpu, model = find_profile("rtxpro6000"), resolve_model("qwen3.6-27b")
    needs = search_mod.Needs(context=131072, concurrency=2, speculative="EAGLE")
    search_mod.run_search(gpu, model, [], needs=needs, relax=False, prune=True)  # warm: imports, parsers
    out = {}
    for prune in (False, True):
        search_mod._SHARED.clear()  # the searches share prepared combinations and chains: start each from none
        c0 = time.process_time()
        res = search_mod.run_search(gpu, model, [], needs=needs, relax=False, prune=prune)
        out[prune] = (res, time.process_time() - c0)
    (full, t_full), (fast, t_fast) = out[False], out[True]

    def shown(r):
        return ([vars(c) for c in r.ranked], r.why, r.runner_up, r.no_radix_best and vars(r.no_radix_best))

    same = bool(full.ranked) and shown(full) == shown(fast)
    row("seed search: CLI's (branch and bound) == exhaustive result", f"{'same' if same else 'DIFFERENT'}", "same",
        same)
    row("  exhaustive / branch and bound, cpu in a warm process", f"{t_full:.2f} s / {t_fast:.2f} s "
        f"({fast.pruned} combinations skipped, {fast.evaluated:,} of {fast.space:,} configurations evaluated)",
        "", None)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--batch-lines", type=int, default=200)
    ap.add_argument("--search-lines", type=int, default=24)
    ap.add_argument("--oracle-python", help="python of a set-up sglang-oracle venv (see /work/shared/tools)")
    ap.add_argument("--tui", action="store_true", help="also run benchmarks/replan.py and the TUI search")
    ns = ap.parse_args()
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} on {os.cpu_count()} CPUs;"
          f" medians of {ns.runs} runs")
    base, _, _, base_cpu = median_run([PY, "-c", "import numpy"], ns.runs)
    print(f"  cold python -c 'import numpy': {base * 1000:.0f} ms wall, {base_cpu * 1000:.0f} ms cpu (the units below)")
    print("README examples, cold process (x = wall / numpy's wall; cpu x = cpu / numpy's cpu):")
    for cmd in README:
        wall, rss, rc, cpu = median_run([PY, "-m", "planner", *shlex.split(cmd)], ns.runs)
        target = 3.0 if cmd == DEFAULT else 5.0 if cmd == SEARCH else 6.0
        row(("plan " + cmd)[:58], f"{wall / base:.1f}x ({wall:.2f} s), cpu {cpu / base_cpu:.1f}x",
            f"<= {target:g}x", wall / base <= target, cpu / base_cpu <= target)
        if cmd == DEFAULT:
            row("  peak memory (ru_maxrss)", f"{rss / 1024:.0f} MB", "<= 100 MB", rss / 1024 <= 100)
    seed_search_equals_exhaustive()
    print("Batch (one process unless --jobs is named, stdin, start-up included):")
    start, _, _, start_cpu = median_run([PY, "-m", "planner", "--batch", "-"], ns.runs, stdin=b"")
    row("  start-up: an empty batch", f"{start * 1000:.0f} ms wall, {start_cpu * 1000:.0f} ms cpu", "", None)
    r0, c0 = batch_rate(ns.batch_lines, False, max(1, ns.runs // 2))
    # informative: at 2,000 lines/s the whole of a short batch would take less than the start-up alone
    row(f"--batch without search ({ns.batch_lines} lines, start-up-bound)", f"{r0:,.0f} lines/s ({c0:,.0f} per cpu s)",
        f"(no target: {ns.batch_lines} lines at 2,000/s is {ns.batch_lines / 2:.0f} ms)", None)
    big = 10 * ns.batch_lines
    r2, c2 = batch_rate(big, False, max(1, ns.runs // 2))
    row(f"--batch without search ({big:,} lines)", f"{r2:,.0f} lines/s ({c2:,.0f} per cpu s)", ">= 2,000",
        r2 >= 2000, c2 >= 2000)
    # the lines beyond the first batch's: what a line costs once the process has started and warmed up
    m_wall = (big - ns.batch_lines) / max(1e-9, big / r2 - ns.batch_lines / r0)
    m_cpu = (big - ns.batch_lines) / max(1e-9, big / c2 - ns.batch_lines / c0)
    row("  per line after start-up (the two batches' difference)", f"{m_wall:,.0f} lines/s ({m_cpu:,.0f} per cpu s)",
        ">= 2,000", m_wall >= 2000, m_cpu >= 2000)
    mixed = batch_lines(ns.search_lines, True)
    r1, c1 = batch_rate(ns.search_lines, True, max(1, ns.runs // 2), mixed)
    row(f"--batch with search ({ns.search_lines} lines, each a new GPU x model)", f"{r1:,.1f} lines/s "
        f"({c1:,.1f} per cpu s)", ">= 20", r1 >= 20, c1 >= 20)
    jobs = min(2, os.cpu_count() or 1)
    r3, c3 = batch_rate(ns.search_lines, True, max(1, ns.runs // 2), mixed, jobs=jobs)
    row(f"  the same with --jobs {jobs}", f"{r3:,.1f} lines/s ({c3:,.1f} per cpu s)", ">= 20", r3 >= 20)
    sweep = sweep_lines(ns.search_lines)
    r4, c4 = batch_rate(len(sweep.splitlines()), True, max(1, ns.runs // 2), sweep)
    row(f"--batch with search (a sweep of needs, {len(sweep.splitlines())} lines, one GPU x model)",
        f"{r4:,.1f} lines/s ({c4:,.1f} per cpu s)", ">= 20", r4 >= 20, c4 >= 20)
    orc = oracle_rate(ns.oracle_python, ns.batch_lines)
    if orc is None:
        print("  SGLang's own sizing code (oracle batch): oracle not available (pass --oracle-python)")
    else:
        version = subprocess.run([ns.oracle_python, "-c", "from importlib.metadata import version; print(version('sglang'))"],
                                 capture_output=True, text=True, check=False).stdout.strip()
        same, same_cpu = batch_rate(ns.batch_lines, False, 1, planner_oracle_cases(ns.batch_lines, version))
        row(f"SGLang {version}'s own sizing code (oracle batch, same {ns.batch_lines} launches)",
            f"{orc[0]:,.1f} configs/s ({orc[1]:,.1f} incl. import)", "", None)
        row("  planner --batch on those launches", f"{same:,.0f} lines/s = {same / orc[0]:,.0f}x the oracle", "", None)
    if ns.tui:
        print("TUI:")
        tui_rows()
    return 0


if __name__ == "__main__":
    sys.exit(main())
