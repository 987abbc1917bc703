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
        "    p = planner.plan('rtxpro6000', 'qwen3.6-27b', f'{SEED} --max-running-requests {r}')\n"
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
]


def write(name: str, cells) -> None:
    nb = new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                             "language": "python"}})
    nbformat.write(nb, HERE / name)


if __name__ == "__main__":
    write("what-if.ipynb", WHAT_IF)
