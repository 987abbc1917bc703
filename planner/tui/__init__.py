"""``plan tui``: an interactive what-if explorer of SGLang's (or, ``--engine vllm``, vLLM's) memory plan (Textual)."""

from __future__ import annotations

import sys

from planner.errors import PlannerError


def run_tui(gpu: str | None, model: str | None, flags: list[str], env: dict[str, str],
            version: str | None = None, engine: str = "sglang", vllm_version: str | None = None) -> int:
    """Run the explorer; returns the exit code (2 for an unknown GPU, model or release, said on stderr).
    ``version``: the SGLang release whose rules to use (default: as ``plan`` picks it); ``engine`` "vllm" opens
    vLLM's explorer (``flags`` are then vLLM's, ``vllm_version`` its release)."""
    from planner.tui.app import PlannerApp  # noqa: PLC0415 - Textual loads only when the TUI runs

    try:
        app = PlannerApp(gpu=gpu, model=model, flags=list(flags), env=dict(env), version=version, engine=engine,
                         vllm_version=vllm_version)
    except PlannerError as exc:
        print(f"plan: error: {exc}", file=sys.stderr)
        return exc.exit_code
    app.run()
    return app.return_code or 0


def __getattr__(name: str):
    if name == "PlannerApp":
        from planner.tui.app import PlannerApp  # noqa: PLC0415

        return PlannerApp
    raise AttributeError(name)


__all__ = ["PlannerApp", "run_tui"]
