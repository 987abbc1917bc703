"""The environment variables a launch sets, against what the release's code reads and what the planner models.

One place for the list the planner knows per release (``env_names.json``, written by
``scripts/dump_sglang_env.py`` from each release's wheel: every ``SGLANG_*`` / ``SGL_*`` name in its code or in
``srt/environ.py``'s ``Envs``, and every other name it reads through ``os.environ`` / ``os.getenv``), and of what
the planner does with each name:

* :data:`MODELLED`: read by the pipeline and sized with (where the release reads it);
* :data:`REFUSED`: a memory effect the planner does not model: set to anything but SGLang's default, the plan
  stops with one line and exit 2 (:func:`env_refusal`, called where the flags' refusals are);
* :data:`NO_EFFECT`: read by SGLang, no effect on the memory sized at startup (why, per name);
* any other name the release reads: a note that its effect is not modelled (the plan assumes none);
* a name the release does not read: a note that it is ignored, with the near match and the releases that read it.
"""

from __future__ import annotations

import difflib
import json
from functools import lru_cache
from pathlib import Path
from planner.engines.sglang.rules import version_key

_HERE = Path(__file__).resolve().parent

#: name -> where the planner uses it
MODELLED: dict[str, str] = {
    "SGLANG_MAMBA_SSM_DTYPE": "the mamba SSM state dtype (pipeline/mamba.py)",
    "SGLANG_MAMBA_CONV_DTYPE": "the mamba conv state dtype (pipeline/mamba.py)",
    "SGLANG_ENABLE_SPEC_V2": "spec v1 / v2 and the overlap schedule under EAGLE (arg_groups/speculative_hook.py)",
    "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN": "a --context-length above the model's (arg_groups/model_hook.py)",
    "SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK": "the mamba slots per request, 0.5.17+ (pipeline/memory_profile.py)",
    "SGLANG_VLM_CACHE_SIZE_MB": "the multimodal KV reserve, 0.5.18+ (pipeline/memory_profile.py)",
    "SGLANG_MM_FEATURE_CACHE_MB": "the multimodal feature-cache reserve (pipeline/memory_profile.py)",
    "SGLANG_RAGGED_VERIFY_MODE": "the DSpark confidence head (pipeline/dflash.py)",
    "SGLANG_ENABLE_POST_CAPTURE_KV_SIZING": "post-capture KV sizing, 0.5.16-0.5.23, each release's own gate and "
                                            "floors (pipeline/post_capture.py)",
    "SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK": "DeepEP's low-latency buffer size (pipeline/expert_parallel.py)",
}

#: name -> the last release whose rules use it (the planner's switches; later releases may still read it elsewhere)
MODELLED_UNTIL = {"SGLANG_ENABLE_SPEC_V2": "0.5.13"}  # from 0.5.14 the rules keep overlap whatever it says (rules/v0_5_14.py)


def modelled(name: str, version: str) -> bool:
    """Whether the planner's rules for ``version`` use ``name`` (and the release reads it)."""
    until = MODELLED_UNTIL.get(name)
    return name in MODELLED and reads(name, version) and (until is None or version_key(version) <= version_key(until))


#: name -> (the values that are SGLang's default, lower case; what it changes that the planner does not model)
REFUSED: dict[str, tuple[frozenset[str], str]] = {
    "SGLANG_FLASHINFER_WORKSPACE_SIZE": (frozenset({str(384 << 20)}), "the FlashInfer workspace size: the planner "
                                         "charges SGLang's 384 / 512 MiB (srt/environ.py:364 @0.5.11)"),
    "SGLANG_SPEC_EXPANSION_SAFETY_FACTOR": (frozenset({"2"}), "the RoPE cache length (utils/common.py:3915-3952 @0.5.11)"),
    "SGLANG_ROPE_CACHE_SAFETY_MARGIN": (frozenset({"256"}), "the RoPE cache length (utils/common.py:3915-3952 @0.5.11)"),
    "SGLANG_ROPE_CACHE_ALIGN": (frozenset({"128"}), "the RoPE cache length (utils/common.py:3915-3952 @0.5.11)"),
    "SGLANG_SYMM_MEM_PREALLOC_GB_SIZE": (frozenset({"-1"}), "a symmetric-memory preallocation "
                                         "(srt/server_args.py:1490-1495 @0.5.11)"),
    "SGLANG_DISAGGREGATION_NUM_PRE_ALLOCATE_REQS": (frozenset({"0"}), "extra request slots of a PD decode server, "
                                                    "which enlarge req_to_token and the mamba pool"),
    "SGLANG_MOONCAKE_CUSTOM_MEM_POOL": (frozenset({"none", ""}), "the pools in a custom memory pool (disaggregation)"),
}

#: name -> why it does not change the memory sized at startup
NO_EFFECT: dict[str, str] = {
    "SGLANG_LOG_MS": "log format only",
    "SGLANG_LOGGING_CONFIG_PATH": "log format only",
    "SGLANG_DEBUG_MEMORY_POOL": "a leak check (debug only)",
    "SGLANG_EMPTY_CACHE_INTERVAL": "a periodic empty_cache while serving, after startup",
    "SGLANG_MEMORY_SAVER_CUDA_GRAPH": "torch_memory_saver regions (release / resume): no change to sizing",
    "SGLANG_ENABLE_TP_MEMORY_INBALANCE_CHECK": "whether a tp memory imbalance raises or only warns",
}


@lru_cache(maxsize=1)
def _table() -> tuple[list[str], dict[str, list[list[int]]]]:
    t = json.loads((_HERE / "env_names.json").read_text(encoding="utf-8"))
    return t["releases"], t["names"]


def releases_reading(name: str) -> list[str]:
    """The releases (of env_names.json) whose code reads ``name``, oldest first."""
    releases, names = _table()
    return [releases[i] for lo, hi in names.get(name, []) for i in range(lo, hi + 1)]


def reads(name: str, version: str) -> bool:
    return version in releases_reading(name)


def _span(versions: list[str]) -> str:
    from planner.engines.sglang.cli_flags import release_span  # noqa: PLC0415

    return release_span(versions, _table()[0])


def env_refusal(env: dict[str, str], version: str) -> str | None:
    """The one line that refuses this launch for an environment variable with a memory effect the planner does
    not model, set to other than SGLang's default, in a release that reads it; None otherwise."""
    for name, value in env.items():
        rule = REFUSED.get(name)
        if rule is None or not reads(name, version) or str(value).strip().lower() in rule[0]:
            continue
        return (f"--env {name}={str(value)[:40]}: it changes {rule[1]}, which is not modelled; unset it to plan "
                f"SGLang {version}'s default")
    return None


def env_notes(env: dict[str, str], version: str) -> list[str]:
    """One note per variable the plan does not use: not read by this release (ignored; the near match and the
    releases that read it), or read but without a modelled effect. Modelled, refused and no-effect names say
    nothing here."""
    if version not in _table()[0]:  # a release without a dump: nothing to check against (test_errors keeps them equal)
        return []
    out = []
    for name in env:
        if name in REFUSED or name in NO_EFFECT or modelled(name, version):
            continue
        have = releases_reading(name)
        if version in have:
            out.append(f"env {name}: read by SGLang {version}, its memory effect is not modelled (the plan assumes "
                       "none)")
            continue
        why = f"env {name} is ignored: SGLang {version} does not read it"
        if have:
            why += f" ({_span(have)} {'reads' if len(have) == 1 else 'read'} it)"
        else:
            near = difflib.get_close_matches(name, list(_table()[1]), n=1, cutoff=0.8) if len(name) <= 100 else []
            if near and reads(near[0], version):
                why += f"; did you mean {near[0]}?"
        out.append(why)
    return out


__all__ = ["MODELLED", "MODELLED_UNTIL", "modelled", "REFUSED", "NO_EFFECT", "env_refusal", "env_notes", "releases_reading", "reads"]
