"""SGLang ``.postN`` releases: a post release uses its base release's rules only where the two wheels
do not differ in any file the rules mirror.

The comparison was run once per post release on PyPI for 0.5.9-0.5.23 (``pip index versions sglang``:
0.5.10.post1, 0.5.12.post1, 0.5.13.post1, 0.5.15.post1) by ``scripts/check_post_releases.py`` and is
recorded in ``post_releases.json`` (files compared, files that differ). An accepted post release says
so; one whose mirrored files differ, or one never compared, is refused by name.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

_HERE = Path(__file__).resolve().parent

# What the rules mirror, relative to sglang/: the files and folders the pipeline reproduces or cites
# (tests/test_refusals.py checks that every srt/ file cited in planner/ is covered).
MIRRORED = (
    "srt/server_args.py", "srt/arg_groups/", "srt/model_executor/", "srt/mem_cache/", "srt/configs/",
    "srt/speculative/", "srt/environ.py", "srt/distributed/utils.py", "srt/layers/attention/attention_registry.py",
    "srt/layers/attention/fla/chunk.py", "srt/layers/linear.py", "srt/managers/tp_worker.py",
    "srt/utils/common.py", "srt/utils/hf_transformers/common.py",
    "srt/layers/quantization/", "srt/model_loader/",  # the quantized-weight models (planner/catalog/quant.py)
    "srt/models/dflash.py", "srt/models/dspark.py", "srt/models/llama_eagle3.py",  # draft heads (catalog/drafts.py)
    "srt/models/qwen2_moe.py", "srt/models/qwen3_moe.py",  # routers built unquantized (catalog/quant_tensors.py)
    "srt/models/minimax_m2.py",  # MiniMax-M2's tensors as SGLang builds them (catalog/quant_tensors.py)
    "srt/models/qwen3_vl.py", "srt/models/qwen3_5.py",  # whether the model keeps its quant config (quant_method.py)
    # --mamba-backend flashinfer and the EAGLE tree's verify metadata (arg_groups/mamba_hook.py mamba_backend_tree)
    "srt/layers/attention/mamba/ops/ssu_dispatch.py", "srt/layers/attention/hybrid_linear_attn_backend.py",
    "srt/models/gpt_oss.py",  # the sliding window the loaded model reports (pipeline/swa.py sliding_window_size)
    # MLA weights: replicated q_a / kv_a projections and routers, the NextN layer (catalog/weights.py, quant_tensors.py);
    # (only the weights read them; 0.5.13.post1's recorded comparison predates them, its sizing files were compared)
    "srt/models/deepseek_v2.py", "srt/models/deepseek_nextn.py",
)
_POST = re.compile(r"^(\d+\.\d+\.\d+)\.post(\d+)$")


def is_mirrored(rel: str) -> bool:
    return any(rel == m or (m.endswith("/") and rel.startswith(m)) for m in MIRRORED)


@lru_cache(maxsize=1)
def recorded() -> dict:
    return json.loads((_HERE / "post_releases.json").read_text(encoding="utf-8"))["releases"]


def post_base(version: str | None) -> str | None:
    """The base release of 'X.Y.Z.postN', else None."""
    m = _POST.match(version or "")
    return m.group(1) if m else None


def resolve_post(version: str, modelled: list[str]) -> tuple[str, str]:
    """(base release, the line that says so) for an accepted post release; raises BadInput naming a refused
    one. ``version`` must be a post release (see :func:`post_base`)."""
    from planner.errors import BadInput  # noqa: PLC0415

    base = post_base(version)
    rec = recorded().get(version)
    known = ", ".join(recorded())
    if rec is None:
        raise BadInput(f"sglang {version}: this release was never compared with {base} in the files the rules "
                       f"mirror, so its rules are not modelled (compared post releases: {known}); modelled: "
                       f"{', '.join(modelled)}")
    if base not in modelled:
        raise BadInput(f"sglang {version}: its base release {base} is not modelled; modelled: {', '.join(modelled)}")
    if not rec["same"]:
        files = rec["differ"] + rec["only_added_or_removed"]
        shown = ", ".join(files[:4]) + (f" and {len(files) - 4} more" if len(files) > 4 else "")
        raise BadInput(f"sglang {version}: its wheel differs from {base} in files the rules mirror ({shown}), so "
                       f"its rules are not modelled; modelled: {', '.join(modelled)}")
    return base, f"{version}: rules of {base}; the wheels do not differ in the mirrored files"
