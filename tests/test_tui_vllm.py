"""The explorer's vLLM screen (planner/tui/vllm_screen.py, vllm_view.py): ``plan tui --engine vllm``, the ``e``
switch and the engine select, vLLM's knobs re-planning, bad input as one line in the app. Driven headless with
Textual's Pilot (``run_test``); what the numbers are is vLLM's front end's (tests/test_vllm_frontend.py), so these
tests compare the screen with the front end's own PlanOutcome for the same launch."""

from __future__ import annotations

import asyncio

from textual.widgets import Input

from planner.catalog.catalog import resolve_model
from planner.engines.interface import PlanRequest
from planner.engines.registry import engine
from planner.hardware.profiles import find_profile
from planner.tui import run_tui
from planner.tui import vllm_view as vv
from planner.tui.app import PlannerApp
from planner.tui.vllm_screen import VllmScreen
from planner.tui.widgets import Field

SIZE = (140, 48)


def outcome(flags: list[str], version: str = "0.34.0", search: bool = False):
    return engine("vllm").plan(PlanRequest(gpu=find_profile("rtxpro6000"), model=resolve_model("qwen3.6-27b"),
                                           flags=tuple(flags), env={}, version=version, search=search))


def vllm_app(flags: list[str] | None = None, version: str | None = "0.34") -> PlannerApp:
    return PlannerApp(gpu="rtxpro6000", model="qwen3.6-27b", flags=flags or [], env={}, auto_search=False,
                      engine="vllm", vllm_version=version)


def text(screen, selector: str) -> str:
    return str(screen.query_one(selector).render())


def field(screen, key: str) -> Field:
    return next(f for f in screen.query(Field) if f.key == key)


async def type_into(pilot, screen, key: str, value: str) -> None:
    inp = field(screen, key).query_one(Input)
    inp.focus()
    inp.value = ""
    await pilot.press(*list(value))
    await pilot.pause()


async def settle(pilot, screen) -> None:
    """Let the knob search's worker finish (it fills in the recommendation)."""
    for _ in range(100):
        await pilot.pause(0.05)
        if not screen.searching:
            return


def run(coro) -> None:
    asyncio.run(coro)


def test_engine_vllm_opens_vllms_screen_with_the_front_ends_plan():
    async def go():
        app = vllm_app()
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            assert isinstance(screen, VllmScreen) and app.engine == "vllm"
            await settle(pilot, screen)
            want = outcome([], search=True)
            s = want.json["summary"]
            assert screen.view.verdict == want.verdict == "rejected"
            verdict = text(screen, "#vverdict")
            assert verdict.startswith("vLLM 0.34.0: DOES NOT START") and "Mamba cache blocks" in verdict
            # the recommendation and the serve line are the front end's
            rec = want.json["recommendation"]
            assert " ".join(rec["changes"]) in text(screen, "#vrecommend")
            assert screen.view.command == want.launch
            assert text(screen, "#vcommand").startswith("recommended (the search's):\n$ " + want.launch)
            assert screen.query_one("#vcommand").size.height == 2
            assert f"{s['max_model_len']:,}" in text(screen, "#vcapacity")
    run(go())


def test_knobs_replan_and_show_blocks_tokens_and_concurrency():
    async def go():
        app = vllm_app()
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            await type_into(pilot, screen, "--max-num-seqs", "256")
            await type_into(pilot, screen, "--max-model-len", "131072")
            await settle(pilot, screen)
            flags = ["--max-model-len", "131072", "--max-num-seqs", "256"]
            want = outcome(flags)
            s = want.json["summary"]
            assert screen.view.flags == flags and screen.view.verdict == want.verdict == "fits"
            cap = text(screen, "#vcapacity")
            for v in (f"{s['num_gpu_blocks']:,}", f"{s['kv_cache_size_tokens']:,}", f"{s['max_concurrency']:.2f}x"):
                assert v in cap, (v, cap)
            assert text(screen, "#vverdict").startswith("vLLM 0.34.0: FITS")
            assert "Available KV cache memory" in text(screen, "#vlog")
            assert screen.view.command == "vllm serve Qwen/Qwen3.6-27B --max-model-len 131072 --max-num-seqs 256"
            assert text(screen, "#vcommand") == "$ " + screen.view.command  # the form's own launch: no label
            # the choice knobs: fp8 KV, prefix caching off, MTP 3
            field(screen, "--kv-cache-dtype").set_value("fp8")
            field(screen, vv.PREFIX).set_value("off")
            await type_into(pilot, screen, vv.MTP, "3")
            await settle(pilot, screen)
            assert "--kv-cache-dtype fp8" in screen.view.command and "--no-enable-prefix-caching" in screen.view.command
            assert screen.view.json["summary"]["num_speculative_tokens"] == 3
            assert screen.view.json["summary"]["kv_cache_dtype"].startswith("fp8")
            # the release select: 0.33's rules (its default utilization 0.92)
            field(screen, "version").set_value("0.33.0")
            await settle(pilot, screen)
            assert screen.view.json["vllm_version"] == "0.33.0"
            assert screen.view.json["summary"]["gpu_memory_utilization"] == 0.92
            await pilot.press("escape", "r")
            await settle(pilot, screen)
            assert screen.view.flags == [] and screen.view.json["vllm_version"] == "0.33.0"
    run(go())


def test_bad_input_is_one_line_in_the_app_never_a_traceback():
    async def go():
        app = vllm_app()
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            await type_into(pilot, screen, "--gpu-memory-utilization", "1.5")
            assert screen.view.outcome is None and field(screen, "--gpu-memory-utilization").error
            assert text(screen, "#vverdict").startswith("Bad input: --gpu-memory-util: 1.5 is outside (0, 1]")
            assert "no command" in text(screen, "#vcommand")
            await type_into(pilot, screen, "--gpu-memory-utilization", "0.9")
            await type_into(pilot, screen, "other", "--cpu-offload-gb 4")  # a flag vLLM's rules here do not model
            await settle(pilot, screen)
            verdict = text(screen, "#vverdict")
            assert verdict.startswith("Bad input:") and "--cpu-offload-gb" in verdict and "\n" not in verdict
            await type_into(pilot, screen, "other", "'unclosed")
            assert text(screen, "#vverdict").startswith("Bad input: other flags:")
            await type_into(pilot, screen, "other", "")
            await type_into(pilot, screen, "--max-num-seqs", "abc")
            assert "is not an integer" in text(screen, "#vverdict")
            await type_into(pilot, screen, "--max-num-seqs", "64")
            await settle(pilot, screen)
            assert screen.view.outcome is not None and screen.view.verdict == "fits"
    run(go())


def test_e_and_the_engine_select_switch_engines_keeping_each_form():
    async def go():
        app = PlannerApp(gpu="rtxpro6000", model="qwen3.6-27b", flags=["--max-running-requests", "4"], env={},
                         version="0.5.11", auto_search=False)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            assert not isinstance(app.screen, VllmScreen) and app.view.verdict is not None
            sglang_command = app.view.command
            await pilot.press("e")
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, VllmScreen) and app.engine == "vllm"
            # SGLang's own keys are off here (its search, table, filter, sort, help): nothing happens, nothing breaks
            for action in ("search", "focus_filter", "sort", "table", "help"):
                assert not app.check_action(action, ())
            await pilot.press("s", "slash", "o", "t", "question_mark")
            await pilot.pause()
            assert app.screen is screen and not app.searching
            await type_into(pilot, screen, "--max-num-seqs", "128")
            await settle(pilot, screen)
            assert screen.view.verdict == "fits"
            await pilot.press("escape", "e")  # back to SGLang: its plan as it was
            await pilot.pause()
            assert not isinstance(app.screen, VllmScreen) and app.engine == "sglang"
            assert app.view.command == sglang_command
            await pilot.press("e")
            await pilot.pause()
            assert app.screen is screen and screen.view.flags == ["--max-num-seqs", "128"]  # kept
            field(screen, "engine").set_value("sglang")  # the select switches too
            await pilot.pause()
            assert not isinstance(app.screen, VllmScreen) and field(screen, "engine").value == "vllm"
    run(go())


def test_form_round_trip_and_refusals():
    flags = ["--gpu-memory-utilization", "0.9", "--max-num-seqs", "64", "--no-enable-prefix-caching",
             "--speculative-config", '{"method": "mtp", "num_speculative_tokens": 2}', "--enforce-eager"]
    values, extras = vv.form_from_flags(flags)
    assert values["--max-num-seqs"] == "64" and values[vv.PREFIX] == "off" and values[vv.MTP] == "2"
    assert extras == ["--enforce-eager"]
    assert vv.flags_from_form(values, extras) == flags
    # a speculative config that is not plain MTP stays in the other flags, untouched
    ngram = ["--speculative-config", '{"method": "ngram", "num_speculative_tokens": 2}']
    assert vv.form_from_flags(ngram) == (vv.empty_form(), ngram)
    assert vv.form_from_flags(["--kv-cache-dtype", "fp8_inc"])[1] == ["--kv-cache-dtype", "fp8_inc"]


def test_plan_tui_engine_vllm_refuses_bad_input_before_the_app(capsys):
    assert run_tui("rtxpro6000", "qwen3.6-27b", [], {}, engine="vllm", vllm_version="0.20") == 2
    assert "not modelled" in capsys.readouterr().err
    assert run_tui("nosuchgpu", "qwen3.6-27b", [], {}, engine="vllm") == 2
    from planner.cli import main

    assert main(["tui", "--engine", "vllm", "--sglang-version", "0.5.11"]) == 2
    assert "--sglang-version is an SGLang option" in capsys.readouterr().err


def test_a_vllm_release_not_modelled_is_a_line_in_the_app(monkeypatch):
    """``e`` when the vllm installed here is a release not modelled (the front end's default refuses it): a
    notification naming it, SGLang's screen stays, no traceback."""
    from planner.errors import BadInput

    def refuse(given):
        raise BadInput("vLLM 0.40.0 (installed here) is not modelled; modelled: 0.33.0, 0.34.0")

    monkeypatch.setattr(vv, "default_version", refuse)

    async def go():
        app = PlannerApp(gpu="rtxpro6000", model="qwen3.6-27b", flags=[], env={}, version="0.5.11",
                         auto_search=False)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await pilot.press("e")
            await pilot.pause()
            assert not isinstance(app.screen, VllmScreen) and app.engine == "sglang"
            assert any("0.40.0" in str(n.message) for n in app._notifications)
    run(go())
