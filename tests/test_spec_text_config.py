"""A config.json whose text_config is not an object: the spec reads the top level, as its parser does
(planner/catalog/spec.py _parse), instead of a traceback (found by tests/test_fuzz_cli.py's
test_random_config_json: text_config 1 on the Qwen3.6-27B text config)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.cli import main

CFG = Path(__file__).parents[1] / "planner" / "catalog" / "configs" / "Qwen__Qwen3.6-27B.config.json"


@pytest.mark.parametrize("bad", [1, "x", [1], None, 0.5])
@pytest.mark.parametrize("flags", [[], ["--tp-size", "5"]])
def test_a_text_config_that_is_not_an_object_is_ignored(bad, flags, tmp_path, capsys):
    text = json.loads(CFG.read_text())["text_config"]
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**text, "architectures": ["Qwen3_5ForConditionalGeneration"]}))
    code = main(["--gpu", "rtxpro6000", "--model", str(path), "--no-search", "--json", *flags])
    good = capsys.readouterr()
    path.write_text(json.dumps({**text, "text_config": bad, "architectures": ["Qwen3_5ForConditionalGeneration"]}))
    code_bad = main(["--gpu", "rtxpro6000", "--model", str(path), "--no-search", "--json", *flags])
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    assert code_bad == code
    if code != 2:
        a, b = json.loads(good.out), json.loads(out.out)
        assert a["summary"] == b["summary"] and a["verdict"] == b["verdict"]
