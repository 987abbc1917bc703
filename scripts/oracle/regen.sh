#!/bin/bash
# Regenerate the SGLang 0.5.11 golden files in tests/golden/sglang-0.5.11/ from SGLang's own code,
# through the sizing oracle (see tests/golden/sglang-0.5.11/README.md).
#
#   bash scripts/oracle/regen.sh
#
# Environment (all optional):
#   PY                   oracle venv python  (default ~/.cache/sglang-oracle/0.5.11/venv/bin/python)
#   ORACLE               oracle checkout     (default /work/shared/tools/sglang-oracle)
#   OUT                  output directory    (default <repo>/tests/golden/sglang-0.5.11)
#   SEED, COUNT          random set          (default 1, 150)
#   SGLANG_ORACLE_CACHE  where the oracle copies config.json files; it appears in each result's
#                        inputs.sglang_argv, so it is pinned here to keep results machine-independent
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
PY=${PY:-$HOME/.cache/sglang-oracle/0.5.11/venv/bin/python}
ORACLE=${ORACLE:-/work/shared/tools/sglang-oracle}
OUT=${OUT:-$REPO/tests/golden/sglang-0.5.11}
SEED=${SEED:-1}
COUNT=${COUNT:-150}
export SGLANG_ORACLE_CACHE=${SGLANG_ORACLE_CACHE:-/tmp/sglang-oracle-cache}
GEN="python3 $REPO/scripts/oracle/make_cases.py"
FILTER="python3 $REPO/scripts/oracle/filter_results.py"

mkdir -p "$OUT"
# staging files live in $OUT itself: config_json paths are relative to the cases file
trap 'rm -f "$OUT"/.stage.*' EXIT

run_set() {  # cases-basename results-basename generator-args...
  local cases=$1 results=$2; shift 2
  # --with-bootstrap: first line has an empty env (works around the oracle leaking the first case's
  # env into the whole batch); filter_results.py removes it again
  $GEN "$@" --with-bootstrap --out "$OUT/.stage.$cases.jsonl"
  # exit code 3 = some oracle_error/input_error: those are dropped by the filter below
  "$PY" "$ORACLE/oracle.py" --batch "$OUT/.stage.$cases.jsonl" --summary-only \
      > "$OUT/.stage.$results.jsonl" || [ $? -eq 3 ]
  $FILTER --cases "$OUT/.stage.$cases.jsonl" --results "$OUT/.stage.$results.jsonl" \
      --cases-out "$OUT/$cases.jsonl" --results-out "$OUT/$results.jsonl"
}

run_set cases results --curated
run_set random random_results --seed "$SEED" --count "$COUNT"
echo "regen: done -> $OUT"
