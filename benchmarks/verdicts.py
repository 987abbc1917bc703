"""Issue 10's "done when" figures over the calibration logs (tests/data/calibration/, README "Calibration").

    python benchmarks/verdicts.py           # print the figures
    python benchmarks/verdicts.py --write   # refit planner/engines/sglang/calibration.json first

Prints: the fitted post-pool coefficients with their residuals; the before-boot verdict against every
launch with a known outcome that the planner can plan (model in the catalog, GPU profile); the
before-boot free memory after the weights against the logged ``Load weight end`` value; and every logged
pool from ``plan check`` (which re-plans with the log's measured free memory). Each figure says on how
many logs it stands.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

GIB = 1 << 30

from planner.engines.sglang import calibration as cal  # noqa: E402
from planner.engines.sglang import calibration_logs as cl  # noqa: E402

KEYS = ("graph_per_graph_layer", "workspace_extra", "graph_logs", "graph_residual_max_gib", "workspace_logs",
        "workspace_residual_max_gib", "post_pool_logs", "post_pool_residual_max_gib", "prefill_per_act",
        "prefill_per_graph_layer", "prefill_per_graph_layer_breakable", "prefill_factor", "prefill_logs",
        "graph_classes", "graph_holdout", "draft_decode_offset", "draft_extend_offset", "draft_logs", "draft_under_max_pct",
        "draft_over_max_pct")


def write_calibration(fresh: dict) -> None:
    about = ("Fitted by planner.engines.sglang.calibration_logs.refit() on tests/data/calibration/ (public SGLang boot "
             "logs, listed in the README). Regenerate: python benchmarks/verdicts.py --write. Bytes.")
    data = {"about": about, **{k: fresh[k] for k in KEYS}}
    kept = json.loads(cal.CALIBRATION_FILE.read_text(encoding="utf-8")).get("bound_classes")
    if kept:  # stated bounds for classes without logs (AMD: pipeline/rocm.py), not fitted: kept as they are
        data["bound_classes"] = kept
    cal.CALIBRATION_FILE.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    cal.coefficients.cache_clear()


def graph_table() -> str:
    """The CUDA-graph estimate per GPU class and per log (markdown; the README's "Calibration" section shows it as
    printed): the class factors fitted on each class's logs and, per log, the decode and prefill capture as
    measured (``mem usage=``) against the estimate with those factors; hold-out logs were never fitted."""
    c = cal.coefficients()
    classes = c.graph_classes or {}
    out = ["| GPU class | logs | decode: + per capture | prefill factor | largest under-estimate | largest over-estimate |",
           "|---|---|---|---|---|---|"]
    for key, label in cal.GPU_CLASSES.items():
        i = cal.class_info(key)
        if i["own"]:
            out.append(f"| {label} ({key}) | {i['logs']} ({i['decode_logs']} decode, {i['prefill_logs']} prefill) | "
                       f"{i['decode_offset'] / (1 << 20):.0f} MiB | {i['prefill_factor']:.2f} | {i['under_max_pct']:.1f}% "
                       f"({i['under_max_gib']:.2f} GiB) | {i['over_max_pct']:.1f}% |")
        elif i.get("bound"):  # a stated bound, not fitted (calibration.json bound_classes)
            out.append(f"| {label} ({key}) | none: a stated bound | {i['decode_offset'] / (1 << 20):.0f} MiB | "
                       f"{i['prefill_factor']:.2f} | bound: {i['under_max_gib']:.2f} GiB | - |")
        else:
            out.append(f"| {label} ({key}) | none: the largest of any class | {i['decode_offset'] / (1 << 20):.0f} MiB | "
                       f"{i['prefill_factor']:.2f} | - | - |")
    out.append(f"| the draft's captures, every class | {c.draft_logs} (GPUs not named) | draft decode "
               f"{c.draft_decode_offset / (1 << 20):.0f} MiB, draft extend {c.draft_extend_offset / (1 << 20):.0f} MiB | "
               f"- | {c.draft_under_max_pct:.1f}% | {c.draft_over_max_pct:.1f}% |")
    out += ["", "| log | class | decode measured / estimated GiB | prefill measured / estimated GiB | "
            "draft measured / estimated GiB | estimate vs measured |", "|---|---|---|---|---|---|"]
    for r in cl.capture_rows(cl.load_index()):
        cls = r["class"]
        i = cal.class_info(cls) if cls in classes else None
        est = meas = 0.0
        cells = []
        for kind in ("decode", "prefill", "draft"):
            x = r[kind]
            if x is None:
                cells.append("-")
                continue
            if kind == "draft":
                e = sum(cal.draft_capture_estimate(k, d["graph_layers"], d["known_bytes"]) for k, d in x.items())
                est, meas = est + e, meas + sum(d["measured_bytes"] for d in x.values())
                cells.append(f"{sum(d['measured_bytes'] for d in x.values()) / GIB:.2f} / {e / GIB:.2f}")
                continue
            elif kind == "decode":
                e = c.graph_per_graph_layer * x["graph_layers"] + x["known_bytes"]
            else:
                per = c.prefill_per_graph_layer_breakable if x["backend"] == "breakable" else c.prefill_per_graph_layer
                e = int(c.prefill_per_act * x["act_bytes"]) + per * x["graph_layers"]
            if kind == "decode":
                e = e + (i["decode_offset"] if i else 0)
            elif kind == "prefill":
                e = e * (i["prefill_factor"] if i else c.prefill_factor)
            est, meas = est + e, meas + x["measured_bytes"]
            cells.append(f"{x['measured_bytes'] / GIB:.2f} / {e / GIB:.2f}")
        tag = " (hold-out)" if r["holdout"] else ""
        where = f"{cls}" if i else "card not named (pooled fit only)"
        out.append(f"| {r['id']}{tag} | {where} | {cells[0]} | {cells[1]} | {cells[2]} | {100 * (est / meas - 1):+.0f}% |")
    return "\n".join(out)


def main(argv: list[str]) -> int:
    entries = cl.load_index()
    fresh = cl.refit()
    if "--write" in argv:
        write_calibration(fresh)
    if "--table" in argv:
        print(graph_table())
        return 0
    c = cal.coefficients()
    print(f"calibration logs: {len(entries)} public excerpts (tests/data/calibration/index.json)")
    print(f"CUDA graphs: {c.graph_per_graph_layer / (1 << 20):.3f} MiB per captured graph per layer, fitted on "
          f"{c.graph_logs} logs; residuals {fresh['graph_residuals_gib']} GiB")
    print(f"workspace: +{c.workspace_extra / (1 << 20):.0f} MiB beyond FlashInfer's workspace, fitted on "
          f"{c.workspace_logs} logs; residuals {fresh['workspace_residuals_gib']} GiB")
    print(f"prefill CUDA graph: {c.prefill_per_act:.4f} x the largest size's activations + "
          f"{c.prefill_per_graph_layer / (1 << 20):.3f} MiB (piecewise) or {c.prefill_per_graph_layer_breakable / (1 << 20):.3f} "
          f"MiB (breakable) per captured size per layer, x {c.prefill_factor:.2f}, fitted on {c.prefill_logs} logs")
    print("CUDA graphs per GPU class (factors fitted on each class's logs; decode + prefill as measured):")
    print(graph_table())
    holdout = c.graph_holdout or []
    for h in holdout:
        print(f"  hold-out {h['id']} ({h['class']}): estimated {h['estimate_bytes'] / GIB:.2f} GiB, measured "
              f"{h['measured_bytes'] / GIB:.2f} GiB ({'under by ' + str(h['under_pct']) + '%' if h['under_pct'] else 'not under'})")
    print(f"post-pool estimates within {c.post_pool_residual_max_gib:.2f} GiB on {c.post_pool_logs} logs "
          "(workspace residual + the largest CUDA-graph under-estimate of any class)")
    dist = cl.dist_init_rows(entries)
    if dist:
        print("NCCL / custom all-reduce buffers ('Init torch distributed ends. mem usage', before the weights: inside "
              "the P SGLang measures, not a post-pool term; planner.engines.sglang.plan.comm_buffer_mib takes each interconnect class's largest log, see notebooks/calibration.ipynb):")
        for r in dist:
            print(f"  {r['id']}: tp {r['tp']}, {r['ranks']} rank(s): {r['min_gib']:.2f}-{r['max_gib']:.2f} GiB logged; "
                  f"the before-boot plan assumes {r['planner_gib']:.2f} GiB ({r['profile'] or 'no profile'}: "
                  f"{r['planner_why']})")
    print("activations of a prefill chunk: no boot log measures them (the first prefill runs after SGLang's last "
          "memory line), so they keep the physical estimate, not fitted")
    stale = [k for k in KEYS if fresh[k] != getattr(c, k)]
    if stale:
        print(f"calibration.json differs from a fresh fit in {stale}: run with --write")

    v = cl.verdict_rows(entries)
    right = sum(r["right"] for r in v)
    print(f"before-boot verdict right: {right}/{len(v)} launches with a known outcome"
          + (f" ({100 * right / len(v):.0f}%)" if v else ""))
    for r in v:
        if not r["right"] and r["diagnosed"] and "verdict" in r["diagnosed"]:
            d = r["diagnosed"]["verdict"]
            print(f"  wrong on {r['id']}, diagnosed: {d['what']}; cause: {d['cause']}; owner: {d['owner']}")
    for r in v:
        print(f"  {r['id']}: planner {r['verdict']}, log {'booted' if r['booted'] else 'failed'}; free after weights "
              f"{r['free_after_pred_gib']:.2f} vs logged {r['free_after_log_gib']:.2f} GiB ({100 * r['free_after_err']:+.1f}%)")
    errs = [abs(r["free_after_err"]) for r in v if r["free_after_err"] is not None
            and "free_after" not in (r["diagnosed"] or {})]
    if errs:
        print(f"before-boot free memory after the weights: max error {100 * max(errs):.1f}% on {len(errs)} logs")
    for r in v:
        if r["diagnosed"] and "free_after" in r["diagnosed"] and r["free_after_err"] is not None:
            d, fixed = r["diagnosed"]["free_after"], r.get("free_after_err_with_logged_comm")
            print(f"  and a diagnosed planner error on {r['id']}: {100 * r['free_after_err']:+.1f}% "
                  f"(cause: {d['cause']}; owner: {d['owner']})"
                  + (f"; {100 * fixed:+.1f}% with the logged communication buffers" if fixed is not None else ""))

    refused = cl.refusal_rows(entries)
    if refused:
        print(f"launches using what is not modelled: {sum(r['refused'] for r in refused)}/{len(refused)} refused by name "
              "(no verdict given)")
        for r in refused:
            print(f"  {r['id']}: {r['message']}")

    pools = cl.pool_rows(entries)
    if pools:
        worst = max(pools, key=lambda r: r["err"])
        print(f"pools given the measured free memory: {len(pools)} logged pools on {len({r['id'] for r in pools})} logs, "
              f"max error beyond the log's own rounding {100 * worst['err']:.2f}% ({worst['what']} of {worst['id']})")
        for r in pools:
            print(f"  {r['id']}: {r['what']}: predicted {r['predicted']:.4g}, logged {r['actual']:.4g} ({100 * r['raw_err']:.2f}% raw, {100 * r['err']:.2f}% beyond rounding)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
