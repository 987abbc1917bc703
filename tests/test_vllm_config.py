"""vLLM's argument resolution (planner/engines/vllm/config.py resolve) against vLLM's own code.

The golden sets tests/golden/vllm_config/v0_33_0.jsonl and v0_34_0.jsonl are the vLLM oracle's answers
(../shared/tools/vllm-oracle, vLLM's own create_engine_config and KV-cache initialisation) for the launches of
cases.jsonl (README.md there: the regen command). Every resolved field is compared with the oracle's summary; a
rejection must carry vLLM's exception type and message.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from planner.catalog.spec import ModelSpec
from planner.engines.vllm.config import VllmConfig, VllmRejected, resolve
from planner.engines.vllm.inputs import Device, Measured, VllmLaunch
from planner.errors import BadInput

GOLDEN = Path(__file__).resolve().parent / "golden" / "vllm_config"
SETS = ("", "random_", "noflashinfer_")  # curated, fresh random (seeds 1, 2), without FlashInfer
CASES = {c["id"]: c for name in ("cases.jsonl", "random.jsonl", "noflashinfer.jsonl")
         for c in map(json.loads, (GOLDEN / name).read_text().splitlines())}
# the summary fields VllmConfig carries under the same name
FIELDS = ("model_runner", "architecture", "attention_backends", "dtype", "kv_cache_dtype", "max_model_len",
          "max_num_seqs", "max_num_batched_tokens", "enable_prefix_caching", "enable_chunked_prefill",
          "gpu_memory_utilization", "enable_extensible_kv_cache", "tensor_parallel_size", "pipeline_parallel_size",
          "data_parallel_size", "mamba_cache_mode", "cudagraph_mode", "cudagraph_capture_sizes",
          "max_cudagraph_capture_size", "speculative_method", "num_speculative_tokens")


# golden launches the planner refuses by name instead of resolving (vLLM's own answer noted)
REFUSED = {
    # vLLM (the oracle): startup_failed at load_model, an AssertionError without a message in FusedMoE's
    # make_parallel_config, for every launch with expert parallelism and DP > 1
    "rnd3-034-Qwen3.6-35B-A3B-a100": "--data-parallel-size > 1",
    "rnd4-028-Nemotron-3-Nano-30B-A3B-b200": "--data-parallel-size > 1",
    "rnd4-056-Qwen3-30B-A3B-FP8-a100": "--data-parallel-size > 1",
    # NemotronH's config class gives expert defaults the JSON lacks; vLLM fails later (a KV-cache layout assertion)
    "rnd3-084-Nemotron-H-56B-Base-8K-a100": "--enable-expert-parallel on mamba2",
    "rnd4-051-Nemotron-H-56B-Base-8K-rtxpro": "--enable-expert-parallel on mamba2",
    "rnd5-030-Nemotron-H-56B-Base-8K-rtx4090": "--enable-expert-parallel on mamba2",
    "rnd5-098-Nemotron-H-56B-Base-8K-h100": "--enable-expert-parallel on mamba2",
}


def _golden(version: str, kind: str = "") -> list[dict]:
    """The curated set (kind ""), or the random one (kind "random_"): fresh random launches, seed 1."""
    path = GOLDEN / f"{kind}v{version.replace('.', '_')}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def _spec(model: str) -> ModelSpec:
    raw = json.loads((GOLDEN / "models" / model / "config.json").read_text())
    return ModelSpec.from_hf_config(raw, name=model)


def launch_for(case: dict, version: str) -> VllmLaunch:
    dev = Device(gpu_total_mib=case["gpu_total_mib"], cuda_total_bytes=case["cuda_total_mib"] << 20,
                 sm=case["gpu_sm"], name=case["gpu_name"], vmm=case.get("vmm", "yes") == "yes",
                 flashinfer=case.get("flashinfer", "cubin"))
    model = case.get("model") or Path(case["config_json"]).parent.name  # models/NAME/config.json
    return VllmLaunch(version=version, spec=_spec(model), flags=tuple(case["flags"]), device=dev,
                      measured=Measured(), env=case.get("env", {}))


def _params():
    return [pytest.param(v, g, id=f"{v}-{g['id']}") for v in ("0.33.0", "0.34.0") for kind in SETS
            if (GOLDEN / f"{kind}v{v.replace('.', '_')}.jsonl").exists() for g in _golden(v, kind)]


@pytest.mark.parametrize("version,golden", _params())
def test_resolve_agrees_with_vllm(version, golden):
    s = golden["summary"]
    assert s["vllm_version"] == version
    lau = launch_for(CASES[golden["id"]], version)
    if golden["id"] in REFUSED:
        with pytest.raises(BadInput, match=REFUSED[golden["id"]]):
            resolve(lau)
        return
    if s["outcome"] == "rejected" or (s["outcome"] == "startup_failed" and s["stage"] == "load_model"):
        with pytest.raises(VllmRejected) as e:
            resolve(lau)
        assert e.value.error_type == s["error_type"]
        assert e.value.message in s["error_message"], (e.value.message, s["error_message"])
        assert e.value.stage == s["stage"]
        return
    cfg = resolve(lau)
    for f in FIELDS:
        mine, want = getattr(cfg, f), s[f]
        if isinstance(mine, tuple):
            mine = list(mine)
        if f == "max_model_len" and mine == -1:  # the auto-fit is the KV sizing's (vkv)
            assert cfg.derived_max_model_len == golden["engine_config"]["model"]["max_model_len"]
            continue
        if f == "attention_backends" and s["stage"] == "init_device":
            assert want is None  # vLLM stopped at request_memory, before it built the model's layers
            continue
        if f == "enable_extensible_kv_cache" and version == "0.33.0":
            assert want is None and mine is False  # no extensible KV cache before 0.34
            continue
        if f == "cudagraph_mode" and s["outcome"] != "ok" and s["stage"] == "initialize_kv_caches":
            mine = cfg.cudagraph_mode_engine_config  # vLLM stopped before the KV-cache init lowers the mode
        assert mine == want, (f, mine, want)
    ec = golden["engine_config"]
    assert cfg.quantization == ec["model"]["quantization"]
    assert cfg.block_size == (ec["cache"]["block_size"] if ec["cache"]["user_specified_block_size"] else None)
    assert cfg.kv_cache_memory_bytes == ec["cache"]["kv_cache_memory_bytes"]
    assert cfg.num_gpu_blocks_override == ec["cache"]["num_gpu_blocks_override"]
    assert cfg.enforce_eager == ec["model"]["enforce_eager"]
    assert cfg.cudagraph_mode_engine_config == ec["compilation"]["cudagraph_mode"]
    assert cfg.enable_expert_parallel == ec["parallel"]["enable_expert_parallel"]


def test_golden_sets_cover_the_brief():
    """Families, GPUs (NVML totals / SMs) and outcomes the golden set must hold on both releases."""
    for v in ("0.33.0", "0.34.0"):
        g = _golden(v)
        archs = {x["summary"]["architecture"] for x in g}
        assert {"LlamaForCausalLM", "Qwen3MoeForCausalLM", "Qwen3_5ForConditionalGeneration", "NemotronHForCausalLM",
                "GptOssForCausalLM", "Llama4ForConditionalGeneration", "DeepseekV3ForCausalLM"} <= archs
        sms = {CASES[x["id"]]["gpu_sm"] for x in g}
        assert {"8.0", "8.9", "9.0", "10.0", "12.0"} <= sms
        assert sum(x["summary"]["outcome"] == "rejected" for x in g) >= 10
        assert len(g) == len((GOLDEN / "cases.jsonl").read_text().splitlines())


# --- worked cases: each asserts a rule that could be false ---

H100 = CASES["qwen3-8b-h100-len8k"]


def _resolve(flags, version="0.34.0", case=H100, **dev):
    lau = launch_for({**case, "flags": list(flags)}, version)
    if dev:
        lau = replace(lau, device=replace(lau.device, **dev))
    return resolve(lau)


def test_batch_tiers_follow_the_nvml_total_and_name():
    """engine/arg_utils.py get_batch_defaults: >= 160 GiB, >= 70 GiB but not A100, else the small tier."""
    assert (_resolve([]).max_num_batched_tokens, _resolve([]).max_num_seqs) == (8192, 1024)
    big = _resolve([], gpu_total_mib=160 * 1024)
    assert (big.max_num_batched_tokens, big.max_num_seqs) == (16384, 1024)
    a100 = _resolve([], name="NVIDIA A100-SXM4-80GB")
    assert (a100.max_num_batched_tokens, a100.max_num_seqs) == (2048, 256)
    just_under = _resolve([], gpu_total_mib=70 * 1024 - 1)
    assert just_under.max_num_seqs == 256


def test_utilization_default_per_release():
    assert _resolve([]).gpu_memory_utilization == 1.0 and _resolve([]).enable_extensible_kv_cache
    assert _resolve([], version="0.33.0").gpu_memory_utilization == 0.92
    off = _resolve(["--num-gpu-blocks-override", "100"])
    assert (off.gpu_memory_utilization, off.enable_extensible_kv_cache) == (0.92, False)
    assert _resolve(["--gpu-memory-utilization", "0.5"]).gpu_memory_utilization == 0.5


def test_auto_fit_length_is_kept_for_the_kv_sizing():
    cfg = _resolve(["--max-model-len", "auto"])
    assert cfg.max_model_len == -1 and cfg.derived_max_model_len == 40960


def test_mamba_cache_mode_follows_prefix_caching():
    q36 = CASES["q36-rtxpro-noprefix"]
    assert _resolve(["--max-num-seqs", "64"], case=q36).mamba_cache_mode == "align"
    assert _resolve(["--no-enable-prefix-caching", "--max-num-seqs", "64"], case=q36).mamba_cache_mode == "none"
    # the deprecated flag has no effect
    assert _resolve(["--mamba-cache-mode", "none", "--max-num-seqs", "64"], case=q36).mamba_cache_mode == "align"


def test_mtp_extends_the_decode_capture_list_on_034_only():
    q36 = CASES["q36-rtxpro-mtp3"]
    new = _resolve(q36["flags"], case=q36)
    old = _resolve(q36["flags"], case=q36, version="0.33.0")
    # 0.34: the one-token draft decodes' request grid (1..6, 8, ...) joins the list; 0.33 has only (1+k)-multiples
    assert 3 in new.cudagraph_capture_sizes and 6 in new.cudagraph_capture_sizes
    assert 3 not in old.cudagraph_capture_sizes and 6 not in old.cudagraph_capture_sizes
    assert old.max_cudagraph_capture_size == new.max_cudagraph_capture_size == 256
    assert isinstance(new, VllmConfig) and new.num_speculative_tokens == 3


def test_unmodelled_inputs_are_refused_by_name():
    with pytest.raises(BadInput, match="--enable-lora"):
        _resolve(["--enable-lora"])
    with pytest.raises(BadInput, match="VLLM_FOO"):
        resolve(replace(launch_for(H100, "0.34.0"), env={"VLLM_FOO": "1"}))
    with pytest.raises(BadInput, match="eagle3"):
        _resolve(["--speculative-config", '{"method": "eagle3", "num_speculative_tokens": 2}'])
    with pytest.raises(BadInput, match="SM 7.5"):
        _resolve([], sm="7.5")
    raw = {"architectures": ["Gemma3ForCausalLM"], "hidden_size": 8, "num_attention_heads": 1,
           "num_hidden_layers": 1, "vocab_size": 8, "max_position_embeddings": 8}
    lau = launch_for(H100, "0.34.0")
    with pytest.raises(BadInput, match="Gemma3ForCausalLM"):
        resolve(replace(lau, spec=replace(lau.spec, raw=raw)))
    with pytest.raises(BadInput, match="0.32.0"):
        resolve(replace(lau, version="0.32.0"))
