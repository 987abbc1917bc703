"""The what-if explorer (planner/tui), driven headless with Textual's Pilot, plus SVG snapshots.

Pilot tests are plain functions running a coroutine (no async test plugin needed). Snapshots
(pytest-textual-snapshot) live in tests/__snapshots__/test_tui/; after an intended change to the
screen, look at the failing report, then `python -m pytest tests/test_tui.py --snapshot-update`.
"""

from __future__ import annotations

import asyncio

import pytest
from textual.widgets import DataTable, Input

from planner.tui import run_tui
from planner.tui.app import HelpScreen, PlannerApp
from planner.tui.view import ENGINE_VERSIONS, flags_from_form, form_from_flags
from planner.tui.widgets import Field, MemoryBar, ResultsPanel

SEED = ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
        "--speculative-num-draft-tokens", "4", "--mamba-scheduler-strategy", "extra_buffer",
        "--max-mamba-cache-size", "24", "--mamba-full-memory-ratio", "0.4"]
SIZE = (120, 40)


def seed_app(flags: list[str] | None = None, auto_search: bool = False) -> PlannerApp:
    return PlannerApp(gpu="rtxpro6000", model="qwen3.6-27b", flags=SEED if flags is None else flags, env={},
                      version="0.5.11", auto_search=auto_search)


def text_of(app: PlannerApp, selector: str) -> str:
    widget = app.query_one(selector)
    if isinstance(widget, MemoryBar):
        return str(widget.render())
    return str(widget.content)


def field(app: PlannerApp, key: str) -> Field:
    return next(f for f in app.query(Field) if f.key == key)


async def type_into(pilot, key: str, text: str) -> None:
    """Focus a field's Input, replace its text by typing, and let the re-plan run."""
    inp = field(pilot.app, key).query_one(Input)
    inp.focus()
    inp.value = ""
    await pilot.press(*list(text))
    await pilot.pause()


def test_seed_will_not_boot_then_max_running_requests_4_fits():
    asyncio.run(_test_seed_will_not_boot_then_max_running_requests_4_fits())


async def _test_seed_will_not_boot_then_max_running_requests_4_fits():
    app = seed_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        verdict = text_of(app, "#verdict")
        assert app.view.verdict.kind == "rejected"
        assert "WILL NOT BOOT" in verdict
        assert "Not enough memory. Please try to increase --mem-fraction-static." in verdict
        assert "--max-running-requests" in text_of(app, "#explain")  # the flag that matters, in words
        bar_before = text_of(app, "#bar")
        assert "over" in app.view.bar.keys and "kv" not in app.view.bar.keys
        assert "spec reservation (asked) 27.53 GiB" in bar_before

        await type_into(pilot, "--max-running-requests", "4")

        assert app.view.verdict.kind == "fits"
        assert text_of(app, "#verdict").startswith(" FITS ")
        bar_after = text_of(app, "#bar")
        assert bar_after != bar_before
        assert {"kv", "draft_kv", "spec", "free"} <= set(app.view.bar.keys) and "over" not in app.view.bar.keys
        assert "KV cache 15.18 GiB" in bar_after
        assert "248,742" in text_of(app, "#capacity")  # KV tokens
        assert "--max-running-requests 4" in text_of(app, "#command")


def test_bar_segments_add_up_to_the_gpu():
    asyncio.run(_test_bar_segments_add_up_to_the_gpu())


async def _test_bar_segments_add_up_to_the_gpu():
    app = seed_app(SEED + ["--max-running-requests", "4"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        bar = app.view.bar
        assert sum(s.bytes for s in bar.segments) == bar.capacity_bytes
        assert "GB" not in text_of(app, "#bar").replace("GiB", "")  # SGLang says GB; we say GiB


def test_search_then_select_a_feasible_row_loads_its_flags():
    asyncio.run(_test_search_then_select_a_feasible_row_loads_its_flags())


async def _test_search_then_select_a_feasible_row_loads_its_flags():
    app = seed_app(auto_search=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.searching or app.result is not None
        await app.workers.wait_for_complete()
        await pilot.pause()
        result = app.result
        assert result is not None and result.ranked
        table = app.query_one("#table", DataTable)
        assert table.row_count == len(result.ranked)
        table.focus()
        await pilot.press("down", "enter")
        await pilot.pause()
        chosen = result.ranked[int(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)]
        values, extras = form_from_flags(chosen.flags)
        assert app.view.flags == flags_from_form(values, extras)
        for flag in ("--max-running-requests", "--mem-fraction-static"):
            if values[flag]:
                assert field(app, flag).query_one(Input).value == values[flag]
        assert app.view.verdict.kind == "fits"
        assert "Inputs changed since this search" not in app.search_status


def test_table_sorts_and_filters():
    asyncio.run(_test_table_sorts_and_filters())


async def _test_table_sorts_and_filters():
    app = seed_app(auto_search=True)
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        panel = app.query_one(ResultsPanel)
        table = app.query_one("#table", DataTable)

        def column(key: str) -> list[str]:
            return [str(table.get_cell(row, key)) for row in table.rows]

        table.post_message(DataTable.HeaderSelected(table, table.columns["kv_tokens"].key, 2,
                                                    table.columns["kv_tokens"].label))
        await pilot.pause()
        assert panel.sort_column == "kv_tokens" and panel.sort_reverse
        kv = [int(x.replace(",", "")) for x in column("kv_tokens")]
        assert kv == sorted(kv, reverse=True)
        table.post_message(DataTable.HeaderSelected(table, table.columns["kv_tokens"].key, 2,
                                                    table.columns["kv_tokens"].label))
        await pilot.pause()
        kv = [int(x.replace(",", "")) for x in column("kv_tokens")]
        assert kv == sorted(kv)

        await pilot.press("escape", "o")  # the key cycles the sort column
        assert panel.sort_column == "longest"

        all_rows = table.row_count
        await pilot.press("slash", *list("chunked"))
        await pilot.pause()
        assert 0 < table.row_count < all_rows
        assert all("--chunked-prefill-size" in x for x in column("flags"))


def test_bad_input_is_shown_inline_and_nothing_crashes():
    asyncio.run(_test_bad_input_is_shown_inline_and_nothing_crashes())


async def _test_bad_input_is_shown_inline_and_nothing_crashes():
    app = seed_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await type_into(pilot, "--mem-fraction-static", "abc")
        mfs = field(app, "--mem-fraction-static")
        assert mfs.has_class("-invalid")
        assert str(mfs.query_one(".error").content) == "not a number"
        assert app.view.verdict.kind == "bad"
        assert "not a number" in text_of(app, "#verdict")
        assert "fix the inputs" in text_of(app, "#bar")

        await type_into(pilot, "--max-running-requests", "4.5")
        assert str(field(app, "--max-running-requests").query_one(".error").content) == "not an integer"

        await type_into(pilot, "--max-running-requests", "4")
        await type_into(pilot, "--mem-fraction-static", "5")  # parses, but out of range: the planner says why
        assert not field(app, "--max-running-requests").has_class("-invalid")
        assert "must be in (0, 1]" in str(mfs.query_one(".error").content)

        await type_into(pilot, "--mem-fraction-static", "0.8")
        assert not mfs.has_class("-invalid")
        assert app.view.verdict.kind == "fits"

        await type_into(pilot, "other", "--no-such-flag")  # SGLang's own parser rejects it: the verdict says so
        assert app.view.verdict.kind == "rejected"
        assert "unrecognized arguments: --no-such-flag" in text_of(app, "#verdict")

        await type_into(pilot, "model-path", "/nonexistent/config.json")
        assert field(app, "model-path").has_class("-invalid")
        assert app.is_running


def test_copy_help_reset_and_keys():
    asyncio.run(_test_copy_help_reset_and_keys())


async def _test_copy_help_reset_and_keys():
    app = seed_app(SEED + ["--max-running-requests", "4"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("escape", "c")
        assert app.clipboard == app.view.command
        assert app.clipboard.startswith("python -m sglang.launch_server --model-path Qwen/Qwen3.6-27B ")
        assert "--max-running-requests 4" in app.clipboard

        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)

        await pilot.press("r")  # every flag back to SGLang's defaults
        await pilot.pause()
        assert app.view.flags == []
        assert field(app, "--max-running-requests").query_one(Input).value == ""
        assert app.view.verdict.kind == "fits"


def test_gpu_and_model_selects_replan():
    asyncio.run(_test_gpu_and_model_selects_replan())


async def _test_gpu_and_model_selects_replan():
    app = seed_app([])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        before = app.view.plan.profile.max_total_num_tokens
        field(app, "gpu").set_value("h200")
        await pilot.pause()
        assert app.view.gpu.id == "h200"
        assert app.view.plan.profile.max_total_num_tokens > before
        field(app, "model").set_value("llama-3.1-8b-instruct")
        await pilot.pause()
        assert "meta-llama" in app.view.command


def test_engine_release_select_replans():
    asyncio.run(_test_engine_release_select_replans())


async def _test_engine_release_select_replans():
    if "0.5.16" not in ENGINE_VERSIONS:
        pytest.skip("only one SGLang release is modelled")
    app = seed_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.view.version == "0.5.11" and app.view.verdict.kind == "rejected"
        field(app, "engine").set_value("0.5.16")  # 0.5.16 solves mamba and speculative memory jointly
        await pilot.pause()
        assert app.view.version == "0.5.16" and app.view.plan.sglang_version == "0.5.16"
        assert app.view.verdict.kind != "rejected" or "Not enough memory" not in app.view.verdict.message


def test_narrow_terminal_switches_between_plan_and_table():
    asyncio.run(_test_narrow_terminal_switches_between_plan_and_table())


async def _test_narrow_terminal_switches_between_plan_and_table():
    app = seed_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.screen.has_class("-narrow")
        assert not app.query_one("#results").display or app.query_one("#results").region.width == 0
        await pilot.press("escape", "t")
        assert app.query_one("#results").region.width > 0
        assert app.query_one("#plan").region.width == 0
        await pilot.press("t")
        assert app.query_one("#plan").region.width > 0
    wide = seed_app()
    async with wide.run_test(size=(200, 50)) as pilot:
        await pilot.pause()
        assert wide.screen.has_class("-wide")
        plan, results = wide.query_one("#plan").region, wide.query_one("#results").region
        assert results.x > plan.x and results.y == plan.y  # side by side
    medium = seed_app()
    async with medium.run_test(size=(160, 45)) as pilot:  # the table under the plan, as wide as it
        await pilot.pause()
        assert medium.screen.has_class("-medium")
        plan, results = medium.query_one("#plan").region, medium.query_one("#results").region
        assert results.y > plan.y and results.x == plan.x and results.width == plan.width


def test_an_edit_replans_in_the_same_step_and_a_load_replans_once():
    asyncio.run(_test_an_edit_replans_in_the_same_step_and_a_load_replans_once())


async def _test_an_edit_replans_in_the_same_step_and_a_load_replans_once():
    from planner.tui import app as app_module

    app = seed_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.view.verdict.kind == "rejected"
        field(app, "--max-running-requests").set_value("4")
        # no pause: the field's value watcher re-planned before set_value returned (no message round trip),
        # so the control's repaint and the plan's land in one screen update
        assert app.view.verdict.kind == "fits" and "--max-running-requests" in app.view.flags

        calls = []
        real = app_module.v.replan

        def counting(inputs):
            calls.append(inputs)
            return real(inputs)

        app_module.v.replan = counting
        try:
            app.load_flags(["--max-running-requests", "8", "--page-size", "16", "--disable-radix-cache"])
        finally:
            app_module.v.replan = real
        assert len(calls) == 1  # the fields set quietly, then one re-plan of the whole form
        assert app.view.flags[:2] == ["--max-running-requests", "8"] and "--disable-radix-cache" in app.view.flags
        assert field(app, "--page-size").query_one(Input).value == "16"
        await pilot.pause()
        field(app, "--page-size").set_value("")  # the watchers follow again after a load
        assert "--page-size" not in app.view.flags


def test_a_choice_fields_label_follows_its_value():
    asyncio.run(_test_a_choice_fields_label_follows_its_value())


async def _test_a_choice_fields_label_follows_its_value():
    from textual.widgets import Select
    from textual.widgets._select import SelectCurrent, SelectOverlay

    app = seed_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        for value in ("fp8_e4m3", "bfloat16", ""):  # the label is repainted without a relayout: check it is right
            field(app, "--kv-cache-dtype").set_value(value)
            await pilot.pause()
            select = field(app, "--kv-cache-dtype").query_one(Select)
            shown = str(select.query_one(SelectCurrent).query_one("#label").content)
            assert shown == ("auto" if value == "" else value)
            assert select.query_one(SelectOverlay).highlighted == [v for _, v in select._options].index(value)
            assert (value or None) == next((b for a, b in zip(app.view.flags, app.view.flags[1:])
                                            if a == "--kv-cache-dtype"), None)


def test_run_tui_rejects_an_unknown_gpu(capsys):
    assert run_tui("no-such-gpu", "qwen3.6-27b", [], {}) == 2
    assert "plan: error:" in capsys.readouterr().err


async def _searched(pilot) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def test_snapshot_seed_will_not_boot(snap_compare):
    assert snap_compare(seed_app(auto_search=True), terminal_size=SIZE, run_before=_searched)


def test_snapshot_feasible(snap_compare):
    assert snap_compare(seed_app(SEED + ["--max-running-requests", "4"], auto_search=True), terminal_size=SIZE,
                        run_before=_searched)


def test_snapshot_80x24(snap_compare):
    assert snap_compare(seed_app(), terminal_size=(80, 24))


def test_inputs_use_the_releases_spelling_and_translate_renamed_flags():
    from planner.tui import view as tv

    assert tv.labels_for("0.5.23")["--mamba-scheduler-strategy"] == "--mamba-radix-cache-strategy"
    assert tv.labels_for("0.5.23")["--cuda-graph-max-bs"] == "--cuda-graph-max-bs-decode"
    assert tv.labels_for("0.5.11")["--mamba-scheduler-strategy"] == "--mamba-scheduler-strategy"
    inputs = tv.initial_inputs("rtxpro6000", "qwen3.6-27b", ["--speculative-algorithm", "EAGLE"], {}, "0.5.23")
    picked = tv.replan({**inputs, "--mamba-scheduler-strategy": "extra_buffer", "--cuda-graph-max-bs": "64"})
    assert "REJECTS" not in picked.verdict.title and picked.verdict.kind != "bad", picked.verdict.message
    assert "--mamba-radix-cache-strategy" in picked.flags and "--cuda-graph-max-bs-decode" in picked.flags
    assert picked.labels["--mamba-scheduler-strategy"] == "--mamba-radix-cache-strategy"
    old = tv.replan({**inputs, "other": "--mamba-scheduler-strategy extra_buffer"})  # typed the old spelling
    assert "REJECTS" not in old.verdict.title and old.verdict.kind != "bad", old.verdict.message
    assert any("is spelled --mamba-radix-cache-strategy in SGLang 0.5.23" in n for n in old.notes)
