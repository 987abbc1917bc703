"""Config reader: each architecture's layout as SGLang 0.5.11 derives it, and weights from checkpoints."""

from __future__ import annotations

import json
import struct

import pytest

from planner.catalog.catalog import load_catalog, resolve_model, safetensors_payload_bytes
from planner.catalog.spec import ModelSpec
from planner.errors import BadInput


def test_every_catalog_config_parses():
    for entry in load_catalog():
        r = resolve_model(entry.id)
        assert r.spec.full_attention_layer_ids, entry.id
        assert r.weight_bytes > 0


def test_qwen36_27b_layout_is_interval_rule_not_layer_types():
    spec = resolve_model("qwen3.6-27b").spec
    assert spec.architecture == "Qwen3_5ForConditionalGeneration"
    assert spec.hybrid == "gdn"
    # (l+1) % full_attention_interval(4) == 0 -> 16 full-attention layers {3, 7, ..., 63}
    assert spec.full_attention_layer_ids == tuple(range(3, 64, 4))
    assert len(spec.mamba_layer_ids) == 48
    assert (spec.num_key_value_heads, spec.head_dim, spec.v_head_dim) == (4, 256, 256)
    assert spec.mamba.intermediate_size == 128 * 48 and spec.mamba.n_groups == 16
    assert spec.mamba.conv_kernel == 4 and spec.config_mamba_ssm_dtype == "float32"
    assert spec.mtp_layers == 1 and spec.vision is not None and spec.vision.depth == 27
    assert spec.vision.num_hidden_layers is None  # SGLang's ViT factor then assumes 24 layers
    assert spec.derived_context_len == 262144


def test_layer_types_are_ignored():
    cfg = json.loads(json.dumps(resolve_model("qwen3.6-27b").spec.raw))
    cfg["text_config"]["layer_types"] = ["full_attention"] * 64  # contradicts the interval
    spec = ModelSpec.from_hf_config(cfg)
    assert len(spec.full_attention_layer_ids) == 16


def test_qwen35_moe_and_qwen3_next():
    moe = resolve_model("qwen3.6-35b-a3b").spec
    assert moe.architecture == "Qwen3_5MoeForConditionalGeneration"
    assert len(moe.full_attention_layer_ids) == 10 and len(moe.mamba_layer_ids) == 30
    assert moe.num_experts == 256
    nxt = resolve_model("qwen3-next-80b-a3b").spec
    assert nxt.architecture == "Qwen3NextForCausalLM" and nxt.vision is None
    assert len(nxt.full_attention_layer_ids) == 12 and len(nxt.mamba_layer_ids) == 36
    assert (nxt.num_key_value_heads, nxt.head_dim) == (2, 256)


def test_nemotron_h_pattern():
    spec = resolve_model("nemotron-3-nano-30b-a3b").spec
    pattern = spec.raw["hybrid_override_pattern"]
    assert spec.hybrid == "mamba2"
    assert spec.full_attention_layer_ids == tuple(i for i, c in enumerate(pattern) if c == "*")
    assert spec.mamba_layer_ids == tuple(i for i, c in enumerate(pattern) if c == "M")
    assert (spec.mamba.num_heads, spec.mamba.head_dim, spec.mamba.n_groups, spec.mamba.state_size) == (64, 64, 8, 128)


def test_falcon_h1_every_layer_has_both():
    # Field names as in Falcon-H1 configs (values of Falcon-H1-7B per the research catalog).
    cfg = {"architectures": ["FalconH1ForCausalLM"], "model_type": "falcon_h1", "num_hidden_layers": 44,
           "hidden_size": 3072, "num_attention_heads": 12, "num_key_value_heads": 2, "head_dim": 128,
           "mamba_n_heads": 24, "mamba_d_head": 128, "mamba_d_ssm": 3072, "mamba_d_state": 256,
           "mamba_n_groups": 1, "mamba_d_conv": 4, "max_position_embeddings": 16384, "vocab_size": 130048}
    spec = ModelSpec.from_hf_config(cfg)
    assert spec.full_attention_layer_ids == tuple(range(44)) == spec.mamba_layer_ids
    assert spec.mamba.intermediate_size == 3072 and spec.mamba.state_size == 256


def test_dense_llama():
    spec = resolve_model("llama-3.1-8b-instruct").spec
    assert spec.hybrid is None and len(spec.full_attention_layer_ids) == 32
    assert (spec.num_key_value_heads, spec.head_dim) == (8, 128)
    assert spec.derived_context_len == 131072  # llama3 rope_scaling does not multiply


@pytest.mark.parametrize("cfg,needle", [
    ({}, "architectures"),
    ({"architectures": "Llama"}, "architectures"),
    ({"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 2}, "hidden_size"),
    ({"architectures": ["LlamaForCausalLM"], "num_hidden_layers": -1, "hidden_size": 8,
      "num_attention_heads": 2}, "num_hidden_layers"),
    ({"architectures": ["NemotronHForCausalLM"], "hidden_size": 8}, "hybrid_override_pattern"),
])
def test_malformed_configs_are_bad_input(cfg, needle):
    with pytest.raises(BadInput, match=needle):
        ModelSpec.from_hf_config(cfg)


def _write_safetensors(path, tensors):
    header = {}
    off = 0
    for name, (dtype, shape, nbytes) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [off, off + nbytes]}
        off += nbytes
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + b"\0" * off)
    return off


def test_checkpoint_dir_weights_from_headers_and_index(tmp_path):
    cfg = json.loads(json.dumps(resolve_model("qwen3-8b").spec.raw))
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    a = _write_safetensors(tmp_path / "model-00001-of-00002.safetensors", {"w1": ("BF16", [4, 8], 64)})
    b = _write_safetensors(tmp_path / "model-00002-of-00002.safetensors", {"w2": ("F32", [3], 12)})
    r = resolve_model(str(tmp_path))
    assert (r.weight_bytes, r.weight_source) == (a + b, "safetensors-headers")
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps({"metadata": {"total_size": 1234}}))
    r = resolve_model(str(tmp_path))
    assert (r.weight_bytes, r.weight_source) == (1234, "safetensors-index")


def test_bad_safetensors_is_bad_input(tmp_path):
    p = tmp_path / "x.safetensors"
    p.write_bytes(b"\x01")
    with pytest.raises(BadInput, match="safetensors"):
        safetensors_payload_bytes(p)


def test_names_resolve_case_insensitively():
    assert resolve_model("QWEN3.6-27B").catalog_id == "qwen3.6-27b"
    assert resolve_model("Qwen/Qwen3.6-27B").catalog_id == "qwen3.6-27b"
    assert resolve_model("qwen3-next").catalog_id == "qwen3-next-80b-a3b-instruct"
    with pytest.raises(BadInput, match="did you mean: qwen3.6-27b"):
        resolve_model("qwen3.6-72b")


def test_checkpoint_kv_dtype_is_resolved_in_the_catalog_layer():
    # nvidia/Qwen3.6-27B-NVFP4: quantization_config.kv_cache_scheme {type float, num_bits 8}
    nv = resolve_model("qwen3.6-27b-nvfp4").spec
    assert nv.quant_method == "modelopt" and nv.kv_cache_quant_algo is None  # no kv_cache_quant_algo key
    assert nv.checkpoint_kv_quant_algo == "FP8" and "modelopt_quant.py" in nv.checkpoint_kv_source
    assert all(nv.kv_quant_algo_for(v) == "FP8" for v in ("0.5.10", "0.5.11", "0.5.23"))
    # an unquantized checkpoint implies nothing; an fp8 one with the explicit key implies FP8
    assert resolve_model("qwen3.6-27b").spec.checkpoint_kv_quant_algo is None
    cfg = json.loads(json.dumps(resolve_model("qwen3-8b").spec.raw))
    cfg["quantization_config"] = {"quant_method": "fp8", "activation_scheme": "dynamic", "kv_cache_quant_algo": "fp8"}
    from planner.catalog.spec import ModelSpec
    fp8 = ModelSpec.from_hf_config(cfg)
    assert fp8.kv_quant_algo_for("0.5.17") is None  # Fp8Config reads kv_cache_quant_algo from 0.5.18
    assert fp8.kv_quant_algo_for("0.5.18") == fp8.kv_quant_algo_for("0.5.23") == "FP8"


def test_a_text_config_that_is_not_a_dict_is_bad_input(tmp_path):
    """test_fuzz_cli.test_random_config_json found it: a config whose text_config is a list ([None]) reached the
    quant check as a list (AttributeError, a traceback). It is now refused where the config is read: one line naming
    the field (planner/catalog/config_file.py)."""
    from planner.errors import BadInput

    cfg = json.loads(json.dumps(resolve_model("qwen3.6-27b").spec.raw))
    text = cfg.pop("text_config", None) or {}
    cfg = {**text, **{k: v for k, v in cfg.items() if k != "vision_config"}, "text_config": [None]}
    with pytest.raises(BadInput, match="'text_config' must be an object"):
        ModelSpec.from_hf_config(cfg, "list-text-config")
