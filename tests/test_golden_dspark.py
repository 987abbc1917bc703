"""DSPARK speculative decoding: the planner against SGLang's own code, field by field, per release.

The expected values are the ``summary`` objects the sglang-oracle printed (each release's real ServerArgs with
``_handle_dspark``, ModelConfig of target and DSpark draft, the sizing chain and ``_init_pools`` for target and
draft on a simulated GPU; 0.5.16's DSPARK draft worker through scripts/oracle/adapters/v0_5_16.py);
tests/golden/spec/dspark/sglang-<release>/README.md gives the command that made them
(scripts/oracle/spec_cases/dspark.py). Nothing here is hand-derived.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from planner.errors import BadInput
from golden_sets import read_pairs, releases
from planner.engines.sglang.summary import SUMMARY_FIELDS

GOLDEN = Path(__file__).parent / "golden" / "spec" / "dspark"
RELEASES = releases(GOLDEN)
# launches SGLang decides that the planner refuses as not modelled (exit 2) before its DSPARK rules run:
# pipeline and data parallelism are outside the planner's scope (server_args.check_scope)
NOT_MODELLED = {"pp2_rejected": "--pp-size", "dp_attn_no_lm_head_rejected": "--dp-size"}
# 0.5.22+: the unified pool's DSPARK checks (kv_cache_hook.py:500-530 @0.5.23) are not modelled: refused whole
NOT_MODELLED_FROM_0_5_22 = {"unified_memory": "--enable-unified-memory"}


def _not_modelled(case: dict) -> str | None:
    if case["id"] in NOT_MODELLED:
        return NOT_MODELLED[case["id"]]
    if tuple(int(x) for x in case["version"].split(".")) >= (0, 5, 22):
        return NOT_MODELLED_FROM_0_5_22.get(case["id"])
    return None


def _load(version: str) -> list[tuple[dict, dict]]:
    folder = GOLDEN / f"sglang-{version}"
    # draft paths in the cases are relative to the cases file
    return [({**c, "flags": [str((folder / f).resolve()) if f.startswith("../drafts/") else f for f in c["flags"]]}, e)
            for c, e in read_pairs(GOLDEN, version)]


CASES = [(c, e) for v in RELEASES for c, e in _load(v)]


@pytest.mark.parametrize("case,expected", CASES, ids=[f"{c['version']}-{c['id']}" for c, _ in CASES])
def test_dspark_case_matches_oracle(case, expected):
    from test_golden_oracle import _compare, _plan_summary  # noqa: PLC0415

    refused = _not_modelled(case)
    if refused:
        with pytest.raises(BadInput, match=refused):
            _plan_summary(case)
        return
    v = tuple(int(x) for x in case["version"].split("."))
    if case["planner_model"].startswith("nemotron") and v < (0, 5, 19) and expected["outcome"] == "ok":
        # NemotronH before 0.5.19 has no set_dflash_layers_to_capture: the target's init_attention_backends raises
        # after the pools (attention_backend_setup.py:55-65 @0.5.16), which the oracle does not run; every sizing
        # field must still agree
        from test_golden_oracle import OUTCOME_FIELDS  # noqa: PLC0415

        got = _plan_summary(case)
        assert (got["outcome"], got["stage"], got["error_type"]) == ("startup_failed", "init_attention_backend",
                                                                      "ValueError")
        diffs = {k: (expected[k], got[k]) for k in SUMMARY_FIELDS if k not in OUTCOME_FIELDS and expected[k] != got[k]}
        assert not diffs, diffs
        return
    _compare(case, expected)


def test_dspark_sets_cover_every_rule_range():
    """At least 30 cases per release range where DSPARK's rules differ (draft KV by layer ratio in
    0.5.16-0.5.17, by the draft's own geometry from 0.5.18), with accepted launches and rejections."""
    ranges = {"0.5.16-0.5.17": ["0.5.16", "0.5.17"], "0.5.18-0.5.23": [f"0.5.{n}" for n in range(18, 24)]}
    for name, versions in ranges.items():
        got = [(c, e) for c, e in CASES if c["version"] in versions]
        assert len(got) >= 30, name
        assert {"ok", "rejected", "startup_failed"} <= {e["outcome"] for _, e in got}, name
        ok = [e for _, e in got if e["outcome"] == "ok"]
        assert all(e["speculative_algorithm"] == "DSPARK" and e["speculative_num_steps"] == 1
                   and e["speculative_eagle_topk"] == 1 for e in ok)
        assert all(e["pool_draft_kv_bytes"] for e in ok)  # the draft's own KV pool
        assert len({e["speculative_num_draft_tokens"] for e in ok}) >= 4  # D from flag, config, default
        assert any(e["pool_mamba_intermediate_ssm_bytes"] for e in ok)
    assert set(SUMMARY_FIELDS) <= set(CASES[0][1])


def test_dspark_before_boot_cli_gives_verdict_capacity_and_draft():
    """Before boot (no free memory given): a verdict, the capacity, and the DSpark draft's memory."""
    draft = GOLDEN / "drafts" / "qwen3.6-27b-dspark"
    out = subprocess.run([sys.executable, "-m", "planner", "--gpu", "rtxpro6000", "--model", "qwen3.6-27b",
                          "--sglang-version", "0.5.23", "--speculative-algorithm", "DSPARK",
                          "--speculative-draft-model-path", str(draft)], capture_output=True, text=True)
    assert out.returncode in (0, 1), out.stderr
    text = " ".join(out.stdout.split())
    assert "Verdict:" in text and "Capacity:" in text
    # the draft's weights (loaded before sizing from 0.5.14) and its KV pool, in the summary lines
    assert "the draft worker's" in text and "GiB included" in text and "of which draft" in text
    # the search keeps DSPARK's own D (its EAGLE steps axis would be rejected: D must be gamma + 1)
    assert "NOTHING FEASIBLE" not in text and "--speculative-num-draft-tokens" not in text


def test_dspark_is_unknown_before_0_5_16():
    """0.5.14's own registry has no DSPARK (first in 0.5.16): SGLang rejects the name, and so does the planner
    (the parametrized test above compares these cases too)."""
    got = [e for c, e in CASES if c["version"] == "0.5.14"]
    assert got
    assert all(e["outcome"] == "rejected" and e["error_message"] == "Unknown speculative algorithm name: DSPARK"
               for e in got)
