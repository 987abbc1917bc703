#!/usr/bin/env bash
# Capture the text and --json output (and exit code) of a fixed set of `plan` commands into a folder,
# so a refactor can be shown to change nothing:
#     scripts/compare_outputs.sh /tmp/before     # on the old code
#     scripts/compare_outputs.sh /tmp/after      # on the new code
#     diff -r /tmp/before /tmp/after             # must print nothing
# Run from anywhere; it runs the checkout it lives in (PYTHONPATH = the repo root). PY overrides the
# interpreter (default: python3, or /work/venv/bin/python when present).
set -u
OUT=${1:?usage: scripts/compare_outputs.sh OUTPUT_DIR}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=${PY:-$( [ -x /work/venv/bin/python ] && echo /work/venv/bin/python || echo python3 )}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
cd "$ROOT"
export PYTHONPATH="$ROOT"

n=0
# run NAME ARGS...: text to NAME.txt, --json to NAME.json, each with its exit code (stderr kept too)
run() {
    local name=$1; shift
    n=$((n + 1))
    "$PY" -m planner "$@" >"$OUT/$name.txt" 2>&1; echo "exit $?" >>"$OUT/$name.txt"
    "$PY" -m planner "$@" --json >"$OUT/$name.json" 2>&1; echo "exit $?" >>"$OUT/$name.json"
}

SEED="--speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4"
# the README's commands
run readme-default --gpu rtxpro6000 --model qwen3.6-27b
run readme-seed-full --gpu rtxpro6000 --model qwen3.6-27b --sglang-version 0.5.11 $SEED \
    --mamba-scheduler-strategy extra_buffer --max-mamba-cache-size 24 --mamba-full-memory-ratio 0.4
run readme-seed-0.5.11 --gpu rtxpro6000 --model qwen3.6-27b --sglang-version 0.5.11 --no-search $SEED \
    --mamba-scheduler-strategy extra_buffer
run readme-seed-0.5.23 --gpu rtxpro6000 --model qwen3.6-27b --sglang-version 0.5.23 --no-search $SEED \
    --mamba-radix-cache-strategy extra_buffer
run readme-search-ctx --gpu rtxpro6000 --model qwen3.6-27b --need-context 131072 --need-concurrency 2 --speculative EAGLE
run readme-search-kv --gpu h100 --model qwen3.5-9b --objective kv-tokens --allow-fp8-kv --top 5
run readme-bf16 --gpu rtxpro6000 --model qwen3.6-27b --tp-size 1 --mamba-ssm-dtype bfloat16
run readme-paste --gpu rtxpro6000 -- python -m sglang.launch_server --model-path Qwen/Qwen3.6-27B \
    --speculative-algorithm EAGLE --mamba-scheduler-strategy extra_buffer --max-running-requests 8
run readme-free --gpu h100 --model qwen3.5-27b --free-before-load-gib 78.9 --free-after-load-gib 27.1
run readme-env --gpu b200 --model qwen3.6-27b --env SGLANG_MAMBA_SSM_DTYPE=bfloat16
# more single plans: other models, GPUs, releases and outcomes
run nemotron-b200-0.5.19 --gpu b200 --model nemotron-3-nano-30b-a3b --sglang-version 0.5.19 --no-search \
    --speculative-algorithm EAGLE --speculative-num-steps 2 --speculative-eagle-topk 1
run next-h100-tp2-0.5.9 --gpu h100 --model qwen3-next-80b-a3b --tp-size 2 --sglang-version 0.5.9 --no-search
run llama-l4-0.5.16 --gpu l4 --model llama-3.1-8b-instruct --sglang-version 0.5.16 --no-search --page-size 16
run dense-strategy-0.5.21 --gpu h100 --model llama-3.1-8b-instruct --sglang-version 0.5.21 --no-search \
    --mamba-radix-cache-strategy extra_buffer
run removed-flag-0.5.20 --gpu rtxpro6000 --model qwen3.6-27b --sglang-version 0.5.20 --no-search \
    --mamba-scheduler-strategy extra_buffer
run moe-rtx5090-0.5.13 --gpu rtx5090 --model qwen3.6-35b-a3b --sglang-version 0.5.13 --no-search \
    --kv-cache-dtype fp8_e4m3 --max-running-requests 16
run unified-0.5.19 --gpu rtxpro6000 --model qwen3.6-27b --sglang-version 0.5.19 --no-search --enable-unified-memory \
    --attention-backend triton
run int8-ckpt-0.5.19 --gpu rtxpro6000 --model qwen3.6-27b --sglang-version 0.5.19 --no-search --enable-int8-mamba-checkpoint
run mrr0-0.5.23 --gpu rtxpro6000 --model qwen3.6-27b --sglang-version 0.5.23 --no-search --disable-radix-cache \
    --max-running-requests 0 --disable-cuda-graph --free-before-load-gib 95 --free-after-load-gib 44
run gdn-blackwell-0.5.16 --gpu b200 --model qwen3.6-27b --sglang-version 0.5.16 --no-search --attention-backend flashinfer
run bad-gpu --gpu rtxpro600 --model qwen3.6-27b --no-search
run bad-model --gpu h100 --model qwen3.6-28b --no-search
run bad-version --gpu h100 --model qwen3.6-27b --sglang-version 0.4.0 --no-search

# a --batch file: varied launches across releases (one JSON result per line)
cat >"$OUT/batch.jsonl" <<'JSONL'
{"id": "a", "gpu": "h200", "model": "qwen3.6-27b", "flags": ["--tp-size", "2"], "free_before_gib": 139.5, "free_after_gib": 113.0, "env": {"SGLANG_ENABLE_SPEC_V2": "0"}}
{"id": "b", "gpu": "rtxpro6000", "model": "qwen3.6-27b", "sglang_version": "0.5.9", "flags": ["--speculative-algorithm", "EAGLE", "--mamba-scheduler-strategy", "extra_buffer"]}
{"id": "c", "gpu": "rtxpro6000", "model": "qwen3.6-27b", "sglang_version": "0.5.10", "flags": ["--speculative-algorithm", "EAGLE"], "env": {"SGLANG_ENABLE_SPEC_V2": "1"}}
{"id": "d", "gpu": "h100", "model": "qwen3.5-27b", "sglang_version": "0.5.12", "flags": ["--speculative-algorithm", "nextn", "--max-running-requests", "8"]}
{"id": "e", "gpu": "b200", "model": "qwen3-next-80b-a3b", "sglang_version": "0.5.14", "flags": ["--tp-size", "2", "--speculative-algorithm", "EAGLE"]}
{"id": "f", "gpu": "rtx4090", "model": "qwen3.5-9b", "sglang_version": "0.5.15", "flags": ["--page-size", "16"]}
{"id": "g", "gpu": "rtxpro6000", "model": "qwen3.6-35b-a3b", "sglang_version": "0.5.17", "flags": ["--mamba-radix-cache-strategy", "extra_buffer_lazy", "--speculative-algorithm", "EAGLE"]}
{"id": "h", "gpu": "h100", "model": "nemotron-3-nano-30b-a3b", "sglang_version": "0.5.18", "flags": ["--max-running-requests", "32"]}
{"id": "i", "gpu": "rtx5090", "model": "qwen3.6-27b", "sglang_version": "0.5.20", "flags": ["--kv-cache-dtype", "fp8_e4m3", "--context-length", "65536"]}
{"id": "j", "gpu": "h100", "model": "llama-3.1-8b-instruct", "sglang_version": "0.5.22", "flags": ["--max-running-requests", "64"]}
{"id": "k", "gpu": "b200", "model": "qwen3.6-27b", "sglang_version": "0.5.23", "flags": ["--enable-linear-replayssm"]}
{"id": "l", "gpu": "rtxpro6000", "model": "qwen3.6-27b", "sglang_version": "0.5.21", "flags": ["--mamba-radix-cache-strategy", "no_buffer", "--page-size", "64"]}
{"id": "m", "gpu": "h100", "model": "qwen3.6-27b", "sglang_version": "0.5.19", "flags": ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "2", "--speculative-num-draft-tokens", "6", "--page-size", "16"]}
{"id": "n", "gpu": "rtxpro6000", "model": "qwen3.6-27b", "sglang_version": "0.5.13", "flags": ["--disable-radix-cache", "--mamba-scheduler-strategy", "extra_buffer"]}
JSONL
"$PY" -m planner --batch "$OUT/batch.jsonl" >"$OUT/batch.out" 2>&1; echo "exit $?" >>"$OUT/batch.out"

# every release x a few launches, as JSON (the oracle-schema summary and the whole plan)
for v in 0.5.9 0.5.10 0.5.11 0.5.12 0.5.13 0.5.14 0.5.15 0.5.16 0.5.17 0.5.18 0.5.19 0.5.20 0.5.21 0.5.22 0.5.23; do
    "$PY" -m planner --gpu rtxpro6000 --model qwen3.6-27b --sglang-version "$v" --no-search --json $SEED \
        >"$OUT/release-$v-seed.json" 2>&1; echo "exit $?" >>"$OUT/release-$v-seed.json"
    "$PY" -m planner --gpu h100 --model qwen3.6-35b-a3b --sglang-version "$v" --no-search --json --tp-size 2 \
        >"$OUT/release-$v-moe-tp2.json" 2>&1; echo "exit $?" >>"$OUT/release-$v-moe-tp2.json"
done

# plan check on every log in tests/data/logs
for log in tests/data/logs/*.log; do
    base=$(basename "$log" .log)
    case "$base" in
        *rtx4090*) gpu=rtx4090 ;;
        *rtx5090*) gpu=rtx5090 ;;
        *) gpu=rtxpro6000 ;;
    esac
    "$PY" -m planner check "$log" --gpu "$gpu" >"$OUT/check-$base.txt" 2>&1; echo "exit $?" >>"$OUT/check-$base.txt"
    "$PY" -m planner check "$log" --gpu "$gpu" --json >"$OUT/check-$base.json" 2>&1; echo "exit $?" >>"$OUT/check-$base.json"
done
"$PY" -m planner check tests/data/logs/synthetic-0.5.11-tp1-spec.log --gpu rtxpro6000 --max-running-requests 8 \
    >"$OUT/check-spec-mrr8.txt" 2>&1; echo "exit $?" >>"$OUT/check-spec-mrr8.txt"
echo "$(ls "$OUT" | wc -l) files in $OUT"
