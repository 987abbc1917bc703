#!/bin/bash
# Make a working copy of the sglang-oracle with this repository's extra adapters in versions/.
#
#   bash scripts/oracle/oracle_copy.sh DIR      # default DIR: /tmp/sglang-oracle-adapted
#
# The shared oracle (/work/shared/tools/sglang-oracle, or $ORACLE) ships adapters for 0.5.11 and 0.5.16.
# scripts/oracle/adapters/ adds every other release 0.5.9-0.5.23: stand-ins only, SGLang's own code decides
# every number (see scripts/oracle/adapters/README*.md). The copy is what the golden
# regeneration commands in tests/golden/sglang-0.5.1{8,9}/README.md pass as --oracle.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
SRC=${ORACLE:-/work/shared/tools/sglang-oracle}
DIR=${1:-/tmp/sglang-oracle-adapted}
rm -rf "$DIR"
cp -r "$SRC" "$DIR"
# a repo adapter that extends the shared oracle's own one for its release imports it as versions/shared_<name>
for f in "$REPO"/scripts/oracle/adapters/v0_5_*.py; do
    b=$(basename "$f"); [ -e "$DIR/versions/$b" ] && cp "$DIR/versions/$b" "$DIR/versions/shared_$b"
done
cp "$REPO"/scripts/oracle/adapters/v0_5_*.py "$REPO"/scripts/oracle/adapters/standins.py \
   "$REPO"/scripts/oracle/adapters/pp_stage.py "$DIR/versions/"
# 0.5.9 ships no _triton_stub.py: the shim falls back to a verbatim copy of 0.5.10's (3 lines changed)
cp "$REPO"/scripts/oracle/adapters/shim/* "$DIR/shim/"
echo "$DIR"
