"""How long ``plan --model M --gpu any`` takes: every GPU type's smallest deployment (planner/engines/sglang/deploy.py).

    python benchmarks/hardware.py [--engine sglang|vllm] [--model qwen3.6-27b] [--gpu any] [--need-context N]
                                  [--need-concurrency N]
                                  [--layouts auto|all|tp,dp,pp,pd] [--repeat 3]

Prints the wall and CPU time of each run (the first pays the imports' and caches' warm-up), the layouts evaluated and
the deployments found (how many of each layout kind: tp, dp = DP attention + EP, pp, pd). No timing assertions anywhere: this prints figures.
"""

from __future__ import annotations

import argparse
import statistics
import time


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--engine", choices=("sglang", "vllm"), default="sglang")
    p.add_argument("--model", default="qwen3.6-27b")
    p.add_argument("--gpu", default="any")
    p.add_argument("--need-context", type=int)
    p.add_argument("--need-concurrency", type=int, default=1)
    p.add_argument("--layouts", help="the layout kinds searched (deploy.py --layouts; default auto)")
    p.add_argument("--repeat", type=int, default=3)
    ns = p.parse_args()
    t0 = time.perf_counter()
    from planner.catalog.catalog import resolve_model
    from planner.engines.deployments import gpu_set
    import planner.engines.sglang.search_scan as scan

    if ns.engine == "vllm":  # planner/engines/vllm/deploy.py
        from planner.engines.vllm.deploy import Needs, search_hardware
    else:
        from planner.engines.sglang.deploy import search_hardware
        from planner.engines.sglang.search import Needs

    print(f"imports: {time.perf_counter() - t0:.2f} s")
    model = resolve_model(ns.model)
    needs = Needs(context=ns.need_context, concurrency=ns.need_concurrency)
    times = []
    for k in range(ns.repeat):
        scan._SHARED.clear()  # every run from empty search caches, as a fresh process
        t, c = time.perf_counter(), time.process_time()
        res = search_hardware(gpu_set(ns.gpu), model, [], {}, needs, layouts_text=ns.layouts)
        times.append(time.perf_counter() - t)
        cpu = time.process_time() - c  # this process's CPU time: what a loaded machine does not inflate
        kinds = {}
        for d in res.deployments:
            kinds[d.kind] = kinds.get(d.kind, 0) + 1
        print(f"run {k + 1}: {times[-1]:.2f} s ({cpu:.2f} s CPU), {res.tried} layouts, {len(res.deployments)} deployments "
              f"({', '.join(f'{n} {kind}' for kind, n in sorted(kinds.items()))}), "
              f"best {res.deployments[0].gpu.id} x {res.deployments[0].gpus}" if res.deployments else
              f"run {k + 1}: {times[-1]:.2f} s ({cpu:.2f} s CPU), {res.tried} layouts, no deployment")
    print(f"median {statistics.median(times):.2f} s over {len(times)} runs")


if __name__ == "__main__":
    main()
