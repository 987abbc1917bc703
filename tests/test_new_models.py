"""The models issue #22 adds to the catalog: each gives a verdict on a GPU it fits, with weights that match the
published bytes; the ones the planner cannot size are refused by name.

MiniMax-M2 / M2.7 pools are checked against SGLang's own code in tests/test_golden_dense.py (the new_models set,
0.5.11 / 0.5.16 / 0.5.23); here: the catalog entries, the weight model and the verdicts.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.catalog.catalog import resolve_model
from planner.catalog.quant import quantized_weights
from planner.cli import main

ROOT = Path(__file__).parents[1]
MINIMAX_BYTES = 230_121_630_720  # MiniMax-M2's safetensors headers (hf-mem) = the M2.7 tensor list's sum


@pytest.mark.parametrize("name", ["minimax-m2", "minimax-m2.7"])
def test_minimax_block_fp8_weight_model_reproduces_the_published_bytes(name):
    model = resolve_model(name)
    assert model.weight_bytes == MINIMAX_BYTES
    q = quantized_weights(model.spec)
    # block-FP8 experts and attention with float32 [ceil(N/128), ceil(K/128)] scales, float32 router and
    # e_score_correction_bias, BF16 embeddings / lm_head / norms: 0 bytes off the published total
    assert q.checkpoint_bytes == MINIMAX_BYTES
    assert q.memory_bytes == MINIMAX_BYTES  # SGLang allocates the same tensors (fused w13 scales = 2 x [12, 24])
    assert q.by_scheme == {"fp8-block[128,128]": 62 * (4 + 3 * 256)}
    assert "+0.000%" in model.weight_detail


@pytest.mark.parametrize("name,gpu,tp", [("minimax-m2", "h200", 8), ("minimax-m2.7", "h200", 4),
                                         ("minimax-m2", "h100", 8), ("minimax-m2.7", "b200", 2)])
def test_minimax_fits(name, gpu, tp, capsys):
    code = main(["--gpu", gpu, "--model", name, "--tp-size", str(tp), "--no-search"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert out.startswith("Verdict: FITS")
    assert "MiniMaxM2ForCausalLM" in out


def test_minimax_does_not_fit_one_h200(capsys):
    code = main(["--gpu", "h200", "--model", "minimax-m2", "--no-search"])
    assert code == 1, capsys.readouterr().err


def test_minimax_on_0_5_9_is_refused_by_name(capsys):
    code = main(["--gpu", "h200", "--model", "minimax-m2", "--tp-size", "8", "--no-search", "--sglang-version", "0.5.9"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert "MiniMaxM2ForCausalLM on SGLang 0.5.9 is not verified" in err and "0.5.10 and later" in err


def test_nemotron_3_super_is_refused_by_its_latent_moe(capsys):
    """The real NVIDIA-Nemotron-3-Super-120B-A12B-FP8 config (aiconfigurator's stored copy, tests/data/configs):
    before the config audit it was counted as ~469B parameters and got a confident WILL NOT BOOT on 4x H200."""
    path = ROOT / "tests" / "data" / "configs" / "nvidia__NVIDIA-Nemotron-3-Super-120B-A12B-FP8.config.json"
    code = main(["--gpu", "h200", "--model", str(path), "--tp-size", "4", "--no-search"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert "'moe_latent_size' = 1024" in err


@pytest.mark.parametrize("name,gpu,tp", [
    ("qwen3-coder-480b-a35b-instruct", "b200", 8), ("qwen3-235b-a22b", "h200", 4), ("qwen3-235b-a22b-fp8", "h100", 4),
    ("mixtral-8x22b-v0.1", "h100", 8), ("mixtral-8x7b-v0.1", "h100", 2), ("mistral-7b-instruct-v0.3", "rtx4090", 1),
])
def test_the_issues_catalog_models_fit_a_gpu(name, gpu, tp, capsys):
    """Issue #22 item 6: Qwen3-Coder-480B, Qwen3-235B (and its FP8), Mixtral and Mistral each give a verdict on a
    GPU they fit (their pools: tests/golden/dense)."""
    code = main(["--gpu", gpu, "--model", name, "--tp-size", str(tp), "--no-search"])
    out = capsys.readouterr().out
    assert code == 0 and out.startswith("Verdict: FITS"), out
