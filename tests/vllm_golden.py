"""Helpers for the vLLM golden cases (tests/golden/vllm/): a case line -> VllmLaunch, and the VllmConfig vLLM
resolved for it, read back from the oracle's own summary (``config_from_summary``), so the KV sizing is tested
on vLLM's resolution independently of planner/engines/vllm/config.py's."""

from __future__ import annotations

import json
from pathlib import Path

from planner.catalog.spec import ModelSpec
from planner.engines.vllm.config import VllmConfig
from planner.engines.vllm.inputs import GIB, Device, Measured, VllmLaunch

GOLDEN = Path(__file__).parent / "golden" / "vllm"
# fields size() does not compute: the meta model's weight bytes (the weights owner compares them)
NOT_COMPARED = {"weights_bytes_meta"}


def _flag(flags, name, default=None):
    for i, f in enumerate(flags):
        if f == name and i + 1 < len(flags):
            return flags[i + 1]
        if f.startswith(name + "="):
            return f.split("=", 1)[1]
    return default


def load_spec(model: str) -> ModelSpec:
    raw = json.loads((GOLDEN / "configs" / f"{model}.config.json").read_text())
    try:
        return ModelSpec.from_hf_config(raw, name=model)
    except Exception:  # a config SGLang's parser refuses still carries raw for vLLM
        return _RawSpec(model, raw)


class _RawSpec:
    def __init__(self, name, raw):
        self.name, self.raw = name, raw


def launch_from_case(case: dict, version: str) -> VllmLaunch:
    dev = Device(gpu_total_mib=case.get("gpu_total_mib", 97887),
                 cuda_total_bytes=int(round(case["cuda_total_gib"] * GIB)), sm=case.get("gpu_sm", "12.0"),
                 name=case.get("gpu_name", ""), count=case.get("gpu_count", 8),
                 cuda_version=case.get("cuda_version", "13.0"), vmm=case.get("vmm", "yes") != "no",
                 flashinfer=case.get("flashinfer", "cubin"))
    keys = ("startup_used_gib", "weights_gib", "non_torch_gib", "peak_activation_gib", "cudagraph_gib",
            "cudagraph_actual_gib", "warmup_peak_gib", "torch_reserve_growth_gib")
    meas = Measured(**{k: case[k] for k in keys if k in case})
    sc = _flag(case["flags"], "--speculative-config")
    draft = json.loads(sc).get("model") if sc else None  # a drafter's name: configs/<name>.config.json
    return VllmLaunch(version=version, spec=load_spec(case["model"]), flags=tuple(case["flags"]), device=dev,
                      measured=meas, env=dict(case.get("env", {})), draft=load_spec(draft) if draft else None)


def config_from_summary(summary: dict, case: dict) -> VllmConfig:
    flags = case["flags"]
    mml = _flag(flags, "--max-model-len")
    bs = _flag(flags, "--block-size")
    kvb = _flag(flags, "--kv-cache-memory-bytes")
    ovr = _flag(flags, "--num-gpu-blocks-override")
    spec = summary.get("speculative_method")
    return VllmConfig(
        version=summary["vllm_version"], architecture=summary["architecture"], model_runner=summary["model_runner"],
        dtype=summary["dtype"], kv_cache_dtype=summary["kv_cache_dtype"],
        max_model_len=-1 if mml in ("-1", "auto") else summary["max_model_len"],
        max_num_seqs=summary["max_num_seqs"], max_num_batched_tokens=summary["max_num_batched_tokens"],
        enable_prefix_caching=summary["enable_prefix_caching"], enable_chunked_prefill=summary["enable_chunked_prefill"],
        gpu_memory_utilization=summary["gpu_memory_utilization"],
        enable_extensible_kv_cache=bool(summary.get("enable_extensible_kv_cache")),
        tensor_parallel_size=summary["tensor_parallel_size"], pipeline_parallel_size=summary["pipeline_parallel_size"],
        data_parallel_size=summary["data_parallel_size"], block_size=int(bs) if bs else None,
        mamba_cache_mode=summary["mamba_cache_mode"], attention_backends=tuple(summary["attention_backends"] or ()),
        cudagraph_mode=summary["cudagraph_mode"], cudagraph_capture_sizes=tuple(summary["cudagraph_capture_sizes"] or ()),
        max_cudagraph_capture_size=summary["max_cudagraph_capture_size"], speculative_method=spec,
        num_speculative_tokens=summary.get("num_speculative_tokens"),
        kv_cache_memory_bytes=int(kvb) if kvb else None, num_gpu_blocks_override=int(ovr) if ovr else None,
        enforce_eager="--enforce-eager" in flags, cpu_offload_gb=float(_flag(flags, "--cpu-offload-gb", 0) or 0),
        quantization=_flag(flags, "--quantization"))


def load_set(version: str, family: str, name: str) -> list[tuple[dict, dict]]:
    folder = GOLDEN / version / family
    cases = [json.loads(line) for line in (folder / f"{name}.jsonl").read_text().splitlines() if line.strip()]
    res = {r["id"]: r["summary"] for r in
           (json.loads(line) for line in (folder / f"{name}_results.jsonl").read_text().splitlines() if line.strip())}
    return [(c, res[c["id"]]) for c in cases]


def compare(mine: dict, theirs: dict) -> list[str]:
    keys = (set(mine) | set(theirs)) - NOT_COMPARED
    return [f"{k}: planner {mine.get(k, '<absent>')!r} vs vLLM {theirs.get(k, '<absent>')!r}"
            for k in sorted(keys) if mine.get(k, "<absent>") != theirs.get(k, "<absent>")]
