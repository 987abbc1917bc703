"""NGRAM before boot, through the whole `plan` command: a verdict, the capacity, no draft memory on the GPU, and
the trie's host memory stated as host memory. The sizing itself is checked against SGLang's own code in
tests/test_golden_ngram.py; here the CLI path and what the report says."""

from __future__ import annotations

import json
import os
import shlex

from planner.cli import main
from planner.engines.sglang.pipeline.ngram import trie_host_bytes

BASE = ["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--speculative-algorithm", "NGRAM"]


def run(argv, capsys):
    os.environ["COLUMNS"] = "400"
    code = main(argv)
    return code, capsys.readouterr().out


def test_trie_bytes_follow_the_cpp_allocation():
    # nodes_.resize(capacity) x sizeof(TrieNode) + node_pool_ grown by emplace_back (a power-of-two buffer)
    assert trie_host_bytes(10_000_000, 176) == 10_000_000 * 176 + (1 << 24) * 8
    assert trie_host_bytes(1 << 20, 168) == (1 << 20) * (168 + 8)
    assert trie_host_bytes(0, 176) == 0


def test_before_boot_report_gives_verdict_capacity_and_host_trie(capsys):
    code, out = run([*BASE, "--no-search"], capsys)
    assert code == 0
    assert out.startswith("Verdict: FITS")
    assert "Capacity: " in out and "running requests" in out
    per = trie_host_bytes(10_000_000, 176)
    assert "host (CPU) memory, not GPU memory" in out and f"{per:,} B" in out
    # no draft model: nothing of a draft is loaded before the pools are sized
    assert "draft worker" not in out and "draft KV" not in out.replace("no draft KV pool", "")


def test_before_boot_json_resolves_ngram_and_charges_no_draft(capsys):
    code, out = run([*BASE, "--no-search", "--json"], capsys)
    d = json.loads(out)
    s = d["summary"]
    assert code == 0 and d["verdict"] == "fits"
    # topk = --speculative-ngram-max-bfs-breadth (10), D = 12, steps = D // topk (0.5.14+), mrr 48
    assert (s["speculative_eagle_topk"], s["speculative_num_draft_tokens"], s["speculative_num_steps"]) == (10, 12, 1)
    assert s["server_args_max_running_requests"] == 48
    assert s["pool_draft_kv_bytes"] == 0 and s["pool_mamba_intermediate_ssm_bytes"] > 0
    assert all("draft" not in a["name"] for a in d["inputs"]["assumptions"])
    assert any("NGRAM" in n and "host (CPU) memory" in n for n in d["notes"])


def test_release_rules_show_in_the_resolution(capsys):
    # 0.5.9: D defaults to --speculative-ngram-max-match-window-size, overlap off, steps left unset
    code, out = run([*BASE, "--no-search", "--json", "--sglang-version", "0.5.9", "--disable-radix-cache",
                     "--max-running-requests", "4", "--speculative-ngram-max-match-window-size", "6"], capsys)
    s = json.loads(out)["summary"]
    assert (s["speculative_num_draft_tokens"], s["speculative_num_steps"], s["disable_overlap_schedule"]) == (6, None, True)
    code, out = run([*BASE, "--no-search", "--json", "--sglang-version", "0.5.13", "--disable-radix-cache",
                     "--max-running-requests", "4", "--speculative-ngram-max-bfs-breadth", "3"], capsys)
    s = json.loads(out)["summary"]
    assert (s["speculative_eagle_topk"], s["speculative_num_draft_tokens"], s["disable_overlap_schedule"]) == (3, 12, True)


def test_page_size_with_a_tree_is_rejected_off_flashinfer(capsys):
    code, out = run([*BASE, "--no-search", "--page-size", "16", "--attention-backend", "triton"], capsys)
    assert code == 1
    assert "speculative_eagle_topk(10) > 1 with page_size(16) > 1 is unstable" in out


def test_search_recommendation_replans_to_the_same_capacity(capsys):
    code, out = run(BASE, capsys)
    assert code == 0 and "Launch:" in out
    launch = out.split("Launch:")[1].split("Gives:")[0].replace("\\\n", " ")
    argv = shlex.split(launch)
    flags = argv[argv.index("--model-path") + 2:]
    assert "NGRAM" in flags
    gives = out.split("Gives:")[1].split("\n")[0]
    code2, out2 = run(["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--no-search", *flags], capsys)
    assert code2 == 0
    running = gives.split(" running requests")[0].split("; ")[-1]
    assert f"Capacity: {running} running requests" in out2
