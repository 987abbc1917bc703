"""DFLASH launches: the planner against SGLang's own code (the oracle), field by field, per release.

The expected values are the ``summary`` objects the sglang-oracle printed for each case
(tests/golden/spec/dflash/sglang-<release>/README.md: the command, the oracle adapter and the counts).
Releases: 0.5.11 (the overlap scheduler off, the layer-ratio draft KV, the draft loaded after sizing),
0.5.14 and 0.5.16 (overlap kept, the draft loaded before sizing, still the layer ratio), 0.5.21 and 0.5.23
(the draft's own KV geometry, sgl-project/sglang#34234 in 0.5.18).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.errors import BadInput

from test_golden_oracle import BEYOND_ORACLE, OUTCOME_FIELDS, _plan_summary  # noqa: E402
from golden_sets import read_pairs, releases  # noqa: E402
from planner.engines.sglang.summary import SUMMARY_FIELDS  # noqa: E402

FOLDER = Path(__file__).parent / "golden" / "spec" / "dflash"
RELEASES = releases(FOLDER)

# What SGLang decides that the planner refuses as not modelled (exit 2), by flag: pipeline parallelism, DP
# attention (both refused by check_scope before DFLASH's own ValueError) and the compact draft cache of
# --speculative-draft-window-size (flag_audit.toml: refused).
NOT_MODELLED_FLAGS = ("--pp-size", "--enable-dp-attention", "--speculative-draft-window-size",
                      "--speculative-dflash-draft-window-size")


def _load(version: str) -> list[tuple[dict, dict]]:
    return [({**c, "flags": [str(FOLDER / f) if f.startswith("drafts/") else f for f in c["flags"]]}, e)
            for c, e in read_pairs(FOLDER, version, skip_missing=True)]


CASES = [(c, e) for v in RELEASES for c, e in _load(v)]


def _not_modelled(case: dict) -> bool:
    return any(f in NOT_MODELLED_FLAGS for f in case["flags"])


@pytest.mark.parametrize("case,expected", CASES, ids=[f"{c['version']}-{c['id']}" for c, _ in CASES])
def test_dflash_case_matches_oracle(case, expected):
    if _not_modelled(case):
        with pytest.raises(BadInput, match="not modelled"):
            _plan_summary(case)
        return
    got = _plan_summary(case)
    fields = list(SUMMARY_FIELDS)
    if expected["outcome"] == "ok" and got["stage"] in BEYOND_ORACLE:
        fields = [k for k in fields if k not in OUTCOME_FIELDS]
    diffs = {k: (expected[k], got[k]) for k in fields if expected[k] != got[k]}
    assert not diffs, f"{case['id']}: (oracle, planner) differ: {diffs}"


def test_dflash_sets_are_large_and_varied():
    """At least 30 cases per release range where DFLASH's rules differ, with every outcome among them."""
    by_version = {v: _load(v) for v in RELEASES}
    for v in ("0.5.11", "0.5.16", "0.5.23"):
        assert v in by_version, f"no DFLASH golden set for {v}"
    for v, cases in by_version.items():
        assert len(cases) >= 30, v
        assert {"ok", "rejected", "startup_failed"} <= {e["outcome"] for _, e in cases}, v
        # D from the flag, from the draft config and SGLang's default all occur
        assert {8, 12, 16} <= {e["speculative_num_draft_tokens"] for _, e in cases}, v
