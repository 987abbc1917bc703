"""`plan` with a DFLASH draft before boot (no free memory given): a verdict, the capacity and what D costs.

The draft is the SpecForge Qwen3.6-27B DFlash training config (tests/golden/spec/dflash/drafts/README.md: a
training template with the public z-lab head's shape). The figures asserted are recomputed here from the draft's
config and the plan's own profile, not copied from a run.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from planner.catalog.catalog import resolve_model
from planner.cli import main
from planner.hardware.profiles import find_profile
from planner.engines.sglang.plan import make_plan

DRAFTS = Path(__file__).parent / "golden" / "spec" / "dflash" / "drafts"
HEAD = str(DRAFTS / "qwen3.6-27b-dflash")
LAUNCH = ["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--speculative-algorithm", "DFLASH",
          "--speculative-draft-model-path", HEAD]


def run(argv, capsys):
    code = main(argv)
    return code, " ".join(capsys.readouterr().out.split())  # the report wraps: compare as words


def _draft_cell(heads: int, head_dim: int, layers: int, tp: int = 1, dtype_bytes: int = 2) -> int:
    return max(1, heads // tp) * 2 * head_dim * layers * dtype_bytes


def test_issue_launch_gives_verdict_capacity_and_what_d_costs(capsys):
    code, out = run([*LAUNCH, "--no-search"], capsys)
    assert code == 0 and "Verdict: FITS" in out
    cap = re.search(r"Capacity: (\d+) running requests, ([\d,]+) KV tokens", out)
    assert cap and int(cap.group(1)) >= 1
    line = out[out.index("DFLASH:"):out.index("Units:")]
    assert "D = 16 draft tokens per verify (the draft qwen3.6-27b-dflash's block_size" in line
    plan = make_plan(find_profile("rtxpro6000"), resolve_model("qwen3.6-27b"), LAUNCH[4:])
    prof = plan.profile
    assert int(cap.group(1)) == prof.max_running_requests
    assert int(cap.group(2).replace(",", "")) == prof.max_total_num_tokens
    # each running request: (ratio + D) mamba states of S bytes (the joint solve)
    per = (prof.mamba_ratio + 16) * prof.mamba_cache_per_req_bytes
    assert f"(mamba ratio {prof.mamba_ratio} + D 16)" in line and f"= {per / 2**30:.2f} GiB of the mamba share" in line
    # the draft's KV pool: its own 5 layers x 8 KV heads x (128 + 128) x bf16 per token slot (N + page 1)
    cfg = json.loads((DRAFTS / "qwen3.6-27b-dflash" / "config.json").read_text())
    dcell = _draft_cell(cfg["num_key_value_heads"], cfg["head_dim"], cfg["num_hidden_layers"])
    assert dcell == 20480
    draft_kv = sum(x.bytes for x in plan.pools.lines if x.key.startswith("draft_kv"))
    assert draft_kv == (prof.max_total_num_tokens + 1) * dcell
    assert f"the draft's KV pool {draft_kv / 2**30:.2f} GiB" in line
    # 0.5.23 (the default release) loads the draft before sizing: its weights are in the free memory after load
    assert "draft weights 3.22 GiB loaded before sizing" in line


def test_draft_kv_term_follows_each_releases_rule():
    """0.5.16 prices the draft's layers as target layers (ceil(C x (L + Ld) / L)); 0.5.18+ sums the draft's own
    bytes per token. With a 2-KV-head variant of the head the two differ."""
    flags = ["--speculative-algorithm", "DFLASH", "--speculative-draft-model-path", str(DRAFTS / "qwen3.6-27b-dflash-kv2")]
    target = 4 * (256 + 256) * 16 * 2  # Qwen3.6-27B: 4 KV heads x (256 + 256) x 16 full-attention layers x bf16
    cells = {}
    for v in ("0.5.16", "0.5.23"):
        plan = make_plan(find_profile("rtxpro6000"), resolve_model("qwen3.6-27b"), flags, version=v,
                         free_before_gib=94.69, free_after_gib=39.0)
        cells[v] = plan.profile.kv_cell_bytes_per_token
    assert cells["0.5.16"] == (target * (16 + 5) + 15) // 16
    assert cells["0.5.23"] == target + _draft_cell(2, 128, 5)


def test_block_size_flag_sets_d(capsys):
    code, out = run([*LAUNCH, "--speculative-dflash-block-size", "8", "--no-search"], capsys)
    assert code == 0
    assert "D = 8 draft tokens per verify (--speculative-dflash-block-size" in out


def test_0_5_11_reserves_for_48_requests_and_does_not_boot(capsys):
    """0.5.11 reserves S x max_running_requests (48) x D before the mamba split (…kv_cache_mixin.py:78-92)."""
    code, out = run([*LAUNCH, "--sglang-version", "0.5.11", "--mamba-scheduler-strategy", "extra_buffer",
                     "--no-search"], capsys)
    assert code == 1 and "Not enough memory" in out
    s = 153944064  # Qwen3.6-27B's mamba state per request (48 GDN layers, tp 1)
    assert f"{s * 48 * 16 / 2**30:.2f} GiB" in out


def test_no_draft_path_is_sglangs_rejection(capsys):
    code, out = run(["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--speculative-algorithm", "DFLASH",
                     "--no-search"], capsys)
    assert code == 1
    assert "DFLASH speculative decoding requires setting --speculative-draft-model-path." in out


def test_a_non_dflash_draft_is_refused_as_not_modelled(capsys):
    code = main(["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--speculative-algorithm", "DFLASH",
                 "--speculative-draft-model-path", "qwen3.5-35b-a3b-eagle3", "--no-search"])
    assert code == 2
    assert "DFLASH with a LlamaForCausalLMEagle3 draft: not modelled" in capsys.readouterr().err
