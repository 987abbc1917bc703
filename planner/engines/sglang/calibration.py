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
* **CUDA graphs** = ``graph_per_graph_layer`` (fitted) x captured graphs x layers captured in each
  (target, plus the draft's layers x steps under speculative decoding) + the shared logits buffer
  ``max_bs x tokens per bs x vocab / tp x 4 B`` (float32, model_executor/cuda_graph_runner.py @0.5.11)
  + FlashInfer's graph index buffers ``max_bs x tokens per bs x context x 5 B``.

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

    def source(self, term: str) -> str:
        if term == "graph":
            return (f"fitted on {self.graph_logs} public logs, residual max {self.graph_residual_max_gib:.2f} GiB "
                    "(planner/engines/sglang/calibration.json)")
        return (f"fitted on {self.workspace_logs} public logs, residual max {self.workspace_residual_max_gib:.2f} GiB "
                "(planner/engines/sglang/calibration.json)")


@lru_cache(maxsize=1)
def coefficients() -> Coefficients:
    d = json.loads(CALIBRATION_FILE.read_text(encoding="utf-8"))
    return Coefficients(**{k: d[k] for k in Coefficients.__dataclass_fields__})


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


def graph_layers(n_graphs: int, layers: int, draft_layers: int = 0, draft_steps: int = 0) -> int:
    """Captured graphs x layers in them: the target's decode (or verify) graphs, plus under speculative decoding
    the draft's decode graphs (one forward per step) and its draft-extend graphs."""
    return n_graphs * layers + n_graphs * draft_layers * (draft_steps + 1 if draft_layers else 0)


def graph_bytes_array(*, cuda_graph_bs: list[int], running: np.ndarray, layers: int, vocab: int, tp: int,
                      tokens_per_bs: int, context_len: int, backend: str, draft_layers: int = 0,
                      draft_steps: int = 0) -> np.ndarray:
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
    return np.where(n > 0, out, 0)


def graph_estimate(*, capture_bs: list[int], layers: int, vocab: int, tp: int, tokens_per_bs: int, context_len: int,
                   backend: str, draft_layers: int = 0, draft_steps: int = 0) -> tuple[int, str]:
    c = coefficients()
    n = len(capture_bs)
    max_bs = max(capture_bs)
    gl = graph_layers(n, layers, draft_layers, draft_steps)
    logits = max_bs * tokens_per_bs * (vocab // tp) * 4
    fi = max_bs * tokens_per_bs * context_len * 5 if backend == "flashinfer" else 0
    total = c.graph_per_graph_layer * gl + logits + fi
    how = (f"{c.graph_per_graph_layer / MIB:.2f} MiB x {n} graphs x {layers} layers"
           + (f" + draft {n} x {draft_layers} layer(s) x ({draft_steps} steps + extend)" if draft_layers else "")
           + f" + logits {max_bs} x {tokens_per_bs} x vocab {vocab}/tp x 4 B"
           + (f" + FlashInfer buffers {max_bs} x {tokens_per_bs} x ctx {context_len} x 5 B" if fi else "")
           + f" ({c.source('graph')})")
    return total, how


# -- how sure the verdict is --------------------------------------------------------------------------


MARGIN_FLOOR_BYTES = 1 << 30


def search_margin() -> tuple[int, str]:
    """The fixed part of the search's headroom rule, from the post-pool estimates' measured error: twice the
    largest residual on the calibration logs, rounded up to 0.25 GiB, never under 1 GiB (the calibration set
    is small, so the floor keeps the rule at least as careful as before it)."""
    c = coefficients()
    step = 1 << 28
    twice = -(-int(2 * c.post_pool_residual_max_gib * GIB) // step) * step
    margin = max(MARGIN_FLOOR_BYTES, twice)
    return margin, (f"max(1 GiB, 2 x {c.post_pool_residual_max_gib:.2f} GiB, the post-pool estimates' largest "
                    f"error on {c.post_pool_logs} public logs)")


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
    err = c.post_pool_residual_max_gib
    margin_gib = margin / GIB
    if margin_gib >= 0:
        words = f"fits with {margin_gib:.2f} GiB to spare"
    else:
        words = f"short by {-margin_gib:.2f} GiB"
    sure = abs(margin_gib) > err
    line = (f"{words}; post-pool estimates were within {err:.2f} GiB on {c.post_pool_logs} public logs"
            + ("" if sure else " (the margin is inside that error: treat the verdict as uncertain)"))
    if modelled[:2] and "free memory after the weights" in modelled:
        line += "; free memory is modelled, not measured"
    return {"margin_bytes": int(margin), "post_pool_error_gib": err, "calibration_logs": c.post_pool_logs,
            "measured": measured, "modelled": modelled, "margin_exceeds_error": bool(sure), "line": line}
