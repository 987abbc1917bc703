"""Random edits, key presses and resizes through the explorer (Textual's pilot, ``App.run_test``), over
launches that fit, will not boot, are rejected, do not resolve, or find nothing feasible: zero exceptions,
and after every step the screen is consistent (the focus is on something shown; rows on screen are the
current release's, GPU's and model's, or marked stale).

Deterministic in the default suite (hypothesis derandomized, a fixed example count). For a longer run
with fresh examples: ``TUI_FUZZ_EXAMPLES=300 TUI_FUZZ_RANDOM=1 python -m pytest -q tests/test_tui_fuzz.py``.
"""

from __future__ import annotations

import asyncio
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from textual.widgets import Input

from planner.tui import view as tv
from planner.tui.app import HelpScreen, PlannerApp
from planner.tui.widgets import ChoiceField, Field, ResultsPanel, SwitchField, TextField
from test_tui_states import searches_done  # noqa: E402 - tests/ is on the path (no package)

SEED = ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
        "--speculative-num-draft-tokens", "4", "--mamba-scheduler-strategy", "extra_buffer"]
# (gpu, model, flags, release): the states a user reaches on the first screen
LAUNCHES = [
    ("rtxpro6000", "qwen3.6-27b", SEED, "0.5.11"),  # will not boot (the seed)
    ("rtxpro6000", "qwen3.6-27b", ["--speculative-algorithm", "EAGLE", "--mem-fraction-static", "0.6"], "0.5.23"),
    ("rtxpro6000", "qwen3.6-27b", SEED + ["--max-running-requests", "4"], "0.5.11"),  # fits
    ("rtxpro6000", "qwen3.6-27b", [], None),
    ("rtx4090", "qwen3.6-27b", [], None),  # the weights do not fit: nothing feasible
    ("h200", "llama-3.1-8b-instruct", ["--kv-cache-dtype", "fp8_e4m3"], "0.5.16"),
    ("rtxpro6000", "qwen3.6-35b-a3b", ["--speculative-algorithm", "DFLASH"], None),
    ("l40s", "qwen3-8b", ["--no-such-flag"], "0.5.11"),  # SGLang's parser rejects it
    ("rtxpro6000", "qwen3.6-27b", ["--mem-fraction-static", "abc"], "0.5.11"),  # bad input from the start
    ("a10g", "qwen3.5-9b", ["--context-length", "1k", "--page-size", "64"], None),
]
SIZES = [(80, 24), (90, 30), (100, 30), (120, 40), (160, 48), (200, 50), (240, 70)]
TEXT_VALUES = ["", "0.6", "0.95", "1", "0", "-1", "abc", "4", "4.5", "1e9", "32k", "128Ki", " 8 ", "9" * 30]
OTHER_VALUES = ["", "--tp-size 2", "--no-such-flag", "'unterminated", "--max-running-requests", "--tp-size x",
                "--mamba-scheduler-strategy extra_buffer", "--disable-cuda-graph", "--dtype float16"]
ENV_VALUES = ["", "SGLANG_MAMBA_SSM_DTYPE=bfloat16", "FOO=bar", "novalue", "=x", "'", "A=1 B=2"]
PATH_VALUES = ["", "/nonexistent/config.json", "Qwen/Qwen3-8B", "qwen3-8b", "not a model"]
KEYS = ["s", "t", "i", "o", "r", "c", "slash", "escape", "tab", "shift+tab", "question_mark", "enter", "down",
        "up", "pagedown", "end", "x", "1", "space"]
GPUS = ["rtxpro6000", "h200", "rtx4090", "a10g", "b200"]
MODELS = ["qwen3.6-27b", "qwen3-8b", "llama-3.1-8b-instruct", "qwen3.6-35b-a3b", "llama-3.1-405b"]
TEXT_KEYS = [f.flag for f in tv.FIELDS if f.kind in tv.NUMBER_KINDS]
CHOICES = {f.flag: [v for _, v in f.choices] for f in tv.FIELDS if f.kind == "choice"}
CHOICES.update(engine=list(tv.ENGINE_VERSIONS), gpu=GPUS, model=MODELS)
SWITCHES = [f.flag for f in tv.FIELDS if f.kind == "switch"]

actions = st.one_of(
    st.tuples(st.just("text"), st.sampled_from(TEXT_KEYS), st.sampled_from(TEXT_VALUES)),
    st.tuples(st.just("text"), st.just("other"), st.sampled_from(OTHER_VALUES)),
    st.tuples(st.just("text"), st.just("env"), st.sampled_from(ENV_VALUES)),
    st.tuples(st.just("text"), st.just("model-path"), st.sampled_from(PATH_VALUES)),
    st.sampled_from(sorted(CHOICES)).flatmap(lambda k: st.tuples(st.just("choice"), st.just(k),
                                                                  st.sampled_from(CHOICES[k]))),
    st.tuples(st.just("switch"), st.sampled_from(SWITCHES), st.booleans()),
    st.tuples(st.just("keys"), st.lists(st.sampled_from(KEYS), min_size=1, max_size=4), st.none()),
    st.tuples(st.just("resize"), st.sampled_from(SIZES), st.none()),
    st.tuples(st.just("settle"), st.none(), st.none()),
)

EXAMPLES = int(os.environ.get("TUI_FUZZ_EXAMPLES", "20"))
FRESH = bool(os.environ.get("TUI_FUZZ_RANDOM"))


def field(app: PlannerApp, key: str) -> Field:
    return next(f for f in app.query(Field) if f.key == key)


def check_screen(app: PlannerApp) -> None:
    """What must hold after every step, whatever the inputs."""
    assert app.is_running
    main = app.screen_stack[0]
    view = app.view
    assert view is not None and view.verdict.kind in ("fits", "oom_risk", "rejected", "bad")
    assert view.verdict.title != "PLANNER ERROR", view.verdict.message  # a bug the explorer only survived
    assert str(main.query_one("#verdict").content).strip()
    if view.verdict.kind == "bad":
        assert "\n" not in view.verdict.message  # one line, naming the field
    panel = main.query_one(ResultsPanel)
    if app.result is not None and not app.searching and not panel.has_class("-stale"):
        assert app._result_ctx == tv.search_context(view)  # rows on screen, unmarked: the current context's
    if app.screen is main and main.focused is not None:
        assert PlannerApp._shown(main.focused), main.focused  # keys never go to a widget out of view


async def drive(launch: int, size: tuple[int, int], steps: list) -> None:
    gpu, model, flags, version = LAUNCHES[launch]
    app = PlannerApp(gpu=gpu, model=model, flags=flags, env={}, version=version, auto_search=launch % 3 == 0)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        for kind, key, value in steps:
            if kind == "text":
                f = field(app, key)
                assert isinstance(f, TextField)
                f.input.value = value  # what typing it does, through the same watchers
            elif kind == "choice":
                f = field(app, key)
                assert isinstance(f, ChoiceField)
                f.set_value(value)
            elif kind == "switch":
                f = field(app, key)
                assert isinstance(f, SwitchField)
                f.set_value(value)
            elif kind == "keys":
                await pilot.press(*key)
            elif kind == "resize":
                await pilot.resize_terminal(*key)
            else:
                await searches_done(app)
            await pilot.pause()
            await pilot.pause()
            check_screen(app)
        if isinstance(app.screen, HelpScreen):
            await pilot.press("escape")
        await searches_done(app)
        await pilot.pause()
        await pilot.pause()
        check_screen(app)
        # a search that finished for the inputs on screen shows their rows, unmarked
        if app.result is not None and tv.search_context(app.view) is not None and not app.searching:
            assert app._result_ctx == tv.search_context(app.view)
            assert not app.query_one(ResultsPanel).has_class("-stale")
        for inp in app.query(Input):
            assert "\n" not in inp.value


@settings(max_examples=EXAMPLES, derandomize=not FRESH, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(launch=st.integers(0, len(LAUNCHES) - 1), size=st.sampled_from(SIZES),
       steps=st.lists(actions, min_size=1, max_size=8))
def test_random_edits_keys_and_sizes_never_raise(launch, size, steps):
    asyncio.run(drive(launch, size, steps))


def test_every_launch_opens_and_the_seed_at_every_size():
    """The first screen of each launch (each at another size), and the seed's failing launch at every size,
    the table shown and hidden."""
    for i in range(len(LAUNCHES)):
        asyncio.run(drive(i, SIZES[i % len(SIZES)], [("settle", None, None)]))
    for size in SIZES:
        asyncio.run(drive(0, size, [("keys", ["t"], None), ("keys", ["t", "i"], None)]))
