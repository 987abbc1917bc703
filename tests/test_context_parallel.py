"""Decode context parallel (--dcp-size) on SGLang 0.5.23 against the oracle goldens (tests/golden/cp/), and the
refusal that stays until the pipeline models the whole chain."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from planner.engines.sglang.pipeline.context_parallel import (
    dcp_allocator_page, dcp_cell_scale, dcp_kv_heads, dcp_logical_tokens)

ROOT = Path(__file__).resolve().parent.parent
RELEASES = ("0.5.22", "0.5.23")


def _rows():
    out = {}
    for rel in RELEASES:
        gold = ROOT / "tests" / "golden" / "cp" / f"sglang-{rel}"
        cases = {c["id"]: c for c in map(json.loads, (gold / "cases.jsonl").read_text().splitlines())}
        for line in (gold / "results.jsonl").read_text().splitlines():
            r = json.loads(line)
            assert r["summary"]["sglang_version"] == rel
            out[f"{rel}/{r['id']}"] = (cases[r["id"]], r["summary"])
    return out


def _flag(flags, name):
    return int(flags[flags.index(name) + 1])


def _kv_heads(case):
    cfg = json.loads((ROOT / "planner" / "catalog" / "configs" / Path(case["config_json"]).name).read_text())
    return cfg["num_key_value_heads"]


ROWS = _rows()
PAIRS = [k for k, (c, s) in ROWS.items() if s["outcome"] == "ok" and "_dcp1_" not in k]


def test_golden_set_has_dcp_cases():
    assert len(PAIRS) >= 2 * 100
    assert {_flag(ROWS[k][0]["flags"], "--dcp-size") for k in PAIRS} == {2, 4, 8}


@pytest.mark.parametrize("cid", PAIRS)
def test_kv_cell_follows_kv_heads_over_tp_div_dcp(cid):
    case, s = ROWS[cid]
    tp, dcp = _flag(case["flags"], "--tp-size"), _flag(case["flags"], "--dcp-size")
    twin_case, twin = ROWS[cid.replace(f"_dcp{dcp}_", "_dcp1_")]
    assert twin["outcome"] == "ok"
    num, den = dcp_cell_scale(_kv_heads(case), tp, dcp)
    assert s["kv_cell_bytes_per_token"] * den == twin["kv_cell_bytes_per_token"] * num


def test_heads_floor_and_draft():
    # Qwen3-30B-A3B: 4 KV heads; tp 8 keeps one (replicated), dcp 2 still one, dcp 4 two
    assert [dcp_kv_heads(4, 8, d) for d in (1, 2, 4, 8)] == [1, 1, 2, 4]
    assert dcp_kv_heads(8, 8, 4, is_draft=True) == 1
    with pytest.raises(ValueError):
        dcp_kv_heads(8, 8, 3)


def test_logical_tokens_and_page():
    assert dcp_logical_tokens(749707, 2) == 1499414
    assert dcp_allocator_page(16, 4) == 64


def test_dcp_stays_refused_by_name():
    """The pool chain (mem_fraction_static without the breakable prefill graph, the widened index space) is not
    wired yet: a --dcp-size launch must stop with one line, exit 2, not plan as plain tp."""
    p = subprocess.run([sys.executable, "-m", "planner", "--gpu", "h100", "--sglang-version", "0.5.23", "--",
                        "python", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-32B", "--tp-size", "8",
                        "--dcp-size", "2"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert p.returncode == 2
    assert "dcp" in (p.stdout + p.stderr).lower()
