"""How fast the search evaluates configurations: vectorized grid vs one plan at a time.

    python benchmarks/search.py [--gpu rtxpro6000] [--model qwen3.6-27b] [--scalar-sample 300]

Prints the default grid's size, wall time and configurations per second, then the rate of
evaluating a random sample of the same configurations one at a time through the scalar `plan`
path (make_plan), and the ratio.
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
from planner.plan import make_plan  # noqa: E402
from planner.search import Needs, _categorical_axes, _numeric_grid, given_dests, point_flags, run_search  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpu", default="rtxpro6000")
    ap.add_argument("--model", default="qwen3.6-27b")
    ap.add_argument("--flags", default="", help="fixed SGLang flags, e.g. '--speculative-algorithm EAGLE'")
    ap.add_argument("--scalar-sample", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    gpu, model = find_profile(a.gpu), resolve_model(a.model)
    flags = a.flags.split()
    best = float("inf")
    res = None
    for _ in range(a.repeat):
        t0 = time.perf_counter()
        res = run_search(gpu, model, flags, needs=Needs(), relax=False)
        best = min(best, time.perf_counter() - t0)
    print(f"model={a.model} gpu={a.gpu} flags='{a.flags}'")
    print(f"vectorized: {res.evaluated:,} configurations in {best:.3f} s (best of {a.repeat}) "
          f"= {res.evaluated / best:,.0f} configurations/s; {res.feasible:,} feasible")

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
