"""Reading the calibration logs (I/O edge of :mod:`planner.engines.sglang.calibration`).

``tests/data/calibration/index.json`` lists each public boot-log excerpt with its source, GPU, model,
flags, release and outcome, and which figures it feeds (``uses``). This module parses the excerpts with
:mod:`planner.logs` and turns them into the rows :func:`calibration.fit` takes, plus the before-boot and
given-free-memory comparisons ``benchmarks/verdicts.py`` prints.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from planner.engines.sglang import calibration as cal
from planner.logs import CudaGraphBatchSizes, CudaGraphBegin, CudaGraphEnd, parse_file
from planner.logs.events import InitDistributedEnd

GIB = 1 << 30
MIB = 1 << 20
def _calibration_dir() -> Path:
    """tests/data/calibration/ of the source tree: beside the package when run from a checkout, else found
    from the working directory (an installed package, with the tests, notebooks or benchmarks of a checkout)."""
    rel = Path("tests") / "data" / "calibration"
    here = Path(__file__).resolve().parents[3]
    for root in (here, Path.cwd(), *Path.cwd().parents):
        if (root / rel / "index.json").is_file():
            return root / rel
    return here / rel


DEFAULT_DIR = _calibration_dir()


def load_index(folder: Path = DEFAULT_DIR) -> list[dict]:
    return json.loads((folder / "index.json").read_text(encoding="utf-8"))["logs"]


def _model_arg(model: str, folder: Path) -> str:
    """A catalog name, or a config.json beside the logs (``configs/...``), resolved against the folder."""
    return str(folder / model) if model.endswith(".json") else model


def _launch(folder: Path, entry: dict):
    return parse_file(folder / entry["file"]).latest


_DECODE_END = re.compile(r"Capture (?:target decode CUDA graph|cuda graph) end\..*?mem usage=([\d.]+) GB")
_PREFILL_END = re.compile(r"Capture (?:target prefill CUDA graph|piecewise CUDA graph) end\..*?mem usage=([\d.]+) GB")
_DECODE_BS = re.compile(r"Capture (?:cuda graph bs |target decode CUDA graph begin\..*?bs=)(\[[^\]]*\])")
_PREFILL_TOKENS = re.compile(r"Capture (?:cuda graph num tokens |target prefill CUDA graph begin\..*?num_tokens=)(\[[^\]]*\])")
_DRAFT_DECODE_END = re.compile(r"Capture draft (?:decode CUDA|cuda) graph end\..*?mem usage=([\d.]+) GB")
_DRAFT_EXTEND_END = re.compile(r"Capture draft extend (?:CUDA|cuda) graph end\..*?mem usage=([\d.]+) GB")
GRAPH_USES = ("graph", "prefill_graph", "graph_holdout", "draft_graph", "draft_graph_holdout")


def _int_list(text: str) -> list[int] | None:
    try:
        v = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return None  # an abbreviated list ('[1, 2, 4, ...]')
    return list(v) if isinstance(v, list) and v and all(isinstance(x, int) for x in v) else None


def capture_rows(entries: list[dict], folder: Path = DEFAULT_DIR) -> list[dict]:
    """One row per log that feeds the CUDA-graph fit ('graph': decode, 'prefill_graph': prefill) or checks it
    ('graph_holdout': never fitted): the measured ``mem usage`` of the decode and prefill capture lines (both
    spellings: ``Capture cuda graph end. Time elapsed ...`` to 0.5.13, ``Capture target decode CUDA graph end.
    elapsed=...`` from 0.5.14; the largest over the ranks), the captured sizes (from the log, or from the index
    where the log abbreviates them, with how they are known), and the model's geometry from the index."""
    from planner.engines.sglang.pipeline.server_args import _build_piecewise_tokens  # noqa: PLC0415

    rows = []
    for e in entries:
        uses = set(e["uses"]) & set(GRAPH_USES)
        if not uses:
            continue
        text = (folder / e["file"]).read_text(encoding="utf-8")
        # a draft-capture log needs no target geometry (its figure is the draft's captures alone)
        g, cap = e.get("geometry", {}), e.get("capture", {})
        tp = int(e["tp"]) if isinstance(e["tp"], int) else 1
        row = {"id": e["id"], "class": e.get("gpu_class", ""),
               "holdout": "graph_holdout" in uses or "draft_graph_holdout" in uses,
               "gpu": e["gpu"], "decode": None, "prefill": None, "draft": None}
        # a source that quotes the figures in a table instead of the capture lines: the index names them, and they
        # must appear verbatim in the excerpt (tests/test_calibration.py checks it)
        table = cap.get("measured_gib", {})
        dec = [float(x) for x in _DECODE_END.findall(text)] or ([table["decode"]] if "decode" in table else [])
        if dec and ("graph" in uses or "graph_holdout" in uses):
            m = _DECODE_BS.search(text)
            bs = cap.get("decode_bs") or (_int_list(m.group(1)) if m else None)
            if bs:
                row["decode"] = {"graphs": len(bs), "max_bs": max(bs), "layers": g["layers"], "bs": list(bs),
                                 "vocab": g["vocab"], "tp": tp,
                                 "graph_layers": cal.graph_layers(len(bs), g["layers"]),
                                 "known_bytes": max(bs) * (g["vocab"] // tp) * 4,  # the shared float32 logits
                                 "measured_bytes": int(round(max(dec) * GIB))}
        pre = [float(x) for x in _PREFILL_END.findall(text)] or ([table["prefill"]] if "prefill" in table else [])
        if pre and ("prefill_graph" in uses or "graph_holdout" in uses):
            m = _PREFILL_TOKENS.search(text)
            tokens = (_int_list(m.group(1)) if m else None) or (
                _build_piecewise_tokens(cap["prefill_max_tokens"]) if "prefill_max_tokens" in cap else None)
            if tokens:
                per_token = cal.activation_per_token(g["hidden"], g["act_intermediate"], tp)
                b = re.search(r"Capture target prefill CUDA graph begin\. backend=(\w+)", text)
                backend = cap.get("prefill_backend") or (b.group(1) if b else "piecewise")
                row["prefill"] = {"sizes": len(tokens), "max_tokens": max(tokens), "layers": g["layers"],
                                  "tokens": list(tokens), "per_token_bytes": per_token,
                                  "backend": "breakable" if backend == "breakable" else "piecewise",
                                  "act_bytes": max(tokens) * per_token, "graph_layers": len(tokens) * g["layers"],
                                  "measured_bytes": int(round(max(pre) * GIB))}
        if "draft_graph" in uses or "draft_graph_holdout" in uses:
            row["draft"] = _draft_row(text, cap.get("draft") or {})
        if row["decode"] or row["prefill"] or row["draft"]:
            rows.append(row)
    return rows


def _draft_row(text: str, d: dict) -> dict | None:
    """The draft's captures under speculative decoding, per capture: the first ``Capture draft decode`` (``draft cuda
    graph`` to 0.5.13) and ``draft extend`` lines' mem usage (a fork's later rungs are not upstream captures), with the
    captured graphs x draft layers each holds (decode: one forward per step; extend: one) from the index."""
    n, layers, steps = len(d.get("bs") or []), int(d.get("layers") or 0), int(d.get("steps") or 0)
    out = {}
    for part, rx, per in (("decode", _DRAFT_DECODE_END, steps), ("extend", _DRAFT_EXTEND_END, 1)):
        m = rx.search(text)
        if m and n and part in d.get("parts", ("decode", "extend")):
            out[part] = {"graph_layers": n * layers * per, "known_bytes": 0,
                         "measured_bytes": int(round(float(m.group(1)) * GIB))}
    return out or None


def graph_rows(entries: list[dict], folder: Path = DEFAULT_DIR) -> list[dict]:
    """The decode rows of the fitted logs, in :func:`calibration.fit`'s shape."""
    return [{"id": r["id"], **r["decode"]} for r in capture_rows(entries, folder) if r["decode"] and not r["holdout"]]


def graph_check_rows(entries: list[dict], folder: Path = DEFAULT_DIR) -> list[dict]:
    """Every capture log (fitted or held out) against the planner's own estimate functions for its class
    (:func:`calibration.graph_estimate`, :func:`calibration.prefill_graph_estimate`, the decode list and the
    prefill token sizes as captured): ``estimate / measured`` of decode + prefill together and each alone."""
    rows = []
    for r in capture_rows(entries, folder):
        est = meas = 0
        parts = {}
        if r["decode"]:
            d = r["decode"]
            e, _ = cal.graph_estimate(capture_bs=d["bs"], layers=d["layers"], vocab=d["vocab"], tp=d["tp"],
                                      tokens_per_bs=1, context_len=0, backend="", gpu_cls=r["class"])
            parts["decode"] = (e, d["measured_bytes"])
            est, meas = est + e, meas + d["measured_bytes"]
        if r["prefill"]:
            p = r["prefill"]
            e, _ = cal.prefill_graph_estimate(tokens=p["tokens"], layers=p["layers"], per_token_bytes=p["per_token_bytes"],
                                              backend=p["backend"], gpu_cls=r["class"])
            parts["prefill"] = (e, p["measured_bytes"])
            est, meas = est + e, meas + p["measured_bytes"]
        if r.get("draft"):
            e = sum(cal.draft_capture_estimate(k, d["graph_layers"], d["known_bytes"]) for k, d in r["draft"].items())
            m = sum(d["measured_bytes"] for d in r["draft"].values())
            parts["draft"] = (e, m)
            est, meas = est + e, meas + m
        rows.append({"id": r["id"], "class": r["class"], "holdout": r["holdout"], "estimate_bytes": est,
                     "measured_bytes": meas, "ratio": est / meas, "parts": parts})
    return rows


def workspace_rows(entries: list[dict], folder: Path = DEFAULT_DIR, checks: bool = False) -> list[dict]:
    """The step between ``Memory pool end`` and ``Capture cuda graph begin`` per log ('workspace' in uses: the
    fit's rows); with ``checks`` also the logs listed as a check of the fit ('workspace_check')."""
    rows = []
    for e in entries:
        if "workspace" not in e["uses"] and not (checks and "workspace_check" in e["uses"]):
            continue
        la = _launch(folder, e)
        for r in la.ranks.values():
            begins = [x.avail_gib for x in r.of(CudaGraphBegin) if x.graph == "decode" and x.avail_gib is not None]
            if r.memory_pool_end is None or not begins:
                continue
            rows.append({"id": e["id"], "tp": e["tp"], "fitted": "workspace" in e["uses"],
                         "known_bytes": e["workspace_known_mib"] * MIB,
                         "measured_bytes": int(round((r.memory_pool_end.avail_gib - begins[0]) * GIB))})
            break
    return rows


def dist_init_rows(entries: list[dict], folder: Path = DEFAULT_DIR) -> list[dict]:
    """Every logged ``Init torch distributed ends. mem usage=`` (model_executor/model_runner.py:1101-1236
    @0.5.11: free memory after ``set_device`` minus free memory after the NCCL / gloo groups and the custom
    all-reduce are set up): what the communication buffers take per GPU. It happens before the weights load,
    so it is inside the P SGLang measures itself and never in the post-pool headroom; a before-boot plan
    models it with ``planner.engines.sglang.plan.comm_buffer_mib`` (per interconnect class and tp; 0 at tp 1, where it is
    inside the CUDA-context figure). ``planner_gib`` is that figure for the log's GPU profile (``plan.gpu``, or
    ``comm_profile`` for a log without a plan)."""
    from planner.hardware.profiles import INTERCONNECT_DEFAULT, find_profile  # noqa: PLC0415
    from planner.engines.sglang.plan import comm_buffer_mib  # noqa: PLC0415

    rows = []
    for e in entries:
        if not isinstance(e.get("tp"), int):
            continue
        la = _launch(folder, e)
        if la is None:  # a source quoting figures, not log lines (corpus-70468080142)
            continue
        vals = [x.mem_usage_gib for r in la.ranks.values() for x in r.of(InitDistributedEnd)
                if x.mem_usage_gib is not None]
        if vals:
            profile = (e.get("plan") or {}).get("gpu") or e.get("comm_profile") or ""
            mib, why = comm_buffer_mib(find_profile(profile).interconnect if profile else INTERCONNECT_DEFAULT, e["tp"],
                                       nnodes=int(e.get("nnodes", 1)))
            rows.append({"id": e["id"], "tp": e["tp"], "gpu": e["gpu"], "profile": profile, "ranks": len(vals),
                         "min_gib": min(vals), "max_gib": max(vals), "planner_gib": mib / 1024, "planner_why": why})
    return rows


def refit(folder: Path = DEFAULT_DIR) -> dict:
    """A fresh fit of ``calibration.json``'s coefficients on the logs (what the test compares)."""
    entries = load_index(folder)
    caps = capture_rows(entries, folder)
    g, w = graph_rows(entries, folder), workspace_rows(entries, folder)
    out = cal.fit(g, w)
    graphs = cal.fit_graphs(caps)
    assert graphs["graph_per_graph_layer"] == out["graph_per_graph_layer"]  # one decode rule, two callers
    out.update(graphs)
    out["graph_holdout"] = out.pop("holdout")
    fitted = {r["id"] for r in caps if not r["holdout"]}
    out["post_pool_logs"] = len(fitted | {r["id"] for r in w})
    # what the planner carries after the pools: the workspace residual + the largest under-estimate of the CUDA
    # graphs (decode + prefill, class factor applied) on any class's logs (the pooled decode slope's own residual,
    # graph_residual_max_gib, is before the class factors)
    worst = max([0.0] + [c["under_max_gib"] for c in out["graph_classes"].values()])
    out["post_pool_residual_max_gib"] = round(worst + out["workspace_residual_max_gib"], 3)
    return out


def verdict_rows(entries: list[dict], folder: Path = DEFAULT_DIR) -> list[dict]:
    """Before-boot plans (modelled free memory) against the known outcome and the logged free memory."""
    from planner.catalog.catalog import resolve_model  # noqa: PLC0415
    from planner.hardware.profiles import find_profile  # noqa: PLC0415
    from planner.engines.sglang.plan import make_plan  # noqa: PLC0415

    rows = []
    for e in entries:
        if "verdict" not in e["uses"]:
            continue
        p = e["plan"]
        plan = make_plan(find_profile(p["gpu"]), resolve_model(_model_arg(p["model"], folder)), p["flags"],
                         version=p["version"])
        la = _launch(folder, e)
        ends = [r.load_end.avail_gib for r in la.ranks.values() if r.load_end is not None and r.load_end.avail_gib]
        # the before-boot free memory after the weights is compared only where the card is known and
        # dedicated ('load' in uses): a shared desktop GPU's free memory is not the profile's
        logged = min(ends) if ends and "load" in e["uses"] else None
        booted = e["outcome"].startswith("booted")
        row = {"id": e["id"], "verdict": plan.verdict, "booted": booted,
               "right": (plan.verdict == "fits") == booted,
               "free_after_pred_gib": plan.free_after_bytes / GIB, "free_after_log_gib": logged,
               "free_after_err": None if logged is None else (plan.free_after_bytes / GIB - logged) / logged,
               "diagnosed": e.get("diagnosed")}
        diag = e.get("diagnosed") or {}
        if logged is not None and "free_after" in diag:
            row["free_after_err_with_logged_comm"] = _err_with_logged_comm(plan, la, logged, int(e["tp"]))
        rows.append(row)
    return rows


def _err_with_logged_comm(plan, la, logged_gib: float, tp: int) -> float | None:
    """The before-boot free-memory error once the planner's NCCL / custom all-reduce figure
    (planner.engines.sglang.plan.comm_buffer_mib at tp > 1) is replaced by what the log's ``Init torch distributed ends``
    lines show: the check that a diagnosed error comes from that figure and nothing else."""
    from planner.engines.sglang.plan import comm_buffer_mib  # noqa: PLC0415

    vals = [x.mem_usage_gib for r in la.ranks.values() for x in r.of(InitDistributedEnd) if x.mem_usage_gib is not None]
    if not vals or tp <= 1:
        return None
    pred = plan.free_after_bytes / GIB + comm_buffer_mib(plan.gpu.interconnect, tp)[0] / 1024 - max(vals)
    return (pred - logged_gib) / logged_gib


def pool_rows(entries: list[dict], folder: Path = DEFAULT_DIR) -> list[dict]:
    """``plan check`` given the measured free memory: every logged pool, predicted vs logged."""
    from planner.engines.sglang.check import check  # noqa: PLC0415
    from planner.hardware.profiles import find_profile  # noqa: PLC0415

    rows = []
    for e in entries:
        if "pools" not in e["uses"]:
            continue
        c = e["check"]
        res = check(parse_file(folder / e["file"]), find_profile(c["gpu"]), _model_arg(c["model"], folder), c["flags"],
                    version=c["version"])
        for r in res.rows:
            if r.predicted is None or r.actual is None or r.what in ("max_running_requests", "context_len",
                                                                      "Memory pool end avail"):
                continue
            # the log prints GiB to two decimals: only the part of a difference beyond that rounding is an error
            slack = 0.005 if r.unit == "GiB" else 0.0
            err = max(0.0, abs(r.actual - r.predicted) - slack - r.tol) / max(abs(r.actual), 1e-9)
            raw = abs(r.actual - r.predicted) / max(abs(r.actual), 1e-9)
            rows.append({"id": e["id"], "what": r.what, "predicted": r.predicted, "actual": r.actual, "err": err,
                         "raw_err": raw})
    return rows


def refusal_rows(entries: list[dict], folder: Path = DEFAULT_DIR) -> list[dict]:
    """Launches that use what the planner does not model ('refusal' in uses): each must be refused by name
    (BadInput, exit 2), never given a verdict."""
    from planner.catalog.catalog import resolve_model  # noqa: PLC0415
    from planner.errors import BadInput  # noqa: PLC0415
    from planner.hardware.profiles import find_profile  # noqa: PLC0415
    from planner.engines.sglang.plan import make_plan  # noqa: PLC0415

    rows = []
    for e in entries:
        if "refusal" not in e["uses"]:
            continue
        p = e["plan"]
        try:
            plan = make_plan(find_profile(p["gpu"]), resolve_model(_model_arg(p["model"], folder)), p["flags"],
                             version=p["version"])
            rows.append({"id": e["id"], "refused": False, "message": f"verdict {plan.verdict}"})
        except BadInput as exc:
            rows.append({"id": e["id"], "refused": True, "message": str(exc)})
    return rows
