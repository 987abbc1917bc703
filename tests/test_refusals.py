"""Launches the planner does not model are refused: one line naming what is not modelled and what is, exit 2.

One test per refusal class of issue 10 ("Refuse what is not modelled"), each through the CLI. The model
configs are written here in the shape of the real checkpoints' config.json (keys as Hugging Face ships them;
sources in each comment), trimmed to what SGLang's ModelConfig reads.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from planner.catalog.catalog import resolve_model
from planner.catalog.quant import MODELLED_METHODS, ONLINE_METHODS
from planner.cli import main
from planner.engines.sglang import post_releases, rules as rules_mod
from planner.engines.sglang.rules import RULES
from planner.engines.sglang.support import TARGET_ARCHS, flag_audit
from planner.errors import BadInput
from planner.hardware.profiles import find_profile
from planner.engines.sglang.plan import make_plan

BASE = ["--gpu", "h200", "--model", "qwen3-8b", "--no-search"]


def refused(argv, capsys) -> str:
    """Run the CLI; assert exit 2 and exactly one line on stderr, nothing on stdout; return the line."""
    code = main(argv)
    out = capsys.readouterr()
    assert code == 2, out.out[-500:]
    assert out.out == ""
    assert out.err.count("\n") == 1 and "Traceback" not in out.err, out.err
    return out.err.strip()


def _config(tmp_path: Path, cfg: dict) -> str:
    p = tmp_path / "config.json"
    p.write_text(json.dumps(cfg))
    return str(p)


LLAMA_LIKE = {"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
              "intermediate_size": 14336, "vocab_size": 128256, "max_position_embeddings": 8192,
              "torch_dtype": "bfloat16"}


# --- architectures the pipeline does not implement -------------------------------------------------------

def test_unimplemented_architecture_is_refused_and_the_supported_ones_named(tmp_path, capsys):
    path = _config(tmp_path, {"architectures": ["FooBarForCausalLM"], "model_type": "foobar", **LLAMA_LIKE})
    line = refused(["--gpu", "h200", "--model", path, "--no-search"], capsys)
    assert "architecture FooBarForCausalLM is not modelled" in line and "sized as a dense model" in line
    for arch in TARGET_ARCHS:
        assert arch in line


def test_the_same_config_under_a_supported_architecture_gets_a_verdict(tmp_path, capsys):
    path = _config(tmp_path, {"architectures": ["LlamaForCausalLM"], "model_type": "llama", **LLAMA_LIKE})
    assert main(["--gpu", "h200", "--model", path, "--no-search"]) == 0
    capsys.readouterr()


def test_a_draft_architecture_is_not_a_target(capsys):
    line = refused(["--gpu", "h200", "--model", "qwen3-8b-eagle3", "--no-search"], capsys)
    assert "is a speculative draft" in line


# --- caches that are not plain attention ------------------------------------------------------------------

# DeepSeek-V3: config.json of deepseek-ai/DeepSeek-V3 (kv_lora_rank 512, qk_rope_head_dim 64)
DEEPSEEK_V3 = {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 7168,
               "num_hidden_layers": 61, "num_attention_heads": 128, "num_key_value_heads": 128,
               "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128,
               "v_head_dim": 128, "vocab_size": 129280, "max_position_embeddings": 163840,
               "n_routed_experts": 256, "moe_intermediate_size": 2048, "torch_dtype": "bfloat16"}
# gpt-oss-20b: config.json of openai/gpt-oss-20b (alternating sliding / full layers, window 128)
GPT_OSS = {"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "hidden_size": 2880,
           "num_hidden_layers": 4, "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64,
           "sliding_window": 128, "layer_types": ["sliding_attention", "full_attention"] * 2,
           "vocab_size": 201088, "max_position_embeddings": 131072, "torch_dtype": "bfloat16"}
# Mistral-7B-v0.1: config.json of mistralai/Mistral-7B-v0.1 (sliding_window 4096, no use_sliding_window key)
MISTRAL = {"architectures": ["MistralForCausalLM"], "model_type": "mistral", **LLAMA_LIKE, "sliding_window": 4096}
# Llama 4 Scout text config: attention_chunk_size 8192 (meta-llama/Llama-4-Scout-17B-16E)
LLAMA4 = {"architectures": ["Llama4ForCausalLM"], "model_type": "llama4_text", **LLAMA_LIKE,
          "attention_chunk_size": 8192}


@pytest.mark.parametrize("cfg,what", [
    # MLA outside the modelled DeepSeek-V3 / V3.2 architectures (DeepSeek-V2's class with a latent config)
    ({**DEEPSEEK_V3, "architectures": ["DeepseekV2ForCausalLM"]}, "multi-head latent attention"),
    (MISTRAL, "sliding-window attention (sliding_window 4096)"),
    (LLAMA4, "chunked attention"),
])
def test_caches_sized_as_plain_attention_today_are_refused(cfg, what, tmp_path, capsys):
    line = refused(["--gpu", "h200", "--model", _config(tmp_path, cfg), "--no-search", "--tp-size", "8"], capsys)
    assert what in line and "sized as plain attention" in line and "modelled: plain full attention" in line


def test_gpt_oss_sliding_layers_are_planned_with_the_hybrid_swa_pool(tmp_path, capsys):
    # no longer refused: SGLang's hybrid SWA pool sizes its sliding and full layers (pipeline/swa.py)
    assert main(["--gpu", "h200", "--model", _config(tmp_path, GPT_OSS), "--no-search", "--tp-size", "8"]) == 0
    out = capsys.readouterr().out
    assert "full-attention KV" in out or "FITS" in out


def test_mla_is_planned_on_the_verified_releases_and_refused_by_name_elsewhere(tmp_path, capsys):
    """DeepSeek-V3's latent cache is sized on the releases checked against the oracle (tests/test_golden_mla.py);
    another release and speculative decoding without an MTP layer are one line, exit 2."""
    from planner.engines.sglang.pipeline.mla import VERIFIED, release_refusal  # noqa: PLC0415
    from planner.engines.sglang.rules import RULES  # noqa: PLC0415

    model = _config(tmp_path, DEEPSEEK_V3)
    for version in ("0.5.11", "0.5.16", "0.5.23"):
        assert main(["--gpu", "h200", "--model", model, "--no-search", "--tp-size", "8", "--sglang-version", version,
                     "--free-after-load-gib", "40"]) in (0, 1)
        capsys.readouterr()
    unverified = [v for v in RULES if v not in VERIFIED]
    for version in unverified[:1]:
        line = refused(["--gpu", "h200", "--model", model, "--no-search", "--tp-size", "8", "--sglang-version",
                        version], capsys)
        assert f"on SGLang {version} is not verified against its code" in line and ", ".join(VERIFIED) in line
    from planner.catalog.spec import ModelSpec  # noqa: PLC0415

    line = release_refusal(ModelSpec.from_hf_config(DEEPSEEK_V3, "dsv3"), "0.5.99")
    assert line is not None and "on SGLang 0.5.99 is not verified against its code" in line
    line = refused(["--gpu", "h200", "--model", model, "--no-search", "--tp-size", "8",
                    "--speculative-algorithm", "NEXTN"], capsys)
    assert "speculative decoding on DeepseekV3ForCausalLM" in line and "num_nextn_predict_layers 0" in line


def test_a_supported_architecture_with_its_sliding_window_on_is_refused(tmp_path, capsys):
    # Qwen3 configs carry sliding_window with use_sliding_window false (Qwen/Qwen3-8B); turned on, it is not plain
    cfg = json.loads((Path(__file__).parents[1] / "planner/catalog/configs/Qwen__Qwen3-8B.config.json").read_text())
    assert cfg["use_sliding_window"] is False
    assert main(["--gpu", "h200", "--model", _config(tmp_path, cfg), "--no-search"]) == 0
    capsys.readouterr()
    cfg.update(use_sliding_window=True, sliding_window=4096)
    assert "sliding-window attention" in refused(["--gpu", "h200", "--model", _config(tmp_path, cfg), "--no-search"],
                                                 capsys)


# --- parallel modes ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("flag,what", [
    ("--pp-size", "pipeline parallelism"),
    ("--pipeline-parallel-size", "pipeline parallelism"),
    ("--dp-size", "data-parallel replicas"),
    ("--dcp-size", "context parallelism"),
    ("--attn-cp-size", "context parallelism"),
    ("--ep-size", "expert parallelism"),
])
def test_parallel_modes_are_refused(flag, what, capsys):
    # pp is modelled on 0.5.14-0.5.23 only (planner/engines/sglang/pp.py): an older release is refused
    extra = ["--sglang-version", "0.5.13"] if flag in ("--pp-size", "--pipeline-parallel-size") else []
    line = refused([*BASE, *extra, "--tp-size", "2", flag, "2"], capsys)
    assert line.startswith(f"plan: error: {flag.replace('--pipeline-parallel-size', '--pp-size')} 2:")
    assert what in line and "modelled:" in line


def test_parallel_sizes_of_one_are_the_default_and_pass(capsys):
    assert main([*BASE, "--pp-size", "1", "--dcp-size", "1", "--attn-cp-size", "1", "--dp-size", "1"]) == 0
    capsys.readouterr()


@pytest.mark.parametrize("version", ["0.5.9", "0.5.13", "0.5.22", "0.5.23"])
def test_dp_attention_and_pp_are_refused_in_every_spelling_of_each_release(version, capsys):
    # 0.5.9-0.5.13 name the dest pipeline_parallel_size (the engine's check_scope refuses it), 0.5.14+ pp_size
    # on 0.5.16 / 0.5.23 pp is modelled for Qwen3 / Qwen3-MoE / Qwen3.5-3.6 / DeepSeek-V3 (planner/engines/sglang/pp.py):
    # a Mamba2 hybrid (NemotronH) is refused there
    from planner.engines.sglang.pp import VERIFIED as PP_VERIFIED

    pp_base = [*BASE[:3], "nemotron-3-nano-30b-a3b", *BASE[4:]] if version in PP_VERIFIED else BASE
    line = refused([*pp_base, "--sglang-version", version, "--pp-size", "2"], capsys)
    assert "pipeline parallelism" in line
    line = refused([*BASE, "--sglang-version", version, "--tp-size", "2", "--enable-dp-attention"], capsys)
    assert "DP attention" in line


# --- quantization without a weight model ------------------------------------------------------------------

@pytest.mark.parametrize("method", ["awq", "compressed-tensors", "modelopt_fp4", "gptq"])
def test_online_quantization_without_a_weight_model_is_refused(method, capsys):
    # an unquantized checkpoint: only the online methods SGLang quantizes at load time are modelled
    assert method not in ONLINE_METHODS
    line = refused([*BASE, "--quantization", method], capsys)
    assert f"--quantization {method}: its weights are not modelled" in line and "modelled: unquantized" in line


def test_online_fp8_is_modelled_not_refused(capsys):
    assert "fp8" in ONLINE_METHODS
    assert main([*BASE, "--quantization", "fp8"]) in (0, 1)


def test_a_modelled_quantized_checkpoint_gets_a_verdict(capsys):
    spec = resolve_model("qwen3.6-27b-nvfp4").spec
    assert spec.quant_method == "modelopt" and "modelopt" in MODELLED_METHODS  # nvidia/Qwen3.6-27B-NVFP4
    assert main(["--gpu", "h200", "--model", "qwen3.6-27b-nvfp4", "--no-search"]) in (0, 1)


def test_an_unknown_quant_method_in_config_json_is_refused(tmp_path, capsys):
    cfg = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", **LLAMA_LIKE,
           "quantization_config": {"quant_method": "foo_int3"}}
    assert "'foo_int3'" in refused(["--gpu", "h200", "--model", _config(tmp_path, cfg), "--no-search"], capsys)


# --- flags marked refused by the audit ----------------------------------------------------------------------

@pytest.mark.parametrize("flags,what", [
    (["--cpu-offload-gb", "4"], "CPU offload"),
    (["--enable-lora"], "LoRA"),
    (["--max-loras-per-batch", "4"], "LoRA adapter buffers"),
    (["--offload-group-size", "4"], "host"),
    (["--enable-torch-compile"], "graph memory"),
    (["--load-format", "gguf"], "checkpoint formats"),
    (["--disaggregation-mode", "prefill", "--sglang-version", "0.5.11"], "PD disaggregation on SGLang 0.5.11"),
    (["--disaggregation-mode", "decode", "--disaggregation-transfer-backend", "nixl"], "--disaggregation-transfer-backend nixl"),
    (["--enable-hierarchical-cache"], "hierarchical cache"),
])
def test_flags_the_audit_refuses(flags, what, capsys):
    assert what in refused([*BASE, *flags], capsys)


def test_flags_without_memory_effect_or_at_their_default_pass(capsys):
    flags = ["--log-level", "debug", "--port", "30001", "--trust-remote-code", "--enable-metrics",
             "--load-format", "safetensors", "--cpu-offload-gb", "0", "--max-loras-per-batch", "8"]
    assert main([*BASE, *flags]) == 0
    capsys.readouterr()


def test_sglangs_own_argparse_error_is_not_masked_by_a_refusal(capsys):
    # an argparse error stays SGLang's own line (the CLI reports flag errors as bad input), not a refusal
    line = refused([*BASE, "--pp-size", "two"], capsys)
    assert "SGLang 0.5.23 flags: argument --pp-size/--pipeline-parallel-size: invalid int value: 'two'" in line
    assert "not modelled" not in line


# --- .postN releases ------------------------------------------------------------------------------------------

def test_post_release_with_the_same_mirrored_files_uses_its_base_and_says_so(capsys):
    rec = post_releases.recorded()["0.5.10.post1"]
    assert rec["same"] and rec["differ"] == [] and len(rec["files_checked"]) > 100
    code = main([*BASE, "--sglang-version", "0.5.10.post1"])
    out = capsys.readouterr().out
    assert code == 0
    assert "SGLang 0.5.10 rules (0.5.10.post1: rules of 0.5.10; the wheels do not differ in the mirrored files)" in " ".join(out.split())


@pytest.mark.parametrize("version", ["0.5.12.post1", "0.5.13.post1", "0.5.15.post1"])
def test_post_release_that_differs_is_refused_by_name(version, capsys):
    rec = post_releases.recorded()[version]
    assert not rec["same"] and rec["differ"]
    line = refused([*BASE, "--sglang-version", version], capsys)
    assert f"sglang {version}: its wheel differs from {version.split('.post')[0]}" in line
    assert rec["differ"][0] in line


def test_installed_and_flag_post_releases_agree(monkeypatch, capsys):
    # an installed post release is decided exactly like --sglang-version of it (no silent fallback)
    gpu, model = find_profile("h200"), resolve_model("qwen3-8b")
    for version in ("0.5.10.post1", "0.5.12.post1", "0.5.11.post1"):
        monkeypatch.setattr(rules_mod, "installed_sglang", lambda v=version: v)
        try:
            installed = make_plan(gpu, model, []).sglang_version
        except BadInput as exc:
            installed = f"refused: {exc}"
        try:
            flagged = make_plan(gpu, model, [], version=version).sglang_version
        except BadInput as exc:
            flagged = f"refused: {exc}"
        assert installed == flagged, version
    assert installed.startswith("refused: sglang 0.5.11.post1: this release was never compared")


def test_every_post_release_on_pypi_in_range_was_compared():
    # `pip index versions sglang` (PyPI, 2026-12-01): the post releases of 0.5.9-0.5.23
    on_pypi = {"0.5.10.post1", "0.5.12.post1", "0.5.13.post1", "0.5.15.post1"}
    assert set(post_releases.recorded()) == on_pypi
    assert all(post_releases.post_base(v) in RULES for v in on_pypi)


def test_the_mirrored_files_cover_every_sglang_file_the_rules_cite():
    root = Path(__file__).parents[1] / "planner"
    cited = {m for p in root.rglob("*.py") for m in re.findall(r"srt/[A-Za-z0-9_/]+\.py", p.read_text())}
    assert cited
    missing = sorted(c for c in cited if not post_releases.is_mirrored(c))
    assert not missing, missing


def test_the_audit_names_every_refused_flag_with_what_is_modelled():
    for entry in flag_audit().values():
        if entry.cls == "refused" and not entry.enforced_by:
            assert entry.modelled, entry.dest


def test_the_readme_commands_of_the_refusal_section_run_as_written(capsys):
    import shlex

    text = (Path(__file__).parents[1] / "README.md").read_text()
    section = text.split("## What is not modelled (refused)", 1)[1].split("\n## ", 1)[0]
    commands = [ln for ln in section.splitlines() if ln.startswith("plan ")]
    assert len(commands) == 6
    for ln in commands:
        cmd, _, comment = ln.partition("#")
        expect = int(re.search(r"exit (\d)", comment).group(1)) if "exit" in comment else 0
        code = main(shlex.split(cmd)[1:])
        out = capsys.readouterr()
        assert code == expect, (ln, out.err)
        if "SGLang 0.5.10 rules" in comment:
            assert "SGLang 0.5.10 rules (0.5.10.post1: rules of 0.5.10" in " ".join(out.out.split())


@pytest.mark.parametrize("algo", ["EAGLE", "EAGLE3", "NEXTN"])
def test_a_draft_algorithm_without_a_draft_path_on_a_plain_target_is_refused(algo, capsys):
    """SGLang builds that draft from the target's own checkpoint: a second KV pool over every layer (the oracle on
    Qwen3-8B, 0.5.11 and 0.5.23: a 45.9 / 50.2 GB draft KV pool), which the planner would have left out and called
    FITS. STANDALONE without a path (the target as its own draft) is modelled (tests/golden/spec)."""
    line = refused(["--gpu", "h100-sxm", "--model", "qwen3-8b", "--no-search", "--speculative-algorithm", algo], capsys)
    assert f"--speculative-algorithm {algo} without --speculative-draft-model-path" in line
