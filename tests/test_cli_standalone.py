"""The before-boot CLI for STANDALONE speculative decoding: verdict, capacity, the draft's weights and KV with how
each was computed, and the warning where SGLang under-budgets the draft's KV."""

from __future__ import annotations

import json
import os

from planner.cli import main

DRAFT = ["--speculative-algorithm", "STANDALONE", "--speculative-draft-model-path"]


def run(argv, capsys):
    os.environ["COLUMNS"] = "400"  # one line per sentence
    code = main(argv)
    return code, capsys.readouterr().out


def test_qwen3_32b_drafted_by_qwen3_8b_on_one_h100_does_not_boot_and_says_why(capsys):
    # the example as written (search included): 61 GiB + the draft's 15.26 GiB on an 80 GB card
    code, out = run(["--gpu", "h100", "--model", "qwen3-32b", *DRAFT, "qwen3-8b"], capsys)
    assert code == 1
    assert "WILL NOT BOOT" in out and "Loaded weights leave no GPU memory for the KV cache" in out
    assert "STANDALONE draft weights: 15.26 GiB per GPU, loaded before the pools are sized" in out
    assert "16,381,470,720 B" in out and "catalog (safetensors index total_size" in out
    assert "Would fit with" in out and "--tp-size 2" in out  # the search's way out


def test_qwen3_32b_drafted_by_qwen3_8b_on_two_h100s_fits_with_capacity_and_draft_kv(capsys):
    code, out = run(["--gpu", "h100", "--model", "qwen3-32b", *DRAFT, "qwen3-8b", "--tp-size", "2", "--no-search"],
                    capsys)
    assert code == 0
    assert out.startswith("Verdict: FITS")
    assert "Capacity: 48 running requests" in out
    assert "16,381,470,720 B / tp 2" in out
    assert "STANDALONE draft KV: its own pool, 36 layer(s) x 2,048 B per token per layer" in out
    assert "SGLang budgets the draft's KV in the target's cell: 204,800 B per token = 131,072 B x (1 + 36 draft" in out
    assert "WARNING" not in out  # Qwen3-8B and Qwen3-32B have the same per-layer KV


def test_hybrid_target_with_a_qwen3_5_draft_runs_its_mtp_head(capsys):
    code, out = run(["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", *DRAFT, "qwen3.5-9b", "--no-search"], capsys)
    assert code == 0 and out.startswith("Verdict: FITS")
    assert "Capacity:" in out
    assert "SGLang loads qwen3.5-9b (Qwen3_5ForConditionalGeneration) as its MTP head" in out
    assert "STANDALONE draft KV: its own pool, 1 layer(s)" in out and "full_attention_layer_ids=[0]" in out


def test_draft_with_other_per_layer_kv_warns_by_how_much(capsys):
    code, out = run(["--gpu", "h200", "--model", "qwen3-next-80b-a3b-instruct", "--tp-size", "2", "--context-length",
                     "32768", *DRAFT, "qwen3-8b", "--no-search"], capsys)
    assert code in (0, 1)
    assert "WARNING: SGLang under-budgets by" in out and "assumes the draft's per-layer KV is the target's" in out


def test_older_release_says_the_draft_kv_is_not_budgeted_and_json_carries_the_notes(capsys):
    code, out = run(["--gpu", "h200", "--model", "qwen3-32b", *DRAFT, "qwen3-8b", "--sglang-version", "0.5.11",
                     "--no-search", "--json"], capsys)
    d = json.loads(out)
    assert any(n.startswith("WARNING: SGLang 0.5.11 does not count the draft's KV") for n in d["notes"])
    assert any("loaded after the pools" in n for n in d["notes"])


def test_draft_with_a_shorter_context_fails_in_sglangs_own_model_config(capsys):
    code, out = run(["--gpu", "h200", "--model", "qwen3-next-80b-a3b-instruct", "--tp-size", "2", *DRAFT, "qwen3-8b",
                     "--no-search"], capsys)
    assert code == 1
    assert "Target model's context_length (262144) is greater than the derived context_length (40960)" in out


def test_dp_attention_is_sglangs_own_rejection(capsys):
    code, out = run(["--gpu", "h200", "--model", "qwen3-32b", *DRAFT, "qwen3-8b", "--tp-size", "2",
                     "--enable-dp-attention", "--dp-size", "2", "--no-search"], capsys)
    assert code == 1
    assert "Currently standalone speculative decoding does not support dp attention." in out


def _checkpoint(tmp_path, name):
    import shutil  # noqa: PLC0415
    from pathlib import Path  # noqa: PLC0415

    d = tmp_path / name
    d.mkdir()
    src = Path(__file__).resolve().parent.parent / "planner" / "catalog" / "configs" / "Qwen__Qwen3-8B.config.json"
    shutil.copyfile(src, d / "config.json")
    return d


def test_draft_checkpoint_dir_weights_come_from_its_index(tmp_path, capsys):
    d = _checkpoint(tmp_path, "my-qwen3-8b")
    (d / "model.safetensors.index.json").write_text(json.dumps({"metadata": {"total_size": 16_000_000_000},
                                                                "weight_map": {}}))
    code, out = run(["--gpu", "h200", "--model", "qwen3-32b", *DRAFT, str(d), "--no-search"], capsys)
    assert code == 0
    assert "safetensors-index (model.safetensors.index.json metadata.total_size" in out and "16,000,000,000 B" in out


def test_draft_checkpoint_dir_weights_come_from_its_safetensors_headers(tmp_path, capsys):
    import struct  # noqa: PLC0415

    d = _checkpoint(tmp_path, "my-qwen3-8b-shards")
    header = json.dumps({"w": {"dtype": "BF16", "shape": [1000, 1000], "data_offsets": [0, 2_000_000]}}).encode()
    (d / "model.safetensors").write_bytes(struct.pack("<Q", len(header)) + header)
    code, out = run(["--gpu", "h200", "--model", "qwen3-32b", *DRAFT, str(d), "--no-search", "--verbose"], capsys)
    assert "safetensors-headers (sum of tensor sizes in 1 safetensors header(s)" in out and "2,000,000 B" in out
    assert "draft worker's load per GPU = 0.00 GiB" in out


def test_no_draft_path_drafts_with_the_target_itself(capsys):
    code, out = run(["--gpu", "h200", "--model", "qwen3-32b", "--speculative-algorithm", "STANDALONE", "--no-search"],
                    capsys)
    assert "no --speculative-draft-model-path, so SGLang loads the target itself as the draft" in out
    assert "STANDALONE draft KV: its own pool, 64 layer(s)" in out and "WARNING: SGLang under-budgets by" in out
