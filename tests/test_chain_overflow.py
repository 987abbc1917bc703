"""Absurd explicit counts (a mamba cache of 10^18 states, 2^63 - 1 running requests with the radix cache off) make
byte counts beyond int64. SGLang computes them in Python ints, so the launch simply fails at sizing; the planner's
sizing chain once multiplied them in int64 (planner/engines/sglang/pipeline/memory_profile.py, found by
tests/test_fuzz_cli.py with ``-W error::RuntimeWarning``: ``--max-mamba-cache-size 1000000000000000000`` on
a100-40gb / qwen3.5-9b), wrapped, and called the launch "the pools fit" with 27 trillion KV tokens."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from planner.cli import main
from planner.engines.sglang.pipeline import memory_profile as mp

GIB = 1 << 30
M_ABSURD = 10**18  # the fuzz test's input
I64_MAX = (1 << 63) - 1


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # numpy's overflow / invalid-cast warnings fail the test
        code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("m", [10**11, M_ABSURD, I64_MAX])
@pytest.mark.parametrize("version", ["0.5.9", "0.5.23"])
def test_absurd_mamba_cache_fails_at_sizing_like_a_merely_large_one(capsys, m: int, version: str) -> None:
    """10^11 states already fail without overflow (5.2e18 B); 10^18 and 2^63 - 1 fail the same way, exit 1."""
    code, out, err = _run(capsys, "--gpu", "a100-40gb", "--model", "qwen3.5-9b", "--no-search", "--json",
                          "--sglang-version", version, "--max-mamba-cache-size", str(m))
    assert code == 1 and "Traceback" not in err and "Warning" not in err, err
    s = json.loads(out)["summary"]
    assert s["stage"] == "resolve_memory_pool_config" and s["max_mamba_cache_size"] == m
    # 0.5.13+ checks the weights leave room (ValueError); 0.5.9 gets to MemoryPoolConfig (RuntimeError)
    assert s["error_type"] == ("RuntimeError" if version == "0.5.9" else "ValueError")
    if version == "0.5.9":  # SGLang's own arithmetic in Python ints (no padding row before 0.5.17)
        want = int((s["rest_gib_before_mamba"] - m * s["mamba_cache_per_req_bytes"] / GIB) * GIB)
        assert s["available_kv_bytes"] == want and (want < -(1 << 63)) == (m >= M_ABSURD)


def test_absurd_running_requests_with_radix_off_fails_at_sizing(capsys) -> None:
    """--disable-radix-cache makes M = R: 2^63 - 1 states."""
    code, _, err = _run(capsys, "--gpu", "a100-40gb", "--model", "qwen3.5-9b", "--no-search", "--disable-radix-cache",
                        "--max-running-requests", str(I64_MAX))
    assert code == 1 and "Traceback" not in err and "Warning" not in err, err


def test_search_with_an_absurd_mamba_cache_finds_nothing(capsys) -> None:
    """The search's array path saturates instead of wrapping: every point fails, as the plan does."""
    code, out, err = _run(capsys, "--gpu", "a100-40gb", "--model", "qwen3.5-9b", "--max-mamba-cache-size", str(M_ABSURD))
    assert code == 1 and "Warning" not in err, err
    assert "WILL NOT BOOT" in out and "NOTHING FEASIBLE" in out


CHAIN = dict(pre_gib=39.1, post_gib=21.5, mfs=0.76, per_req=51_511_296, spec_on=True, r_args=-1, ndraft=4,
             m_explicit=-1, radix_off=False, ratio=0.9, cell=65_536, page=1, max_total_tokens=-1, context_len=262_144,
             mamba_ratio_=2, mambaish=True, solve="joint", cap_by_estimate=True, padding_slots=True, mm_reserve_gib=0.0,
             min_one_running=False, pools_sized_separately=False, replay="", ring=0)


@pytest.mark.parametrize("change", [dict(m_explicit=M_ABSURD), dict(m_explicit=I64_MAX),
                                    dict(r_args=I64_MAX, radix_off=True), dict(r_args=I64_MAX, solve="classic"),
                                    dict(r_args=I64_MAX, replay="fixed", ring=1 << 20)])
def test_array_path_saturates_without_warnings(change: dict) -> None:
    """The search's grids (one-element arrays here): no wrap, no warning, and the same failure as the scalar path
    (a plan), which keeps Python's exact numbers: no KV tokens (fail), or a mamba cache of no states (fail_m, which
    0.5.13+ raises on; a huge fixed ReplaySSM scratch leaves the mamba share negative)."""
    inp = {**CHAIN, **change}
    arrays = {k: (np.asarray([v]) if k in ("pre_gib", "post_gib", "mfs", "per_req", "r_args", "m_explicit",
                                           "radix_off", "spec_on") else v) for k, v in inp.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        out = mp.size_chain(**arrays)
        scalar = mp.size_chain(**inp)
    assert type(scalar["n"]) is int  # the plan's path took it, exactly
    for k in ("fail", "fail_m", "fail_rest"):
        assert bool(out[k][0]) == bool(scalar[k]), k
    assert scalar["fail"] or scalar["fail_m"]
