"""A config.json whose text_config is not an object (found by tests/test_fuzz_cli.py's test_random_config_json:
text_config 1, [None], true reached the pipeline and raised a traceback). transformers' multimodal configs build
their text config from a dict (None: the class default); anything else is not a config SGLang can load, so the
planner refuses it in one line naming the field (planner/catalog/config_file.py), exit 2; null is read as absent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.cli import main

CFG = Path(__file__).parents[1] / "planner" / "catalog" / "configs" / "Qwen__Qwen3.6-27B.config.json"


@pytest.mark.parametrize("bad", [1, "x", [1], [None], True, 0.5])
@pytest.mark.parametrize("flags", [[], ["--tp-size", "5"]])
def test_a_text_config_that_is_not_an_object_is_one_line(bad, flags, tmp_path, capsys):
    text = json.loads(CFG.read_text())["text_config"]
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**text, "text_config": bad, "architectures": ["Qwen3_5ForConditionalGeneration"]}))
    code = main(["--gpu", "rtxpro6000", "--model", str(path), "--no-search", "--json", *flags])
    out = capsys.readouterr()
    assert code == 2 and "Traceback" not in out.err and out.err.count("\n") == 1
    assert "'text_config'" in out.err and "object" in out.err


def test_a_null_text_config_is_read_as_absent(tmp_path, capsys):
    text = json.loads(CFG.read_text())["text_config"]
    path = tmp_path / "config.json"
    plans = []
    for extra in ({}, {"text_config": None}):
        path.write_text(json.dumps({**text, **extra, "architectures": ["Qwen3_5ForConditionalGeneration"]}))
        code = main(["--gpu", "rtxpro6000", "--model", str(path), "--no-search", "--json"])
        plans.append((code, json.loads(capsys.readouterr().out)["summary"]))
    assert plans[0] == plans[1]
