"""MLA launches through the CLI: verdicts, the pool lines SGLang logs for them, the JSON contract, and the block-FP8
weight model of the DeepSeek checkpoints against independent figures (no oracle: the oracle takes free memory as
given, so the weights are checked here).

The sizing itself is compared field by field with SGLang's own code in tests/test_golden_mla.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from planner.catalog.catalog import resolve_model
from planner.catalog.quant import quantized_weights
from planner.catalog.quant_tensors import checkpoint_tensors, is_mtp_tensor, numel
from planner.cli import main
from planner.engines.sglang.plan import target_weight_bytes
from planner.schema import load

GIB = 1 << 30


def _run(argv, capsys) -> tuple[int, str, str]:
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("model", ["deepseek-v3", "deepseek-r1", "kimi-k2-instruct", "deepseek-v3.2"])
def test_the_issue_commands_give_a_verdict_pools_and_a_recommendation(model, capsys):
    code, out, err = _run(["--gpu", "h200", "--model", model, "--tp-size", "8"], capsys)
    assert code == 0, err
    assert out.startswith("Verdict: FITS") and "Launch:" in out and "--tp-size 8" in out


def test_the_pool_lines_name_the_latent_and_the_indexer(capsys):
    code, out, _ = _run(["--gpu", "h200", "--model", "deepseek-v3.2", "--tp-size", "8", "--speculative-algorithm",
                         "NEXTN", "--no-search", "--verbose"], capsys)
    assert code == 0
    for label in ("MLA latent KV", "indexer k-cache", "draft MLA latent KV (NextN)", "draft indexer k-cache"):
        assert label in out, label
    assert "KV V" not in out  # one latent buffer per layer, no V


@pytest.mark.parametrize("argv", [
    ["--gpu", "h200", "--model", "deepseek-v3", "--tp-size", "8"],
    ["--gpu", "b200", "--model", "deepseek-v3.2", "--tp-size", "8", "--speculative-algorithm", "NEXTN", "--no-search"],
    ["--gpu", "h200", "--model", "kimi-k2-instruct", "--tp-size", "8", "--sglang-version", "0.5.16", "--no-search"],
])
def test_plan_json_validates(argv, capsys):
    code, out, err = _run([*argv, "--json"], capsys)
    assert code == 0 and err == ""
    jsonschema.Draft202012Validator(load("plan")).validate(json.loads(out))


def test_the_post_pool_estimates_say_they_are_not_calibrated_on_mla(capsys):
    _, out, _ = _run(["--gpu", "h200", "--model", "deepseek-v3", "--tp-size", "8", "--no-search", "--verbose"], capsys)
    assert "not calibrated on MLA" in " ".join(out.split())


@pytest.mark.parametrize("argv,words", [
    (["--sglang-version", "0.5.11", "--model", "kimi-k2-instruct"], "kimi_k2) on SGLang 0.5.11"),
    (["--model", "kimi-k2-instruct", "--speculative-algorithm", "NEXTN"], "num_nextn_predict_layers 0"),
    (["--model", "deepseek-v3", "--sglang-version", "0.5.20", "--speculative-algorithm", "NEXTN"], "0.5.20"),
    (["--model", "deepseek-v3.2", "--attention-backend", "flashinfer"], "modelled: dsa"),
])
def test_what_is_not_checked_is_refused_by_name(argv, words, capsys):
    code, _, err = _run(["--gpu", "h200", "--tp-size", "8", "--no-search", *argv], capsys)
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1


def test_deepseek_v3_fp8_weights_per_gpu_match_vllms_meta_model():
    """The vllm-oracle builds DeepSeek-V3's FP8 checkpoint on meta tensors at TP 8: 79.3 GiB per rank (its README).
    The planner: the tensor list's block-FP8 bytes / 8, plus the replicated q_a / kv_a projections and routers."""
    model = resolve_model("deepseek-v3")
    per, _ = target_weight_bytes(model, 8)
    assert abs(per / GIB - 79.3) < 0.05, per / GIB


def test_deepseek_v3_tensor_list_matches_the_model_card():
    """DeepSeek's README_WEIGHTS.md: 671B main-model parameters; the MTP module 11.5B unique parameters besides its
    copies of the 0.9B embedding and 0.9B output head (planner/catalog/configs/SOURCES.md)."""
    spec = resolve_model("deepseek-v3").spec
    tensors = checkpoint_tensors(spec)
    mtp = sum(numel(t) for t in tensors if is_mtp_tensor(t.name, spec))
    main_params = sum(numel(t) for t in tensors) - mtp
    assert 670.5e9 < main_params < 671.5e9
    assert 11.4e9 < mtp - 2 * spec.vocab_size * spec.hidden_size < 11.7e9
    q = quantized_weights(spec)
    assert q is not None and q.mtp_memory_bytes > 0 and q.memory_bytes > 680e9


def test_the_latent_config_fields_are_read(tmp_path: Path):
    spec = resolve_model("deepseek-v3.2").spec
    assert spec.mla is not None and spec.mla.latent_dim == 576 and spec.mla.dsa and spec.mla.index_head_dim == 128
    assert resolve_model("deepseek-v3").spec.mla.dsa is False
