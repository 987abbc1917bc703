"""Write cases.jsonl: the vLLM launches whose resolved config is checked against vLLM's own code (the vLLM oracle).

    python3 tests/golden/vllm_config/make_cases.py            # -> tests/golden/vllm_config/cases.jsonl

Every case names a model directory under models/ (config.json copied from ../shared/tools/vllm-oracle/models/),
a GPU below (NVML total, cudaMemGetInfo total, SM; tests/golden/vllm_config/README.md) and `vllm serve` flags.
The memory inputs (non_torch / activation peak / graphs) are fixed: they do not change the resolved config.
"""

import json
from pathlib import Path

# name: (NVML memory.total MiB, cudaMemGetInfo total MiB, SM, NVML name) -- from hwprofiles/*.toml
GPUS = {
    "rtx4090": (24564, 24210, "8.9", "NVIDIA GeForce RTX 4090"),
    "l40s": (46068, 45589, "8.9", "NVIDIA L40S"),
    "a100": (81920, 81157, "8.0", "NVIDIA A100-SXM4-80GB"),
    "h100": (81559, 81105, "9.0", "NVIDIA H100 80GB HBM3"),
    "h200": (143771, 143000, "9.0", "NVIDIA H200"),
    "rtxpro": (97887, 97249, "12.0", "NVIDIA RTX PRO 6000 Blackwell Workstation Edition"),
    "b200": (183359, 182600, "10.0", "NVIDIA B200"),
}
MTP = lambda k: ["--speculative-config", json.dumps({"method": "mtp", "num_speculative_tokens": k})]  # noqa: E731

CASES = [
    # dense, every GPU tier at defaults
    *[("llama8b-" + g, "Llama-3.1-8B-Instruct", g, []) for g in GPUS],
    ("qwen3-8b-h100-len8k", "Qwen3-8B", "h100", ["--max-model-len", "8192"]),
    ("qwen3-8b-h100-seqs64", "Qwen3-8B", "h100", ["--max-num-seqs", "64"]),
    ("qwen3-8b-h100-seqs3", "Qwen3-8B", "h100", ["--max-num-seqs", "3"]),
    ("qwen3-8b-h100-mbt4096", "Qwen3-8B", "h100", ["--max-num-batched-tokens", "4096"]),
    ("qwen3-8b-h100-mbt100", "Qwen3-8B", "h100", ["--max-num-batched-tokens", "100", "--max-num-seqs", "8"]),
    ("qwen3-8b-h100-eager", "Qwen3-8B", "h100", ["--enforce-eager"]),
    ("qwen3-8b-h100-fp8kv", "Qwen3-8B", "h100", ["--kv-cache-dtype", "fp8"]),
    ("qwen3-8b-rtxpro-fp8kv", "Qwen3-8B", "rtxpro", ["--kv-cache-dtype", "fp8"]),
    ("qwen3-8b-l40s-fp8kv", "Qwen3-8B", "l40s", ["--kv-cache-dtype", "fp8"]),
    ("qwen3-8b-b200-fp8kv", "Qwen3-8B", "b200", ["--kv-cache-dtype", "fp8"]),
    ("qwen3-8b-h100-quantfp8", "Qwen3-8B", "h100", ["--quantization", "fp8"]),
    ("qwen3-8b-h100-noprefix", "Qwen3-8B", "h100", ["--no-enable-prefix-caching"]),
    ("qwen3-8b-h100-nochunk", "Qwen3-8B", "h100", ["--no-enable-chunked-prefill"]),
    ("qwen3-8b-h100-nochunk-len4k", "Qwen3-8B", "h100", ["--no-enable-chunked-prefill", "--max-model-len", "4096"]),
    ("qwen3-8b-h100-util080", "Qwen3-8B", "h100", ["--gpu-memory-utilization", "0.8"]),
    ("qwen3-8b-h100-block32", "Qwen3-8B", "h100", ["--block-size", "32"]),
    ("qwen3-8b-h100-kvbytes", "Qwen3-8B", "h100", ["--kv-cache-memory-bytes", "8000000000"]),
    ("qwen3-8b-h100-override", "Qwen3-8B", "h100", ["--num-gpu-blocks-override", "1000"]),
    ("qwen3-8b-h100-tp2", "Qwen3-8B", "h100", ["--tensor-parallel-size", "2"]),
    ("qwen3-8b-h100-pp2", "Qwen3-8B", "h100", ["--pipeline-parallel-size", "2"]),
    ("qwen3-8b-h100-dp2", "Qwen3-8B", "h100", ["--data-parallel-size", "2"]),
    ("qwen3-8b-h100-maxcg64", "Qwen3-8B", "h100", ["--max-cudagraph-capture-size", "64"]),
    ("qwen3-8b-h100-cgsizes", "Qwen3-8B", "h100", ["--cudagraph-capture-sizes", "1", "2", "4", "8", "300"]),
    ("qwen3-8b-h100-piecewise", "Qwen3-8B", "h100", ["--compilation-config", '{"cudagraph_mode": "PIECEWISE"}']),
    ("qwen3-8b-h100-fulldecode", "Qwen3-8B", "h100", ["--compilation-config", '{"cudagraph_mode": "FULL_DECODE_ONLY"}']),
    ("qwen3-8b-h100-throughput", "Qwen3-8B", "h100", ["--performance-mode", "throughput"]),
    ("qwen3-8b-h100-auto-len", "Qwen3-8B", "h100", ["--max-model-len", "-1"]),
    ("qwen3-8b-h100-len-1k", "Qwen3-8B", "h100", ["--max-model-len", "1k"]),
    ("qwen3-8b-h100-offload", "Qwen3-8B", "h100", ["--cpu-offload-gb", "4"]),
    ("qwen3-8b-h100-fp16", "Qwen3-8B", "h100", ["--dtype", "float16"]),
    ("qwen3-8b-h100-v1runner", "Qwen3-8B", "h100", [], {"VLLM_USE_V2_MODEL_RUNNER": "0"}),
    ("qwen3-8b-a100-seqs512", "Qwen3-8B", "a100", ["--max-num-seqs", "512", "--max-model-len", "16384"]),
    ("qwen3-8b-rtx4090-eager", "Qwen3-8B", "rtx4090", ["--enforce-eager", "--max-model-len", "4096"]),
    ("llama70b-h100-tp4", "Llama-3.3-70B-Instruct", "h100", ["--tensor-parallel-size", "4"]),
    ("llama70b-h200-tp2-fp8kv", "Llama-3.3-70B-Instruct", "h200", ["--tensor-parallel-size", "2", "--kv-cache-dtype", "fp8"]),
    # MoE
    ("qwen3-30b-h100", "Qwen3-30B-A3B", "h100", []),
    ("qwen3-30b-h100-tp2-ep", "Qwen3-30B-A3B", "h100", ["--tensor-parallel-size", "2", "--enable-expert-parallel"]),
    ("qwen3-30b-fp8-h100", "Qwen3-30B-A3B-FP8", "h100", []),
    ("qwen3-30b-fp8-l40s", "Qwen3-30B-A3B-FP8", "l40s", ["--max-model-len", "8192"]),
    ("mixtral-h100-tp2", "Mixtral-8x7B-v0.1", "h100", ["--tensor-parallel-size", "2"]),
    # hybrid GDN
    ("q36-rtxpro", "Qwen3.6-27B", "rtxpro", []),
    ("q36-rtxpro-mtp1", "Qwen3.6-27B", "rtxpro", ["--max-num-seqs", "64", *MTP(1)]),
    ("q36-rtxpro-mtp3", "Qwen3.6-27B", "rtxpro", ["--max-model-len", "262144", "--max-num-seqs", "32", *MTP(3)]),
    ("q36-rtxpro-mtp3-seqs700", "Qwen3.6-27B", "rtxpro", ["--max-num-seqs", "700", *MTP(3)]),
    ("q36-rtxpro-seqs100", "Qwen3.6-27B", "rtxpro", ["--max-num-seqs", "100"]),
    ("q36-rtxpro-noprefix", "Qwen3.6-27B", "rtxpro", ["--no-enable-prefix-caching", "--max-num-seqs", "128"]),
    ("q36-rtxpro-noprefix-fp8", "Qwen3.6-27B", "rtxpro", ["--no-enable-prefix-caching", "--kv-cache-dtype", "fp8", "--max-num-seqs", "128"]),
    ("q36-rtxpro-mcm-none", "Qwen3.6-27B", "rtxpro", ["--mamba-cache-mode", "none", "--max-num-seqs", "128"]),
    ("q36-rtxpro-mcm-align", "Qwen3.6-27B", "rtxpro", ["--mamba-cache-mode", "align", "--max-num-seqs", "128"]),
    ("q36-rtxpro-eager", "Qwen3.6-27B", "rtxpro", ["--enforce-eager", "--max-num-seqs", "128"]),
    ("q36-rtxpro-util090", "Qwen3.6-27B", "rtxpro", ["--gpu-memory-utilization", "0.9", "--max-num-seqs", "128"]),
    ("q36-rtxpro-len32k", "Qwen3.6-27B", "rtxpro", ["--max-model-len", "32768", "--max-num-seqs", "128"]),
    ("q36-b200", "Qwen3.6-27B", "b200", ["--max-num-seqs", "256"]),
    ("q36-b200-mtp3", "Qwen3.6-27B", "b200", ["--max-num-seqs", "64", *MTP(3)]),
    ("q36-h100", "Qwen3.6-27B", "h100", ["--max-num-seqs", "128", "--max-model-len", "65536"]),
    ("q36-h200-mtp2", "Qwen3.6-27B", "h200", ["--max-num-seqs", "128", *MTP(2)]),
    ("q36-a100", "Qwen3.6-27B", "a100", ["--max-num-seqs", "64", "--max-model-len", "32768"]),
    ("q36-l40s-tp2", "Qwen3.6-27B", "l40s", ["--tensor-parallel-size", "2", "--max-model-len", "32768"]),
    ("q36-h100-block64", "Qwen3.6-27B", "h100", ["--block-size", "64", "--max-num-seqs", "128"]),
    ("qnext-h100-tp2", "Qwen3-Next-80B-A3B-Instruct", "h100", ["--tensor-parallel-size", "2", "--max-num-seqs", "128"]),
    ("qnext-h200-tp2-mtp2", "Qwen3-Next-80B-A3B-Instruct", "h200", ["--tensor-parallel-size", "2", "--max-num-seqs", "128", *MTP(2)]),
    ("q35moe-h100", "Qwen3.5-35B-A3B", "h100", ["--max-num-seqs", "256"]),
    # hybrid Mamba2
    ("nemo-h100", "Nemotron-3-Nano-30B-A3B", "h100", []),
    ("nemo-rtxpro-seqs128", "Nemotron-3-Nano-30B-A3B", "rtxpro", ["--max-num-seqs", "128"]),
    ("nemo-h100-noprefix", "Nemotron-3-Nano-30B-A3B", "h100", ["--no-enable-prefix-caching", "--max-num-seqs", "128"]),
    ("nemo-a100-fp8kv", "Nemotron-3-Nano-30B-A3B", "a100", ["--kv-cache-dtype", "fp8", "--max-num-seqs", "128"]),
    # gpt-oss (sliding window + sinks, MXFP4)
    ("gptoss20b-h100", "gpt-oss-20b", "h100", []),
    ("gptoss20b-rtxpro", "gpt-oss-20b", "rtxpro", []),
    ("gptoss20b-a100", "gpt-oss-20b", "a100", []),
    ("gptoss20b-b200", "gpt-oss-20b", "b200", []),
    ("gptoss20b-rtx4090", "gpt-oss-20b", "rtx4090", ["--max-model-len", "16384"]),
    ("gptoss120b-h200", "gpt-oss-120b", "h200", []),
    # Llama 4 (chunked local attention)
    ("llama4-h100-tp4", "Llama-4-Scout-17B-16E-Instruct", "h100", ["--tensor-parallel-size", "4"]),
    ("llama4-b200-tp8-len64k", "Llama-4-Scout-17B-16E-Instruct", "b200", ["--tensor-parallel-size", "8", "--max-model-len", "65536"]),
    ("llama4-h100-tp4-eager", "Llama-4-Scout-17B-16E-Instruct", "h100", ["--tensor-parallel-size", "4", "--enforce-eager"]),
    # MLA
    ("dsv3-h200-tp8", "DeepSeek-V3", "h200", ["--tensor-parallel-size", "8"]),
    ("dsv3-b200-tp8", "DeepSeek-V3", "b200", ["--tensor-parallel-size", "8"]),
    ("dsv3-h200-tp8-mtp1", "DeepSeek-V3", "h200", ["--tensor-parallel-size", "8", *MTP(1)]),
    ("kimi-b200-tp8", "Kimi-K2-Instruct", "b200", ["--tensor-parallel-size", "8"]),
    # rejections: vLLM's own messages
    ("rej-util15", "Qwen3-8B", "h100", ["--gpu-memory-utilization", "1.5"]),
    ("rej-tp3", "Llama-3.1-8B-Instruct", "h100", ["--tensor-parallel-size", "3"]),
    ("rej-len-over", "Llama-3.1-8B-Instruct", "h100", ["--max-model-len", "200000"]),
    ("rej-kvdtype", "Qwen3-8B", "h100", ["--kv-cache-dtype", "fp9"]),
    ("rej-unknown", "Qwen3-8B", "h100", ["--frobnicate", "1"]),
    ("rej-near", "Qwen3-8B", "h100", ["--max-num-seq", "8", "--gpu-memory-utilisation", "0.8"]),
    ("rej-seqs0", "Qwen3-8B", "h100", ["--max-num-seqs", "0"]),
    ("rej-mcm-all", "Qwen3.6-27B", "rtxpro", ["--mamba-cache-mode", "all"]),
    ("rej-nochunk-mbt", "Qwen3-8B", "h100", ["--no-enable-chunked-prefill", "--max-num-batched-tokens", "1024", "--max-model-len", "4096"]),
    ("rej-mbt-lt-seqs", "Qwen3-8B", "h100", ["--max-num-batched-tokens", "64", "--max-num-seqs", "128"]),
    ("rej-mtp-llama", "Llama-3.1-8B-Instruct", "h100", MTP(1)),
    ("rej-cg-both", "Qwen3-8B", "h100", ["--max-cudagraph-capture-size", "64", "--compilation-config", '{"max_cudagraph_capture_size": 32}']),
    ("rej-ext-kvbytes", "Qwen3-8B", "h100", ["--enable-extensible-kv-cache", "--kv-cache-memory-bytes", "8000000000"]),
    ("rej-calc-scales", "Qwen3-8B", "h100", ["--calculate-kv-scales"]),
    ("ext-off", "Qwen3-8B", "h100", ["--no-enable-extensible-kv-cache"]),
    ("ext-on", "Qwen3-8B", "h100", ["--enable-extensible-kv-cache"]),
    ("ext-novmm", "Qwen3-8B", "h100", [], {}, {"vmm": "no"}),
    # more validation errors and edges
    ("rej-block0", "Qwen3-8B", "h100", ["--block-size", "0"]),
    ("rej-tp0", "Qwen3-8B", "h100", ["--tensor-parallel-size", "0"]),
    ("rej-offload-neg", "Qwen3-8B", "h100", ["--cpu-offload-gb", "-1"]),
    ("rej-util0", "Qwen3-8B", "h100", ["--gpu-memory-utilization", "0"]),
    ("rej-util-and-block", "Qwen3-8B", "h100", ["--gpu-memory-utilization", "2", "--block-size", "-16"]),
    ("rej-tp16", "Qwen3-8B", "h100", ["--tensor-parallel-size", "16"]),
    ("rej-cgsizes-max", "Qwen3-8B", "h100", ["--cudagraph-capture-sizes", "1", "2", "4", "--max-cudagraph-capture-size", "8"]),
    ("qwen3-8b-h100-interactive", "Qwen3-8B", "h100", ["--performance-mode", "interactivity"]),
    ("qwen3-8b-h100-fp32", "Qwen3-8B", "h100", ["--dtype", "float32"]),
    ("qwen3-8b-h100-kvbf16", "Qwen3-8B", "h100", ["--kv-cache-dtype", "bfloat16"]),
    ("qwen3-8b-rtxpro-e5m2", "Qwen3-8B", "rtxpro", ["--kv-cache-dtype", "fp8_e5m2"]),
    ("qwen3-8b-h100-len-auto-word", "Qwen3-8B", "h100", ["--max-model-len", "auto", "--no-enable-chunked-prefill"]),
    ("qwen3-8b-h100-cc-dotted", "Qwen3-8B", "h100", ["-cc.cudagraph_mode=PIECEWISE", "-cc.max_cudagraph_capture_size=100"]),
    ("qwen3-8b-h100-cc-none", "Qwen3-8B", "h100", ["--compilation-config", '{"cudagraph_mode": "NONE"}']),
    ("q36-rtxpro-mtp3-maxcg", "Qwen3.6-27B", "rtxpro", ["--max-num-seqs", "64", "--max-cudagraph-capture-size", "100", *MTP(3)]),
    ("q36-rtxpro-mtp2-seqs1", "Qwen3.6-27B", "rtxpro", ["--max-num-seqs", "1", *MTP(2)]),
    ("q36-h100-tp4", "Qwen3.6-27B", "h100", ["--tensor-parallel-size", "4", "--max-num-seqs", "64"]),
    ("q36-h100-pp2", "Qwen3.6-27B", "h100", ["--pipeline-parallel-size", "2", "--max-num-seqs", "64"]),
    ("gptoss20b-h100-mtp", "gpt-oss-20b", "h100", MTP(1)),
    ("gptoss20b-h100-maxcg", "gpt-oss-20b", "h100", ["--max-cudagraph-capture-size", "256"]),
    ("gptoss20b-h100-dp2", "gpt-oss-20b", "h100", ["--data-parallel-size", "2"]),
    # more checkpoints (configs from /work/shared/models, given to the oracle as config_json)
    ("q36nvfp4-rtxpro", "Qwen3.6-27B-NVFP4", "rtxpro", ["--max-num-seqs", "64"]),
    ("q36nvfp4-b200-mtp3", "Qwen3.6-27B-NVFP4", "b200", ["--max-num-seqs", "64", *MTP(3)]),
    ("q36nvfp4-h100-kvauto", "Qwen3.6-27B-NVFP4", "h100", ["--max-num-seqs", "64", "--kv-cache-dtype", "auto"]),
    ("q35-9b-rtx4090", "Qwen3.5-9B", "rtx4090", ["--max-model-len", "32768"]),
    ("q35-9b-l40s-mtp1", "Qwen3.5-9B", "l40s", ["--max-num-seqs", "32", *MTP(1)]),
    ("q36moe-h200", "Qwen3.6-35B-A3B", "h200", []),
    ("q36moe-h100-tp2-ep", "Qwen3.6-35B-A3B", "h100", ["--tensor-parallel-size", "2", "--enable-expert-parallel",
                                                        "--max-num-seqs", "256"]),
    ("qwen3-32b-a100-tp2", "Qwen3-32B", "a100", ["--tensor-parallel-size", "2"]),
    ("qwen3-32b-h100-fp8kv-eager", "Qwen3-32B", "h100", ["--kv-cache-dtype", "fp8", "--enforce-eager"]),
    ("nemoh56-h100-tp2", "Nemotron-H-56B-Base-8K", "h100", ["--tensor-parallel-size", "2"]),
    ("nemoh56-b200", "Nemotron-H-56B-Base-8K", "b200", ["--max-num-seqs", "128"]),
    # MTP method aliases (deprecated names vLLM rewrites to "mtp") and a missing num_speculative_tokens
    ("q36-rtxpro-alias-qwen35mtp", "Qwen3.6-27B", "rtxpro", ["--max-num-seqs", "64", "--speculative-config",
                                                            '{"method": "qwen3_5_mtp", "num_speculative_tokens": 2}']),
    ("dsv3-h200-alias-deepseekmtp", "DeepSeek-V3", "h200", ["--tensor-parallel-size", "8", "--speculative-config",
                                                           '{"method": "deepseek_mtp", "num_speculative_tokens": 1}']),
    ("qnext-h200-alias", "Qwen3-Next-80B-A3B-Instruct", "h200", ["--tensor-parallel-size", "2", "--max-num-seqs", "64",
                                                                 "--speculative-config",
                                                                 '{"method": "qwen3_next_mtp", "num_speculative_tokens": 1}']),
    ("q36-rtxpro-mtp-nok", "Qwen3.6-27B", "rtxpro", ["--max-num-seqs", "64", "--speculative-config", '{"method": "mtp"}']),
    ("dsv3-h200-mtp-nok", "DeepSeek-V3", "h200", ["--tensor-parallel-size", "8", "--speculative-config",
                                                 '{"method": "mtp"}']),
    ("qwen3-8b-h100-torch-compile-off", "Qwen3-8B", "h100", [], {"TORCH_COMPILE_DISABLE": "1"}),
    # the command-line spellings FlexibleArgumentParser rewrites, and async scheduling given explicitly
    ("syntax-eq-underscore", "Qwen3-8B", "h100", ["-tp=2", "--max_num_seqs=64", "--gpu_memory_utilization", "0.85"]),
    ("syntax-dotted-spec", "Qwen3.6-27B", "rtxpro", ["--max-num-seqs", "64", "--speculative-config.method", "mtp",
                                                    "--speculative-config.num_speculative_tokens", "2"]),
    ("syntax-sc-short", "Qwen3.6-27B", "rtxpro", ["--max-num-seqs", "64", "-sc", '{"method":"mtp","num_speculative_tokens":1}']),
    ("syntax-len-suffix", "Qwen3-8B", "h100", ["--max-model-len", "32K", "--max-num-batched-tokens", "4k"]),
    ("syntax-kvbytes-suffix", "Qwen3-8B", "h100", ["--kv-cache-memory-bytes", "10G", "--enable-prefix-caching"]),
    ("async-on", "Qwen3-8B", "h100", ["--async-scheduling"]),
    ("async-on-q36-mtp", "Qwen3.6-27B", "rtxpro", ["--async-scheduling", "--max-num-seqs", "64", *MTP(2)]),
    ("rej-len-suffix-bad", "Qwen3-8B", "h100", ["--max-model-len", "1.5K"]),
    # edges the planner had no oracle answer for
    ("edge-len0", "Qwen3-8B", "h100", ["--max-model-len", "0"]),
    ("edge-len-neg", "Qwen3-8B", "h100", ["--max-model-len", "-5"]),
    ("edge-cgsize0", "Qwen3-8B", "h100", ["--cudagraph-capture-sizes", "0", "8"]),
    ("edge-maxcg0", "Qwen3-8B", "h100", ["--max-cudagraph-capture-size", "0"]),
    ("edge-cg-full", "Qwen3-8B", "h100", ["--compilation-config", '{"cudagraph_mode": "FULL"}']),
    ("edge-seqs-over-mbt", "Qwen3-8B", "h100", ["--max-num-seqs", "4096"]),
]
ORACLE_MODELS = ("DeepSeek-V3", "Kimi-K2-Instruct", "Llama-3.1-8B-Instruct", "Llama-3.3-70B-Instruct",
                 "Llama-4-Scout-17B-16E-Instruct", "Mixtral-8x7B-v0.1", "Nemotron-3-Nano-30B-A3B", "Qwen3-30B-A3B",
                 "Qwen3-30B-A3B-FP8", "Qwen3-8B", "Qwen3-Next-80B-A3B-Instruct", "Qwen3.5-35B-A3B", "Qwen3.6-27B",
                 "gpt-oss-120b", "gpt-oss-20b")

# without FlashInfer (the oracle's flashinfer=absent: fixed per process, so a set of its own)
NO_FLASHINFER = [
    ("nofi-qwen3-8b-rtxpro-fp8kv", "Qwen3-8B", "rtxpro", ["--kv-cache-dtype", "fp8"]),
    ("nofi-qwen3-8b-l40s-fp8kv", "Qwen3-8B", "l40s", ["--kv-cache-dtype", "fp8"]),
    ("nofi-qwen3-8b-h100-e5m2", "Qwen3-8B", "h100", ["--kv-cache-dtype", "fp8_e5m2"]),
    ("nofi-llama8b-b200", "Llama-3.1-8B-Instruct", "b200", []),
    ("nofi-gptoss20b-rtxpro", "gpt-oss-20b", "rtxpro", []),
    ("nofi-gptoss20b-b200", "gpt-oss-20b", "b200", []),
    ("nofi-q36-b200", "Qwen3.6-27B", "b200", ["--max-num-seqs", "64"]),
    ("nofi-q36-rtxpro-fp8", "Qwen3.6-27B", "rtxpro", ["--max-num-seqs", "64", "--kv-cache-dtype", "fp8"]),
    ("nofi-dsv3-b200-tp8", "DeepSeek-V3", "b200", ["--tensor-parallel-size", "8"]),
    ("nofi-nemo-a100-fp8kv", "Nemotron-3-Nano-30B-A3B", "a100", ["--kv-cache-dtype", "fp8", "--max-num-seqs", "128"]),
]

# fresh random launches (seed 1): every modelled flag, drawn independently, over the families and GPUs above
RANDOM_MODELS = {
    "Llama-3.1-8B-Instruct": 32, "Qwen3-8B": 32, "Qwen3-30B-A3B": 32, "Qwen3-30B-A3B-FP8": 32,
    "Mixtral-8x7B-v0.1": 32, "Qwen3.6-27B": 24, "Qwen3.5-35B-A3B": 16, "Qwen3-Next-80B-A3B-Instruct": 16,
    "Nemotron-3-Nano-30B-A3B": 32, "gpt-oss-20b": 64, "Llama-4-Scout-17B-16E-Instruct": 40, "DeepSeek-V3": 128,
}
MTP_MODELS = ("Qwen3.6-27B", "Qwen3.5-35B-A3B", "Qwen3-Next-80B-A3B-Instruct", "DeepSeek-V3")
DENSE_MOE = ("Llama-3.1-8B-Instruct", "Qwen3-8B", "Qwen3-30B-A3B", "Qwen3-30B-A3B-FP8", "Mixtral-8x7B-v0.1")


def random_cases(seed: int, count: int) -> list[tuple]:
    import random
    rng = random.Random(seed)
    out = []
    for i in range(count):
        model = rng.choice(sorted(RANDOM_MODELS))
        gpu = rng.choice(sorted(GPUS))
        if model == "DeepSeek-V3":
            gpu = rng.choice(["h100", "h200", "b200"])
        flags: list[str] = []
        heads = RANDOM_MODELS[model]
        tp = rng.choice([t for t in (1, 1, 2, 4, 8) if heads % t == 0 and (model != "DeepSeek-V3" or t == 8)])
        if tp > 1:
            flags += ["--tensor-parallel-size", str(tp)]
        if model in DENSE_MOE and rng.random() < 0.15:
            flags += ["--pipeline-parallel-size", "2"]
        if rng.random() < 0.1:
            flags += ["--data-parallel-size", "2"]
        pick = lambda p, xs: rng.choice(xs) if rng.random() < p else None  # noqa: E731
        for opt, p, xs in (
            ("--max-model-len", 0.5, ["-1", "2048", "4096", "8192", "32768", "16k", "auto", "100000"]),
            ("--max-num-seqs", 0.5, ["1", "3", "17", "64", "100", "256", "512", "700", "1024", "2048"]),
            ("--max-num-batched-tokens", 0.35, ["256", "1000", "2048", "4096", "8192", "16384", "32768"]),
            ("--gpu-memory-utilization", 0.25, ["0.5", "0.8", "0.9", "0.95"]),
            ("--kv-cache-dtype", 0.25, ["fp8", "fp8_e5m2", "bfloat16", "auto"]),
            ("--block-size", 0.15, ["16", "32", "64", "128"]),
            ("--max-cudagraph-capture-size", 0.15, ["8", "64", "100", "300", "1024"]),
            ("--performance-mode", 0.15, ["throughput", "interactivity", "balanced"]),
        ):
            val = pick(p, xs)
            if val is not None:
                flags += [opt, val]
        for opt, p in (("--enforce-eager", 0.12), ("--no-enable-prefix-caching", 0.2),
                       ("--no-enable-chunked-prefill", 0.1), ("--enable-expert-parallel", 0.05),
                       ("--no-enable-extensible-kv-cache", 0.05)):
            if rng.random() < p:
                flags.append(opt)
        if rng.random() < 0.1:
            flags += ["--cudagraph-capture-sizes", *map(str, sorted(rng.sample([1, 2, 4, 8, 16, 24, 32, 48, 64, 128, 256], 4)))]
        if rng.random() < 0.1:
            flags += ["--compilation-config", json.dumps({"cudagraph_mode": rng.choice(
                ["PIECEWISE", "FULL_DECODE_ONLY", "NONE", "FULL_AND_PIECEWISE"])})]
        if rng.random() < 0.08:
            flags += rng.choice([["--kv-cache-memory-bytes", "4G"], ["--num-gpu-blocks-override", "2000"]])
        if model in MTP_MODELS and rng.random() < 0.4:
            flags += MTP(rng.choice([1, 1, 2, 3, 4]))
        out.append((f"rnd{seed}-{i:03d}-{model}-{gpu}", model, gpu, flags))
    return out


# seed 3: the wider draw (more checkpoints, dtype / quantization / offload / long-context override / MTP aliases)
WIDE_MODELS = {**RANDOM_MODELS, "Qwen3.5-9B": 16, "Qwen3-32B": 64, "Qwen3.6-27B-NVFP4": 24, "Nemotron-H-56B-Base-8K": 64,
               "Qwen3.6-35B-A3B": 16, "Llama-3.3-70B-Instruct": 64, "gpt-oss-120b": 64, "Kimi-K2-Instruct": 64}
WIDE_MTP = MTP_MODELS + ("Qwen3.5-9B", "Qwen3.6-27B-NVFP4", "Qwen3.6-35B-A3B")


def wide_random_cases(seed: int, count: int) -> list[tuple]:
    import random
    rng = random.Random(seed)
    base = random_cases(seed, count)
    out = []
    for cid, _model, _gpu, _flags in base:
        model = rng.choice(sorted(WIDE_MODELS))
        gpu = rng.choice(sorted(GPUS))
        if model in ("DeepSeek-V3", "Kimi-K2-Instruct"):
            gpu = rng.choice(["h100", "h200", "b200"])
        heads = WIDE_MODELS[model]
        flags: list[str] = []
        env: dict[str, str] = {}
        tp = rng.choice([t for t in (1, 2, 4, 8) if heads % t == 0
                         and (model not in ("DeepSeek-V3", "Kimi-K2-Instruct") or t == 8)])
        if tp > 1:
            flags += ["--tensor-parallel-size", str(tp)]
        if rng.random() < 0.15:
            flags += ["--data-parallel-size", rng.choice(["2", "4"])]
        if rng.random() < 0.2:
            flags.append("--enable-expert-parallel")
        for opt, p, xs in (
            ("--max-model-len", 0.5, ["-1", "4096", "32768", "128k", "300000", "1M"]),
            ("--max-num-seqs", 0.5, ["2", "48", "128", "333", "1024"]),
            ("--max-num-batched-tokens", 0.3, ["512", "3000", "8192", "65536"]),
            ("--gpu-memory-utilization", 0.2, ["0.6", "0.85", "1.0"]),
            ("--kv-cache-dtype", 0.25, ["fp8", "fp8_e4m3", "fp8_e5m2", "float16"]),
            ("--dtype", 0.15, ["float16", "bfloat16", "auto", "half"]),
            ("--quantization", 0.08, ["fp8"]),
            ("--cpu-offload-gb", 0.08, ["2", "10.5"]),
            ("--block-size", 0.1, ["16", "48", "256"]),
            ("--max-cudagraph-capture-size", 0.12, ["1", "32", "200", "2048"]),
            ("--performance-mode", 0.15, ["throughput", "interactivity"]),
        ):
            if rng.random() < p:
                flags += [opt, rng.choice(xs)]
        for opt, p in (("--enforce-eager", 0.1), ("--no-enable-prefix-caching", 0.2), ("--enable-prefix-caching", 0.05),
                       ("--no-enable-chunked-prefill", 0.08), ("--enable-chunked-prefill", 0.05)):
            if rng.random() < p:
                flags.append(opt)
        if rng.random() < 0.1:
            flags += ["--compilation-config", json.dumps({"cudagraph_mode": rng.choice(
                ["PIECEWISE", "FULL_DECODE_ONLY", "NONE"])})]
        if model in WIDE_MTP and rng.random() < 0.4:
            method = rng.choice(["mtp", "mtp", "qwen3_5_mtp", "deepseek_mtp", "qwen3_next_mtp"])
            flags += ["--speculative-config", json.dumps({"method": method,
                                                          "num_speculative_tokens": rng.choice([1, 2, 3, 5])})]
        if rng.random() < 0.06:
            env["VLLM_ALLOW_LONG_MAX_MODEL_LEN"] = "1"
        if rng.random() < 0.05:
            env["TORCH_COMPILE_DISABLE"] = "1"
        cid = f"rnd{seed}-{cid.split('-')[1]}-{model}-{gpu}"
        out.append((cid, model, gpu, flags, env) if env else (cid, model, gpu, flags))
    return out


def _line(c) -> str:
    cid, model, gpu, flags = c[:4]
    env = c[4] if len(c) > 4 else {}
    extra = c[5] if len(c) > 5 else {}
    nvml, cuda, sm, name = GPUS[gpu]
    where = {"model": model} if model in ORACLE_MODELS else {"config_json": f"models/{model}/config.json"}
    case = {"id": cid, **where, "flags": flags, "gpu_total_mib": nvml, "cuda_total_mib": cuda,
            "gpu_sm": sm, "gpu_name": name, "non_torch_gib": 0.6, "peak_activation_gib": 2.84,
            "cudagraph_gib": 0.89, **extra}
    if env:
        case["env"] = env
    return json.dumps(case)


def main():
    here = Path(__file__).parent
    nofi = [(*c, {}, {"flashinfer": "absent"}) for c in NO_FLASHINFER]
    rnd = random_cases(1, 80) + random_cases(2, 60) + wide_random_cases(3, 100) + wide_random_cases(4, 100) + wide_random_cases(5, 100)
    for name, cases in (("cases.jsonl", CASES), ("random.jsonl", rnd),
                        ("noflashinfer.jsonl", nofi)):
        ids = [c[0] for c in cases]
        assert len(ids) == len(set(ids)), "duplicate case id"
        (here / name).write_text("\n".join(map(_line, cases)) + "\n")
        print(f"{len(cases)} cases -> {here / name}")


if __name__ == "__main__":
    main()
