"""Quantized weights and the KV dtype a checkpoint implies.

Golden figures: published checkpoint totals (tests/data/quantized_totals.json, each with its
source) and the BF16 ``total_size`` of every catalog checkpoint (catalog.toml, sources there).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from planner.catalog.catalog import _spec_for_entry, load_catalog, resolve_model, with_online_quantization
from planner.catalog.quant import UnmodelledQuantization, quantized_weights
from planner.catalog.quant_tensors import NotEnumerated, Param, checkpoint_tensors, numel
from planner.catalog.spec import ModelSpec
from planner.errors import BadInput
from planner.engines.sglang.plan import make_plan
from planner.hardware.profiles import find_profile

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "planner" / "catalog" / "configs"
TOTALS = json.loads((ROOT / "tests" / "data" / "quantized_totals.json").read_text())


def _spec(base: str, qcfg: dict | None) -> ModelSpec:
    cfg = json.loads((ROOT / base if "/" in base else CONFIGS / base).read_text())
    if qcfg is not None:
        cfg["quantization_config"] = qcfg
    return ModelSpec.from_hf_config(cfg, name=base)


@pytest.mark.parametrize("entry", [e for e in load_catalog() if e.weight_bytes or e.params], ids=lambda e: e.id)
def test_tensor_list_reproduces_bf16_totals_exactly(entry):
    spec = _spec_for_entry(entry.id)
    if spec.quant_method:
        pytest.skip("quantized: checked against its published total in test_catalog_quantized_entries")
    try:
        tensors = checkpoint_tensors(spec)
    except NotEnumerated:
        pytest.skip(f"{spec.architecture}: tensor list not enumerated")
    got = sum(numel(t) * (4 if isinstance(t, Param) and t.float32 else 2) for t in tensors)
    want = entry.weight_bytes if entry.weight_bytes else entry.params * 2
    assert got == want


@pytest.mark.parametrize("case", TOTALS["checkpoints"], ids=lambda c: c["id"])
def test_published_quantized_totals(case):
    spec = _spec(case["base_config"], case["quantization_config"])
    q = quantized_weights(spec)
    assert q is not None
    err = (q.checkpoint_bytes - case["total_bytes"]) / case["total_bytes"]
    assert abs(err) <= case["tolerance"], f"{case['id']}: {q.checkpoint_bytes:,} vs {case['total_bytes']:,} ({err:+.4%})"
    if case["exact"]:
        assert case["tolerance"] <= 0.005
    # the scheme split is part of the claim: the model quantizes what the source says
    assert sum(q.by_scheme.values()) > 0


def test_catalog_quantized_entries():
    """Every quantized catalog entry is sized by its weight model; a published total agrees within 0.5%."""
    quantized = [e for e in load_catalog() if _spec_for_entry(e.id).quant_method]
    assert {"qwen3.6-27b-nvfp4", "qwen3.6-27b-fp8", "qwen3.6-35b-a3b-fp8", "qwen3.5-397b-a17b-fp8",
            "qwen3.5-122b-a10b-nvfp4", "qwen3.6-35b-a3b-nvfp4", "qwen3.5-397b-a17b-nvfp4", "qwen3-32b-fp8",
            "qwen3-30b-a3b-fp8", "qwen3-235b-a22b-fp8", "qwen3-30b-a3b-nvfp4", "qwen3-235b-a22b-nvfp4",
            "qwen3-32b-nvfp4", "llama-3.1-70b-instruct-fp8"} <= {e.id for e in quantized}
    for e in quantized:
        m = resolve_model(e.id)
        q = quantized_weights(m.spec)
        if e.weight_bytes:
            assert m.weight_source == "catalog" and "cross-check" in m.weight_detail
            assert abs(q.checkpoint_bytes - e.weight_bytes) / e.weight_bytes < 0.005
        else:
            assert m.weight_source == "quant-model" and m.weight_bytes == q.memory_bytes
        bf16 = sum(numel(t) for t in checkpoint_tensors(m.spec)) * 2
        assert q.checkpoint_bytes < 0.6 * bf16  # never sized as the unquantized model


def test_moe_routers_stay_unquantized_whatever_the_ignore_list_says():
    # nvidia's own 122B NVFP4 config.json does not list mlp.gate in 'ignore'; SGLang builds the router and the
    # shared-expert gate with quant_config=None (srt/models/qwen2_moe.py:348-353, 386-394 @0.5.23), and the
    # checkpoint keeps them BF16: only the 48 x 256 x 3 routed-expert projections are NVFP4
    q = quantized_weights(_spec_for_entry("qwen3.5-122b-a10b-nvfp4"))
    assert q.by_scheme == {"nvfp4": 48 * 256 * 3}
    assert q.checkpoint_bytes - 83_474_870_752 == 13_824  # the published total, to 0.00002%
    # Qwen3-MoE (srt/models/qwen3_moe.py:285-296): an fp8 config that skips nothing still leaves the router BF16
    cfg = json.loads((CONFIGS / "Qwen__Qwen3-30B-A3B-FP8.config.json").read_text())
    cfg["quantization_config"]["modules_to_not_convert"] = []
    bare = quantized_weights(ModelSpec.from_hf_config(cfg))
    listed = quantized_weights(_spec_for_entry("qwen3-30b-a3b-fp8"))
    assert bare.checkpoint_bytes == listed.checkpoint_bytes and bare.by_scheme == listed.by_scheme
    assert listed.by_scheme == {"fp8-block[128,128]": 48 * (4 + 3 * 128)}  # attention + the experts


def test_mixed_precision_experts_are_found_by_their_fused_moe_prefix():
    # nvidia/Qwen3.6-35B-A3B-NVFP4's quantized_layers name '...layers.N.mlp.experts' (the FusedMoE prefix
    # _resolve_quant_algo gets, modelopt_quant.py:978-1008 @0.5.23), not each projection
    q = quantized_weights(_spec_for_entry("qwen3.6-35b-a3b-nvfp4"))
    assert q.by_scheme == {"modelopt-fp8": 130, "w4a16-nvfp4": 121 + 40 * 256 * 3}
    # W4A16_NVFP4 layers store their input_scale too: the published totals count 4 B for each of them
    assert q.checkpoint_bytes == q.memory_bytes == 23_407_580_856
    assert quantized_weights(_spec_for_entry("qwen3.6-27b-nvfp4")).checkpoint_bytes == 21_921_428_072


def test_nvfp4_27b_mixed_precision_assignment():
    q = quantized_weights(_spec_for_entry("qwen3.6-27b-nvfp4"))
    # 48 GDN x 3 + 16 attention x 4 FP8 layers; 64 x 3 MLP + lm_head W4A16_NVFP4 (the config's quantized_layers)
    assert q.by_scheme == {"modelopt-fp8": 208, "w4a16-nvfp4": 193}
    # the MTP layer and the vision tower stay BF16 ('ignore': mtp*; not in quantized_layers)
    assert 20.0 * 2**30 < q.memory_bytes < 21.0 * 2**30


def test_nvfp4_27b_gets_fp8_kv_and_a_one_byte_pool():
    spec = _spec_for_entry("qwen3.6-27b-nvfp4")
    assert spec.checkpoint_kv_quant_algo == "FP8" and "kv_cache_scheme" in spec.checkpoint_kv_source
    plan = make_plan(find_profile("rtx5090"), resolve_model("qwen3.6-27b-nvfp4"), ["--disable-radix-cache"],
                     version="0.5.23")
    # 16 full-attention layers x (K + V) x 4 KV heads x 256 dims x 1 byte (fp8_e4m3)
    assert plan.profile.kv_cell_bytes_per_token == 16 * 2 * 4 * 256 * 1
    bf16 = make_plan(find_profile("rtx5090"), resolve_model("qwen3.6-27b-nvfp4"),
                     ["--disable-radix-cache", "--kv-cache-dtype", "bf16"], version="0.5.23")
    assert bf16.profile.kv_cell_bytes_per_token == 2 * plan.profile.kv_cell_bytes_per_token
    assert bf16.profile.max_total_num_tokens < plan.profile.max_total_num_tokens
    older = make_plan(find_profile("rtx5090"), resolve_model("qwen3.6-27b-nvfp4"), ["--disable-radix-cache"],
                      version="0.5.15")  # ModelOptMixedPrecisionConfig reads kv_cache_scheme there too
    assert older.profile.kv_cell_bytes_per_token == plan.profile.kv_cell_bytes_per_token
    # 0.5.10-0.5.14 read it as w4afp8 (srt/configs/model_config.py:805-816 @0.5.10): refused as not modelled
    # (tests/golden/quant/sglang-0.5.11: SGLang's own sizing gives bf16 KV there)
    with pytest.raises(BadInput, match="w4afp8"):
        make_plan(find_profile("rtx5090"), resolve_model("qwen3.6-27b-nvfp4"), ["--disable-radix-cache"],
                  version="0.5.11")


def test_compressed_tensors_kv_scheme_is_read_from_0_5_19():
    cfg = json.loads((CONFIGS / "Qwen__Qwen3.6-27B.config.json").read_text())
    cfg["quantization_config"] = {
        "quant_method": "compressed-tensors", "format": "float-quantized",
        "config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float", "strategy": "channel"},
                                      "input_activations": {"num_bits": 8, "type": "float", "strategy": "token", "dynamic": True}}},
        "ignore": ["lm_head", "re:.*visual.*", "re:.*mtp.*", "re:.*in_proj_a$", "re:.*in_proj_b$"],
        "kv_cache_scheme": {"num_bits": 8, "type": "float", "strategy": "tensor", "dynamic": False, "symmetric": True},
    }
    spec = ModelSpec.from_hf_config(cfg)
    assert spec.kv_quant_algo_for("0.5.18") is None  # no CompressedTensorsConfig.kv_cache_quant_algo before 0.5.19
    assert spec.kv_quant_algo_for("0.5.19") == "FP8"
    assert spec.kv_quant_algo_for("0.5.23") == "FP8"
    q = quantized_weights(spec)
    assert set(q.by_scheme) == {"ct-fp8-channel"}


def test_modelopt_fp4_kv_scheme_is_not_fp8():
    spec = _spec("Qwen__Qwen3.6-27B.config.json", {
        "quant_method": "modelopt", "quant_algo": "MIXED_PRECISION",
        "quantized_layers": {"model.language_model.layers.0.mlp.gate_proj": {"quant_algo": "FP8"}},
        "kv_cache_scheme": {"type": "float", "num_bits": 4}})
    assert spec.kv_quant_algo_for("0.5.23") == "NVFP4"  # not 'FP8': auto keeps the model dtype


@pytest.mark.parametrize("qcfg, scheme", [
    ({"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "version": "gemm",
      "modules_to_not_convert": ["visual", "mtp", "linear_attn.in_proj_a", "linear_attn.in_proj_b"]}, "awq-w4-g128"),
    ({"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": False, "sym": True}, "gptq-w4-g128"),
    ({"quant_method": "compressed-tensors", "format": "pack-quantized",
      "config_groups": {"g": {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "int", "strategy": "group",
                                                                  "group_size": 32, "symmetric": True}}},
      "ignore": ["lm_head"]}, "ct-w4a16-g32"),
    ({"quant_method": "compressed-tensors", "format": "int-quantized",
      "config_groups": {"g": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "int", "strategy": "channel"},
                              "input_activations": {"num_bits": 8, "type": "int", "dynamic": True, "strategy": "token"}}},
      "ignore": ["lm_head"]}, "ct-int8-channel"),
])
def test_int_schemes_size_between_their_bit_bounds(qcfg, scheme):
    """4-bit schemes land a little above half a byte per quantized weight, 8-bit ones above one byte."""
    spec = _spec("Qwen__Qwen3.6-27B.config.json", qcfg)
    q = quantized_weights(spec)
    assert scheme in q.by_scheme
    bf16 = 55_562_855_904
    assert q.checkpoint_bytes < bf16 * (0.62 if "int8" not in scheme else 0.6)
    assert q.checkpoint_bytes > bf16 * (0.25 if "int8" not in scheme else 0.5)


def test_awq_layer_bytes_follow_the_loader_shapes():
    from planner.catalog.quant import awq, gptq
    from planner.catalog.quant_tensors import Linear
    lin = Linear("x", 17408, 5120)
    # qweight int32 [K, N/8], qzeros int32 [K/128, N/8], scales fp16 [K/128, N] (awq.py create_weights)
    assert awq(4, 128).checkpoint(lin) == 5120 * 2176 * 4 + 40 * 2176 * 4 + 40 * 17408 * 2
    # qweight int32 [K/8, N], g_idx int32 [K], qzeros int32 [K/128, N/8], scales fp16 [K/128, N] (gptq.py)
    assert gptq(4, 128).checkpoint(lin) == 640 * 17408 * 4 + 5120 * 4 + 40 * 2176 * 4 + 40 * 17408 * 2


def test_online_fp8_quantizes_a_bf16_checkpoint():
    bf16 = resolve_model("qwen3.6-27b")
    q = with_online_quantization(bf16, "fp8")
    assert q.weight_source == "quant-model" and "--quantization fp8" in q.weight_detail
    # every linear but lm_head goes to 1 byte + a float32 per-tensor scale; embeddings and norms stay bf16
    assert 0.5 * bf16.weight_bytes < q.weight_bytes < 0.55 * bf16.weight_bytes
    plan = make_plan(find_profile("rtxpro6000"), bf16, ["--quantization", "fp8"], version="0.5.23")
    plain = make_plan(find_profile("rtxpro6000"), bf16, [], version="0.5.23")
    assert plan.free_after_bytes > plain.free_after_bytes + 20 * 2**30


def test_unmodelled_methods_are_refused_by_name():
    spec = _spec("Qwen__Qwen3.6-27B.config.json", {"quant_method": "bitsandbytes", "load_in_4bit": True})
    with pytest.raises(UnmodelledQuantization, match="bitsandbytes"):
        quantized_weights(spec)
    with pytest.raises(UnmodelledQuantization, match="awq"):
        with_online_quantization(resolve_model("qwen3.6-27b"), "awq")


def test_cli_refuses_an_unmodelled_quant_method(tmp_path):
    cfg = json.loads((CONFIGS / "Qwen__Qwen3.6-27B.config.json").read_text())
    cfg["quantization_config"] = {"quant_method": "hqq", "nbits": 4}
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    r = subprocess.run([sys.executable, "-m", "planner", "--gpu", "rtx5090", "--model", str(tmp_path / "config.json"),
                        "--no-search"], capture_output=True, text=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT)})
    assert r.returncode == 2, r.stdout + r.stderr
    assert "hqq" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_checkpoint_index_wins_and_the_model_figure_is_printed_beside_it(tmp_path):
    (tmp_path / "config.json").write_text((CONFIGS / "nvidia__Qwen3.6-27B-NVFP4.config.json").read_text())
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps({"metadata": {"total_size": 21_900_000_000},
                                                                        "weight_map": {}}))
    m = resolve_model(str(tmp_path))
    assert m.weight_source == "safetensors-index" and m.weight_bytes == 21_900_000_000
    assert "cross-check" in m.weight_detail and "21,921,428,072" in m.weight_detail  # = the published total_size


def test_a_standalone_hf_quant_config_is_read_as_sglang_reads_it(tmp_path, capsys):
    """ModelOpt checkpoints without a quantization_config in config.json: SGLang reads hf_quant_config.json
    (configs/model_config.py:1743-1822 @0.5.23), an NVFP4 quant_algo makes it modelopt_fp4 (1866-1867)."""
    from planner.cli import main

    entry = resolve_model("qwen3-30b-a3b-nvfp4")
    assert entry.spec.quant_method == "modelopt_fp4" and entry.spec.checkpoint_kv_quant_algo == "FP8"
    q = quantized_weights(entry.spec)
    assert q.by_scheme == {"nvfp4": 48 * (4 + 3 * 128)}  # attention + routed experts; the routers stay BF16
    assert entry.weight_source == "quant-model" and entry.weight_bytes == q.memory_bytes
    ckpt = tmp_path / "Qwen3-30B-A3B-NVFP4"
    ckpt.mkdir()
    (ckpt / "config.json").write_bytes((CONFIGS / "nvidia__Qwen3-30B-A3B-NVFP4.config.json").read_bytes())
    unquantized = resolve_model(str(ckpt))
    assert unquantized.spec.quant_method is None  # config.json alone: a BF16 checkpoint, as SGLang would see it
    (ckpt / "hf_quant_config.json").write_bytes((CONFIGS / "nvidia__Qwen3-30B-A3B-NVFP4.hf_quant_config.json").read_bytes())
    local = resolve_model(str(ckpt))
    assert local.spec.quant_method == "modelopt_fp4" and local.weight_bytes == entry.weight_bytes
    assert local.weight_bytes < 0.35 * unquantized.weight_bytes
    (ckpt / "hf_quant_config.json").write_text("{not json")
    assert main(["--gpu", "h100", "--model", str(ckpt), "--no-search"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "hf_quant_config.json" in err
