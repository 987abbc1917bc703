"""explain's --max-running-requests fix (best_max_running_requests) bisects along the values instead of planning
each of them; it is checked here against planning every value (``exhaustive=True``) over the states the fix is
asked for (speculative decoding on a mamba-ish model, rejected while sizing the pools) and more: every release,
several GPUs and hybrid models, EAGLE / NEXTN shapes, both mamba strategies, a given --max-running-requests."""

from __future__ import annotations

import itertools

import pytest

from planner.engines.sglang import explain as ex
from planner.catalog.catalog import resolve_model
from planner.engines.sglang.rules import RULES
from planner.hardware.profiles import find_profile
from planner.engines.sglang.plan import make_plan

SPEC = {"eagle-3-1-4": "--speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 1 "
                       "--speculative-num-draft-tokens 4",
        "eagle-5-1-6": "--speculative-algorithm EAGLE --speculative-num-steps 5 --speculative-eagle-topk 1 "
                       "--speculative-num-draft-tokens 6",
        "nextn": "--speculative-algorithm NEXTN"}
GPUS = ["rtxpro6000", "l40s", "h100-sxm", "rtx5090", "a100-40gb"]
MODELS = ["qwen3.6-27b", "qwen3.5-9b", "qwen3.6-35b-a3b", "qwen3-next-80b-a3b-instruct"]


def _states(versions, gpus, models, specs, extras):
    for version, gpu, model, spec, extra in itertools.product(versions, gpus, models, specs, extras):
        flags = SPEC[spec].split() + extra.split()
        key = "--mamba-radix-cache-strategy" if RULES[version].strategy_key == "mamba_radix_cache_strategy" \
            else "--mamba-scheduler-strategy"
        flags = [key if f == "--mamba-scheduler-strategy" else f for f in flags]
        yield pytest.param(version, gpu, model, flags, id=f"{version}-{gpu}-{model}-{spec}-{extra or 'none'}")


def _check(version, gpu, model, flags):
    plan = make_plan(find_profile(gpu), resolve_model(model), flags, {}, version=version)
    if plan.args is None or not plan.args.spec_on:
        return None
    fast = ex.best_max_running_requests(plan)
    full = ex.best_max_running_requests(plan, exhaustive=True)
    assert (fast is None) == (full is None), (fast and fast[0], full and full[0])
    if full is not None:
        assert fast[0] == full[0]
        assert vars(fast[1].profile) == vars(full[1].profile)
    return plan.verdict == "rejected" and plan.stage == "resolve_memory_pool_config"


EXTRAS = ["", "--mamba-scheduler-strategy extra_buffer", "--max-running-requests 64",
          "--mamba-scheduler-strategy extra_buffer --max-running-requests 20 --mem-fraction-static 0.8"]


@pytest.mark.parametrize("version,gpu,model,flags",
                         list(_states(["0.5.11", "0.5.16", "0.5.23"], ["rtxpro6000", "l40s"],
                                      ["qwen3.6-27b", "qwen3.5-9b"], ["eagle-3-1-4", "nextn"], EXTRAS)))
def test_fix_search_equals_planning_every_value(version, gpu, model, flags):
    _check(version, gpu, model, flags)


@pytest.mark.parametrize("version,gpu,model,flags",
                         list(_states(list(RULES), GPUS, MODELS, list(SPEC), EXTRAS))[::3])  # a third (all: ~60 s)
def test_fix_search_equals_planning_every_value_everywhere(version, gpu, model, flags):
    _check(version, gpu, model, flags)


def test_the_sample_holds_states_the_fix_is_asked_for():
    """The default sample is not vacuous: it holds rejected states with a fix, and the seed's fix is 10."""
    asked = [p for p in _states(["0.5.11", "0.5.16", "0.5.23"], ["rtxpro6000", "l40s"], ["qwen3.6-27b", "qwen3.5-9b"],
                                ["eagle-3-1-4", "nextn"], EXTRAS) if _check(*p.values)]
    assert len(asked) >= 2
    plan = make_plan(find_profile("rtxpro6000"), resolve_model("qwen3.6-27b"),
                     SPEC["eagle-3-1-4"].split() + ["--mamba-scheduler-strategy", "extra_buffer"], {}, version="0.5.11")
    assert ex.best_max_running_requests(plan)[0] == 10


@pytest.mark.parametrize("extra", ["--max-running-requests 700", "--disable-radix-cache --max-running-requests 900",
                                   "--mamba-radix-cache-strategy extra_buffer --max-running-requests 1500"])
def test_fix_search_above_512_running_requests_on_0_5_22_plus(extra):
    """0.5.22+ with SGLang's default fraction: it moves with --max-running-requests only up to 512 (the decode
    graph's max_bs is clipped to it), so the stretch above is bisected and only 512..1 is planned one by one; the
    answer is still what planning every value gives (before, every value from the given one down was planned:
    about a minute at 10^5)."""
    for version in ("0.5.22", "0.5.23"):
        _check(version, "rtxpro6000", "qwen3.6-27b", SPEC["eagle-3-1-4"].split() + extra.split())
