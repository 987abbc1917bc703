"""Random flag lists, GPUs and config.json documents fed to the CLI: never a traceback.

Every run must end with exit 0, 1 or 2; a 2 must come with exactly one line on stderr.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.cli import main
from planner.hardware.profiles import load_profiles

FLAG_NAMES = [
    "--tp-size", "--mem-fraction-static", "--max-running-requests", "--max-mamba-cache-size",
    "--mamba-full-memory-ratio", "--mamba-scheduler-strategy", "--page-size", "--context-length",
    "--chunked-prefill-size", "--cuda-graph-max-bs", "--kv-cache-dtype", "--mamba-ssm-dtype",
    "--speculative-algorithm", "--speculative-num-steps", "--speculative-eagle-topk",
    "--speculative-num-draft-tokens", "--max-total-tokens", "--attention-backend", "--cuda-graph-bs",
    "--mamba-track-interval", "--linear-attn-decode-backend", "--swa-full-tokens-ratio",
]
SWITCHES = ["--disable-radix-cache", "--disable-overlap-schedule", "--disable-cuda-graph", "--enable-multimodal",
            "--disable-cuda-graph-padding", "--language-only", "--bogus-flag"]
VALUES = st.one_of(
    st.integers(min_value=-5, max_value=600000).map(str),
    st.floats(min_value=-1, max_value=2).map(str),
    st.sampled_from(["nan", "inf", "-0.0"]),
    st.sampled_from(["auto", "no_buffer", "extra_buffer", "EAGLE", "NEXTN", "EAGLE3", "fp8_e4m3", "bfloat16",
                     "float16", "flashinfer", "triton", "fa3", "trtllm_mha", "32k", "1Ki", "", "x"]),
)
flag = st.one_of(st.tuples(st.sampled_from(FLAG_NAMES), VALUES).map(list), st.sampled_from(SWITCHES).map(lambda s: [s]))
flags = st.lists(flag, max_size=6).map(lambda xs: [t for x in xs for t in x])
gpus = st.sampled_from([p.id for p in load_profiles()] + ["not-a-gpu"])
models = st.sampled_from(["qwen3.6-27b", "qwen3.5-9b", "qwen3-next-80b-a3b", "nemotron-3-nano-30b-a3b",
                          "llama-3.1-8b-instruct", "qwen3-8b", "qwen3.6-35b-a3b", "nope"])
envs = st.lists(st.sampled_from(["SGLANG_MAMBA_SSM_DTYPE=bfloat16", "SGLANG_ENABLE_SPEC_V2=0",
                                 "SGLANG_MAMBA_CONV_DTYPE=float32", "SGLANG_ENABLE_SPEC_V2=maybe",
                                 "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1"]), max_size=2)


def _check(code, capsys):
    out = capsys.readouterr()
    assert code in (0, 1, 2)
    assert "Traceback" not in out.err
    if code == 2:
        assert out.err.count("\n") == 1, out.err


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(gpu=gpus, model=models, fl=flags, env=envs, js=st.booleans(), search=st.integers(0, 9))
def test_random_flags_never_traceback(gpu, model, fl, env, js, search, capsys):
    argv = ["--gpu", gpu, "--model", model, *fl]
    if search > 2:  # the search runs in 3 of 10 examples, to keep the suite fast
        argv.append("--no-search")
    for e in env:
        argv += ["--env", e]
    if js:
        argv.append("--json")
    _check(main(argv), capsys)


json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-10, 10**6), st.floats(allow_nan=False), st.text(max_size=8)),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
KEYS = ["architectures", "num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads",
        "head_dim", "full_attention_interval", "linear_num_value_heads", "linear_num_key_heads",
        "linear_key_head_dim", "linear_value_head_dim", "linear_conv_kernel_dim", "max_position_embeddings",
        "hybrid_override_pattern", "mamba_num_heads", "mamba_head_dim", "text_config", "vision_config",
        "rope_scaling", "mamba_ssm_dtype", "torch_dtype", "vocab_size", "quantization_config"]
ARCHS = ["Qwen3_5ForConditionalGeneration", "Qwen3NextForCausalLM", "NemotronHForCausalLM", "FalconH1ForCausalLM",
         "LlamaForCausalLM", "Qwen3ForCausalLM"]


@st.composite
def configs(draw):
    base = json.loads((__import__("pathlib").Path(__file__).parents[1] / "planner" / "catalog" / "configs"
                       / "Qwen__Qwen3.6-27B.config.json").read_text())
    cfg = draw(st.sampled_from([base, {}, base["text_config"]]))
    cfg = json.loads(json.dumps(cfg))
    for key in draw(st.lists(st.sampled_from(KEYS), max_size=4)):
        cfg[key] = draw(json_values)
    if draw(st.booleans()):
        cfg["architectures"] = [draw(st.sampled_from(ARCHS))]
    return cfg


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cfg=configs(), fl=flags)
def test_random_config_json_never_traceback(cfg, fl, tmp_path_factory, capsys):
    path = tmp_path_factory.mktemp("cfg") / "config.json"
    path.write_text(json.dumps(cfg))
    _check(main(["--gpu", "rtxpro6000", "--model", str(path), "--no-search", *fl]), capsys)
