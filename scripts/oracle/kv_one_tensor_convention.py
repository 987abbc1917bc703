"""Put a 0.5.23 oracle summary into the K/V convention of the committed golden sets.

SGLang 0.5.23 allocates K and V as one tensor per layer (the v_buffer is a view of the k_buffer). The
shared oracle's ``pool_bytes_for_summary`` now moves the V half of that tensor onto ``pool_*kv_v_bytes``
(oracle.py: "the v half is moved to v (the total is unchanged)"); the golden sets of this repository
(tests/golden/sglang-0.5.23/, made before that change) and the planner file the whole tensor under
``pool_*kv_k_bytes`` with v = 0. This filter applies the committed convention: k += v, v = 0, for the
target and the draft pool; every total is unchanged. Reads results.jsonl lines on stdin, writes them out.
"""

import json
import sys

for line in sys.stdin:
    if not line.strip():
        continue
    r = json.loads(line)
    s = r.get("summary") or {}
    for side in ("pool_kv", "pool_draft_kv"):
        k, v = f"{side}_k_bytes", f"{side}_v_bytes"
        if isinstance(s.get(k), int) and isinstance(s.get(v), int):
            s[k], s[v] = s[k] + s[v], 0
    r.pop("elapsed_s", None)
    print(json.dumps(r))
