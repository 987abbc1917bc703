"""NGRAM speculative decoding: the planner against SGLang's own code, field by field, per release range.

The expected values are the ``summary`` objects the sglang-oracle printed (each release's real ServerArgs,
ModelConfig, sizing chain and ``_init_pools`` on a simulated GPU, NGRAM's worker building no draft model);
tests/golden/spec/ngram/sglang-<release>/README.md gives the command that made them
(scripts/oracle/spec_cases/ngram.py). Nothing here is hand-derived.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from golden_sets import read_pairs, releases
from planner.engines.sglang.summary import SUMMARY_FIELDS

GOLDEN = Path(__file__).parent / "golden" / "spec" / "ngram"
RELEASES = releases(GOLDEN)


def _load(version: str) -> list[tuple[dict, dict]]:
    return read_pairs(GOLDEN, version)


CASES = [(c, e) for v in RELEASES for c, e in _load(v)]


@pytest.mark.parametrize("case,expected", CASES, ids=[f"{c['version']}-{c['id']}" for c, _ in CASES])
def test_ngram_case_matches_oracle(case, expected):
    from test_golden_oracle import _compare  # noqa: PLC0415

    msg = expected["error_message"]
    if expected["error_type"] == "SystemExit" and msg and msg.startswith("oracle.py: error:"):
        # 0.5.9's argparse names the running script (tests/test_golden_oracle.py test_0_5_9_case_matches_oracle)
        expected = {**expected, "error_message": "launch_server.py" + msg[len("oracle.py"):]}
    _compare(case, expected)


def test_ngram_sets_cover_every_rule_range():
    """At least 30 cases per release range where NGRAM's rules differ, with accepted launches, rejections and
    the NGRAM resolution itself (no draft KV, topk from the BFS breadth, D from the release's default)."""
    ranges = {"0.5.9": ["0.5.9"], "0.5.10-0.5.13": ["0.5.10", "0.5.11", "0.5.12", "0.5.13"],
              "0.5.14-0.5.23": [f"0.5.{n}" for n in range(14, 24)]}
    for name, versions in ranges.items():
        got = [(c, e) for c, e in CASES if c["version"] in versions]
        assert len(got) >= 30, name
        outcomes = {e["outcome"] for _, e in got}
        assert {"ok", "rejected"} <= outcomes, (name, outcomes)
        ok = [e for _, e in got if e["outcome"] == "ok"]
        assert all(e["speculative_algorithm"] == "NGRAM" for e in ok)
        assert all(not e["pool_draft_kv_bytes"] and not e["pool_draft_kv_k_bytes"] for e in ok)
        # hybrid models pay the mamba intermediates for D draft tokens
        assert any(e["pool_mamba_intermediate_ssm_bytes"] for e in ok)
    assert set(SUMMARY_FIELDS) <= set(CASES[0][1])
