"""The search's space and ranking: the numeric axes, the needs, a configuration (Candidate) and its flags, and
the rank key and score that order configurations (planner.engines.sglang.search runs the search; split from it by size)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from planner.engines.sglang.calibration import search_margin

GIB = 1 << 30
MIB = 1 << 20
OBJECTIVES = ("concurrency", "kv-tokens", "headroom")

# Numeric axes (NaN / -1 = leave the flag unset, i.e. SGLang's default).
MFS_VALUES = (np.nan, *np.round(np.arange(0.70, 0.951, 0.01), 2))
RATIO_VALUES = (0.9, 0.1, 0.2, 0.3, 0.5, 0.7, 1.2, 1.5, 2.0, 3.0)  # 0.9 is SGLang's default
MAMBA_SIZES = (-1, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256)
RUNNING = (-1, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 256)


@dataclass
class Needs:
    context: int | None = None  # longest request to serve, tokens (None: 32k capped at the model's)
    concurrency: int = 1  # requests at that length, at once
    speculative: str | None = None  # None: as the flags say; "off"; or an algorithm (EAGLE, NEXTN)
    allow_fp8_kv: bool = False
    allow_bf16_ssm: bool = False
    allow_no_radix: bool = False  # prefix caching stays on unless the user allows turning it off
    objective: str = "concurrency"
    margin: float = 0.20  # headroom must cover the estimated needs x (1 + margin) + margin_bytes
    # the fixed part, grounded in the post-pool estimates' measured error (calibration.search_margin)
    margin_bytes: int = field(default_factory=lambda: search_margin()[0])
    # the GPU class whose measured error set margin_bytes (run_search fills it when margin_bytes is the default)
    margin_class: str | None = None


@dataclass
class Candidate:
    flags: list[str]  # SGLang flags to add to the model path (fixed + chosen)
    chosen: list[str]  # the part the search chose
    concurrency: int
    kv_tokens: int
    running: int
    longest: int
    headroom_left: int  # bytes after pools and estimated needs
    feasible: bool


def _numeric_grid(fixed: set[str], mambaish: bool) -> dict[str, np.ndarray]:
    """The numeric axes' points, mem_fraction_static outermost (search_bound.bound_lines reads the lines off the
    first points). Built once per axes left free: the arrays are shared (read-only) by every search."""
    key = (tuple(sorted(fixed & {"mem_fraction_static", "mamba_full_memory_ratio", "max_mamba_cache_size",
                                 "max_running_requests"})), mambaish)
    grid = _GRIDS.get(key)
    if grid is None:
        grid = _GRIDS[key] = _build_grid(fixed, mambaish)
        for v in grid.values():
            v.flags.writeable = False
    return grid


_GRIDS: dict = {}


def _build_grid(fixed: set[str], mambaish: bool) -> dict[str, np.ndarray]:
    mfs = np.array([np.nan] if "mem_fraction_static" in fixed else MFS_VALUES, dtype=np.float64)
    ratio = np.array([np.nan] if ("mamba_full_memory_ratio" in fixed or not mambaish) else RATIO_VALUES)
    msize = np.array([-1] if ("max_mamba_cache_size" in fixed or not mambaish) else MAMBA_SIZES, dtype=np.int64)
    run = np.array([-1] if "max_running_requests" in fixed else RUNNING, dtype=np.int64)
    g = np.meshgrid(mfs, ratio, msize, run, indexing="ij")
    grid = {"mfs": g[0].ravel(), "ratio": g[1].ravel(), "msize": g[2].ravel(), "run": g[3].ravel()}
    # An explicit --max-mamba-cache-size makes the ratio irrelevant: keep one ratio per size.
    keep = ~((grid["msize"] >= 0) & ~np.isnan(grid["ratio"]) & (grid["ratio"] != RATIO_VALUES[0]))
    return {k: v[keep] for k, v in grid.items()}


def point_flags(combo: list[str], mfs: float, ratio: float, msize: int, run: int) -> list[str]:
    out = list(combo)
    if not np.isnan(mfs):
        out += ["--mem-fraction-static", f"{mfs:.2f}"]
    if not np.isnan(ratio) and ratio != RATIO_VALUES[0]:
        out += ["--mamba-full-memory-ratio", f"{ratio:g}"]
    if msize >= 0:
        out += ["--max-mamba-cache-size", str(int(msize))]
    if run >= 0:
        out += ["--max-running-requests", str(int(run))]
    return out


def _flag_count(flags: list[str]) -> int:
    return sum(1 for f in flags if f.startswith("--"))


def _mildness(chosen: list[str]) -> int:
    """The rank key's preference for fewer and milder flag changes (:func:`_rank_key`)."""
    return -_flag_count(chosen) - 2 * sum(f in ("--disable-radix-cache", "--disable-overlap-schedule") for f in chosen)


def _rank_key(c: Candidate, objective: str, chosen: list[str], need_ctx: int = 1) -> tuple:
    """Objective first; near-equal KV (4096-token buckets) then prefers fewer and milder flag changes."""
    mild = _mildness(chosen)
    kv = c.kv_tokens // 4096
    if objective == "kv-tokens":  # the tokens the running requests can fill (see _score)
        kv = min(c.kv_tokens, c.running * max(need_ctx, 1)) // 4096
    left = c.headroom_left // (256 * MIB)
    if objective == "kv-tokens":
        return (kv, c.concurrency, mild, left)
    if objective == "headroom":
        return (left, c.concurrency, kv, mild)
    return (c.concurrency, kv, mild, left)


def _score(o: dict[str, np.ndarray], objective: str, need_ctx: int = 1) -> np.ndarray:
    conc = o["conc"].astype(np.float64)
    # kv-tokens ranks the KV tokens the running requests can fill (r x the needed context at most), so one
    # running request with a huge idle pool does not win
    kv = np.minimum(o["n"], np.maximum(o["r"], 0) * max(need_ctx, 1)).astype(np.float64) if objective == "kv-tokens" \
        else o["n"].astype(np.float64)
    left = o["left"].astype(np.float64)
    if objective == "kv-tokens":
        return kv * 1e6 + conc * 1e3 + left / GIB
    if objective == "headroom":
        return left / GIB * 1e9 + conc * 1e6 + kv / 1e3
    return conc * 1e12 + kv * 1e3 + left / GIB


def top_points(idx: np.ndarray, score: np.ndarray, k: int) -> np.ndarray:
    """The first ``k`` of ``idx`` ordered by descending score, ties in ``idx`` order: what a stable sort of the
    whole of ``idx`` gives, from a partition to the k-th best score (every point below it cannot be in the
    first k) and a stable sort of what is left."""
    s = score[idx]
    if idx.size > k:
        kth = np.partition(s, idx.size - k)[idx.size - k]
        keep = s >= kth
        idx, s = idx[keep], s[keep]
    return idx[np.argsort(-s, kind="stable")][:k]


def _dedupe_key(c: Candidate) -> tuple:
    return (c.concurrency, c.kv_tokens // 4096, c.running, c.longest)

