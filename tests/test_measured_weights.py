"""Measured weights (issue #22 item 7): a launch whose free memory after loading is measured (--free-after-load-gib,
or ``plan check`` with a boot log) needs no weight model, so a checkpoint whose quantization has none is planned,
and the report says the weights were measured. The architecture and the cache must still be modelled; without the
measurement the checkpoint is refused as before.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.catalog.catalog import NOT_MODELLED, resolve_model
from planner.catalog.quant_support import MEASURED_WEIGHTS_METHODS
from planner.cli import main
from planner.hardware.profiles import find_profile
from planner.engines.sglang.plan import make_plan
from planner.engines.sglang.summary import build_summary

ROOT = Path(__file__).parents[1]
QWEN3_32B = ROOT / "planner" / "catalog" / "configs" / "Qwen__Qwen3-32B.config.json"
AUTO_ROUND = {"quant_method": "auto-round", "bits": 4, "group_size": 128, "sym": True, "data_type": "int",
              "packing_format": "auto_round:auto_gptq"}


def _checkpoint(tmp_path: Path, quant: dict | None, name: str = "ckpt") -> Path:
    cfg = json.loads(QWEN3_32B.read_text())
    if quant is not None:
        cfg["quantization_config"] = quant
    d = tmp_path / name
    d.mkdir()
    (d / "config.json").write_text(json.dumps(cfg))
    return d


def test_without_a_measurement_the_checkpoint_is_refused_and_told_how(tmp_path, capsys):
    code = main(["--gpu", "h100", "--model", str(_checkpoint(tmp_path, AUTO_ROUND)), "--no-search"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert "quant_method 'auto-round'" in err and "--free-after-load-gib" in err


def test_measured_free_memory_plans_and_says_the_weights_were_measured(tmp_path, capsys):
    ckpt = _checkpoint(tmp_path, AUTO_ROUND)
    code = main(["--gpu", "h100", "--model", str(ckpt), "--no-search", "--free-after-load-gib", "60"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "weights measured" in " ".join(out.split())
    assert "60.0 after the weights (given)" in " ".join(out.split())


def test_the_pools_are_those_of_the_same_measurement_whatever_the_weight_scheme(tmp_path):
    """With the free memory after loading given, SGLang sizes its pools from it alone: the auto-round checkpoint's
    plan equals the unquantized one's, field by field (no weight figure enters)."""
    gpu = find_profile("h100")
    plans = [build_summary(make_plan(gpu, resolve_model(str(_checkpoint(tmp_path, q, n))), ["--tp-size", "1"], {},
                                     78.5, 40.0, version="0.5.11"))
             for q, n in ((AUTO_ROUND, "ar"), (None, "bf16"))]
    assert plans[0] == plans[1]
    assert plans[0]["max_total_num_tokens"] > 0


def test_json_names_the_weights_not_modelled(tmp_path, capsys):
    ckpt = _checkpoint(tmp_path, AUTO_ROUND)
    assert main(["--gpu", "h100", "--model", str(ckpt), "--no-search", "--free-after-load-gib", "60", "--json"]) == 0
    model = json.loads(capsys.readouterr().out)["model"]
    assert model["weight_source"] == NOT_MODELLED and "auto-round" in model["weight_detail"]


def test_plan_check_with_a_boot_log_plans_past_the_quant_refusal(tmp_path, capsys):
    ckpt = _checkpoint(tmp_path, AUTO_ROUND)
    log = tmp_path / "boot.log"
    log.write_text(f"[2026-05-01 12:00:01] server_args=ServerArgs(model_path='{ckpt}', tokenizer_path='{ckpt}', "
                   "tp_size=1, quantization=None)\n"
                   "[2026-05-01 12:00:22] Load weight begin. avail mem=78.50 GB\n"
                   "[2026-05-01 12:01:40] Load weight end. elapsed=78.12 s, type=Qwen3ForCausalLM, avail mem=60.20 GB, "
                   "mem usage=18.30 GB.\n")
    code = main(["check", str(log), "--gpu", "h100", "--sglang-version", "0.5.11"])
    out = capsys.readouterr().out
    assert code in (0, 1), out
    assert "Planner verdict for the same inputs: FITS" in out


@pytest.mark.parametrize("quant,why", [
    ({"quant_method": "gguf"}, "gguf"),  # disables the piecewise CUDA graph: not only the weights
    ({"quant_method": "petit_nvfp4"}, "petit_nvfp4"),  # carries a KV-cache quantization
    ({"quant_method": "some-new-method"}, "some-new-method"),  # no release registers it
])
def test_methods_with_more_than_a_weight_effect_stay_refused_even_measured(tmp_path, capsys, quant, why):
    code = main(["--gpu", "h100", "--model", str(_checkpoint(tmp_path, quant)), "--no-search",
                 "--free-after-load-gib", "60"])
    err = capsys.readouterr().err
    assert code == 2 and why in err


def test_a_quantization_flag_naming_another_method_stays_refused(tmp_path, capsys):
    code = main(["--gpu", "h100", "--model", str(_checkpoint(tmp_path, AUTO_ROUND)), "--no-search",
                 "--free-after-load-gib", "60", "--quantization", "w8a8_int8"])
    err = capsys.readouterr().err
    assert code == 2 and "'auto-round'" in err and "--free-after-load-gib" not in err


def test_the_architecture_and_cache_must_still_be_modelled(tmp_path, capsys):
    cfg = json.loads(QWEN3_32B.read_text())
    cfg.update(quantization_config=AUTO_ROUND, moe_latent_size=512)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    code = main(["--gpu", "h100", "--model", str(path), "--no-search", "--free-after-load-gib", "60"])
    assert code == 2 and "moe_latent_size" in capsys.readouterr().err


def test_a_draft_without_a_weight_model_is_refused_measured_or_not(tmp_path, capsys):
    draft = _checkpoint(tmp_path, AUTO_ROUND, "draft")
    code = main(["--gpu", "h100", "--model", "qwen3-32b", "--no-search", "--free-after-load-gib", "60",
                 "--speculative-algorithm", "STANDALONE", "--speculative-draft-model-path", str(draft),
                 "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("plan: error: --speculative-draft-model-path:") and "auto-round" in err


def test_the_measured_list_holds_only_methods_every_release_registers():
    assert "gguf" not in MEASURED_WEIGHTS_METHODS and "petit_nvfp4" not in MEASURED_WEIGHTS_METHODS
    assert {"fbgemm_fp8", "qoq"}.isdisjoint(MEASURED_WEIGHTS_METHODS)  # gone by 0.5.16


def test_a_gpu_below_the_methods_capability_is_refused(tmp_path, capsys):
    """w8a8_fp8's W8A8Fp8Config.get_min_capability is 89: SGLang's loader stops on an A100 (8.0), plans on an H100."""
    ckpt = _checkpoint(tmp_path, {"quant_method": "w8a8_fp8"})
    code = main(["--gpu", "a100-80gb", "--model", str(ckpt), "--no-search", "--free-after-load-gib", "40"])
    err = capsys.readouterr().err
    assert code == 2 and "needs compute capability 89" in err and "8.0" in err
    code = main(["--gpu", "h100", "--model", str(ckpt), "--no-search", "--free-after-load-gib", "40"])
    assert code == 0, capsys.readouterr().err
