"""planner.batch: a line the fast check (plain_request) takes is a line the pydantic model takes, with the same
values; every other line goes to the model, which names the error."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.batch import ACCEPTED, FIELDS, parse_line, plain_request, request_model
from planner.errors import BadInput

MODEL = request_model()

scalars = st.one_of(st.none(), st.booleans(), st.integers(-(1 << 70), 1 << 70), st.floats(allow_nan=True),
                    st.text(max_size=6), st.sampled_from(["EAGLE", "off", "kv-tokens", "headroom", "h100"]))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.text(max_size=4), inner, max_size=3)),
                      max_leaves=6)
keys = st.sampled_from([*ACCEPTED, "bogus", "flag"])


def same(a, b) -> bool:
    """Equal with the same types all the way down (1 is not 1.0, True is not 1)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return a == b


def check(raw: dict) -> None:
    plain = plain_request(raw)
    if plain is None:
        return
    model = MODEL.model_validate(raw)  # raises if the fast check took a line the model refuses
    for name in FIELDS:
        assert same(getattr(plain, name), getattr(model, name)), (name, getattr(plain, name), getattr(model, name))


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(keys, values, max_size=6), st.sampled_from(["h100", 5]), st.sampled_from(["qwen3.6-27b", None]))
def test_the_fast_check_takes_only_what_the_model_takes_as_it_is(raw, gpu, model):
    raw = dict(raw)
    raw.setdefault("gpu", gpu)
    if model is not None:
        raw.setdefault("model", model)
    check(raw)


@pytest.mark.parametrize("raw", [
    {"gpu": "h100", "model": "m"},
    {"id": 3, "gpu": "h100", "model": "m", "flags": ["--tp-size", 2, 0.5], "env": {"A": "1", "B": True, "C": 2, "D": 1.5},
     "free_before_gib": 70, "free_after_load_gib": 20.5, "sglang_version": "0.5.11", "search": False,
     "need_context": 1 << 40, "need_concurrency": 1, "speculative": "EAGLE", "allow_fp8_kv": True,
     "allow_bf16_ssm": False, "allow_no_radix": True, "objective": "headroom", "top": 100},
    {"id": "x", "gpu": "h100", "model": "m", "free_before_load_gib": 70.0, "free_after_gib": 1},
])
def test_plain_lines_take_the_fast_path_with_the_models_values(raw):
    assert plain_request(raw) is not None
    check(raw)


@pytest.mark.parametrize("raw", [
    {"gpu": "h100"},  # model missing
    {"gpu": "h100", "model": "m", "bogus": 1},
    {"gpu": "h100", "model": "m", "flags": [True]},
    {"gpu": "h100", "model": "m", "flags": [float("inf")]},
    {"gpu": "h100", "model": "m", "top": 0},
    {"gpu": "h100", "model": "m", "need_context": True},
    {"gpu": "h100", "model": "m", "speculative": "eagle"},
    {"gpu": "h100", "model": "m", "free_before_gib": 1, "free_before_load_gib": 2},  # both spellings: the model decides
    {"id": True, "gpu": "h100", "model": "m"},
])
def test_anything_else_goes_to_the_model(raw):
    assert plain_request(raw) is None


def test_accepted_names_are_the_models_fields_and_aliases():
    assert ACCEPTED == sorted({*MODEL.model_fields, "free_before_load_gib", "free_after_load_gib"})
    assert tuple(MODEL.model_fields) == FIELDS


def test_a_bad_line_still_names_the_field():
    with pytest.raises(BadInput, match=r"line 4: 'top': Input should be less than or equal to 100 \(got 101\)"):
        parse_line(json.dumps({"gpu": "h100", "model": "m", "top": 101}), 4)


number = st.one_of(st.integers(-(1 << 63), 1 << 63), st.floats(), st.booleans(), st.none())
near_valid = st.fixed_dictionaries({"gpu": st.sampled_from(["h100", 1]), "model": st.sampled_from(["m", None])}, optional={
    "id": st.one_of(st.text(max_size=3), number),
    "flags": st.lists(st.one_of(st.text(max_size=4), number), max_size=4),
    "env": st.dictionaries(st.text(max_size=3), st.one_of(st.text(max_size=3), number), max_size=3),
    "free_before_gib": number, "free_before_load_gib": number, "free_after_gib": number, "free_after_load_gib": number,
    "sglang_version": st.one_of(st.text(max_size=6), number),
    "search": number, "allow_fp8_kv": number, "allow_bf16_ssm": number, "allow_no_radix": number,
    "need_context": number, "need_concurrency": number, "top": number,
    "speculative": st.sampled_from(["off", "EAGLE", "DSPARK", "eagle", "", None, 1]),
    "objective": st.sampled_from(["concurrency", "kv-tokens", "headroom", "KV", None]),
})


@settings(max_examples=600, deadline=None)
@given(near_valid)
def test_near_valid_lines_agree_with_the_model(raw):
    check(raw)
    if plain_request(raw) is None:  # the model may take it too; then it is the model's result that is used
        return
    assert MODEL.model_validate(raw) is not None
