"""python -m planner.schema --write: regenerate the shipped schema files from planner.schema.build."""

import sys

from planner.schema import write

if sys.argv[1:] != ["--write"]:
    sys.exit("usage: python -m planner.schema --write")
for p in write():
    print(f"wrote {p}")
