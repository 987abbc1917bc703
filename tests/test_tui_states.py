"""The explorer in the states a user in trouble reaches (issue 24): a launch that will not boot, SGLang's
rejection, bad input, nothing feasible, a search running, the release changed under a search's rows, and
every terminal size from 80x24 to 240x70. What is asserted is what is on the screen (the composited
lines), not what a hidden widget holds.
"""

from __future__ import annotations

import asyncio

from textual.widgets import DataTable, Input
from textual.worker import WorkerCancelled

from planner.tui import view as tv
from planner.tui.app import HelpScreen, PlannerApp
from planner.tui.widgets import Field, ResultsPanel
from test_tui import field, type_into  # noqa: E402 - tests/ is on the path (no package)

# the seed's failing launch (README): Qwen3.6-27B with EAGLE on one RTX PRO 6000, SGLang 0.5.11
SEED = ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
        "--speculative-num-draft-tokens", "4", "--mamba-scheduler-strategy", "extra_buffer"]
EAGLE_MFS_06 = ["--speculative-algorithm", "EAGLE", "--mem-fraction-static", "0.6"]


def app_for(flags: list[str], version: str | None = "0.5.11", auto_search: bool = False, **kw) -> PlannerApp:
    return PlannerApp(gpu=kw.get("gpu", "rtxpro6000"), model=kw.get("model", "qwen3.6-27b"), flags=flags,
                      env=kw.get("env", {}), version=version, auto_search=auto_search)


def screen_lines(app: PlannerApp) -> list[str]:
    """The screen as the terminal shows it: one string per row."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


def on_screen(app: PlannerApp, text: str, within: str = "Screen") -> bool:
    """Whether ``text`` is visible in the part of the screen a widget occupies (``within``: a selector), also
    when it wraps: words compared across rows, the panels' borders and scrollbars stripped."""
    region = app.screen.region if within == "Screen" else app.query_one(within).region
    rows = screen_lines(app)[region.y:region.bottom]
    words = " ".join(w for line in rows for w in line[region.x:region.right].replace("│", " ")
                     .replace("▌", " ").split() if w.strip("▁▂▃▄▅▆▇█▉▊▋▍▎▏╭╮╰╯─"))
    return " ".join(text.split()) in words


async def settle(pilot) -> None:
    await searches_done(pilot.app)
    await pilot.pause()


async def searches_done(app: PlannerApp) -> None:
    """Wait for the searches still wanted (a cancelled one, superseded or stopped by the inputs, is dropped by
    the app; waiting on it raises WorkerCancelled)."""
    while True:
        try:
            await app.workers.wait_for_complete([w for w in app.workers if not w.is_cancelled])
            return
        except WorkerCancelled:
            continue


# --------------------------------------------------------------------------- a failing launch


def test_eagle_at_mem_fraction_0_6_is_a_verdict_not_a_crash():
    """SGLang stops on the mamba slots before any KV budget exists: the bar shows what the pools had."""
    view = tv.replan(tv.initial_inputs("rtxpro6000", "qwen3.6-27b", EAGLE_MFS_06, {}, "0.5.23"))
    assert view.verdict.kind == "rejected" and "WILL NOT BOOT" in view.verdict.title
    assert "Not enough GPU memory for hybrid" in view.verdict.message
    bar = view.bar
    assert bar is not None and all(s.bytes > 0 for s in bar.segments)
    assert sum(s.bytes for s in bar.segments) == bar.capacity_bytes
    left = next(s for s in bar.segments if s.key == "free")
    assert left.name == "left for mamba + KV"
    assert left.bytes == int(view.plan.profile.rest_gib_before_mamba * tv.GIB)
    asyncio.run(_eagle_at_mem_fraction_0_6())


async def _eagle_at_mem_fraction_0_6():
    app = app_for(EAGLE_MFS_06, version="0.5.23")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert app.view.verdict.kind == "rejected"
        assert on_screen(app, "left for mamba + KV")
    app = app_for(["--speculative-algorithm", "EAGLE"], version="0.5.23")
    async with app.run_test(size=(120, 40)) as pilot:  # typed into the field: the same launch
        await pilot.pause()
        await type_into(pilot, "--mem-fraction-static", "0.6")
        assert app.view.verdict.kind == "rejected" and app.is_running
        assert on_screen(app, "WILL NOT BOOT")


def test_the_seeds_failing_launch_shows_verdict_why_and_fix_at_80x24_and_160x48():
    asyncio.run(_seed_verdict_why_fix((80, 24)))
    asyncio.run(_seed_verdict_why_fix((160, 48)))


async def _seed_verdict_why_fix(size):
    app = app_for(SEED, auto_search=True)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        verdict = app.view.verdict
        assert verdict.kind == "rejected" and verdict.suggestions, verdict
        assert on_screen(app, "WILL NOT BOOT", "#plan"), size
        assert on_screen(app, "Not enough memory. Please try to increase --mem-fraction-static.", "#plan"), size
        assert on_screen(app, "Why: " + verdict.binding, "#plan"), size  # all of it, in view
        fix = verdict.suggestions[0]
        assert "--max-running-requests" in fix
        assert on_screen(app, "Fix: " + fix, "#plan"), size


# --------------------------------------------------------------------------- the release changes under the rows


def test_changing_the_release_searches_again_and_never_loads_an_old_row():
    asyncio.run(_release_change())


async def _release_change():
    app = app_for(SEED, auto_search=True)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        old = app.result
        assert old is not None and old.ranked
        assert app.query_one("#table", DataTable).row_count == len(old.ranked)

        field(app, "engine").set_value("0.5.23")  # the rows were searched with 0.5.11's rules
        assert app.searching, "a release change must search again"
        assert app.query_one("#table", DataTable).loading  # the searching state covers the old rows
        assert "0.5.23" in app.search_status and "0.5.11" in app.search_status
        assert app.query_one(ResultsPanel).has_class("-stale")
        before = list(app.view.flags)
        app.query_one(ResultsPanel).post_message(ResultsPanel.Picked(old.ranked[0], old))  # Enter on an old row
        await pilot.pause()
        assert app.view.flags == before and app.view.version == "0.5.23"  # not loaded, searched or not

        await settle(pilot)
        assert app.result is not old and not app.searching
        assert not app.query_one(ResultsPanel).has_class("-stale")
        assert "Inputs changed" not in app.search_status and "0.5.11" not in app.search_status
        table = app.query_one("#table", DataTable)
        table.focus()
        await pilot.press("enter")
        await pilot.pause()
        assert app.view.version == "0.5.23"
        assert app.view.verdict.kind in ("fits", "oom_risk"), app.view.verdict  # a 0.5.23 row boots on 0.5.23


def test_a_row_is_not_loaded_while_the_inputs_do_not_resolve():
    asyncio.run(_stale_while_bad())


async def _stale_while_bad():
    app = app_for(SEED, auto_search=True)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        row = app.result.ranked[0]
        await type_into(pilot, "model-path", "/nonexistent/config.json")
        assert app.view.verdict.kind == "bad" and not app.searching
        assert app.query_one(ResultsPanel).has_class("-stale")
        assert app.search_status.startswith("Stale: these rows are for SGLang 0.5.11 on rtxpro6000 / qwen3.6-27b")
        before = list(app.view.flags)
        app.query_one(ResultsPanel).post_message(ResultsPanel.Picked(row, app.result))
        await pilot.pause()
        assert app.view.flags == before  # nothing loaded
        await type_into(pilot, "model-path", "")  # back to the searched inputs: the rows are current again
        assert not app.query_one(ResultsPanel).has_class("-stale")


# --------------------------------------------------------------------------- every size


def test_the_flags_column_gets_the_tables_width_and_every_rows_flags_show():
    asyncio.run(_flags_column((160, 48)))
    asyncio.run(_flags_column((240, 70)))
    asyncio.run(_flags_column((80, 24), keys=("t",)))


async def _flags_column(size, keys=()):
    app = app_for(SEED, auto_search=True)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press(*keys)
        await pilot.pause()
        table = app.query_one("#table", DataTable)
        flags = next(c for k, c in table.columns.items() if k.value == "flags")
        numbers = sum(c.get_render_width(table) for k, c in table.columns.items() if k.value != "flags")
        assert flags.width >= 28 and numbers + flags.get_render_width(table) <= table.size.width, size
        top = app.result.ranked[0]
        assert on_screen(app, " ".join(top.chosen), "#table"), size  # the whole first row, wrapped, in view


def test_focus_never_stays_in_a_widget_the_layout_hid():
    asyncio.run(_hidden_focus())


async def _hidden_focus():
    app = app_for(SEED, auto_search=True)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        filt = app.query_one("#filter", Input)
        filt.focus()  # as Tab or a click leaves it (/ also shows the table on a narrow terminal)
        await pilot.pause()
        assert app.focused is filt
        await pilot.resize_terminal(80, 24)  # the table (and its filter) hide on a narrow terminal
        await pilot.pause()
        await pilot.pause()
        assert app.screen.has_class("-narrow") and filt.region.area == 0
        assert app.focused is not filt and app.focused.region.area > 0
        await pilot.press("t")
        assert filt.value == "" and app.query_one("#results").region.area > 0  # t switched, not typed
        await pilot.press("t", "question_mark")
        assert filt.value == "" and isinstance(app.screen, HelpScreen)
        await pilot.press("escape", "i")  # the inputs show while the focus is in them
        await pilot.pause()
        assert app.query_one("#inputs").region.area > 0 and app.focused.region.area > 0
        await pilot.press("escape")
        await pilot.pause()
        assert app.query_one("#inputs").region.area == 0 and app.focused is app.query_one("#plan")


def test_help_scrolls_at_80x24():
    asyncio.run(_help_scrolls())


async def _help_scrolls():
    app = app_for([])
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("question_mark")
        await pilot.pause()
        help_ = app.screen.query_one("#help")
        assert help_.max_scroll_y > 0 and help_.scroll_y == 0
        await pilot.press("pagedown")
        await pilot.pause()
        assert help_.scroll_y > 0
        await pilot.press("end")
        await pilot.pause()
        assert on_screen(app, "is unlikely to); *Why* names the binding constraint.") or help_.scroll_y == help_.max_scroll_y


def test_every_releases_labels_fit_their_column():
    asyncio.run(_labels_fit())


async def _labels_fit():
    for size in ((80, 24), (120, 40)):
        async with app_for([]).run_test(size=size) as pilot:
            await pilot.press("i")
            await pilot.pause()
            for version in tv.ENGINE_VERSIONS:
                field(pilot.app, "engine").set_value(version)
                await pilot.pause()
                for f in pilot.app.query(Field):
                    name = f.query_one(".name")
                    assert name.region.width >= len(f.label), (size, version, f.label)
                    ctrl = f.control.region  # beside its name (a grid row) or under it, never over it
                    assert ctrl.y >= name.region.bottom or ctrl.x >= name.region.x + len(f.label), (
                        size, version, f.label)


def test_the_filters_example_matches_some_rows():
    asyncio.run(_filter_example())


async def _filter_example():
    app = app_for(SEED, auto_search=True)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        filt = app.query_one("#filter", Input)
        example = filt.placeholder.split("'")[1]
        table = app.query_one("#table", DataTable)
        everything = table.row_count
        await pilot.press("slash", *list(example))
        await pilot.pause()
        assert 0 < table.row_count < everything, example


# --------------------------------------------------------------------------- snapshots of the failing states
# (pytest-textual-snapshot; after an intended change to the screen: --snapshot-update, then look at the SVGs)


async def _settled(pilot) -> None:
    await settle(pilot)


async def _release_changed_inputs_bad(pilot) -> None:
    await settle(pilot)
    field(pilot.app, "engine").set_value("0.5.23")
    field(pilot.app, "model-path").set_value("/nonexistent/config.json")
    await settle(pilot)


def test_snapshot_seed_80x24_verdict_why_fix(snap_compare):
    assert snap_compare(app_for(SEED, auto_search=True), terminal_size=(80, 24), run_before=_settled)


def test_snapshot_seed_160x48_searched(snap_compare):
    assert snap_compare(app_for(SEED, auto_search=True), terminal_size=(160, 48), run_before=_settled)


def test_snapshot_eagle_mem_fraction_0_6(snap_compare):
    assert snap_compare(app_for(EAGLE_MFS_06, version="0.5.23"), terminal_size=(120, 40))


def test_snapshot_rejected_by_sglangs_parser(snap_compare):
    assert snap_compare(app_for(["--no-such-flag"], model="qwen3-8b", gpu="l40s", auto_search=True),
                        terminal_size=(120, 40), run_before=_settled)


def test_snapshot_bad_input_80x24(snap_compare):
    assert snap_compare(app_for(SEED + ["--mem-fraction-static", "abc"]), terminal_size=(80, 24),
                        press=["i"])


def test_snapshot_nothing_feasible(snap_compare):
    assert snap_compare(app_for([], gpu="rtx4090", version="0.5.23", auto_search=True), terminal_size=(120, 40),
                        run_before=_settled)


def test_snapshot_stale_rows_after_a_release_change(snap_compare):
    assert snap_compare(app_for(SEED, auto_search=True), terminal_size=(160, 48),
                        run_before=_release_changed_inputs_bad)


def test_snapshot_240x70(snap_compare):
    assert snap_compare(app_for(SEED, auto_search=True), terminal_size=(240, 70), run_before=_settled)


def test_the_bar_fills_the_gpu_and_runs_past_it_by_what_is_over():
    """Drawn segments sum to the GPU's capacity; when the plan asks for more, they run past it by exactly the
    'over capacity' figure (not drawn twice). SGLang's negative mamba count (0.5.11 computes one when the
    speculative reservation has taken the budget) gives memory back that the bar cannot draw: left out."""
    launches = [("rtxpro6000", "qwen3.6-27b", SEED + ["--max-running-requests", "4"], "0.5.11"),
                ("rtxpro6000", "qwen3.6-27b", SEED + ["--max-mamba-cache-size", "24"], "0.5.11"),
                ("rtxpro6000", "qwen3.6-27b", EAGLE_MFS_06, "0.5.23"),
                ("rtx4090", "qwen3.6-27b", [], "0.5.23"),
                ("h200", "llama-3.1-8b-instruct", [], "0.5.16"),
                ("rtxpro6000", "qwen3.6-27b", ["--mem-fraction-static", "0.99", "--max-running-requests", "512"],
                 "0.5.23")]
    seen = set()
    for gpu, model, flags, version in launches:
        view = tv.replan(tv.initial_inputs(gpu, model, flags, {}, version))
        bar = view.bar
        assert bar is not None and all(s.bytes > 0 for s in bar.drawn if s.key != "free")
        drawn = sum(s.bytes for s in bar.drawn)
        over = sum(s.bytes for s in bar.segments if s.key == "over")
        seen.add(over > 0)
        # to the byte, less SGLang's truncation of the KV budget (available = int(rest_gib * 2^30))
        assert abs(drawn - (bar.capacity_bytes + over)) <= 1, (gpu, model, flags, drawn, bar.capacity_bytes, over)
    assert seen == {True, False}
    asyncio.run(_bar_drawn_over())


async def _bar_drawn_over():
    app = app_for([], gpu="rtx4090", version="0.5.23")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert on_screen(app, "weights 50.96 GiB", "#bar")  # the whole weights, not what fits
        assert on_screen(app, "OVER 27.75 GiB", "#bar") and on_screen(app, "over capacity 27.75 GiB", "#bar")


def test_command_bar_wraps_with_continuations_that_paste():
    """The TUI's launch command wraps at the bar's width with backslash continuations, as the CLI's does: every
    line fits, and the lines joined back are the same shell words (a copy from the terminal pastes as is)."""
    import shlex

    from planner.tui import view as v
    from planner.tui.widgets import command_text

    state = v.replan(v.initial_inputs("rtxpro6000", "qwen3.6-27b", SEED, {}, "0.5.11"))
    command = state.command
    assert command and len(command) > 100
    for width in (60, 78, 118, 158, 238):  # the bar at 80 to 240 columns
        lines = command_text(command, width).plain.split("\n")
        assert all(len(line) <= width for line in lines), (width, lines)
        assert all(line.endswith(" \\") for line in lines[:-1])
        joined = " ".join(line.removesuffix(" \\").strip() for line in lines)
        assert shlex.split(joined.removeprefix("$ ")) == shlex.split(command)
