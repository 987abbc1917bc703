"""size_chain's scalar path (one configuration, Python numbers: what plan runs) equals its array path (what the
search runs on its grids) on random inputs, under every release switch the chain reads."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.engines.sglang.pipeline import memory_profile as mp

GIB = 1 << 30
KEYS = ("r_pool", "rest_before", "spec_reserved", "m", "available", "n", "r", "fail", "fail_m", "fail_rest",
        "rest_after_mamba", "rest_after_spec")


@st.composite
def chain_inputs(draw) -> dict:
    """Every input of size_chain, over the ranges a plan meets and beyond (negative rest, tiny pools, an explicit
    M or R or --max-total-tokens, zero-state models), with every switch."""
    total = draw(st.integers(1, 200)) * GIB + draw(st.integers(0, GIB))
    pre = total / GIB
    post = pre * draw(st.floats(0.0, 1.0))
    mamba = draw(st.booleans())
    replay = draw(st.sampled_from(["", "per_slot", "fixed"])) if mamba else ""
    return dict(
        pre_gib=pre, post_gib=post,
        mfs=draw(st.one_of(st.floats(0.01, 0.99), st.sampled_from([0.5, 0.8, 0.85, 0.9, 0.95]))),
        per_req=draw(st.integers(1, 400 << 20)) if mamba else draw(st.sampled_from([0, 0, 12345])),
        spec_on=draw(st.booleans()),
        r_args=draw(st.one_of(st.just(-1), st.integers(0, 5000))),
        ndraft=draw(st.integers(0, 16)),
        m_explicit=draw(st.one_of(st.just(-1), st.just(-1), st.integers(0, 2000))),
        radix_off=draw(st.booleans()),
        ratio=draw(st.one_of(st.floats(0.01, 10.0), st.sampled_from([0.9, 0.4, 2.0]))),
        cell=draw(st.integers(1, 1 << 22)),
        page=draw(st.sampled_from([1, 1, 16, 64, 128])),
        max_total_tokens=draw(st.one_of(st.just(-1), st.integers(0, 1 << 22))),
        context_len=draw(st.integers(1, 1 << 21)),
        mamba_ratio_=draw(st.integers(0, 6)),
        mambaish=mamba,
        solve=draw(st.sampled_from(["classic", "joint"])),
        cap_by_estimate=draw(st.booleans()),
        padding_slots=draw(st.booleans()),
        mm_reserve_gib=draw(st.sampled_from([0.0, 100 / 1024, 1124 / 1024])),
        min_one_running=draw(st.booleans()),
        pools_sized_separately=draw(st.booleans()),
        replay=replay,
        ring=draw(st.integers(0, 64 << 20)) if replay else 0,
        # the request-capped SWA pool (pipeline/swa.py request_cap): per request, constant, SWA / full bytes per token
        swa_cap=draw(st.one_of(st.none(), st.tuples(st.integers(1, 20000), st.integers(-2, 40000),
                                                    st.integers(1, 1 << 16), st.integers(1, 1 << 20),
                                                    st.integers(0, 1)))),
    )


def _assert_equal(scalar: dict, arrays: dict, inp: dict) -> None:
    assert set(scalar) == set(arrays) == set(KEYS)
    for k in KEYS:
        a, b = np.asarray(scalar[k]), np.asarray(arrays[k]).reshape(())
        assert (a.dtype.kind == "f") == (b.dtype.kind == "f"), (k, a.dtype, b.dtype, inp)
        if a.dtype.kind == "f":
            assert float(a) == float(b), (k, float(a), float(b), inp)
        else:
            assert int(a) == int(b), (k, int(a), int(b), inp)


@settings(max_examples=800, deadline=None)
@given(chain_inputs())
def test_scalar_path_equals_array_path(inp):
    scalar = mp.size_chain(**inp)
    assert type(scalar["n"]) is int  # plain numbers took the scalar path
    _assert_equal(scalar, mp._size_chain_arrays(**inp), inp)
    # and the search's way: one-element arrays of every broadcast input
    arrays = {k: (np.asarray([v]) if not isinstance(v, str) and k not in (
        "solve", "cap_by_estimate", "padding_slots", "min_one_running", "pools_sized_separately", "ring",
        "swa_cap") else v)
        for k, v in inp.items()}
    out = mp.size_chain(**arrays)
    assert isinstance(out["n"], np.ndarray) and out["n"].shape == (1,)
    _assert_equal(scalar, out, inp)


def test_scalar_path_declines_what_python_computes_differently():
    """A zero KV cell or context length (numpy gives 0 / inf where Python raises): the array path's answer."""
    base = dict(pre_gib=95.0, post_gib=44.0, mfs=0.9, per_req=0, spec_on=False, r_args=-1, ndraft=0, m_explicit=-1,
                radix_off=False, ratio=0.9, cell=0, page=1, max_total_tokens=-1, context_len=4096, mamba_ratio_=0,
                mambaish=False)
    assert mp._size_chain_scalar(**{**mp_defaults(), **base}) is None
    with np.errstate(all="ignore"):
        out = mp.size_chain(**base)
    assert isinstance(out["n"], np.ndarray)


def mp_defaults() -> dict:
    return dict(solve="classic", cap_by_estimate=True, padding_slots=False, mm_reserve_gib=0.0,
                min_one_running=False, pools_sized_separately=False, replay="", ring=0)
