"""Write the notebooks from plain Python cell sources (so diffs stay readable).

    python notebooks/make_notebooks.py

The test suite executes every notebook (tests/test_notebooks.py), so they cannot rot.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).parent

WHAT_IF = [
    new_markdown_cell(
        "# What if: `--max-running-requests` for the seed case\n\n"
        "Qwen3.6-27B with EAGLE (3 steps, 4 draft tokens) and `--mamba-scheduler-strategy extra_buffer` on one "
        "RTX PRO 6000 Blackwell, SGLang 0.5.11 rules. Under speculative decoding SGLang reserves "
        "`mamba state per request x max_running_requests x draft tokens` before it sizes anything else, so this "
        "flag trades KV cache for concurrency. The sweep uses only the package's public API."),
    new_code_cell(
        "import planner\n"
        "import matplotlib\n"
        "matplotlib.use('Agg')\n"
        "import matplotlib.pyplot as plt\n\n"
        "SEED = ('--speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 1 '\n"
        "        '--speculative-num-draft-tokens 4 --mamba-scheduler-strategy extra_buffer')\n"
        "rows = []\n"
        "for r in [1, 2, 4, 6, 8, 12, 16, 24, 32, 40, 48]:\n"
        "    p = planner.plan('rtxpro6000', 'qwen3.6-27b', f'{SEED} --max-running-requests {r}', sglang_version='0.5.11')\n"
        "    s = planner.summary(p)\n"
        "    rows.append((r, p.verdict, s['max_running_requests'], s['max_total_num_tokens'],\n"
        "                 s['spec_reserved_bytes'] / 2**30))\n"
        "for row in rows:\n"
        "    print('R_args=%3d  %-8s running=%-4s KV tokens=%-9s reservation=%.2f GiB' % row)"),
    new_code_cell(
        "ok = [r for r in rows if r[2] is not None]\n"
        "fig, ax1 = plt.subplots(figsize=(7, 4))\n"
        "ax1.plot([r[0] for r in ok], [r[3] for r in ok], 'o-', label='KV tokens')\n"
        "ax1.set_xlabel('--max-running-requests')\n"
        "ax1.set_ylabel('KV cache tokens')\n"
        "ax2 = ax1.twinx()\n"
        "ax2.plot([r[0] for r in ok], [r[2] for r in ok], 's--', color='tab:red', label='running requests')\n"
        "ax2.set_ylabel('max running requests (resolved)')\n"
        "ax1.set_title('Qwen3.6-27B + EAGLE on RTX PRO 6000 (SGLang 0.5.11)')\n"
        "fig.tight_layout()\n"
        "assert all(a[3] >= b[3] for a, b in zip(ok, ok[1:])), 'a larger reservation cannot add KV tokens'"),
    new_markdown_cell(
        "Reading the plot: every extra unit of `--max-running-requests` reserves 4 x 146.8 MiB of intermediate "
        "state, so KV tokens fall linearly; the resolved running requests stop growing once the mamba slots "
        "(`max_mamba_cache_size // 5` with extra_buffer and overlap) bind. At 48 (the default under speculative "
        "decoding) the server does not boot at all."),
    new_markdown_cell(
        "## The same launch under every modelled SGLang release\n\n"
        "Between releases SGLang moved the speculative reservation inside the mamba share (0.5.13), loaded the "
        "draft before sizing and made `auto` mean extra_buffer (0.5.14), charged the pools' padding rows (0.5.17), "
        "kept 100 MiB of the KV budget for multimodal models (0.5.18) and renamed the strategy flag (the old name is "
        "gone from 0.5.20). The seed launch with default `--max-running-requests`, release by release:"),
    new_code_cell(
        "from planner.engines.sglang.rules import RULES\n\n"
        "def seed_flags(v):\n"
        "    new_name = tuple(int(x) for x in v.split('.')) >= (0, 5, 14)\n"
        "    name = '--mamba-radix-cache-strategy' if new_name else '--mamba-scheduler-strategy'\n"
        "    return SEED.replace('--mamba-scheduler-strategy', name)\n\n"
        "per_release = []\n"
        "for v in RULES:\n"
        "    p = planner.plan('rtxpro6000', 'qwen3.6-27b', seed_flags(v), sglang_version=v)\n"
        "    s = planner.summary(p)\n"
        "    per_release.append((v, s['outcome'], s['max_total_num_tokens'], s['max_running_requests'], s['max_mamba_cache_size']))\n"
        "    print('%-7s %-15s KV tokens=%-8s running=%-4s mamba slots=%s' % per_release[-1])\n"
        "outcomes = dict((v, outcome) for v, outcome, *_ in per_release)\n"
        "assert outcomes['0.5.11'] == 'startup_failed' and outcomes['0.5.23'] == 'ok'"),
]


VALIDATION = [
    new_markdown_cell(
        "# Validation: the planner against real and synthetic SGLang boot logs\n\n"
        "Each log in `tests/data/logs/` is checked with `planner.check_log`: the planner re-plans with the log's "
        "flags and the free memory it measured, and every pool SGLang logged is put next to the prediction. "
        "SGLang prints GiB with two decimals (and calls it GB). The real excerpts come from public GitHub issues "
        "(sources in each file's header)."),
    new_code_cell(
        "from pathlib import Path\n"
        "import planner\n"
        "import matplotlib\n"
        "matplotlib.use('Agg')\n"
        "import matplotlib.pyplot as plt\n\n"
        "LOGS = Path('..') / 'tests' / 'data' / 'logs'\n"
        "CASES = [\n"
        "    # (file, gpu, model, flags as launched: from the log header when the log has no ServerArgs dump)\n"
        "    ('sglang-0.5.9-qwen3.5-397b-tp2-rtx4090.log', 'rtx4090', 'qwen3.5-397b-a17b',\n"
        "     '--tp-size 2 --mem-fraction-static 0.85 --context-length 8192 --quantization fp8 --cpu-offload-gb 400 '\n"
        "     '--max-running-requests 1 --chunked-prefill-size 2048 --attention-backend flashinfer --disable-cuda-graph'),\n"
        "    ('synthetic-0.5.11-tp1-spec.log', 'rtxpro6000', None, ''),\n"
        "    ('synthetic-0.5.11-not-enough-memory.log', 'rtxpro6000', None, ''),\n"
        "    ('sglang-tp2-rtx5090-draft-kv.log', 'rtx5090', 'qwen3.6-27b', '--tp-size 2 --kv-cache-dtype fp8_e4m3'),\n"
        "]\n"
        "results = {}\n"
        "for name, gpu, model, flags in CASES:\n"
        "    res = planner.check_log(str(LOGS / name), gpu, model, flags)\n"
        "    results[name] = res\n"
        "    print(f'== {name}: {len(res.stale)} stale warning(s); outcome in log: '\n"
        "          f'{res.launch.outcome if res.launch else None}')\n"
        "    for note in res.notes:\n"
        "        print('   note:', note)\n"
        "    for r in res.rows:\n"
        "        print(f'   {r.what:<36} predicted={r.predicted!s:<22} actual={r.actual!s:<10} agrees={r.agrees}')"),
    new_code_cell(
        "pairs = [(name, r) for name, res in results.items() for r in res.rows\n"
        "         if r.unit == 'GiB' and r.predicted is not None and r.actual is not None]\n"
        "fig, ax = plt.subplots(figsize=(6, 6))\n"
        "for name in results:\n"
        "    xs = [r.actual for n, r in pairs if n == name]\n"
        "    ys = [r.predicted for n, r in pairs if n == name]\n"
        "    if xs:\n"
        "        ax.scatter(xs, ys, label=name.split('.log')[0][:32])\n"
        "top = max(max(r.actual, r.predicted) for _, r in pairs) * 1.05\n"
        "ax.plot([0, top], [0, top], 'k--', linewidth=0.8)\n"
        "ax.set_xlabel('actual (GiB, from the log)')\n"
        "ax.set_ylabel('predicted (GiB)')\n"
        "ax.legend(fontsize=7)\n"
        "agree = sum(1 for _, r in pairs if r.agrees)\n"
        "print(f'{agree}/{len(pairs)} pool sizes agree within the log rounding')\n"
        "# every pool the planner sizes is within 1 % (or 0.02 GiB) of the log; 'Memory pool end' also holds\n"
        "# allocations the pools do not include (RoPE cache growth, offload buffers), so it is shown, not asserted\n"
        "pools = [r for _, r in pairs if r.what != 'Memory pool end avail']\n"
        "assert all(abs(r.diff) <= max(0.02, 0.01 * r.actual) for r in pools), [(r.what, r.diff) for r in pools]"),
]


def write(name: str, cells) -> None:
    nb = new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                             "language": "python"}})
    nbformat.write(nb, HERE / name)


if __name__ == "__main__":
    write("what-if.ipynb", WHAT_IF)
    write("validation.ipynb", VALIDATION)
