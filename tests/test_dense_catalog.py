"""Dense and MoE full-attention models: the README's list of supported architectures, the catalog entries,
and how the planner derives what SGLang derives from their config.json (KV heads with TP replication, head
dims, experts, the weights' per-GPU split).

The published weight totals are the checkpoints' safetensors index ``total_size`` (planner/catalog/configs/
SOURCES.md gives each source); the architecture count in planner/catalog/weights.py reproducing each of them to
the byte checks the config, the total and the count against each other.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from planner.catalog.catalog import find_entry, load_catalog, resolve_model
from planner.catalog.weights import estimate_params, replicated_kv_bytes
from planner.cli import main
from planner.engines.sglang.pipeline.memory_profile import num_kv_heads
from planner.engines.sglang.support import DRAFT_ARCHS, PLAIN_ATTENTION_ARCHS, TARGET_ARCHS
from planner.engines.sglang.plan import target_weight_bytes

ROOT = Path(__file__).parents[1]


def _readme_architectures() -> tuple[set[str], set[str]]:
    """(targets, drafts) named in the README's 'Supported architectures' table and the drafts line after it."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("Supported architectures (targets)")
    table = text[start:text.index("Drafts (`--speculative-draft-model-path`)", start)]
    targets = set()
    for line in table.splitlines():
        if line.strip().startswith("|") and "---" not in line and "architectures" not in line:
            targets |= set(re.findall(r"`([A-Za-z0-9_]+)`", line.split("|")[2]))
    drafts_line = text[text.index("Drafts (`--speculative-draft-model-path`)", start):].split("\n\n")[0]
    drafts = set(re.findall(r"`([A-Za-z0-9_]+(?:Eagle3|Model))`", drafts_line))
    return targets, drafts


def test_the_readme_lists_exactly_the_architectures_support_accepts():
    targets, drafts = _readme_architectures()
    assert targets == set(TARGET_ARCHS)
    assert drafts == set(DRAFT_ARCHS)


def test_every_plain_attention_architecture_has_a_catalog_or_golden_config():
    seen = {resolve_model(e.id).spec.architecture for e in load_catalog() if not e.draft}
    golden = ROOT / "tests" / "golden" / "dense" / "configs"
    seen |= {resolve_model(str(p)).spec.architecture for p in golden.glob("*.json")}
    assert set(PLAIN_ATTENTION_ARCHS) <= seen


PUBLISHED = ["llama-3.1-8b-instruct", "llama-3.1-70b-instruct", "llama-3.3-70b-instruct", "qwen3-8b", "qwen3-32b",
             "qwen2.5-7b-instruct", "qwen2.5-32b-instruct", "qwen2.5-72b-instruct", "qwen3-30b-a3b",
             "qwen3-235b-a22b", "mixtral-8x7b-v0.1", "mistral-7b-instruct-v0.3", "llama-3.1-405b",
             "qwen3-coder-30b-a3b-instruct"]


@pytest.mark.parametrize("name", PUBLISHED)
def test_the_architecture_count_reproduces_the_published_total(name):
    model = resolve_model(name)
    assert model.weight_source == "catalog"
    assert 2 * estimate_params(model.spec) == model.weight_bytes  # all BF16 checkpoints


@pytest.mark.parametrize("name,arch,experts,kv,head_dim", [
    ("mixtral-8x7b-v0.1", "MixtralForCausalLM", 8, 8, 128),  # num_local_experts; head_dim = hidden / heads
    ("qwen3-30b-a3b", "Qwen3MoeForCausalLM", 128, 4, 128),
    ("qwen3-vl-30b-a3b-instruct", "Qwen3VLMoeForConditionalGeneration", 128, 4, 128),  # text_config
    ("qwen2.5-72b-instruct", "Qwen2ForCausalLM", None, 8, 128),
    ("mistral-7b-instruct-v0.3", "MistralForCausalLM", None, 8, 128),
])
def test_the_spec_reads_what_sglang_reads(name, arch, experts, kv, head_dim):
    spec = resolve_model(name).spec
    assert (spec.architecture, spec.num_experts, spec.num_key_value_heads, spec.head_dim) == \
        (arch, experts, kv, head_dim)
    assert spec.hybrid is None and spec.full_attention_layer_ids == tuple(range(spec.num_hidden_layers))


def test_glm_shared_experts_are_read():
    spec = resolve_model(str(ROOT / "tests/golden/dense/configs/zai-org__GLM-4.7-FP8.abbreviated.config.json")).spec
    assert spec.num_experts == 160 and spec.shared_expert_intermediate_size == 1536  # 1 shared x 1536


def test_kv_heads_are_replicated_below_one_per_gpu():
    spec = resolve_model("qwen3-30b-a3b").spec  # 4 KV heads
    assert [num_kv_heads(spec, tp) for tp in (1, 2, 4, 8)] == [4, 2, 1, 1]
    assert replicated_kv_bytes(spec, 4) == 0
    # tp 8: every GPU holds one head's k_proj and v_proj (2 x 2048 x 128, bf16) in each of the 48 layers,
    # where an even split would give half a head
    assert replicated_kv_bytes(spec, 8) == 48 * 2 * (2 * 2048 * 128) // 2
    model = resolve_model("qwen3-30b-a3b")
    per, detail = target_weight_bytes(model, 8)
    assert per == -(-model.weight_bytes // 8) + replicated_kv_bytes(spec, 8) and "replicated" in detail


def test_the_bundled_hub_id_still_goes_to_the_hub_and_the_catalog_id_is_offline(capsys, monkeypatch, tmp_path):
    entry = find_entry("llama-3.1-70b-instruct")
    assert entry is not None and entry.hub_first
    assert find_entry("meta-llama/Llama-3.1-70B-Instruct") is None  # the Hub / HF cache resolves it
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    assert main(["--gpu", "h100", "--model", "meta-llama/Llama-3.1-70B-Instruct", "--tp-size", "4",
                 "--no-search"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--model llama-3.1-70b-instruct, the copy bundled" in err
    assert main(["--gpu", "h100", "--model", "llama-3.1-70b-instruct", "--tp-size", "4", "--no-search"]) == 0
    capsys.readouterr()


def test_a_glm_target_with_its_own_nextn_draft_is_planned(tmp_path, capsys):
    """GLM-4.x's own NextN layer as the EAGLE draft (pipeline/own_mtp.py, tests/test_golden_glm_nextn.py): planned
    from a config with num_nextn_predict_layers; the abbreviated config without it is refused by name."""
    import json

    src = ROOT / "tests/golden/dense/configs/zai-org__GLM-4.7-FP8.abbreviated.config.json"
    cfg = json.loads(src.read_text())
    cfg["num_nextn_predict_layers"] = 1
    p = tmp_path / "config.json"
    p.write_text(json.dumps(cfg))
    spec = ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
            "--speculative-num-draft-tokens", "4"]
    assert main(["--gpu", "b200", "--model", str(p), "--tp-size", "8", "--no-search", "--json", *spec]) == 0
    pools = {x["key"]: x["bytes"] for x in json.loads(capsys.readouterr().out)["pools"]}
    assert pools["draft_kv_k"] == pools["draft_kv_v"] == pools["kv_k"] // 92, pools  # one of the 92 layers
    assert main(["--gpu", "b200", "--model", str(src), "--tp-size", "8", "--no-search", *spec]) == 2
    err = capsys.readouterr().err
    assert "has no num_nextn_predict_layers" in err and err.count("\n") == 1


def test_expert_parallelism_is_refused(capsys):
    assert main(["--gpu", "h100", "--model", "qwen3-30b-a3b", "--tp-size", "4", "--ep-size", "4",
                 "--no-search"]) == 2
    assert "not modelled" in capsys.readouterr().err


ADDED_2026_12_02 = ["qwen3.6-35b-a3b-nvfp4", "qwen3-32b-fp8", "qwen3-30b-a3b-fp8", "qwen3-235b-a22b-fp8",
                    "qwen3.5-397b-a17b-nvfp4", "qwen3-30b-a3b-nvfp4", "qwen3-235b-a22b-nvfp4", "qwen3-32b-nvfp4",
                    "llama-3.1-70b-instruct-fp8", "llama-3.1-405b", "deepseek-r1-distill-qwen-32b",
                    "qwen3-coder-480b-a35b-instruct", "qwen3-coder-30b-a3b-instruct"]


@pytest.mark.parametrize("name", ADDED_2026_12_02)
def test_every_added_catalog_model_gets_a_verdict_on_h100(name, capsys):
    rc = main(["--gpu", "h100", "--model", name, "--tp-size", "8", "--no-search"])
    out = capsys.readouterr().out
    assert rc in (0, 1) and "Verdict:" in out
    entry = find_entry(name)
    assert entry is not None and entry.verbatim in ("A", "B") and "reconstructed" not in entry.file
