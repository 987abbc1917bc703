"""What differs between SGLang releases, as switches on one shared pipeline.

Each supported release maps to a :class:`Rules` value. The pipeline in ``v0_5_11/`` is written
against 0.5.11 (its citations say ``@0.5.11``); every switch below names the release where the
behaviour changed and the source line in that release. Releases whose rules have not been checked
against their own code are not offered: ``--sglang-version`` then says so instead of guessing.

Sources: the released wheels (``pip download --no-deps sglang==X``), read at the cited lines, and
``shared/reference/sglang-versions.md`` as the map. 0.5.11 and 0.5.16 are also checked field by
field against SGLang's own code run by the sglang-oracle (tests/golden/sglang-0.5.11, -0.5.12, -0.5.16).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import metadata


@dataclass(frozen=True)
class Rules:
    version: str
    flags: str  # flags/<this>.json: the release's own argparse
    # 0.5.14 renamed --mamba-scheduler-strategy -> --mamba-radix-cache-strategy and
    # --cuda-graph-max-bs -> --cuda-graph-max-bs-decode (old names kept as deprecated aliases
    # until 0.5.20): srt/server_args.py:6350-6359 @0.5.14
    strategy_key: str = "mamba_scheduler_strategy"
    graph_max_bs_key: str = "cuda_graph_max_bs"
    graph_bs_key: str = "cuda_graph_bs"
    # 0.5.14+: `auto` resolves to extra_buffer when overlap is on or page_size > 1 and the arch
    # supports it (srt/arg_groups/overrides.py:1159-1200 @0.5.16); before: auto -> no_buffer
    # (srt/server_args.py:1079-1082 @0.5.11)
    auto_extra_buffer: bool = False
    # 0.5.14+: CudaGraphConfig with a prefill backend (breakable on CUDA since 0.5.15) and
    # reserve_for_graph_mb; no speculative term in the mem_fraction heuristic
    # (srt/server_args.py:3572-3700, 3900-4210 @0.5.16)
    cuda_graph_config: bool = False
    # SGLANG_ENABLE_SPEC_V2 decides overlap under EAGLE (srt/server_args.py:3461-3473 @0.5.11);
    # removed in 0.5.14 (srt/arg_groups/speculative_hook.py:495-520 @0.5.16 keeps overlap)
    spec_v2_env: bool = True
    # how handle_max_mamba_cache charges speculative intermediates:
    # "classic": S x R_args x D before the ratio split (…kv_cache_mixin.py:72-131 @0.5.11)
    # "joint": inside the mamba share, S x min(R_args, M // ratio) x D
    #          (srt/mem_cache/kv_cache_configurator.py:1703-1814 @0.5.16)
    mamba_solve: str = "classic"
    # a user --max-running-requests is capped by the token estimate (…kv_cache_mixin.py:698-717 @0.5.11)
    # or only by tokens // 2 (srt/mem_cache/kv_cache_configurator.py:1622-1659 @0.5.16)
    cap_running_by_estimate: bool = True
    # 0.5.13+: RuntimeErrors for M <= 0 and for no servable request
    # (kv_cache_configurator.py:1645-1654, 1793-1804 @0.5.16)
    zero_checks: bool = False
    # 0.5.14+: ValueError when the loaded weights leave nothing (kv_cache_configurator.py:1549-1568 @0.5.16)
    weights_check: bool = False
    # 0.5.17+: the pools' padding rows are charged: (M + 1) x S and (min(R, M // ratio) + 1) x D x S,
    # and the joint solve subtracts them first (srt/mem_cache/kv_cache_configurator.py:2210-2355 @0.5.19)
    padding_slots: bool = False
    # 0.5.17+: SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK lowers the base ratio by one (no_buffer keeps 3)
    # (srt/mem_cache/kv_cache_configurator.py:2045-2073 @0.5.19)
    skip_decode_lock_env: bool = False
    # 0.5.17+: extra_buffer_lazy is allowed with speculative decoding
    lazy_with_spec: bool = False
    # 0.5.18+: a multimodal model keeps SGLANG_VLM_CACHE_SIZE_MB of the KV budget
    # (srt/mem_cache/kv_cache_configurator.py:132-152 @0.5.19)
    mm_kv_reserve: bool = False
    # 0.5.14+: the conv window of the speculative intermediates is deduplicated: one
    # (D + K - 1) window instead of D windows of K - 1 (srt/mem_cache/memory_pool.py:380-410, 660-705 @0.5.16)
    conv_window_dedup: bool = False
    # ping-pong track mapping dtype: int32 (memory_pool.py:547-560 @0.5.11), int64 (memory_pool.py:1212-1219 @0.5.16)
    pingpong_bytes: int = 4
    # ReqToTokenPool.req_generation, int64 (R+1,) (srt/mem_cache/memory_pool.py:271 @0.5.16)
    req_generation: bool = False
    # req_to_token row headroom under spec with page > 1: max(4 + D, 2 x alloc_len + page - 1)
    # (srt/mem_cache/allocation_sizing.py:46-62 @0.5.16); before: 4 + D (…kv_cache_mixin.py:199-203 @0.5.11)
    req_to_token_page_headroom: bool = False
    # 0.5.12+: --speculative-algorithm is a free string, upper-cased and looked up in a registry;
    # an unknown name is a ValueError (srt/server_args.py _handle_speculative_decoding @0.5.12,
    # srt/speculative/spec_info.py:47-60 @0.5.16)
    spec_algo_registry: bool = False
    # 0.5.14+: draft weights load before the target's pools are sized (free-after-load includes them)
    draft_weights_before_sizing: bool = False
    # 0.5.14+: with an EAGLE/EAGLE3/STANDALONE draft path the target cell pays for the draft's KV:
    # cell += int(cell x draft_layers / full_layers) (srt/model_executor/pool_configurator.py:259-314 @0.5.16)
    draft_layers_in_cell: bool = False


RULES: dict[str, Rules] = {
    "0.5.11": Rules(version="0.5.11", flags="v0_5_11"),
    # 0.5.12: the sizing code is 0.5.11's (kv_cache_mixin, pool_configurator, memory_pool unchanged for
    # these models); the speculative algorithm became a registry lookup.
    "0.5.12": Rules(version="0.5.12", flags="v0_5_12", spec_algo_registry=True),
    "0.5.16": Rules(
        version="0.5.16", flags="v0_5_16", strategy_key="mamba_radix_cache_strategy",
        graph_max_bs_key="cuda_graph_max_bs_decode", graph_bs_key="cuda_graph_bs_decode",
        auto_extra_buffer=True, cuda_graph_config=True, spec_v2_env=False, mamba_solve="joint",
        cap_running_by_estimate=False, zero_checks=True, weights_check=True, conv_window_dedup=True, pingpong_bytes=8, req_generation=True,
        req_to_token_page_headroom=True,
        draft_weights_before_sizing=True, draft_layers_in_cell=True, spec_algo_registry=True,
    ),
}
# Releases whose argparse the planner has (flags/*.json) but whose sizing rules are not modelled yet.
KNOWN = tuple(f"0.5.{n}" for n in range(9, 24))
LATEST = "0.5.16"


def installed_sglang() -> str | None:
    """The version of an sglang installed beside the planner, from package metadata (never imported)."""
    try:
        return metadata.version("sglang")
    except metadata.PackageNotFoundError:
        return None


def default_version() -> tuple[str, str]:
    """(version, why): the installed sglang's when it is modelled, else the latest modelled."""
    inst = installed_sglang()
    if inst in RULES:
        return inst, f"the sglang {inst} installed here"
    if inst:
        return LATEST, f"sglang {inst} is installed but its rules are not modelled; using {LATEST}"
    return LATEST, f"no sglang installed here; the latest modelled release ({LATEST})"


def rules_for(version: str) -> Rules:
    from planner.errors import BadInput  # noqa: PLC0415

    if version in RULES:
        return RULES[version]
    if version in KNOWN:
        raise BadInput(f"--sglang-version {version}: its flags are known but its sizing rules are not modelled "
                       f"yet; modelled: {', '.join(RULES)}")
    raise BadInput(f"--sglang-version: unknown release '{version}'; modelled: {', '.join(RULES)}")


# What each switch means for a user, to say what changed between two releases.
_CHANGES = {
    "strategy_key": "--mamba-scheduler-strategy became --mamba-radix-cache-strategy (old name an alias until 0.5.20)",
    "auto_extra_buffer": "the default strategy 'auto' means extra_buffer when overlap is on (5 mamba slots per "
                         "running request instead of 3)",
    "cuda_graph_config": "mem_fraction_static no longer adds 4 GiB for speculative decoding, and counts the prefill "
                         "CUDA graph",
    "spec_v2_env": "SGLANG_ENABLE_SPEC_V2 is gone: EAGLE keeps the overlap schedule (also with topk > 1)",
    "mamba_solve": "the speculative intermediate states are reserved inside the mamba share, for "
                   "min(max_running_requests, M // ratio) requests instead of max_running_requests (48 by default)",
    "cap_running_by_estimate": "a --max-running-requests above the KV-based estimate is no longer cut to it",
    "zero_checks": "new startup errors when the mamba cache or the servable requests come out empty",
    "weights_check": "a new startup error when the loaded weights leave no KV budget",
    "padding_slots": "the pools' padding rows are charged: (M + 1) mamba states and (R + 1) x D intermediates",
    "mm_kv_reserve": "multimodal models keep 100 MiB of the KV budget for the embedding cache",
    "conv_window_dedup": "the speculative conv window is stored once per request (D + K - 1) instead of D times",
    "draft_weights_before_sizing": "draft weights load before the pools are sized (they count against the budget)",
    "draft_layers_in_cell": "an EAGLE draft path adds the draft's KV layers to the per-token cell",
}


_RELEVANT = {  # which plans a change can matter to: "mamba" (hybrid model), "spec", "mrr" (flag given)
    "strategy_key": {"mamba"}, "auto_extra_buffer": {"mamba"}, "mamba_solve": {"mamba+spec"},
    "spec_v2_env": {"spec"}, "zero_checks": {"mamba"}, "padding_slots": {"mamba"}, "conv_window_dedup": {"mamba+spec"},
    "draft_weights_before_sizing": {"spec"}, "draft_layers_in_cell": {"draft"}, "cap_running_by_estimate": {"mrr"},
}


def changes_between(old: str, new: str, context: set[str] | None = None) -> list[str]:
    """The user-visible rule changes from release ``old`` to ``new`` (both modelled), optionally only
    those relevant to a plan with the given traits ("mamba", "spec", "mamba+spec", "mrr", "draft")."""
    a, b = RULES[old], RULES[new]
    out = []
    for key, text in _CHANGES.items():
        if getattr(a, key) == getattr(b, key):
            continue
        need = _RELEVANT.get(key)
        if context is not None and need and not (need & context):
            continue
        out.append(text)
    return out
