"""Keep, from the vLLM oracle's full results, what the resolved-config goldens compare (the summary's config
fields, the engine config's compilation / cache view, the outcome and vLLM's message):

    PY=~/.cache/vllm-oracle/0.34.0/venv/bin/python
    nice -n 10 $PY ../shared/tools/vllm-oracle/oracle.py --batch tests/golden/vllm_config/cases.jsonl \\
        --out /tmp/raw-0.34.0.jsonl
    python3 tests/golden/vllm_config/extract.py /tmp/raw-0.34.0.jsonl > tests/golden/vllm_config/v0_34_0.jsonl
"""

import json
import sys

SUMMARY = ("vllm_version", "outcome", "stage", "error_type", "error_message", "model_runner", "architecture",
           "attention_backends", "dtype", "kv_cache_dtype", "max_model_len", "max_num_seqs", "max_num_batched_tokens",
           "enable_prefix_caching", "enable_chunked_prefill", "gpu_memory_utilization", "enable_extensible_kv_cache",
           "tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size", "mamba_cache_mode",
           "cudagraph_mode", "cudagraph_capture_sizes", "max_cudagraph_capture_size", "speculative_method",
           "num_speculative_tokens", "block_size")


def main(path):
    for line in open(path):
        r = json.loads(line)
        ec = r.get("engine_config") or {}
        out = {"id": r["id"], "summary": {k: r["summary"].get(k) for k in SUMMARY}}
        if ec:
            out["engine_config"] = {
                "model": {k: ec["model"].get(k) for k in ("max_model_len", "original_max_model_len", "quantization",
                                                         "enforce_eager", "dtype")},
                "cache": {k: ec["cache"].get(k) for k in ("block_size", "user_specified_block_size",
                                                         "gpu_memory_utilization", "enable_extensible_kv_cache",
                                                         "kv_cache_memory_bytes", "num_gpu_blocks_override",
                                                         "mamba_cache_mode")},
                "compilation": ec.get("compilation"),
                "parallel": {k: ec["parallel"].get(k) for k in ("enable_expert_parallel",)},
            }
        print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1])
