"""The search with the speculative algorithms of issue 14: each algorithm's own draft-shape axis, the catalog's
draft head when none is given, what D costs, and the draft's context cap. That SGLang's own code accepts these
recommendations is tests/test_recommendations.py (the spec* rows of tests/golden/recommended/)."""

from __future__ import annotations

import re

import pytest

from planner.catalog.catalog import resolve_model
from planner.errors import BadInput
from planner.hardware.profiles import find_profile
from planner.engines.sglang.report import render_recommendation
from planner.engines.sglang.search import Needs, run_search


def _search(gpu, model, flags=(), version=None, **needs):
    return run_search(find_profile(gpu), resolve_model(model), list(flags), needs=Needs(**needs), relax=False,
                      version=version)


def test_dflash_with_no_flags_gets_the_catalog_head_and_says_what_d_costs():
    res = _search("rtxpro6000", "qwen3.6-27b", speculative="DFLASH")
    assert res.recommended is not None and res.recommended.verdict == "fits"
    flags = res.ranked[0].flags
    assert flags[flags.index("--speculative-draft-model-path") + 1] == "qwen3.6-27b-dflash"
    assert "--speculative-num-steps" not in flags  # EAGLE's axis is not DFLASH's
    assert res.recommended.args.speculative_num_draft_tokens == 16  # the draft's block_size
    rows = [re.match(r"D = (\d+) .*?: (\d+) running requests", x) for x in res.d_tradeoff]
    assert all(rows) and [int(m.group(1)) for m in rows] == [16, 8, 4]
    running = [int(m.group(2)) for m in rows]
    assert running[0] < running[1] < running[2]  # fewer draft tokens, more slots
    text = "\n".join(render_recommendation(res, resolve_model("qwen3.6-27b"), 100))
    assert "What D costs" in text


def test_ngram_searches_draft_tokens_with_a_matching_breadth_not_eagle_steps():
    res = _search("rtxpro6000", "qwen3.6-27b", speculative="NGRAM", context=131072, concurrency=2)
    assert res.recommended is not None
    for c in res.ranked:
        assert "--speculative-eagle-topk" not in c.flags and "--speculative-num-steps" not in c.flags
        if "--speculative-num-draft-tokens" in c.flags:
            d = c.flags[c.flags.index("--speculative-num-draft-tokens") + 1]
            assert c.flags[c.flags.index("--speculative-ngram-max-bfs-breadth") + 1] == d


def test_dspark_head_with_a_shorter_context_gets_its_context_fixed(tmp_path):
    """A draft config.json with no context key derives transformers' default (Qwen3Config: 32768) in SGLang, whose
    draft ModelConfig then refuses the target's 262,144: the search caps the context at the draft's, as the user
    would have to. (The catalog's reconstructed head is not such a file: its published value is 262,144.)"""
    import json

    from planner.catalog.catalog import CONFIG_DIR, find_entry

    cfg = json.loads((CONFIG_DIR / find_entry("qwen3.8-27b-dspark").file).read_text())
    assert "max_position_embeddings" not in cfg
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    res = _search("rtxpro6000", "qwen3.6-27b", ["--speculative-draft-model-path", str(path)], speculative="DSPARK",
                  version="0.5.16")
    assert res.recommended is not None and res.recommended.verdict == "fits"
    flags = res.ranked[0].flags
    draft_ctx = resolve_model(str(path)).spec.derived_context_len
    assert draft_ctx == 32768
    assert int(flags[flags.index("--context-length") + 1]) == draft_ctx < resolve_model("qwen3.6-27b").spec.derived_context_len


def test_catalog_dspark_head_keeps_the_targets_context():
    """The catalog's DSpark head (reconstructed, no context key recorded) is planned at the published head's
    262,144 (a public launch at that context): no cap, and the search says what it assumed."""
    res = _search("rtxpro6000", "qwen3.6-27b", speculative="DSPARK", version="0.5.16")
    assert res.recommended is not None and res.recommended.verdict == "fits"
    flags = res.ranked[0].flags
    assert flags[flags.index("--speculative-draft-model-path") + 1] == "qwen3.8-27b-dspark"
    assert "--context-length" not in flags
    assert res.recommended.args.context_len == 262144


@pytest.mark.parametrize("algo", ["DFLASH", "DSPARK", "STANDALONE"])
def test_no_catalog_draft_is_a_one_line_error_naming_the_flag(algo):
    with pytest.raises(BadInput) as e:
        _search("h100", "qwen3-32b", speculative=algo)
    assert "--speculative-draft-model-path" in str(e.value) and "\n" not in str(e.value)
