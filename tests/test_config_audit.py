"""The config audit (planner/engines/sglang/config_audit.toml) covers every key of every config the planner ships
or is checked against, and is enforced: a key that may change memory and is not modelled stops the plan by name.

The configs: the catalog's (planner/catalog/configs/), the golden sets' inputs (tests/golden/**/config.json and
tests/golden/dense/configs/), and the real configs of the families other branches add
(../shared/tools/vllm-oracle/models/*/config.json, when that folder is there).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from planner.catalog.catalog import load_catalog, resolve_model
from planner.catalog.config_file import _TEXT_KEYS
from planner.catalog.spec import ModelSpec
from planner.cli import main
from planner.engines.sglang.config_audit import CLASSES, config_audit, config_refusal, is_harmless_name, key_refusal
from planner.engines.sglang.support import unmodelled

ROOT = Path(__file__).parents[1]
CONFIGS = ROOT / "planner" / "catalog" / "configs"
SHARED = ROOT.parent.parent / "shared" / "tools" / "vllm-oracle" / "models"


def _config_files() -> list[Path]:
    files = sorted(p for p in CONFIGS.glob("*.json") if "hf_quant_config" not in p.name)
    files += sorted((ROOT / "tests" / "golden").rglob("*config.json"))
    files += sorted((ROOT / "tests" / "data" / "configs").glob("*.config.json"))  # Nemotron-3-Super (refused)
    for shared in (SHARED, Path("/work/shared/tools/vllm-oracle/models")):
        if shared.is_dir():
            files += sorted(shared.glob("*/config.json"))
            break
    return files


FILES = _config_files()


def _keys(cfg: dict) -> list[str]:
    text = cfg.get("text_config")
    return list(cfg) + (list(text) if isinstance(text, dict) else [])


def test_the_configs_are_found():
    assert len(FILES) > 60
    assert any(p.name.startswith("zai-org__GLM-4.7") for p in FILES)


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.name}" for p in FILES])
def test_every_key_of_the_config_is_classified(path):
    cfg = json.loads(path.read_text())
    missing = sorted({k for k in _keys(cfg) if k not in config_audit()})
    assert not missing, f"{path}: add these keys to config_audit.toml: {missing}"


def test_classes_and_reasons():
    audit = config_audit()
    assert {e.cls for e in audit.values()} == set(CLASSES)
    for e in audit.values():
        assert e.why.strip(), e.key
        if e.cls == "modelled":
            assert e.modelled and e.modelled.strip(), e.key


def test_what_the_planner_reads_is_never_no_effect():
    """Every key planner/catalog/config_file.py checks because the planner reads it (spec.py, weights.py,
    quant_tensors.py, drafts.py, the pipeline) is modelled or refused, never no_effect."""
    audit = config_audit()
    read = set(_TEXT_KEYS) | {"architectures", "text_config", "vision_config"}
    code = "\n".join(p.read_text() for p in (ROOT / "planner" / "catalog").glob("*.py"))
    # vision_config is audited as one key (its contents are VisionSpec's)
    read |= set(re.findall(r"""(?:_req|_opt_int)\((?:text|t|cfg), ["']([a-z0-9_]+)["']""", code))
    unclassified = sorted(k for k in read if k not in audit)
    assert not unclassified, unclassified
    wrong = sorted(k for k in read if audit[k].cls == "no_effect" and k != "num_experts_per_tok")
    assert not wrong, wrong
    assert {"num_hidden_layers", "num_key_value_heads", "head_dim", "ssm_state_size"} <= read


@pytest.mark.parametrize("entry", [e for e in load_catalog()], ids=[e.id for e in load_catalog()])
def test_no_catalog_model_is_refused_by_the_audit(entry):
    spec = resolve_model(entry.id).spec
    assert config_refusal(spec) is None


def _qwen3_8b(**extra) -> dict:
    cfg = json.loads((CONFIGS / "Qwen__Qwen3-8B.config.json").read_text())
    cfg.update(extra)
    return cfg


def _plan_error(tmp_path, capsys, cfg: dict, *flags: str) -> tuple[int, str]:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    code = main(["--gpu", "h200", "--model", str(path), "--no-search", *flags])
    return code, capsys.readouterr().err


def test_an_unknown_memory_key_is_refused_by_name(tmp_path, capsys):
    code, err = _plan_error(tmp_path, capsys, _qwen3_8b(kv_group_size=4))
    assert code == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "'kv_group_size' = 4" in err and "config_audit.toml" in err


@pytest.mark.parametrize("value", [4, True, "per_layer", [1, 2], {"a": 1}, 0.5])
def test_unknown_keys_with_a_value_that_could_size_something_are_refused(value):
    assert key_refusal("expert_slots", value) is not None


@pytest.mark.parametrize("key,value", [
    ("unk_token_id", 3), ("cls_token", "<s>"), ("router_z_loss_coef", 0.001), ("embedding_multiplier", 12.0),
    ("mlx_version", "0.2"), ("_attn_implementation", "sdpa"), ("rope_type", "yarn"),
    ("classifier_dropout", 0.1), ("layernorm_eps", 1e-6), ("output_logits", True),
    ("experimental_feature", None), ("extra_layers", 0), ("extra_layer_ids", []),
])
def test_harmless_unknown_keys_pass(key, value):
    assert key not in config_audit()
    assert key_refusal(key, value) is None


def test_a_harmless_unknown_key_does_not_stop_the_plan(tmp_path, capsys):
    code, err = _plan_error(tmp_path, capsys, _qwen3_8b(unk_token_id=3, router_z_loss_coef=0.001, spare=None))
    assert code == 0, err


def test_harmless_patterns_do_not_swallow_sizes():
    for key in ("num_memory_layers", "kv_group_size", "moe_latent_size", "expand_ratio", "hybrid_pattern"):
        assert not is_harmless_name(key), key


def test_latent_moe_is_refused_by_name(tmp_path, capsys):
    """Nemotron-3-Super-120B-A12B's latent MoE (moe_latent_size 1024): SGLang runs its experts in the latent width
    (srt/models/nemotron_h.py:155-157 @0.5.11); sized at hidden width it was ~469B parameters and a confident
    WILL NOT BOOT on 4x H200. The Nano config (no moe_latent_size) plans; with the key it is one line, exit 2."""
    nano = json.loads((CONFIGS / "nvidia__NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.config.json").read_text())
    code, err = _plan_error(tmp_path, capsys, {**nano, "moe_latent_size": 1024}, "--tp-size", "4")
    assert code == 2 and "'moe_latent_size' = 1024" in err and "latent" in err
    code, err = _plan_error(tmp_path, capsys, {**nano, "moe_latent_size": None}, "--tp-size", "4")
    assert code in (0, 1), err  # null: SGLang's use_latent_moe is False (getattr(config, ...) is not None)


def test_allow_lists_keep_the_modelled_value():
    assert key_refusal("mtp_use_dedicated_embeddings", False) is None
    assert "mtp_use_dedicated_embeddings" in (key_refusal("mtp_use_dedicated_embeddings", True) or "")
    assert key_refusal("projector_type", "dspark") is None
    assert key_refusal("projector_type", "mlp") is not None


def test_text_config_keys_are_named_with_their_block():
    cfg = json.loads((CONFIGS / "Qwen__Qwen3.6-27B.config.json").read_text())
    cfg["text_config"] = {**cfg["text_config"], "moe_latent_size": 512}
    spec = ModelSpec.from_hf_config(cfg, "mutated")
    problem = unmodelled("v0_5_23", spec, [])
    assert problem and problem.startswith("--model: config.json key 'text_config.moe_latent_size' = 512")


def test_a_draft_key_is_named_as_the_draft(tmp_path):
    target = resolve_model("qwen3-8b").spec
    head = json.loads((CONFIGS / "sgl-project-SpecForge__qwen3-8b-eagle3.config.json").read_text())
    draft = ModelSpec.from_hf_config({**head, "fusion_layers": [1, 2]}, "head")
    problem = unmodelled("v0_5_23", target, [], draft)
    assert problem and problem.startswith("--speculative-draft-model-path: config.json key 'fusion_layers'")
