"""A GQA target's own MTP / NextN layer as the EAGLE draft (GLM-4.5 / 4.6 / 4.7, ``Glm4MoeForCausalLM``).

Under ``--speculative-algorithm EAGLE`` / ``NEXTN`` without a draft path SGLang points the draft path at the model
itself for these architectures (srt/server_args.py:2397-2411 @0.5.9, :3492-3508 @0.5.11;
srt/arg_groups/speculative_hook.py:289-306 @0.5.14, :1120-1143 @0.5.23) and builds the draft worker's model as
``Glm4MoeForCausalLMNextN`` from the target's own config (``_config_draft_model``,
srt/configs/model_config.py:349-354 @0.5.11, :586-587 @0.5.16, :1063-1064 @0.5.23). The draft worker's KV pool is an
``MHATokenToKVPool`` over ``num_nextn_predict_layers`` layers (srt/model_executor/model_runner.py:648-666 @0.5.11)
with the target's kv heads / tp and head_dim; 0.5.14+ also adds those layers to the target's cell, since the draft
path is set (pool_configurator.py:130-151 @0.5.16, memory_profile.draft_kv_layers). Checked against the oracle:
tests/golden/dense/sglang-*/glm_nextn_results.jsonl (scripts/oracle/glm_nextn_cases.py).

DeepSeek-family (MLA) targets have their own module (pipeline/mla.py ``own_draft_layers``).
"""
from __future__ import annotations

from planner.catalog.spec import ModelSpec

# GQA architectures whose own MTP layer SGLang drafts with, verified against the oracle on every release
# 0.5.9-0.5.23 (tests/golden/dense/sglang-*/glm_nextn_results.jsonl)
ARCHS = ("Glm4MoeForCausalLM",)


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


def draft_path_refusal(draft: ModelSpec) -> str | None:
    """A GLM-4.x checkpoint named by --speculative-draft-model-path: ``_config_draft_model`` rewrites it to
    Glm4MoeForCausalLMNextN whatever the algorithm (srt/configs/model_config.py:349-354 @0.5.11), a draft the
    planner models only without a draft path (the golden sets run none with one)."""
    if draft.architecture not in ARCHS:
        return None
    return (f"--speculative-draft-model-path: a {draft.architecture} draft is loaded by SGLang as its NextN layer "
            "(Glm4MoeForCausalLMNextN), which is modelled only without a draft path: for EAGLE / NEXTN on a GLM-4.x "
            "target's own MTP layer leave --speculative-draft-model-path out")


__all__ = ["ARCHS", "applies", "draft_path_refusal", "own_draft_layers"]
