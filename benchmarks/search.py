"""How fast the search evaluates configurations: vectorized grid vs one plan at a time, and the CLI's
branch and bound against the exhaustive scan.

    python benchmarks/search.py [--gpu rtxpro6000] [--model qwen3.6-27b] [--flags ...] [--need-context N]
                                [--need-concurrency N] [--speculative EAGLE] [--scalar-sample 300]

Prints the default grid's size, wall time and configurations per second (exhaustive), the branch and bound's
time (what the CLI runs: run_search(prune=True)), how many combinations it skipped and whether its result is
the exhaustive one, then the rate of evaluating a random sample of the same configurations one at a time
through the scalar `plan` path (make_plan), and the ratio. Every timed search starts from empty search caches.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from planner.catalog.catalog import resolve_model  # noqa: E402
from planner.hardware.profiles import find_profile  # noqa: E402
from planner.engines.sglang.plan import make_plan  # noqa: E402
import importlib  # noqa: E402

from planner.engines.sglang.search import Needs, _categorical_axes, _numeric_grid, given_dests, point_flags, run_search  # noqa: E402

_search = importlib.import_module("planner.engines.sglang.search")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpu", default="rtxpro6000")
    ap.add_argument("--model", default="qwen3.6-27b")
    ap.add_argument("--flags", default="", help="fixed SGLang flags, e.g. '--speculative-algorithm EAGLE'")
    ap.add_argument("--need-context", type=int)
    ap.add_argument("--need-concurrency", type=int, default=1)
    ap.add_argument("--speculative")
    ap.add_argument("--scalar-sample", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    gpu, model = find_profile(a.gpu), resolve_model(a.model)
    flags = a.flags.split()
    needs = Needs(context=a.need_context, concurrency=a.need_concurrency, speculative=a.speculative)
    timed = {}
    for prune in (False, True):
        best, res = float("inf"), None
        for _ in range(a.repeat):
            _search._SHARED.clear()
            t0 = time.perf_counter()
            res = run_search(gpu, model, flags, needs=needs, relax=False, prune=prune)
            best = min(best, time.perf_counter() - t0)
        timed[prune] = (best, res)
    (best, res), (bb, bres) = timed[False], timed[True]
    same = [vars(c) for c in res.ranked] == [vars(c) for c in bres.ranked] and res.runner_up == bres.runner_up
    print(f"model={a.model} gpu={a.gpu} flags='{a.flags}' needs: context={a.need_context} "
          f"concurrency={a.need_concurrency} speculative={a.speculative}")
    print(f"vectorized: {res.evaluated:,} configurations in {best:.3f} s (best of {a.repeat}) "
          f"= {res.evaluated / best:,.0f} configurations/s; {res.feasible:,} feasible")
    print(f"branch and bound (the CLI's): {bb:.3f} s = {best / bb:.1f}x faster; {bres.pruned} combinations skipped, "
          f"{bres.evaluated:,} of {bres.space:,} configurations evaluated; result "
          f"{'the exhaustive one' if same else 'DIFFERENT from the exhaustive one'}")

    # the same configurations, one at a time through the scalar path
    rules = res.recommended.rules if res.recommended is not None else None
    fixed = given_dests(flags, rules)
    spec = model.spec
    spec_on = "--speculative-algorithm" in flags
    axes = _categorical_axes(spec, fixed, Needs(), spec_on, spec.derived_context_len,
                             min(32768, spec.derived_context_len), rules)
    grid = _numeric_grid(fixed, spec.is_mambaish)
    rng = random.Random(0)
    pts = []
    for _ in range(a.scalar_sample):
        combo = [t for _, opts in axes for t in rng.choice(opts)]
        i = rng.randrange(grid["mfs"].size)
        pts.append(flags + point_flags(combo, grid["mfs"][i], grid["ratio"][i], grid["msize"][i], grid["run"][i]))
    t0 = time.perf_counter()
    for fl in pts:
        make_plan(gpu, model, fl)
    dt = time.perf_counter() - t0
    rate = len(pts) / dt
    print(f"scalar:     {len(pts):,} configurations in {dt:.3f} s = {rate:,.0f} configurations/s")
    print(f"speed-up:   {res.evaluated / best / rate:,.0f}x")


if __name__ == "__main__":
    main()
