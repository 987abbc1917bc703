"""Post-pool allocations fitted on public SGLang boot logs, and how sure a verdict is.

SGLang never budgets for what it allocates after the pools (CUDA graphs, attention workspaces,
activations): they must fit in ``P x (1 - mem_fraction_static)``. The physical parts are known
(FlashInfer's workspace size, the shared logits buffer); the rest is fitted here on public boot logs
(``tests/data/calibration/``, listed in the README's "Calibration" section) and stored, with the fit's
sample size and residuals, in ``calibration.json`` next to this file. Every estimate keeps a printed
formula and says where its coefficient came from.

Terms (per GPU):

* **attention workspace** = FlashInfer's global workspace (384 MiB; 512 MiB for Qwen2/Qwen3/MiMo/Qwen3-VL,
  layers/attention/flashinfer_backend.py:163-214 @0.5.11) + ``workspace_extra`` (fitted: what the logs
  show between ``Memory pool end`` and ``Capture cuda graph begin`` beyond it);
* **CUDA graphs** (decode) = ``graph_per_graph_layer`` (fitted, pooled) x captured graphs x layers captured in
  each (target, plus the draft's layers x steps under speculative decoding) + the shared logits buffer
  ``max_bs x tokens per bs x vocab / tp x 4 B`` (float32, model_executor/cuda_graph_runner.py @0.5.11)
  + FlashInfer's graph index buffers ``max_bs x tokens per bs x context x 5 B`` + a constant per GPU class
  (``decode_offset``: what a capture costs beyond its graphs on that class's logs, :func:`fit_graphs`);
* **prefill CUDA graph** (piecewise 0.5.10-0.5.14, breakable from 0.5.15) = ``prefill_per_act`` x one layer's
  activations at the largest captured token count + ``prefill_per_graph_layer`` (piecewise) or
  ``prefill_per_graph_layer_breakable`` x captured sizes x layers, x ``prefill_factor`` (one for every class).

The class of a launch is its GPU profile's compute capability (:data:`GPU_CLASSES`); a class without logs takes
the largest constant of any class. The residuals are kept per class (``graph_classes``), and the verdict's
``Confidence:`` line and the search's margin use the error of the launch's class (:func:`search_margin`).

The fit itself (:func:`fit`) is pure: it takes the measured rows and returns the coefficients and
residuals; ``benchmarks/verdicts.py`` and ``notebooks/calibration.ipynb`` run it on the calibration
logs and a test checks ``calibration.json`` still equals a fresh fit.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

GIB = 1 << 30
MIB = 1 << 20
_HERE = Path(__file__).resolve().parent
CALIBRATION_FILE = _HERE / "calibration.json"


@dataclass(frozen=True)
class Coefficients:
    graph_per_graph_layer: int  # bytes per captured graph per layer in it
    workspace_extra: int  # bytes beyond FlashInfer's workspace before graph capture
    graph_logs: int  # logs the graph coefficient was fitted on
    graph_residual_max_gib: float
    workspace_logs: int
    workspace_residual_max_gib: float
    post_pool_logs: int  # logs with any measured post-pool figure (the confidence statement)
    post_pool_residual_max_gib: float
    prefill_per_act: float = 0.0  # x the activation bytes of the largest captured prefill size
    prefill_per_graph_layer: int = 0  # bytes per captured prefill size per layer, piecewise (torch.compile) graph
    prefill_per_graph_layer_breakable: int = 0  # the same, breakable graph (several segments per layer)
    prefill_factor: float = 1.0  # keeps every fitted prefill log under-estimated by at most UNDER_TARGET
    prefill_logs: int = 0
    # GPU class -> {"decode_offset" (bytes), "prefill_factor", "logs", "decode_logs", "prefill_logs", "under_max_pct",
    # "over_max_pct", "under_max_gib"} (fit_graphs)
    graph_classes: dict | None = None
    graph_holdout: list | None = None  # logs never fitted, with the fitted estimate (fit_graphs' "holdout")
    # the draft's captures under speculative decoding: a constant per capture (draft decode, draft extend) beyond the
    # per-graph-layer slope, pooled over the draft-capture logs (their GPUs are not named), for every class (fit_graphs)
    draft_decode_offset: int = 0
    draft_extend_offset: int = 0
    draft_logs: int = 0
    draft_under_max_pct: float = 0.0
    draft_over_max_pct: float = 0.0
    bound_classes: dict | None = None  # class -> a stated bound (not fitted), for a class with no public log (AMD)

    def source(self, term: str) -> str:
        if term == "graph":
            return (f"fitted on {self.graph_logs} public logs, residual max {self.graph_residual_max_gib:.2f} GiB "
                    "(planner/engines/sglang/calibration.json)")
        return (f"fitted on {self.workspace_logs} public logs, residual max {self.workspace_residual_max_gib:.2f} GiB "
                "(planner/engines/sglang/calibration.json)")


@lru_cache(maxsize=1)
def coefficients() -> Coefficients:
    d = json.loads(CALIBRATION_FILE.read_text(encoding="utf-8"))
    return Coefficients(**{k: d[k] for k in Coefficients.__dataclass_fields__ if k in d})


# -- the fit (pure) ---------------------------------------------------------------------------------


def fit(graph_rows: list[dict], workspace_rows: list[dict]) -> dict:
    """Least-squares fit of the two coefficients.

    ``graph_rows``: ``{"graph_layers": captured graphs x layers, "known_bytes": the physical part
    (logits + FlashInfer buffers), "measured_bytes": Capture ... end mem usage}``; the coefficient is
    the least-squares slope through the origin of ``measured - known`` on ``graph_layers``.
    ``workspace_rows``: ``{"known_bytes": FlashInfer workspace or 0, "measured_bytes": Memory pool end
    avail - Capture cuda graph begin avail}``; ``workspace_extra`` is the mean of ``measured - known``.
    Residuals are ``measured - estimate`` in GiB.
    """
    x = np.array([r["graph_layers"] for r in graph_rows], dtype=np.float64)
    y = np.array([r["measured_bytes"] - r["known_bytes"] for r in graph_rows], dtype=np.float64)
    slope = float((x @ y) / (x @ x)) if len(x) else 0.0
    g_res = (y - slope * x) / GIB
    w = np.array([r["measured_bytes"] - r["known_bytes"] for r in workspace_rows], dtype=np.float64)
    extra = float(w.mean()) if len(w) else 0.0
    w_res = (w - extra) / GIB
    return {
        "graph_per_graph_layer": int(round(slope)),
        "workspace_extra": int(round(extra)),
        "graph_logs": len(graph_rows),
        "graph_residual_max_gib": round(float(np.abs(g_res).max()) if len(g_res) else 0.0, 3),
        "workspace_logs": len(workspace_rows),
        "workspace_residual_max_gib": round(float(np.abs(w_res).max()) if len(w_res) else 0.0, 3),
        "graph_residuals_gib": [round(float(v), 3) for v in g_res],
        "workspace_residuals_gib": [round(float(v), 3) for v in w_res],
    }


# -- GPU classes ------------------------------------------------------------------------------------

# CUDA-graph memory is a difference of the device's free memory around capture: besides the graph pool it holds
# what the capture loads lazily (kernel modules, cuBLAS / FlashInfer workspaces), which differs by architecture.
# A launch's class is its compute capability (the GPU profile's; AMD is not modelled by the pipeline yet).
GPU_CLASSES = {
    "sm80": "datacenter Ampere (A100)",
    "sm86": "consumer Ampere (RTX 30, A10G)",
    "sm89": "Ada (RTX 40, L4, L40S, RTX 6000 Ada)",
    "sm90": "Hopper (H100, H200, H20)",
    "sm100": "datacenter Blackwell (B200, B300, GB200)",
    "sm12x": "consumer Blackwell (RTX 50, RTX PRO 6000, DGX Spark, Jetson Thor)",
    "amd": "AMD Instinct",
}
UNDER_TARGET = 0.10  # a class factor keeps every fitted log of its class under-estimated by at most this


def gpu_class(sm: tuple[int, int] | None) -> str:
    """The class key of a compute capability (``Device.sm_major, sm_minor``); "" when unknown."""
    if not sm or sm[0] <= 0:
        return ""
    major, minor = sm
    if major >= 11:
        return "sm12x"
    return {(8, 0): "sm80", (8, 6): "sm86", (8, 7): "sm86", (8, 9): "sm89", (9, 0): "sm90"}.get(
        (major, minor), "sm100" if major == 10 else "")


def profile_class(gpu) -> str:
    """The class of a GPU profile (``planner.hardware.profiles.GpuProfile``): AMD, or its compute capability's."""
    if getattr(gpu, "vendor", "nvidia") == "amd":
        return "amd"
    cc = getattr(gpu, "compute_capability", None)
    if not cc:
        return ""
    major, minor = (int(x) for x in cc.split("."))
    return gpu_class((major, minor))


def class_info(cls: str) -> dict:
    """The fitted figures of a class; a class without logs takes the largest factor and error of any class."""
    classes = coefficients().graph_classes or {}
    if cls in classes:
        return {**classes[cls], "class": cls, "label": GPU_CLASSES.get(cls, cls), "own": True}
    label = GPU_CLASSES.get(cls, cls or "unknown GPU")
    bound = (coefficients().bound_classes or {}).get(cls)
    if bound is not None:  # a stated bound for a class without logs (AMD: planner/engines/sglang/pipeline/rocm.py)
        return {**bound, "class": cls, "label": label, "own": False, "bound": True}
    if not classes:
        return {"decode_offset": 0, "prefill_factor": 1.0, "logs": 0, "under_max_pct": 0.0, "over_max_pct": 0.0,
                "under_max_gib": 0.0, "class": cls, "label": label, "own": False}
    return {**{k: max(c[k] for c in classes.values()) for k in ("decode_offset", "prefill_factor", "under_max_pct",
                                                                "over_max_pct", "under_max_gib")},
            "logs": 0, "class": cls, "label": label, "own": False}


def class_source(cls: str) -> str:
    """How the class's decode-capture constant and its error were found, for a need line."""
    i = class_info(cls)
    if i.get("bound"):
        return i["source"]
    if i["own"] and i["decode_logs"]:
        return (f"{i['label']} ({cls}): + {i['decode_offset'] / MIB:.0f} MiB per capture from its {i['decode_logs']} "
                f"public log(s); on its {i['logs']} logs the graphs' estimate was at most {i['under_max_pct']:.0f}% "
                f"under and {i['over_max_pct']:.0f}% over what they measured")
    return (f"{i['label']}{f' ({cls})' if cls else ''}: no public decode-capture log of this class, so the largest "
            f"class constant, + {i['decode_offset'] / MIB:.0f} MiB")


def activation_per_token(hidden: int, intermediate: int, tp: int) -> int:
    """Bytes of one token's activations in a layer: ``(6 x hidden + 3 x intermediate / tp) x 2 B`` (residual, normed
    input, attention in and out; gate, up and activated MLP intermediates; MoE: top-k x expert width + shared)."""
    return (6 * hidden + 3 * intermediate // tp) * 2


def fit_graphs(rows: list[dict]) -> dict:
    """The decode slope, the prefill coefficients and the class factors, fitted on the capture rows.

    ``rows``: one per log, ``{"id", "class", "holdout", "decode": {"graph_layers", "known_bytes", "measured_bytes"}
    or None, "prefill": {"act_bytes", "graph_layers", "measured_bytes"} or None}``.

    * decode: the least-squares slope through the origin of ``measured - known`` on captured graphs x layers
      (:func:`fit`'s rule);
    * prefill (piecewise / breakable): non-negative least squares of ``measured`` on the activation bytes of the
      largest captured size (the graph pool holds its intermediates; smaller sizes reuse it) and on captured
      sizes x layers (each size's graph nodes);
    * per GPU class with fitted logs: the smallest factor >= 1 that keeps every fitted log of the class (decode +
      prefill, as measured) under-estimated by less than ``UNDER_TARGET``; residuals per class after it.

    Hold-out rows are never fitted; they are evaluated with the fitted figures (``holdout`` in the result).
    """
    fitted = [r for r in rows if not r.get("holdout")]
    dec = [r["decode"] for r in fitted if r.get("decode")]
    x = np.array([d["graph_layers"] for d in dec], dtype=np.float64)
    y = np.array([d["measured_bytes"] - d["known_bytes"] for d in dec], dtype=np.float64)
    slope = float((x @ y) / (x @ x)) if len(x) else 0.0
    pre = [r["prefill"] for r in fitted if r.get("prefill")]
    a, b, bb = _nnls([[p["act_bytes"] for p in pre],
                      [p["graph_layers"] if p["backend"] != "breakable" else 0 for p in pre],
                      [p["graph_layers"] if p["backend"] == "breakable" else 0 for p in pre]],
                     [p["measured_bytes"] for p in pre])
    coef = {"graph_per_graph_layer": int(round(slope)), "prefill_per_act": round(a, 4),
            "prefill_per_graph_layer": int(round(b)), "prefill_per_graph_layer_breakable": int(round(bb))}

    def dec_est(d: dict) -> int:
        return coef["graph_per_graph_layer"] * d["graph_layers"] + d["known_bytes"]

    def pre_est(p: dict) -> int:
        per = coef["prefill_per_graph_layer_breakable" if p["backend"] == "breakable" else "prefill_per_graph_layer"]
        return int(coef["prefill_per_act"] * p["act_bytes"]) + per * p["graph_layers"]

    def factor(pairs: list[tuple[int, int]]) -> float | None:  # the smallest keeping each log under by < UNDER_TARGET
        if not pairs:
            return None
        return float(np.ceil(max((1 - UNDER_TARGET) * m / e for e, m in pairs if e > 0) * 100) / 100)

    def offset(pairs: list[tuple[int, int]]) -> int | None:  # the same, as a constant added (whole MiB, >= 0)
        if not pairs:
            return None
        need = max((1 - UNDER_TARGET) * m - e for e, m in pairs)
        return int(np.ceil(max(0.0, need) / MIB)) * MIB

    # the prefill graph's factor is one for every class: its logs differ by backend (fitted above) and model far
    # more than the few logs can separate by class. The decode graphs get a constant per class: what a capture
    # costs beyond its graphs (kernel modules loaded lazily, workspaces) differs by GPU class, and it is what
    # dominates the small captures of consumer launches (a factor on the slope would blow up the large ones)
    top_p = factor([(pre_est(r["prefill"]), r["prefill"]["measured_bytes"]) for r in fitted if r.get("prefill")]) or 1.0
    classes: dict[str, dict] = {}
    for cls in sorted({r["class"] for r in fitted if r["class"]}):
        mine = [r for r in fitted if r["class"] == cls]
        d = [(dec_est(r["decode"]), r["decode"]["measured_bytes"]) for r in mine if r.get("decode")]
        classes[cls] = {"decode_offset": offset(d), "prefill_factor": top_p, "logs": len(mine),
                        "decode_logs": len(d), "prefill_logs": sum(1 for r in mine if r.get("prefill"))}
    top_d = max([c["decode_offset"] for c in classes.values() if c["decode_offset"] is not None] or [0])
    for cls, c in classes.items():  # a class without decode logs takes the largest constant of any class
        c["decode_offset"] = top_d if c["decode_offset"] is None else c["decode_offset"]

    def scaled(r: dict, c: dict) -> tuple[float, int]:
        e = m = 0.0
        if r.get("decode"):
            e += dec_est(r["decode"]) + c["decode_offset"]
            m += r["decode"]["measured_bytes"]
        if r.get("prefill"):
            e += pre_est(r["prefill"]) * c["prefill_factor"]
            m += r["prefill"]["measured_bytes"]
        e, m = scaled_draft(r, e, m)
        return e, int(m)

    # the draft's captures: a constant per capture kind (its first capture loads what the target's did not), pooled
    draft_off = {k: offset([(dec_est(r["draft"][k]), r["draft"][k]["measured_bytes"]) for r in fitted
                            if (r.get("draft") or {}).get(k)]) or 0 for k in ("decode", "extend")}

    def scaled_draft(r: dict, e: float, m: float) -> tuple[float, float]:
        for k, d in (r.get("draft") or {}).items():
            e, m = e + dec_est(d) + draft_off[k], m + d["measured_bytes"]
        return e, m

    for cls, c in classes.items():
        c.update(_errors([scaled(r, c) for r in fitted if r["class"] == cls]))
    default = {"decode_offset": top_d, "prefill_factor": top_p}
    holdout = []
    for r in rows:
        if r.get("holdout"):
            e, m = scaled(r, classes.get(r["class"], default))
            holdout.append({"id": r["id"], "class": r["class"], "estimate_bytes": int(e), "measured_bytes": m,
                            "under_pct": round(max(0.0, 100 * (1 - e / m)), 1)})
    drafted = [r for r in fitted if r.get("draft")]
    derr = _errors([scaled_draft(r, 0.0, 0.0) for r in drafted])
    return {**coef, "prefill_logs": len(pre), "prefill_factor": top_p, "graph_classes": classes, "holdout": holdout,
            "draft_decode_offset": draft_off["decode"], "draft_extend_offset": draft_off["extend"],
            "draft_logs": len(drafted), "draft_under_max_pct": derr["under_max_pct"],
            "draft_over_max_pct": derr["over_max_pct"]}


def _errors(pairs: list[tuple[float, int]]) -> dict:
    """Per log, decode + prefill as measured against the estimate: the largest under- and over-estimate (% of the
    measured figure) and the largest under-estimate in GiB (what the margin must cover; an over-estimate errs on
    the careful side)."""
    under = max([0.0] + [100 * (1 - e / m) for e, m in pairs if m > 0])
    over = max([0.0] + [100 * (e / m - 1) for e, m in pairs if m > 0])
    short = max([0.0] + [(m - e) / GIB for e, m in pairs])
    return {"under_max_pct": round(under, 1), "over_max_pct": round(over, 1), "under_max_gib": round(short, 3)}


def _nnls(columns: list[list], y: list) -> list[float]:
    """Least squares ``y ~ sum c_i x_i`` with every ``c_i >= 0``: the best of the unconstrained fits on each subset
    of the columns whose coefficients are all non-negative (a handful of columns, so the subsets are few)."""
    k = len(columns)
    if not y:
        return [0.0] * k
    A = np.array(columns, dtype=np.float64).T
    yv = np.array(y, dtype=np.float64)
    best: tuple[float, list[float]] = (float(yv @ yv), [0.0] * k)
    for mask in range(1, 1 << k):
        idx = [i for i in range(k) if mask >> i & 1 and A[:, i].any()]
        if not idx:
            continue
        sol, *_ = np.linalg.lstsq(A[:, idx], yv, rcond=None)
        if (sol < 0).any():
            continue
        err = float(np.sum((yv - A[:, idx] @ sol) ** 2))
        if err < best[0] - 1e-6 * abs(best[0]):
            coef = [0.0] * k
            for i, v in zip(idx, sol):
                coef[i] = float(v)
            best = (err, coef)
    return best[1]


# -- the estimates ----------------------------------------------------------------------------------


_FLASHINFER_512_ARCHS = ("Qwen2ForCausalLM", "Qwen3ForCausalLM", "MiMoForCausalLM", "Qwen3VLForConditionalGeneration",
                         "Qwen3VLMoeForConditionalGeneration")


def flashinfer_workspace_bytes(architecture: str) -> int:
    """SGLANG_FLASHINFER_WORKSPACE_SIZE: 384 MiB (srt/environ.py:364 @0.5.11), set to 512 MiB when the
    architectures list holds one of five names (layers/attention/flashinfer_backend.py:163-173 @0.5.11)."""
    return (512 if architecture in _FLASHINFER_512_ARCHS else 384) * MIB


def workspace_estimate(backend: str, architecture: str) -> tuple[int, str]:
    c = coefficients()
    if backend == "flashinfer":
        ws = flashinfer_workspace_bytes(architecture)
        return ws + c.workspace_extra, (f"FlashInfer workspace {ws // MIB} MiB + {c.workspace_extra / MIB:.0f} MiB "
                                        f"backend init ({c.source('workspace')})")
    return c.workspace_extra, f"{c.workspace_extra / MIB:.0f} MiB backend init ({c.source('workspace')})"


def draft_capture_offset(kind: str) -> int:
    """The pooled constant of one of the draft's captures ('decode' or 'extend', :func:`fit_graphs`)."""
    c = coefficients()
    return c.draft_decode_offset if kind == "decode" else c.draft_extend_offset


def draft_capture_estimate(kind: str, graph_layers_: int, known_bytes: int = 0) -> int:
    """One of the draft's captures (``kind``: 'decode' or 'extend'): the per-graph-layer slope x the draft's captured
    graphs x layers (x steps for decode) + what is known physically + that capture's pooled constant."""
    return coefficients().graph_per_graph_layer * graph_layers_ + known_bytes + draft_capture_offset(kind)


def graph_layers(n_graphs: int, layers: int, draft_layers: int = 0, draft_steps: int = 0) -> int:
    """Captured graphs x layers in them: the target's decode (or verify) graphs, plus under speculative decoding
    the draft's decode graphs (one forward per step) and its draft-extend graphs."""
    return n_graphs * layers + n_graphs * draft_layers * (draft_steps + 1 if draft_layers else 0)


def graph_bytes_array(*, cuda_graph_bs: list[int], running: np.ndarray, layers: int, vocab: int, tp: int,
                      tokens_per_bs: int, context_len: int, backend: str, draft_layers: int = 0,
                      draft_steps: int = 0, gpu_cls: str = "", draft_fi_per_bs: int = 0,
                      draft_const: int = 0) -> np.ndarray:
    """:func:`graph_estimate` over an array of max_running_requests (the search's grid): the captured list is
    ``batch_sizes_to_capture(cuda_graph_bs, R)`` (cuda_graph.py), its length and maximum computed per point."""
    c = coefficients()
    r = np.maximum(np.asarray(running, dtype=np.int64), 0)
    bs = np.array(sorted(set(cuda_graph_bs)), dtype=np.int64)
    kept = np.searchsorted(bs, r, side="right")  # how many captured sizes are <= r (bs sorted, distinct)
    appended = (bs.max() > r) & ~((kept > 0) & (bs[np.maximum(kept - 1, 0)] == r))  # r not in bs
    n = kept + appended.astype(np.int64)
    max_bs = np.minimum(bs.max(), r)
    gl = n * layers + (n * draft_layers * (draft_steps + 1) if draft_layers else 0)
    out = c.graph_per_graph_layer * gl + max_bs * tokens_per_bs * (vocab // tp) * 4
    if backend == "flashinfer":
        out = out + max_bs * tokens_per_bs * context_len * 5
    out = out + max_bs * draft_fi_per_bs + class_info(gpu_cls)["decode_offset"] + draft_const
    return np.where(n > 0, out, 0)


def graph_estimate(*, capture_bs: list[int], layers: int, vocab: int, tp: int, tokens_per_bs: int, context_len: int,
                   backend: str, draft_layers: int = 0, draft_steps: int = 0, gpu_cls: str = "",
                   draft_fi_per_bs: int = 0, draft_const: int = 0) -> tuple[int, str]:
    """The decode (verify) graphs of the target and the draft's decode and draft-extend graphs. ``draft_fi_per_bs``:
    the draft's FlashInfer index / mask buffers per unit of the largest captured batch size, physical; ``draft_const``:
    the pooled constants of the draft's captures the release makes (both from
    :func:`planner.engines.sglang.pipeline.headroom.draft_graph_buffers`)."""
    c = coefficients()
    n = len(capture_bs)
    max_bs = max(capture_bs)
    gl = graph_layers(n, layers, draft_layers, draft_steps)
    logits = max_bs * tokens_per_bs * (vocab // tp) * 4
    fi = max_bs * tokens_per_bs * context_len * 5 if backend == "flashinfer" else 0
    extra = class_info(gpu_cls)["decode_offset"]
    dfi = max_bs * draft_fi_per_bs
    total = c.graph_per_graph_layer * gl + logits + fi + dfi + extra + draft_const
    how = (f"{c.graph_per_graph_layer / MIB:.2f} MiB x {n} graphs x {layers} layers"
           + (f" + draft {n} x {draft_layers} layer(s) x ({draft_steps} steps + extend)" if draft_layers else "")
           + f" + logits {max_bs} x {tokens_per_bs} x vocab {vocab}/tp x 4 B"
           + (f" + FlashInfer buffers {max_bs} x {tokens_per_bs} x ctx {context_len} x 5 B" if fi else "")
           + (f" + the draft's FlashInfer buffers {dfi / MIB:,.0f} MiB" if dfi else "")
           + f" + {extra / MIB:.0f} MiB for the GPU class"
           + (f" + {draft_const / MIB:.0f} MiB for the draft's captures (what they cost beyond their graphs on the "
              f"{c.draft_logs} public draft-capture log(s), whose GPUs are not named: one figure for every class)"
              if draft_const else "")
           + f" ({c.source('graph')}; {class_source(gpu_cls)})")
    return total, how


def prefill_graph_estimate(*, tokens: list[int], layers: int, per_token_bytes: int, backend: str,
                           gpu_cls: str = "") -> tuple[int, str]:
    """The prefill CUDA graph (piecewise 0.5.10-0.5.14, breakable by default from 0.5.15): ``prefill_per_act`` x the
    activation bytes of the largest captured token count + ``prefill_per_graph_layer`` x captured sizes x layers,
    times the GPU class's factor (both coefficients fitted on public logs, :func:`fit_graphs`)."""
    c = coefficients()
    top = max(tokens)
    act = top * per_token_bytes  # one layer's activations at the largest size (each size reuses the pool)
    gl = len(tokens) * layers
    per = c.prefill_per_graph_layer_breakable if backend == "breakable" else c.prefill_per_graph_layer
    factor = class_info(gpu_cls)["prefill_factor"]
    total = int(np.float64(int(c.prefill_per_act * act) + per * gl) * factor)
    how = (("(" if factor != 1 else "") + f"{c.prefill_per_act:.2f} x activations of {top:,} tokens ({act / MIB:,.0f} MiB)"
           f" + {per / MIB:.3f} MiB x {len(tokens)} sizes x {layers} layers"
           + (f") x {factor:.2f}" if factor != 1 else "")
           + f" ({backend} prefill graph, {len(tokens)} token sizes up to {top:,}; fitted on {c.prefill_logs} public "
             f"logs, the factor keeping each at most {100 * UNDER_TARGET:.0f}% under, one for every GPU class)")
    return total, how


# -- how sure the verdict is --------------------------------------------------------------------------


MARGIN_FLOOR_BYTES = 1 << 30


def search_margin(gpu_cls: str | None = None) -> tuple[int, str]:
    """The fixed part of the search's headroom rule, from the post-pool estimates' measured error: twice the
    largest error, rounded up to 0.25 GiB, never under 1 GiB (the calibration set is small, so the floor keeps the
    rule at least as careful as before it). Without a class: the decode graphs' and workspace's largest residuals on
    the calibration logs; with the launch's GPU class (:func:`gpu_class`): the workspace's residual + the CUDA
    graphs' (decode + prefill) largest error on that class's logs (a class without logs takes the largest of any)."""
    c = coefficients()
    step = 1 << 28
    if gpu_cls is None:
        err, on = c.post_pool_residual_max_gib, f"the post-pool estimates' largest error on {c.post_pool_logs} public logs"
    else:
        i = class_info(gpu_cls)
        err = round(c.workspace_residual_max_gib + i["under_max_gib"], 3)
        on = (f"the post-pool estimates' largest error on the {i['logs']} public logs of the {i['label']} class"
              if i["own"] else f"the post-pool estimates' largest error of any GPU class ({i['label']} has no log)")
        if i.get("bound"):
            on = f"the stated bound of the {i['label']} class, which has no public log (calibration.json bound_classes)"
    twice = -(-int(2 * err * GIB) // step) * step
    margin = max(MARGIN_FLOOR_BYTES, twice)
    return margin, f"max(1 GiB, 2 x {err:.2f} GiB, {on})"


def confidence(plan) -> dict | None:
    """Which inputs were measured and which modelled, and the margin next to the estimates' error on the
    calibration logs. None when the plan has no headroom (rejected before the pools)."""
    if plan.headroom_bytes is None:
        return None
    c = coefficients()
    measured, modelled = [], []
    (measured if plan.free_before_source.startswith(("log", "given", "live", "NVML", "measured")) else modelled).append(
        "free memory before the weights")
    (measured if plan.free_after_source.startswith(("log", "given", "live", "NVML", "measured")) else modelled).append(
        "free memory after the weights")
    modelled.append("post-pool allocations (CUDA graphs, workspaces, activations)")
    used = sum(n.bytes for n in plan.needs)
    margin = plan.headroom_bytes - used
    cls = gpu_class(getattr(plan.args, "gpu_sm", None)) if plan.args is not None else ""
    if plan.args is not None and getattr(plan.args, "hip", False):
        cls = "amd"  # a ROCm device: the AMD class's stated bound (pipeline/rocm.py)
    info = class_info(cls)
    graphs = [n for n in plan.needs if "CUDA graph" in n.label]
    # the error of the launch's class when it captures graphs: workspace residual + that class's graph error
    err = round(c.workspace_residual_max_gib + info["under_max_gib"], 3) if graphs else c.workspace_residual_max_gib
    margin_gib = margin / GIB
    if margin_gib >= 0:
        words = f"fits with {margin_gib:.2f} GiB to spare"
    else:
        words = f"short by {-margin_gib:.2f} GiB"
    sure = abs(margin_gib) > err
    where = (f"on the {info['logs']} public logs of its GPU class, {info['label']} ({cls})" if info["own"] else
             f"at most the largest of any GPU class ({info['label']} has no public log)")
    if info.get("bound"):  # no log of the class: its stated bound (calibration.json bound_classes)
        where = f"by a stated bound, not a fit ({info['label']}: no public log of the class)"
    line = (f"{words}; post-pool estimates were within {err:.2f} GiB {where}"
            + (f", the CUDA graphs at most {info['under_max_pct']:.0f}% under what those logs measured"
               if graphs and not info.get("bound") else "")
            + ("" if sure else " (the margin is inside that error: treat the verdict as uncertain)"))
    if getattr(plan.model.spec, "mla", None) is not None:
        # no public MLA log with free memory (issue #22): the fitted figures are of other families
        line = (f"{words}; the post-pool estimates (CUDA graphs, workspace, activations) are not calibrated on MLA "
                f"models: the {c.post_pool_logs} public logs they were fitted on are of other families, so for "
                f"{plan.model.spec.architecture} they are estimates of unknown error")
    if modelled[:2] and "free memory after the weights" in modelled:
        line += "; free memory is modelled, not measured"
    return {"margin_bytes": int(margin), "post_pool_error_gib": err, "calibration_logs": c.post_pool_logs,
            "gpu_class": cls, "class_logs": info["logs"], "class_label": info["label"],
            "measured": measured, "modelled": modelled, "margin_exceeds_error": bool(sure), "line": line}
