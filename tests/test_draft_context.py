"""Draft configs without a context length (issue 23, item 5). SGLang builds the DFLASH / DSPARK draft's ModelConfig
with the target's context_len (speculative/draft_worker_common.py:96-101 @0.5.23) and _derive_context_length
compares it with get_context_length of the draft's config (srt/configs/model_config.py:1291-1316 @0.5.23): a
config.json with no context key gets its transformers class's default (Qwen3Config: 32768), so a longer target
context is refused unless SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN is set. The catalog's DSpark head is a
reconstruction that does not record the key; the published head boots at 262,144 (a public launch)."""

from __future__ import annotations

import json

import pytest

from planner.catalog.catalog import CONFIG_DIR, find_entry, resolve_model
from planner.hardware.profiles import find_profile
from planner.engines.sglang.plan import make_plan

TARGET = "qwen3.6-27b"
HEAD = "qwen3.8-27b-dspark"
DSPARK = ["--speculative-algorithm", "DSPARK", "--speculative-draft-model-path"]


def _head_config() -> dict:
    return json.loads((CONFIG_DIR / find_entry(HEAD).file).read_text())


def _plan(draft: str, ctx: int | None, version: str, env=None):
    flags = DSPARK + [draft] + (["--context-length", str(ctx)] if ctx else [])
    return make_plan(find_profile("h200"), resolve_model(TARGET), flags, env, version=version)


@pytest.mark.parametrize("version", ["0.5.16", "0.5.18", "0.5.21", "0.5.23"])
@pytest.mark.parametrize("ctx", [None, 262144])
def test_catalog_dspark_head_boots_at_the_targets_context_and_says_what_it_assumed(version, ctx):
    assert "max_position_embeddings" not in _head_config()
    p = _plan(HEAD, ctx, version)
    assert p.verdict != "rejected", p.error_message
    assert p.args.context_len == 262144
    assert any(n.startswith("planner assumption:") and "262,144" in n and "32,768" in n for n in p.notes)


@pytest.mark.parametrize("version", ["0.5.16", "0.5.23"])
def test_a_config_json_without_the_key_is_refused_as_sglang_does(tmp_path, version):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(_head_config()))
    assert resolve_model(str(path)).spec.derived_context_len == 32768  # transformers' Qwen3Config default
    p = _plan(str(path), None, version)
    assert p.verdict == "rejected" and p.stage == "model_config"
    assert "Target model's context_length (262144) is greater than the derived context_length (32768)" \
        in p.error_message
    assert not any(n.startswith("planner assumption:") for n in p.notes)
    # within the draft's 32768 it boots; the override env lets SGLang take the target's
    assert _plan(str(path), 32768, version).verdict != "rejected"
    assert _plan(str(path), None, version, {"SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN": "1"}).verdict != "rejected"


def test_a_config_json_that_states_its_context_is_read(tmp_path):
    cfg = dict(_head_config(), max_position_embeddings=131072)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    p = _plan(str(path), None, "0.5.23")
    assert p.verdict == "rejected" and "derived context_length (131072)" in p.error_message
    assert _plan(str(path), 131072, "0.5.23").verdict != "rejected"
