"""Expert parallel: ``--ep-size E`` and the MoE all-to-all backends (``--moe-a2a-backend``), as SGLang sizes them.

Verified against SGLang's own code (tests/golden/dp_ep/) on 0.5.16 and 0.5.23 for MLA models (DeepSeek-V3 / R1,
Kimi-K2); every other combination is refused by name.
"""

from __future__ import annotations

from typing import Any

VERIFIED = ("0.5.16", "0.5.23")


def ep_refusal(raw: dict[str, Any], model, version: str) -> str | None:
    """--ep-size E (--moe-a2a-backend none): the experts are sharded E ways and each shard TP-split tp // E ways
    (moe_tp_size = tp // ep // moe_dp, srt/server_args.py:5567-5580 @0.5.16), so each GPU holds the same expert
    bytes as the plain 1/tp split, and SGLang's sizing does not read the width (tests/golden/dp_ep: equal
    summaries with and without --ep-size). Verified for MLA models on 0.5.16 / 0.5.23 only."""
    ep = int(raw.get("ep_size") or raw.get("expert_parallel_size") or 1)
    if ep <= 1:
        return None
    if version not in VERIFIED:
        return (f"--ep-size {ep}: expert parallelism on SGLang {version} is not modelled yet; modelled: "
                f"{', '.join(VERIFIED)}")
    if model.mla is None or model.mla.dsa:
        return (f"--ep-size {ep}: expert parallelism for {model.name} is not modelled yet; modelled: MLA models "
                "without the DSA indexer (DeepSeek-V3 / R1, Kimi-K2)")
    return None
