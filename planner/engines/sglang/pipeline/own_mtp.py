"""A GQA target's own MTP / NextN layer as the EAGLE draft (GLM-4.5 / 4.6 / 4.7, ``Glm4MoeForCausalLM``).

Under ``--speculative-algorithm EAGLE`` / ``NEXTN`` without a draft path SGLang points the draft path at the model
itself for these architectures (srt/server_args.py:2398-2410 @0.5.9, :3492-3508 @0.5.11;
srt/arg_groups/speculative_hook.py:527-545 @0.5.14, :1125-1140 @0.5.23) and builds the draft worker's model as
``Glm4MoeForCausalLMNextN`` from the target's own config (``_config_draft_model``,
srt/configs/model_config.py:349-354 @0.5.11, :586 @0.5.16, :1063 @0.5.23). The draft worker's KV pool is an
``MHATokenToKVPool`` over ``num_nextn_predict_layers`` layers (srt/model_executor/model_runner.py:648-666 @0.5.11)
with the target's kv heads / tp and head_dim; 0.5.14+ also adds those layers to the target's cell, since the draft
path is set (pool_configurator.py:130-151 @0.5.16, memory_profile.draft_kv_layers). Checked against the oracle:
tests/golden/dense/sglang-*/glm_nextn_results.jsonl (scripts/oracle/glm_nextn_cases.py).

DeepSeek-family (MLA) targets have their own module (pipeline/mla.py ``own_draft_layers``).
"""
from __future__ import annotations

from planner.catalog.spec import ModelSpec

# GQA architectures whose own MTP layer SGLang drafts with, verified against the oracle (tests/golden/dense)
ARCHS = ("Glm4MoeForCausalLM",)
# releases where the oracle did not confirm the draft worker (none so far): refused there by name
UNVERIFIED: tuple[str, ...] = ()


def applies(model: ModelSpec) -> bool:
    """A plain-attention target of ARCHS whose config carries ``num_nextn_predict_layers``."""
    return (model.architecture in ARCHS and model.mla is None and model.hybrid is None and model.sliding is None
            and bool(model.mtp_layers))


def own_draft_layers(model: ModelSpec, args, draft: ModelSpec | None = None) -> int:
    """The draft worker's KV layers (``num_nextn_predict_layers``) under EAGLE / NEXTN without a draft path; 0
    otherwise (NEXTN is EAGLE by the time this is read, speculative_hook)."""
    if draft is not None or not applies(model) or not args.spec_on or args.speculative_algorithm != "EAGLE":
        return 0
    if getattr(args, "speculative_draft_model_path", None):
        return 0
    return model.mtp_layers


def release_refusal(version_dir: str) -> str | None:
    """One line where this release's draft worker on the own NextN layer is not checked against the oracle."""
    shown = version_dir.removeprefix("v").replace("_", ".")
    if shown not in UNVERIFIED:
        return None
    return (f"--speculative-algorithm EAGLE / NEXTN on the model's own MTP layer (Glm4MoeForCausalLMNextN): not "
            f"verified on SGLang {shown}; modelled on the other releases 0.5.9-0.5.23")


__all__ = ["ARCHS", "UNVERIFIED", "applies", "own_draft_layers", "release_refusal"]
