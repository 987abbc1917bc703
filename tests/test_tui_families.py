"""The explorer on issue #22's families (MLA, the DSA indexer, sliding window, chunked attention): each model opens
to the CLI's verdict, its capacity and a search that completes to ranked rows whose first row loads, at 120x40."""

from __future__ import annotations

import asyncio

import pytest
from textual.widgets import DataTable

from planner.tui.app import PlannerApp
from test_tui_states import on_screen, settle  # noqa: E402 - tests/ is on the path (no package)

CASES = [("h200", "deepseek-v3", "FITS"),
         ("h200", "deepseek-v3.2", "FITS"),
         ("h200", "gpt-oss-120b", "FITS"),
         ("h200", "llama-4-scout-17b-16e-instruct", "OUT-OF-MEMORY RISK")]


@pytest.mark.parametrize("gpu,model,verdict", CASES)
def test_the_explorer_shows_the_familys_verdict_capacity_and_search(gpu, model, verdict):
    async def run():
        app = PlannerApp(gpu=gpu, model=model, flags=["--tp-size", "8"], env={}, version="0.5.23", auto_search=True)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            assert on_screen(app, verdict), verdict
            assert on_screen(app, "KV tokens") and on_screen(app, "running requests")
            table = app.query_one("#table", DataTable)
            assert table.row_count > 0 and app.result is not None and app.result.ranked
            table.focus()
            await pilot.press("enter")  # loads the best row's flags into the inputs
            await settle(pilot)
            assert on_screen(app, " ".join(app.result.ranked[0].chosen[:2]))

    asyncio.run(run())
