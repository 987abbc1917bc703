"""Every command the README shows runs as written, under the default release (the README cannot rot).

The commands are extracted from the README's ```bash code blocks (and the ``$ plan ...`` lines of
```text blocks): backslash continuations joined, ``VAR="..."`` assignments expanded, comments and
``[optional]`` placeholders dropped. Each ``plan`` command runs in process; it must end with exit 0
or 1 (2 is allowed only for the commands that need an NVIDIA driver, and then as one line that says
so). ``pip`` / ``python -m pytest`` lines are the install and test steps themselves and are not rerun.
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import pytest

from planner.cli import main

ROOT = Path(__file__).parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def readme_commands() -> list[str]:
    cmds = []
    for lang, body in re.findall(r"```(\w*)\n(.*?)```", README, re.S):
        if lang not in ("bash", "text"):
            continue
        text = body.replace("\\\n", " ")
        env: dict[str, str] = {}
        for line in text.splitlines():
            line = line.strip()
            if lang == "text":
                if not line.startswith("$ plan "):
                    continue
                line = line[2:]
            m = re.fullmatch(r'([A-Z_]+)="([^"]*)"', line)
            if m:
                env[m.group(1)] = m.group(2)
                continue
            for part in line.split("&&"):
                part = part.strip()
                if part.startswith("plan "):
                    for k, v in env.items():
                        part = part.replace(f"${k}", v)
                    cmds.append(part)
    return cmds


COMMANDS = readme_commands()
NEEDS_DRIVER = ("--gpu auto", "--gpu 0", "plan probe")
# Hub ids outside the catalog: run from a prepared cache and a local Hub in tests/test_hub.py; here (no
# network, no cache) the command must say so in one line
NEEDS_HUB = ("meta-llama/Llama-3.1-70B-Instruct",)


def test_the_readme_has_commands():
    assert len(COMMANDS) >= 15
    assert any("-- python -m sglang.launch_server" in c for c in COMMANDS)


@pytest.mark.parametrize("command", COMMANDS)
def test_readme_command_runs(command, capsys, monkeypatch):
    import planner.tui

    monkeypatch.chdir(ROOT)
    os.environ["COLUMNS"] = "100"
    argv = shlex.split(command, comments=True)[1:]
    if argv and argv[0] == "tui":  # the interactive app: check its start state instead of running it
        from planner.tui import view as v

        seen = {}
        monkeypatch.setattr(planner.tui, "run_tui", lambda gpu, model, flags, env, version=None: seen.update(
            view=v.replan(v.initial_inputs(gpu, model, flags, env, version))) or 0)
        assert main(argv) == 0
        assert seen["view"].verdict.kind not in ("bad",) and "REJECTS" not in seen["view"].verdict.title
        return
    code = main(argv)
    out = capsys.readouterr()
    if any(k in command for k in NEEDS_DRIVER) and code == 2:
        assert out.err.count("\n") == 1 and ("NVML" in out.err or "driver" in out.err), out.err
        return
    if any(k in command for k in NEEDS_HUB) and code == 2:
        assert out.err.count("\n") == 1 and "Traceback" not in out.err, out.err
        return
    if "# exit 2" in command:  # a documented refusal: exit 2 and one line naming what is not modelled
        assert code == 2 and out.err.count("\n") == 1 and "Traceback" not in out.err, (command, out.err)
        return
    assert code in (0, 1), (command, out.err)
    assert "Traceback" not in out.err and not out.err.strip(), out.err
    assert out.out.strip()


def _readme_outputs():
    import importlib.util
    import sys

    if "readme_outputs" in sys.modules:
        return sys.modules["readme_outputs"]

    spec = importlib.util.spec_from_file_location("readme_outputs", ROOT / "scripts" / "readme_outputs.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("readme_outputs", mod)
    spec.loader.exec_module(mod)
    return sys.modules["readme_outputs"]


def test_readme_has_output_excerpts():
    ro = _readme_outputs()
    found = ro.excerpts(README)
    assert len(found) >= 2
    # every ```text block that shows a '$ plan' command is a generated excerpt (none can be hand-written)
    shown = re.findall(r"```text\n\$ plan ", README)
    assert len(shown) == len(found)


@pytest.mark.parametrize("index", range(len(_readme_outputs().excerpts(README))))
def test_readme_outputs_are_current(index):
    """What each README excerpt shows is what its command prints today (scripts/readme_outputs.py rewrites them)."""
    ro = _readme_outputs()
    ex = ro.excerpts(README)[index]
    assert ex.shown == ro.render(ex), (
        f"README excerpt of `{' '.join(ex.command_lines)}` is stale: run python scripts/readme_outputs.py")


def test_excerpt_selection_marks_what_is_left_out():
    ro = _readme_outputs()
    out = "a\nb\nc\nd\ne\n"
    assert ro.select(out, [["b", "c"]]) == "...\nb\nc\n...\n"
    assert ro.select(out, [[None, "a"], ["e", None]]) == "a\n...\ne\n"
    with pytest.raises(ValueError):
        ro.select(out, [["x", None]])
