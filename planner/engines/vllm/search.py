"""One launch evaluated end to end (resolve, estimates, size), and the search over vLLM's own knobs.

:func:`evaluate` is the chain the front end, the search and ``plan check`` share: vLLM's argument resolution
(``config.resolve``; a rejection keeps vLLM's message), what vLLM measures at boot (the user's figures where given,
else the estimates, each with its ``how``), then ``sizing.size``: every candidate the search ranks is sized
exactly as the launch itself is, never extrapolated.

:func:`search` runs when the launch does not start or misses ``--need-context`` / ``--need-concurrency``: it
changes one of vLLM's knobs at a time (then two), ranks what it finds like SGLang's search (reach the needs
first, then the least change: fewer flags, milder ones, values closest to the user's), and returns the flags with
the ``vllm serve`` line. The knobs, and why each moves the KV cache (vLLM 0.34.0 / 0.33.0 lines):

* ``--max-num-seqs``: the Mamba check ``max_num_seqs (N) exceeds available Mamba cache blocks (M)``
  (``config/compilation.py:1675 @0.34.0``, ``:1526 @0.33.0``; FULL cudagraphs only) and the capture sizes;
* ``--gpu-memory-utilization``: ``requested = ceil(T x util)`` (``v1/worker/utils.py:743 @0.34.0``,
  ``:724 @0.33.0``);
* ``--max-model-len``: the admission check "To serve at least one request with the model's max seq len"
  (``v1/core/kv_cache_planning.py:125 @0.34.0``, ``:78 @0.33.0``) and the concurrency figure;
* ``--max-num-batched-tokens`` (the profile run's activation peak), ``--kv-cache-dtype fp8`` (half the attention
  page), ``--block-size``, prefix caching (the Mamba ``align`` mode's extra blocks per request),
  ``--speculative-config`` (the drafter's layers), ``--enforce-eager`` (no CUDA-graph memory, no FULL-graph
  Mamba check), ``--max-cudagraph-capture-size``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from planner.catalog.spec import ModelSpec
from planner.engines.vllm import launch as L
from planner.engines.vllm.inputs import GIB, Device, Measured, VllmLaunch
from planner.errors import BadInput

# (summary, log) for one launch; the default is config.resolve + sizing.size (tests pass the oracle's results)
Sizer = Callable[[VllmLaunch], tuple[dict[str, Any], list[str]]]
MEASURED_NAMES = ("startup_used_gib", "weights_gib", "non_torch_gib", "peak_activation_gib", "cudagraph_gib",
                  "cudagraph_actual_gib", "warmup_peak_gib", "torch_reserve_growth_gib")
ESTIMATED_NAMES = ("startup_used_gib", "non_torch_gib", "peak_activation_gib", "cudagraph_gib")


@dataclass(frozen=True)
class Estimate:
    """One measured input the planner estimated: GiB, how, and the estimate's error on public logs of its class."""

    gib: float
    how: str
    residual_gib: float | None = None  # typical |log - estimate| on this GPU class (None: no logs of the class)
    gpu_class: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"gib": round(self.gib, 4), "how": self.how, "residual_gib": self.residual_gib,
                "gpu_class": self.gpu_class}


@dataclass(frozen=True)
class Context:
    """What stays fixed while the flags change: release, model, device, the user's measured figures, env."""

    version: str
    spec: ModelSpec
    device: Device
    given: dict[str, float]  # the user's measured figures (the oracle's names, GiB)
    env: dict[str, str] = field(default_factory=dict)
    sizer: Sizer | None = None  # None: resolve + size
    # (ctx, launch with the user's figures) -> the estimates of the rest; None: planner.engines.vllm.estimates
    estimator: Callable[["Context", VllmLaunch], dict[str, Estimate]] | None = None
    cuda_residual_bytes: int = 0  # the CUDA total was estimated: how far below it the pessimistic side looks
    draft: ModelSpec | None = None  # --speculative-config's "model" (EAGLE3's drafter), resolved


@dataclass
class Evaluation:
    flags: list[str]
    summary: dict[str, Any]
    log: list[str]
    estimated: dict[str, Estimate]
    measured: Measured

    @property
    def ok(self) -> bool:
        return self.summary.get("outcome") == "ok"


def rejected_summary(version: str, exc: Any) -> dict[str, Any]:
    """The summary of a launch ``config.resolve`` refused (:class:`config.VllmRejected`), under the oracle's names."""
    return {"summary_version": 1, "vllm_version": version, "outcome": "rejected", "validated": False,
            "startup_ok": False, "stage": exc.stage, "error_type": exc.error_type, "error_message": exc.message,
            "rule": getattr(exc, "rule", "") or None}


def _default_size(launch: VllmLaunch) -> tuple[dict[str, Any], list[str]]:
    from planner.engines.vllm import config  # noqa: PLC0415
    try:
        from planner.engines.vllm import sizing  # noqa: PLC0415
    except ImportError:
        raise BadInput("vLLM sizing (planner/engines/vllm/sizing.py) is not in this build") from None
    try:
        cfg = config.resolve(launch)
    except config.VllmRejected as exc:
        # sizing's own summary of the rejection carries every oracle key (null where vLLM stopped); the near match
        # for a misspelt flag is added under "rule"
        try:
            summary = dict(sizing.size(launch).summary)
        except BadInput:
            summary = rejected_summary(launch.version, exc)
        if summary.get("outcome") != "rejected":
            summary = rejected_summary(launch.version, exc)
        return {**summary, "rule": getattr(exc, "rule", "") or None}, []
    except NotImplementedError:
        raise BadInput("vLLM argument resolution (config.resolve) is not in this build") from None
    res = sizing.size(launch, cfg)
    return dict(res.summary), list(res.log)


def _default_estimates(ctx: Context, launch: VllmLaunch) -> dict[str, Estimate]:
    """The measured inputs the user did not give, from vcal's estimates (planner.engines.vllm.estimates)."""
    missing = [n for n in ("weights_gib", *ESTIMATED_NAMES) if n not in ctx.given]
    if not missing:
        return {}
    try:
        from planner.engines.vllm import estimates  # noqa: PLC0415
    except ImportError:
        need = [n for n in missing if n in ("weights_gib", "non_torch_gib", "peak_activation_gib")]
        if not need:
            return {}
        raise BadInput("vLLM: no estimate of " + ", ".join(need) + " in this build; give them measured ("
                       + ", ".join("--" + n.replace("_", "-") for n in need) + ")") from None
    return estimates_for(estimates, ctx, launch, missing)


_PARTS = {"weights_gib": ("weights", "weights"), "non_torch_gib": ("non_torch", "combined"),
          "peak_activation_gib": ("peak_activation", "combined"), "cudagraph_gib": ("cudagraph", "cudagraph"),
          "startup_used_gib": ("startup_used", "startup")}


def residuals(module: Any, sm: str) -> dict[str, tuple[float, str]]:
    """Per calibration part, the largest |residual| on the public logs of this GPU class (the class label), else
    the largest of any class ("any class"): vcal's ``calibration_table``."""
    cls = module.gpu_class(sm)
    mine: dict[str, float] = {}
    anyc: dict[str, float] = {}
    for row in module.calibration_table():
        for part in ("weights", "combined", "cudagraph", "startup"):
            for r in row.get(part, []):
                v = abs(float(r["residual_gib"]))
                anyc[part] = max(anyc.get(part, 0.0), v)
                if row["class"] == cls:
                    mine[part] = max(mine.get(part, 0.0), v)
    return {p: ((mine[p], f"public logs of {cls}") if p in mine else (anyc[p], "public logs of any class"))
            for p in anyc}


def estimates_for(module: Any, ctx: Context, launch: VllmLaunch, missing: list[str]) -> dict[str, Estimate]:
    """vcal's ``estimates.estimate(spec, device, cfg)`` for the inputs the user did not give, with the residual of
    each on the public logs of the device's class (the combined non-torch + activation residual on both)."""
    from planner.engines.vllm import config  # noqa: PLC0415

    cfg = config.resolve(launch)
    raw = module.estimate(ctx.spec, ctx.device, cfg)
    res = residuals(module, ctx.device.sm)
    out: dict[str, Estimate] = {}
    for name in missing:
        attr, part = _PARTS[name]
        e = getattr(raw, attr)
        r, cls = res.get(part, (None, None))
        out[name] = Estimate(e.bytes / GIB, e.how, round(r, 4) if r else None, cls)
    if cfg.enable_extensible_kv_cache and "cudagraph_actual_gib" not in ctx.given and "cudagraph_gib" in missing:
        # 0.34's profile estimate is 0 under the extensible cache (gpu/model_runner.py:1121-1128 @0.34.0), but the
        # capture after warmup still takes its memory before measure_kv_cache_blocks: the same graphs' estimate
        counts = module.capture_counts(cfg.cudagraph_mode, cfg.cudagraph_capture_sizes, cfg.max_num_seqs)
        draft = ctx.spec.mtp_layers if cfg.speculative_method == "mtp" else 0
        e = module.cudagraph_bytes(ctx.spec, ctx.device.sm, counts, draft_layers=draft, extensible_kv_cache=False)
        r, cls = res.get("cudagraph", (None, None))
        out["cudagraph_actual_gib"] = Estimate(e.bytes / GIB, "the capture after warmup: " + e.how,
                                               round(r, 4) if r else None, cls)
    return out


def evaluate(ctx: Context, flags: list[str]) -> Evaluation:
    """The launch with ``flags`` through the whole chain: the user's figures, the estimates of the rest, size."""
    given = {k: float(v) for k, v in ctx.given.items() if k in MEASURED_NAMES}
    base = VllmLaunch(ctx.version, ctx.spec, tuple(flags), ctx.device, Measured(**given), dict(ctx.env),
                      draft=ctx.draft)
    estimated: dict[str, Estimate] = {}
    if ctx.sizer is None or ctx.estimator is not None:
        try:
            estimated = (ctx.estimator or _default_estimates)(ctx, base)
        except Exception as exc:  # noqa: BLE001 -- a rejection is reported by the sizing below, not here
            if type(exc).__name__ != "VllmRejected":
                raise
    estimated = {k: e for k, e in estimated.items() if k not in given}  # the user's figures win
    measured = replace(base.measured, **{k: e.gib for k, e in estimated.items()})
    launch = replace(base, measured=measured)
    summary, log = (ctx.sizer or _default_size)(launch)
    return Evaluation(list(flags), summary, log, estimated, measured)


# ---- the search ---------------------------------------------------------------------------------------------

@dataclass
class Candidate:
    changes: list[tuple[str, str | None]]
    ev: Evaluation
    reaches: bool
    concurrency: int  # requests at once at max_model_len: min(max_num_seqs, floor(max_concurrency))
    penalty: float

    @property
    def chosen(self) -> list[str]:
        return L.describe(self.changes)


@dataclass
class SearchResult:
    ranked: list[Candidate]
    tried: int
    needs: dict[str, int | None]

    @property
    def best(self) -> Candidate | None:
        return self.ranked[0] if self.ranked and self.ranked[0].reaches else None


# how much a change costs the user beyond its being a change (quality, speed, features)
_MILD = {"--max-num-seqs": 0.0, "--gpu-memory-utilization": 0.5, "--max-model-len": 1.0,
         "--max-num-batched-tokens": 0.5, "--max-cudagraph-capture-size": 0.5, "--block-size": 0.5,
         "--kv-cache-dtype": 2.0, "--no-enable-prefix-caching": 2.0, "--mamba-cache-mode": 1.5,
         "--speculative-config": 2.5, "--enforce-eager": 4.0}  # eager: no CUDA graphs, slow decode


def concurrency_of(summary: dict[str, Any]) -> int:
    mc = summary.get("max_concurrency")
    seqs = summary.get("max_num_seqs") or 0
    return 0 if mc is None else min(int(seqs), int(mc + 1e-9))


def reaches(summary: dict[str, Any], need_context: int | None, need_concurrency: int | None) -> bool:
    """The launch starts, serves the context, and (at its max_model_len >= the context, so conservatively) the
    requests at once."""
    if summary.get("outcome") != "ok":
        return False
    if need_context and (summary.get("max_model_len") or 0) < need_context:
        return False
    return not need_concurrency or concurrency_of(summary) >= need_concurrency


def _penalty(changes: list[tuple[str, str | None]], base: dict[str, Any]) -> float:
    p = 0.0
    for opt, val in changes:
        p += 1.0 + _MILD.get(opt, 1.0)
        cur = base.get(opt.lstrip("-").replace("-", "_"))
        try:
            if val not in (None, "-") and cur not in (None, 0):
                p += min(abs(float(val) - float(cur)) / abs(float(cur)), 1.0)
        except (TypeError, ValueError):
            pass
    return p


def _int_values(cur: int, lo: int, ladder: tuple[int, ...]) -> list[int]:
    return sorted({v for v in ladder if lo <= v < cur}, reverse=True)


_SEQS = (1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768)
_LENS = (4096, 8192, 16384, 32768, 65536, 131072, 196608, 262144, 524288, 1048576)


def knob_values(ev: Evaluation, needs: dict[str, int | None], version: str) -> list[list[tuple[str, str | None]]]:
    """The single changes worth sizing from ``ev`` (the launch as it is), each a list of (option, value)."""
    s, flags = ev.summary, ev.flags
    out: list[list[tuple[str, str | None]]] = []
    seqs = int(s.get("max_num_seqs") or 0)
    need_c = needs.get("concurrency") or 1
    msg = s.get("error_message") or ""
    if "Mamba cache blocks (" in msg:
        m = int(msg.split("Mamba cache blocks (", 1)[1].split(")", 1)[0])
        out.append([("--max-num-seqs", str(max(m, 1)))])
    for v in _int_values(seqs, need_c, _SEQS):
        out.append([("--max-num-seqs", str(v))])
    util = float(s.get("gpu_memory_utilization") or 0.9)
    top = 1.0 if s.get("enable_extensible_kv_cache") or version >= "0.34" else 0.95
    for u in (0.8, 0.85, 0.9, 0.92, 0.95, 1.0):
        if abs(u - util) > 1e-9 and u <= top:
            out.append([("--gpu-memory-utilization", f"{u:.2f}")])
    mml = int(s.get("max_model_len") or 0)
    need_l = needs.get("context") or 0
    if mml:
        for v in _int_values(mml, max(need_l, 1), _LENS):
            out.append([("--max-model-len", str(v))])
    if need_l and need_l != mml:
        out.append([("--max-model-len", str(need_l))])
    if (s.get("kv_cache_dtype") or "auto") == "auto":
        out.append([("--kv-cache-dtype", "fp8")])
    if s.get("enable_prefix_caching"):
        out.append([("--no-enable-prefix-caching", None)])
    spec = L.flag_value(flags, "--speculative-config")
    if spec:
        out.append([("--speculative-config", "-")])
        fewer = _fewer_draft_tokens(spec)
        if fewer:
            out.append([("--speculative-config", fewer)])
    hybrid = any(g.get("type") == "MambaSpec" for g in s.get("groups") or [])
    if hybrid and s.get("enable_prefix_caching") and s.get("mamba_cache_mode") == "align":
        out.append([("--mamba-cache-mode", "none")])
    bs = s.get("block_size")
    if not hybrid and bs:
        out += [[("--block-size", str(v))] for v in (16, 32) if v < bs]
    mbt = int(s.get("max_num_batched_tokens") or 0)
    for v in (2048, 4096):
        if mbt > v:
            out.append([("--max-num-batched-tokens", str(v))])
    cap = s.get("max_cudagraph_capture_size")
    for v in (64, 128, 256):
        if cap and cap > v and v >= need_c:
            out.append([("--max-cudagraph-capture-size", str(v))])
    if (s.get("cudagraph_mode") or "NONE") != "NONE":
        out.append([("--enforce-eager", None)])
    return out


def _fewer_draft_tokens(spec: str) -> str | None:
    """``{"method": "mtp", "num_speculative_tokens": 3}`` -> the same with 1 draft token (fewer draft blocks per
    request); None when it is not JSON or already 1."""
    try:
        d = json.loads(spec)
    except ValueError:
        return None
    if not isinstance(d, dict) or int(d.get("num_speculative_tokens") or 1) <= 1:
        return None
    return json.dumps({**d, "num_speculative_tokens": 1})


def _rank_key(c: Candidate) -> tuple:
    kv = (c.ev.summary.get("kv_cache_size_tokens") or 0) // 4096
    return (not c.reaches, c.ev.ok is False, round(c.penalty, 3), -c.concurrency, -kv)


def _progress_key(c: Candidate, need_context: int | None) -> tuple:
    """How close a candidate that misses the needs came: it starts, serves the context, then requests at once."""
    s = c.ev.summary
    return (not c.ev.ok, (s.get("max_model_len") or 0) < (need_context or 0), -c.concurrency,
            -(s.get("kv_cache_size_tokens") or 0), c.penalty)


def search(ctx: Context, base: Evaluation, need_context: int | None = None, need_concurrency: int | None = None,
           budget: int = 400, depth: int = 3, seeds: int = 6) -> SearchResult:
    """Single knob changes, then (while nothing reaches the needs) the ``seeds`` closest candidates of each round
    extended by one more knob, up to ``depth`` changes; every candidate sized by the whole chain."""
    needs = {"context": need_context, "concurrency": need_concurrency}
    seen: dict[str, Candidate] = {}
    tried = 0

    def run(changes: list[tuple[str, str | None]]) -> Candidate | None:
        nonlocal tried
        flags = L.edit(base.flags, changes)
        key = json.dumps(flags)
        if key in seen:
            return seen[key]
        if tried >= budget:
            return None
        tried += 1
        try:
            ev = evaluate(ctx, flags)
        except BadInput:
            return None
        c = Candidate(changes, ev, reaches(ev.summary, need_context, need_concurrency),
                      concurrency_of(ev.summary), _penalty(changes, base.summary))
        seen[key] = c
        return c

    layer = [c for ch in knob_values(base, needs, ctx.version) if (c := run(ch)) is not None]
    _follow_mamba(run, layer)
    for _ in range(depth - 1):
        if any(c.reaches for c in seen.values()) or tried >= budget:
            break
        nxt = []
        for a in sorted(layer, key=lambda c: _progress_key(c, need_context))[:seeds]:
            used = {_opt(o) for o, _ in a.changes}
            for ch in knob_values(a.ev, needs, ctx.version):
                if _opt(ch[0][0]) not in used and (c := run(a.changes + ch)) is not None:
                    nxt.append(c)
        _follow_mamba(run, nxt)
        layer = nxt
    _polish_seqs(run, seen, int(base.summary.get("max_num_seqs") or 0))
    ranked = sorted(seen.values(), key=_rank_key)
    if not any(c.reaches for c in ranked):
        ranked = sorted(seen.values(), key=lambda c: _progress_key(c, need_context))
    return SearchResult(ranked, tried, needs)


def _polish_seqs(run: Callable, seen: dict[str, Candidate], base_seqs: int) -> None:
    """The best candidate's ``--max-num-seqs`` moved back toward the launch's own (the least change): the three
    largest ladder values or vLLM "at most" figures between the two that still reach the needs, the other changes
    kept (the recommendation then takes the first that also holds with the estimates off by their residuals)."""
    best = min((c for c in seen.values() if c.reaches), key=_rank_key, default=None)
    if best is None:
        return
    cur = dict(best.changes).get("--max-num-seqs")
    if cur is None or not cur.isdigit():
        return
    rest = [ch for ch in best.changes if ch[0] != "--max-num-seqs"]
    found: list[Candidate] = []

    def reached_more(c: Candidate) -> bool:  # the largest few that reach (frontend.robust_best picks among them)
        found.append(c)
        return len(found) >= 3

    for v in sorted({x for x in _SEQS if int(cur) < x < base_seqs}, reverse=True):
        c = run(rest + [("--max-num-seqs", str(v))])
        msg = (c.ev.summary.get("error_message") or "") if c is not None else ""
        if c is not None and not c.reaches and "Mamba cache blocks (" in msg:
            m = int(msg.split("Mamba cache blocks (", 1)[1].split(")", 1)[0])
            if int(cur) < m < v:
                c = run(rest + [("--max-num-seqs", str(m))])
        if c is not None and c.reaches and reached_more(c):
            return


def _opt(opt: str) -> str:
    return L._base(opt)


def _follow_mamba(run: Callable, singles: list[Candidate]) -> None:
    """``--max-num-seqs M`` from vLLM's "at most M" can itself fail with a new M (fewer sequences, other capture
    sizes, another CUDA-graph estimate): follow vLLM's figure until it starts (at most 4 steps)."""
    for c in list(singles):
        step = c
        for _ in range(4):
            msg = step.ev.summary.get("error_message") or ""
            if "Mamba cache blocks (" not in msg:
                break
            m = int(msg.split("Mamba cache blocks (", 1)[1].split(")", 1)[0])
            nxt = run([ch for ch in step.changes if ch[0] != "--max-num-seqs"] + [("--max-num-seqs", str(m))])
            if nxt is None or nxt is step:
                break
            singles.append(nxt)
            step = nxt


__all__ = ["Candidate", "Context", "Estimate", "Evaluation", "SearchResult", "concurrency_of", "evaluate",
           "reaches", "rejected_summary", "search"]
