"""Undo the retired K/V convention of the committed SGLang 0.5.23 golden sets: K and V as SGLang reports them.

SGLang 0.5.23 allocates equal K and V rows as the two halves of one (2, rows, heads, dim) tensor per layer
(srt/mem_cache/memory_pool.py:2630-2645 @0.5.23) but still reports them apart: ``get_kv_size_bytes`` sizes the
``k_buffer`` and ``v_buffer`` views, ``buf[0, :rows]`` and ``buf[1, :rows]`` (:2753-2767), and the boot log
prints "K size: X GB, V size: Y GB" (:2082-2091). The shared oracle reports the same split (its
``pool_bytes_for_summary`` moves the V half onto ``pool_*kv_v_bytes``). The golden sets were first committed
with the whole tensor under ``pool_*kv_k_bytes`` and v = 0 (the retired ``kv_one_tensor_convention.py``:
k += v, v = 0). This filter gives each such pool back its two halves as SGLang's code sizes them: rows =
max_total_num_tokens + page_size are whole pages (the token count is floored to pages,
srt/model_executor/pool_configurator.py:646-652 @0.5.23), so ``padded == rows`` and K = V = k_sum / 2 exactly;
a sum that is not 2 x rows x (whole bytes per row) is an error, never guessed. Totals are unchanged.

    python3 scripts/oracle/kv_one_tensor_split.py FILE.jsonl ...   # rewrites each file in place
    python3 scripts/oracle/kv_one_tensor_split.py < in.jsonl > out.jsonl
"""

import json
import sys


def split(summary: dict) -> int:
    """Split the target and draft pools of one 0.5.23 summary in place; how many pools were split."""
    if summary.get("sglang_version") != "0.5.23":
        return 0
    n = 0
    rows = (summary.get("max_total_num_tokens") or 0) + (summary.get("page_size") or 0)
    for side in ("pool_kv", "pool_draft_kv"):
        k, v = f"{side}_k_bytes", f"{side}_v_bytes"
        if isinstance(summary.get(k), int) and summary[k] > 0 and summary.get(v) == 0:
            total = summary[k]
            if rows <= 0 or total % (2 * rows):
                raise SystemExit(f"{side}: {total} B is not two equal halves of {rows} rows; not split")
            summary[k], summary[v] = total // 2, total // 2
            n += 1
    return n


def convert(lines):
    out, n = [], 0
    for line in lines:
        if not line.strip():
            continue
        r = json.loads(line)
        n += split(r.get("summary") or {})
        out.append(json.dumps(r))
    return out, n


def main(argv) -> int:
    if not argv:
        out, n = convert(sys.stdin)
        sys.stdout.write("".join(x + "\n" for x in out))
        print(f"split {n} pools", file=sys.stderr)
        return 0
    for path in argv:
        with open(path) as f:
            out, n = convert(f)
        with open(path, "w") as f:
            f.write("".join(x + "\n" for x in out))
        print(f"{path}: {len(out)} results, {n} pools split", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
