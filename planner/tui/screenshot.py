"""Write the README's screenshot of the explorer: the README's failing EAGLE case, searched.

    python -m planner.tui.screenshot [docs/tui.svg] [--size 170x44]
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from planner.tui.app import PlannerApp

SEED = ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
        "--speculative-num-draft-tokens", "4", "--mamba-scheduler-strategy", "extra_buffer",
        "--max-mamba-cache-size", "24", "--mamba-full-memory-ratio", "0.4"]


async def screenshot(width: int, height: int) -> str:
    app = PlannerApp(gpu="rtxpro6000", model="qwen3.6-27b", flags=SEED, env={}, version="0.5.11")
    async with app.run_test(size=(width, height)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        return app.export_screenshot(title="plan tui --gpu rtxpro6000 --model qwen3.6-27b ...")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("path", nargs="?", default="docs/tui.svg")
    ap.add_argument("--size", default="170x44")
    a = ap.parse_args()
    w, h = (int(x) for x in a.size.split("x"))
    Path(a.path).write_text(asyncio.run(screenshot(w, h)), encoding="utf-8")
    print(a.path)


if __name__ == "__main__":
    main()
