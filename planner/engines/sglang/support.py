"""What the planner does not model, refused before any verdict: one line naming it and what is modelled.

:func:`unmodelled` is called once, from :func:`planner.engines.sglang.plan.make_plan`, before the weights and the pools are
computed. It refuses, in this order:

1. an architecture the pipeline does not implement (:data:`TARGET_ARCHS`, :data:`DRAFT_ARCHS`);
2. a cache the pipeline would size as plain attention although it is not: multi-head latent attention
   (``kv_lora_rank``) outside the modelled DeepSeek-V3 / V3.2 architectures (``MLA_ARCHS``: their latent and
   indexer caches are sized by ``pipeline/mla.py``, on the releases it verified; others refused by name),
   sliding-window or chunked attention (``layer_types`` with sliding layers,
   ``sliding_window`` in use, ``attention_chunk_size``) in an architecture other than the hybrid SWA ones
   (:data:`SLIDING_ARCHS`: gpt-oss and Llama 4, whose sliding / chunked and full layers SGLang's hybrid SWA pool
   sizes, pipeline/swa.py; every modelled release); then a config.json key that may change memory and is not
   modelled (:func:`config_key_refusal`, the config audit ``config_audit.toml``);
3. a quantization method without a weight model (:mod:`planner.catalog.quant_support`);
4. a flag the audit (``flag_audit.toml``) marks refused, given with a value other than its argparse default.

Flags that the engine's ``server_args.check_scope`` already refuses are left to it (``enforced_by``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from planner.catalog.quant_support import quant_refusal
from planner.catalog.spec import GDN_ARCHS, MAMBA2_ARCHS, MLA_ARCHS, ModelSpec
from planner.datafiles import load_toml
from planner.engines.sglang.cli_flags import SGLangArgError, load_flag_table, parse_flags
from planner.engines.sglang.memo import per_object
from planner.engines.sglang.pipeline import own_mtp

_HERE = Path(__file__).resolve().parent
SUPPRESS = "==SUPPRESS=="

# Architectures the pipeline implements, as targets: the hybrid GDN and Mamba2 layouts it derives
# (planner/catalog/spec.py) and the plain-attention (MHA / GQA) dense and MoE models its golden sets cover
# for every release with an oracle venv (tests/golden/, tests/golden/dense/): one K and one V tensor per
# layer of get_num_kv_heads(tp) heads x head_dim (srt/configs/model_config.py:756-763 @0.5.11).
PLAIN_ATTENTION_ARCHS = frozenset({
    "LlamaForCausalLM",  # Llama 3.x
    "MistralForCausalLM",  # Mistral 7B v0.3 (sliding_window null; a set window is refused below)
    "Qwen2ForCausalLM",  # Qwen2 / Qwen2.5 (use_sliding_window false)
    "Qwen3ForCausalLM",  # Qwen3 dense
    "Qwen3MoeForCausalLM",  # Qwen3-MoE
    "MixtralForCausalLM",  # Mixtral 8x7B / 8x22B
    "Glm4MoeForCausalLM",  # GLM-4.5 / 4.6 / 4.7 MoE (GQA; its NextN draft is refused below)
    "Qwen3VLForConditionalGeneration",  # Qwen3-VL dense, with its vision tower
    "Qwen3VLMoeForConditionalGeneration",  # Qwen3-VL MoE, with its vision tower
    "MiniMaxM2ForCausalLM",  # MiniMax-M2 / M2.7: GQA 48 / 8 x 128, every layer full attention (tests/golden/dense new_models)
})
# Multi-head latent attention (DeepSeek-V3 / R1, Kimi-K2) and DeepSeek-V3.2's sparse attention: the latent and
# indexer caches, defaults and pools of planner/engines/sglang/pipeline/mla.py, on the releases it lists.
# Hybrid sliding-window / chunked attention models SGLang sizes with its SWA pool (pipeline/swa.py; the layer split
# in planner.catalog.spec.sliding_layout), checked against the oracle on 0.5.9 / 0.5.10 / 0.5.11 / 0.5.13-0.5.16 /
# 0.5.20 / 0.5.23 (tests/golden/swa/), the other releases' SWA code read against those
SLIDING_ARCHS = frozenset({
    "GptOssForCausalLM",  # gpt-oss-20b / 120b: alternating sliding (window 128, attention sinks) and full layers
    "Llama4ForConditionalGeneration",  # Llama 4 Scout / Maverick: chunked local attention (8192), every 4th layer full
})
# Sliding-window models SGLang sizes with one plain pool over every layer: it turns their hybrid SWA memory off
# (srt/server_args.py:2074-2086 @0.5.11, srt/arg_groups/model_overrides/gemma2_gemma3.py:13-27 @0.5.23; Gemma 2 is not
# in is_hybrid_swa_model's list either), so each layer keeps every token; checked against the oracle
# (tests/golden/swa/)
FULL_POOL_SLIDING_ARCHS = frozenset({"Gemma2ForCausalLM"})
TARGET_ARCHS = frozenset(GDN_ARCHS | MAMBA2_ARCHS | PLAIN_ATTENTION_ARCHS | MLA_ARCHS | SLIDING_ARCHS
                          | FULL_POOL_SLIDING_ARCHS)
# ...and as speculative drafts (--speculative-draft-model-path): EAGLE3 heads and DFlash drafts.
DRAFT_ARCHS = frozenset({"LlamaForCausalLMEagle3", "DFlashDraftModel",
                         "Qwen3DSparkModel", "DSparkDraftModel"})  # DSpark heads (srt/models/dspark.py EntryClass @0.5.23)


@dataclass(frozen=True)
class Audit:
    dest: str
    cls: str  # modelled | no_effect | refused
    group: str
    why: str
    modelled: str | None = None
    enforced_by: str | None = None
    allow: tuple[Any, ...] = ()
    needs: tuple[str, ...] = ()


@lru_cache(maxsize=1)
def flag_audit() -> dict[str, Audit]:
    """dest -> its audit entry (flag_audit.toml)."""
    data = load_toml(_HERE / "flag_audit.toml")
    out: dict[str, Audit] = {}
    for g in data["group"]:
        for dest in g["flags"]:
            out[dest] = Audit(dest, g["class"], g["name"], g["why"], g.get("modelled"), g.get("enforced_by"),
                              tuple(g.get("allow", ())), tuple(g.get("needs", ())))
    return out


def supported_text() -> str:
    return ", ".join(sorted(TARGET_ARCHS))


def architecture_refusal(spec: ModelSpec, role: str = "target") -> str | None:
    """One line when the pipeline does not implement this architecture (for this role), else None."""
    arch = spec.architecture
    if role == "draft":
        if arch in DRAFT_ARCHS or arch in TARGET_ARCHS:
            return None
        return (f"--speculative-draft-model-path: draft architecture {arch} is not modelled; modelled drafts: "
                f"{', '.join(sorted(DRAFT_ARCHS))} (or the target's own MTP layers)")
    cache = cache_refusal(spec)
    if cache:
        return cache
    if arch in TARGET_ARCHS:
        return None
    if arch in DRAFT_ARCHS:
        return f"--model: {arch} is a speculative draft; give it as --speculative-draft-model-path of its target"
    return f"--model: architecture {arch} is not modelled (it would be sized as a dense model); modelled: {supported_text()}"


@per_object
def cache_refusal(spec: ModelSpec) -> str | None:
    """The cache kinds the pipeline would size as plain attention although SGLang does not (decided once per
    spec: a ModelSpec is frozen)."""
    t = spec.text if isinstance(spec.text, dict) else spec.raw
    arch = spec.architecture
    if spec.sliding is not None and arch in SLIDING_ARCHS:
        return None  # the hybrid SWA pool (pipeline/swa.py) sizes its sliding / chunked layers
    if arch in FULL_POOL_SLIDING_ARCHS:
        return None  # SGLang keeps every token of every layer for these: the plain pool is what it allocates
    layer_types = t.get("layer_types") if isinstance(t.get("layer_types"), list) else []
    window = t.get("sliding_window")
    what = None
    if spec.mla is not None:
        what = None  # MLA_ARCHS: the latent (and DSA indexer) caches are modelled (pipeline/mla.py)
    elif t.get("kv_lora_rank") is not None or spec.raw.get("kv_lora_rank") is not None:
        what = (f"multi-head latent attention (MLA: a compressed kv_lora_rank + rope cache) in an architecture "
                f"other than {', '.join(sorted(MLA_ARCHS))}")
    elif any(isinstance(x, str) and "sliding" in x for x in layer_types):
        what = "sliding-window attention layers (layer_types)"
    elif isinstance(window, int) and window > 0 and t.get("use_sliding_window") is not False:
        what = f"sliding-window attention (sliding_window {t['sliding_window']})"
    elif t.get("attention_chunk_size") is not None:
        what = f"chunked attention (attention_chunk_size {t['attention_chunk_size']})"
    if what is None:
        return None
    return (f"--model: {arch} uses {what}, which is not modelled (it would be sized as plain attention); modelled: "
            f"plain full attention, GDN and Mamba2 hybrids ({supported_text()})")


def _primary(own: list[dict]) -> dict:
    """The action that defines the dest's default (aliases and deprecated spellings suppress theirs), of the
    dest's own actions in the table's order."""
    return next((a for a in own if a["default"] != SUPPRESS), own[0])


@lru_cache(maxsize=32)
def _defaults(version_dir: str) -> dict[str, tuple[Any, str]]:
    """dest -> (argparse default, the flag's name) for one release."""
    by_dest: dict[str, list[dict]] = {}
    for a in load_flag_table(version_dir)["actions"]:
        by_dest.setdefault(a["dest"], []).append(a)
    out = {}
    for dest, own in by_dest.items():
        a = _primary(own)
        name = "--" + dest.replace("_", "-")
        if name not in a["option_strings"]:
            name = next((s for s in a["option_strings"] if s.startswith("--")), a["option_strings"][0])
        out[dest] = (a["default"], name)
    return out


def flag_refusal(raw: dict[str, Any], version_dir: str) -> str | None:
    """One line for the first flag the audit refuses that is given with a non-default value, else None."""
    from planner.engines.sglang.pipeline.server_args import standalone_dp_attention  # noqa: PLC0415

    if standalone_dp_attention(raw):
        return None  # --- STANDALONE ---: SGLang's own rejection decides (speculative_hook.py:261-268 @0.5.14)
    defaults = _defaults(version_dir)
    base, order, always = _refusal_base(version_dir)
    # Only a dest whose value differs from what argparse gives for no flags can decide differently from that
    # launch, which decides nothing (``always``: the dests that refuse even then); first in the table's order.
    changed = [d for d, v in raw.items() if d in order and (d not in base or v is not base[d] and v != base[d])]
    for dest in sorted({*changed, *always}, key=order.__getitem__):
        problem = _refuse(dest, defaults[dest], raw, version_dir)
        if problem:
            return problem
    return None


def _refuse(dest: str, default_name: tuple[Any, str], raw: dict[str, Any], version_dir: str) -> str | None:
    """The audit's refusal of one dest's value in ``raw``, or None."""
    default, name = default_name
    if dest not in raw:
        return None
    entry = flag_audit().get(dest)
    if entry is None:  # tests/test_flag_audit.py keeps this from happening
        return f"{name}: not yet audited for SGLang {version_dir}; its memory effect is unknown to this planner"
    value = raw[dest]
    if entry.enforced_by == "draft_quantization" and value != default:
        return draft_quantization_refusal(raw)
    if entry.enforced_by == "dp_attention" and (raw.get("enable_dp_attention") or (raw.get("attn_dp_size") or 1) > 1):
        return None  # --dp-size with DP attention: pipeline/dp_attention.py decides (check_scope, the hook)
    if entry.enforced_by == "expert_parallel" and _ep_scope(raw):
        return None  # --ep-size: pipeline/dp_attention.py decides with the model (the hook)
    if value == default or (entry.enforced_by and entry.enforced_by not in ("dp_attention", "expert_parallel")):
        return None
    if entry.cls == "refused" or (entry.allow and value not in entry.allow):
        shown = name if value is True else f"{name} {value}"
        if entry.cls == "refused":
            tail = f"; modelled: {entry.modelled}" if entry.modelled else ""
            return f"{shown}: not modelled by this planner ({entry.why}){tail}"
        return f"{shown}: not modelled by this planner ({entry.why}); modelled: {', '.join(map(str, entry.allow))}"
    return None


def _ep_scope(raw: dict[str, Any]) -> bool:
    """--ep-size in the verified scope before the model is known: it divides --tp-size (an all-to-all backend is
    refused by name in check_scope, the model and release in the pipeline)."""
    ep = raw.get("ep_size") or raw.get("expert_parallel_size") or 1
    tp = raw.get("tp_size") or raw.get("tensor_parallel_size") or 1
    return ep > 1 and tp % ep == 0


def _resolved_draft_quantization(value: Any, target: Any) -> Any:
    """The draft's quantization as SGLang resolves it: the target's --quantization when not given, unquant -> none
    (srt/server_args.py:1084-1090 @0.5.11, :3410-3424 @0.5.16, srt/arg_groups/serving_hook.py:676-708 @0.5.23)."""
    value = target if value is None else value
    return None if value == "unquant" else value


def draft_quantization_refusal(raw: dict[str, Any], spec: ModelSpec | None = None) -> str | None:
    """--speculative-draft-model-quantization: planned when it resolves as the default does (the draft takes the
    target's --quantization), or to none (the draft at its checkpoint's own format, which is how every draft weight
    line sizes it: a checkpoint with a quantization_config keeps its method, srt/configs/model_config.py:1103-1111
    @0.5.11). Refused: another method (no quantized tensor list for draft heads), and none when the draft is the
    target's own checkpoint quantized online (``spec`` given: its MTP layer / STANDALONE copy would be bf16 beside
    an online-quantized target whose weights the planner counts quantized)."""
    value = raw.get("speculative_draft_model_quantization")
    if value is None or not raw.get("speculative_algorithm") or str(raw["speculative_algorithm"]).upper() == "NGRAM":
        return None  # no draft model to quantize
    target = raw.get("quantization")
    default = _resolved_draft_quantization(None, target)
    resolved = _resolved_draft_quantization(value, target)
    flag = f"--speculative-draft-model-quantization {value}"
    if resolved == default:
        return None
    if resolved is not None:
        return (f"{flag}: not modelled by this planner (a draft quantized otherwise than the target "
                f"(--quantization {target or 'not given'}): the planner has no quantized tensor list for draft heads); "
                "modelled: leave it out (the draft takes the target's --quantization) or unquant (the draft at its "
                "checkpoint's own format)")
    if spec is not None and spec.quant_method is None and not raw.get("speculative_draft_model_path"):
        return (f"{flag}: not modelled by this planner (the draft is the target's own checkpoint, quantized online "
                f"by --quantization {target}: the planner counts that share of the weights quantized, SGLang would "
                f"load it at {spec.dtype}); modelled: leave it out, or give a draft with --speculative-draft-model-path")
    return None


@lru_cache(maxsize=32)
def _refusal_base(version_dir: str) -> tuple[dict[str, Any], dict[str, int], frozenset[str]]:
    """(argparse's result for ``--model-path`` alone, dest -> its place in the table, the dests refused even with
    that result): what :func:`flag_refusal` compares a launch against, once per release."""
    base = parse_flags(version_dir, ["--model-path", "model"])
    defaults = _defaults(version_dir)
    order = {d: i for i, d in enumerate(defaults)}
    always = frozenset(d for d in defaults if _refuse(d, defaults[d], base, version_dir))
    return base, order, always


@lru_cache(maxsize=256)
def _flags_refusal(version_dir: str, flags: tuple[str, ...], model_name: str) -> tuple[str | None, Any]:
    try:
        raw = parse_flags(version_dir, ["--model-path", model_name, *flags])
    except SGLangArgError:
        return None, None  # SGLang's own parser rejects the launch: the engine reports it (exit 1)
    return flag_refusal(raw, version_dir), raw.get("quantization")


def flag_quantization(version_dir: str, flags: list[str], model_name: str) -> str | None:
    """``--quantization`` as the release's argparse reads it (the last one given wins), from the same cached parse
    :func:`unmodelled` refuses by. None when the flags give none, or when they do not parse: SGLang's parser then
    rejects the launch before anything is sized, and the engine reports that rejection (``plan`` exits 2 with the
    parser's message)."""
    return _flags_refusal(version_dir, tuple(flags), model_name)[1]


def unmodelled(version_dir: str, spec: ModelSpec, flags: list[str], draft: ModelSpec | None = None,
               measured_weights: bool = False) -> str | None:
    """The one line that refuses this launch as not modelled, or None when every part of it is modelled.
    ``measured_weights``: the free memory after the weights is measured, so the checkpoint's weight scheme needs no
    model (quant_support.MEASURED_WEIGHTS_METHODS); the architecture and the cache still do."""
    problem = architecture_refusal(spec)
    if problem:
        return problem
    if draft is not None:
        problem = architecture_refusal(draft, role="draft") or own_mtp.draft_path_refusal(draft)
        if problem:
            return problem
    from planner.engines.sglang.pipeline.mla import release_refusal  # noqa: PLC0415

    problem = (config_key_refusal(spec, draft) or arch_release_refusal(version_dir, spec)
               or release_refusal(spec, version_dir) or _mla_spec_refusal(version_dir, spec, flags))
    if problem:
        return problem
    flag_problem, flag_quant = _flags_refusal(version_dir, tuple(flags), spec.name)
    return (quant_refusal(spec.quant_method, flag_quant, measured_weights) or flag_problem or _own_mtp_refusal(version_dir, spec, flags)
            or _own_draft_quant_refusal(version_dir, spec, flags))


# Architectures whose config class the release's pinned transformers lacks: SGLang then loads the config only through
# the checkpoint's own code (--trust-remote-code with configuration_*.py), which no golden case runs. MiniMax-M2:
# transformers 4.57.1 (pinned by 0.5.9) has no minimax_m2 model type, 5.3.0 (0.5.10) and later have it; the 0.5.9
# oracle stops in ServerArgs ("contains custom code which must be executed"), 0.5.11 / 0.5.16 / 0.5.23 size it as
# plain attention (tests/golden/dense/sglang-*/new_models_results.jsonl).
ARCH_FIRST_RELEASE = {"MiniMaxM2ForCausalLM": ("v0_5_10", "0.5.9 pins transformers 4.57.1, which has no minimax_m2 "
                                                          "config: SGLang needs the checkpoint's remote code")}


def arch_release_refusal(version_dir: str, spec: ModelSpec) -> str | None:
    """One line when this release loads the architecture only through remote code the planner has not verified."""
    first = ARCH_FIRST_RELEASE.get(spec.architecture)
    if first is None or _release_key(version_dir) >= _release_key(first[0]):
        return None
    shown = version_dir.removeprefix("v").replace("_", ".")
    return (f"--model: {spec.architecture} on SGLang {shown} is not verified against its code ({first[1]}); "
            f"modelled: SGLang {first[0].removeprefix('v').replace('_', '.')} and later")


def _release_key(version_dir: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version_dir.removeprefix("v").split("_") if x.isdigit())


def config_key_refusal(spec: ModelSpec, draft: ModelSpec | None = None) -> str | None:
    """The config audit (config_audit.toml, planner/engines/sglang/config_audit.py): the first config.json key of
    the target, then of the draft, that may change memory and is not modelled (a refused key that is set, or an
    unknown key that could size something), named in one line."""
    from planner.engines.sglang.config_audit import config_refusal  # noqa: PLC0415

    problem = config_refusal(spec)
    if problem:
        return f"--model: {problem}"
    if draft is not None and draft is not spec:
        problem = config_refusal(draft)
        if problem:
            return f"--speculative-draft-model-path: {problem}"
    return None


def _mla_spec_refusal(version_dir: str, spec: ModelSpec, flags: list[str]) -> str | None:
    """Speculative decoding on an MLA target (its NEXTN / MTP layer, or a draft head): not modelled yet."""
    if spec.mla is None:
        return None
    raw = _parsed(version_dir, tuple(flags), spec.name)
    if raw is None or not raw.get("speculative_algorithm"):
        return None
    algo = str(raw["speculative_algorithm"]).upper()
    from planner.engines.sglang.pipeline.mla import rules_of  # noqa: PLC0415

    version = version_dir[1:].replace("_", ".") if version_dir.startswith("v") else version_dir
    own = algo in ("EAGLE", "NEXTN", "MTP") and not raw.get("speculative_draft_model_path") and spec.mtp_layers
    if own and rules_of(version).nextn:
        return None  # the model's own NextN layer(s): DeepseekV3ForCausalLMNextN (pipeline/mla.py own_draft_layers)
    if own:
        return (f"--speculative-algorithm {raw['speculative_algorithm']}: the {spec.architecture} NextN draft on SGLang "
                f"{version} is not verified against its code (the oracle's draft worker could not build it there); "
                "modelled for MLA without speculative decoding on this release")
    why = ("its config has no MTP layer: num_nextn_predict_layers 0" if algo in ("EAGLE", "NEXTN", "MTP")
           and not raw.get("speculative_draft_model_path") else "a separate draft model or another algorithm")
    return (f"--speculative-algorithm {raw['speculative_algorithm']}: speculative decoding on {spec.architecture} "
            f"({why}) is not modelled by this planner; modelled for MLA: NEXTN / EAGLE on the checkpoint's own "
            "NextN layer, without --speculative-draft-model-path")


def _own_draft_quant_refusal(version_dir: str, spec: ModelSpec, flags: list[str]) -> str | None:
    """:func:`draft_quantization_refusal` with the target's spec: the part that depends on the checkpoint."""
    if not any(f.startswith("--speculative-draft-model-quantization") for f in flags):
        return None
    raw = _parsed(version_dir, tuple(flags), spec.name)
    return None if raw is None else draft_quantization_refusal(raw, spec)


def _own_mtp_refusal(version_dir: str, spec: ModelSpec, flags: list[str]) -> str | None:
    """A plain-attention target's own MTP / NextN layers as the draft (EAGLE / NEXTN without a draft path):
    SGLang builds e.g. Glm4MoeForCausalLMNextN from the target's config (srt/configs/model_config.py:351-354
    @0.5.11). Modelled for GLM-4.x (pipeline/own_mtp.py, the glm_nextn golden sets); other architectures'
    own layers are refused. EAGLE3 heads given by path are modelled."""
    if spec.hybrid is not None or spec.mla is not None:  # MLA: _mla_spec_refusal
        return None
    raw = _parsed(version_dir, tuple(flags), spec.name)
    algo = raw.get("speculative_algorithm") if raw is not None else None
    # STANDALONE without a path drafts with the target itself, which is modelled (tests/golden/spec standalone sets,
    # pathless_*_self_draft)
    if algo not in ("EAGLE", "NEXTN", "MTP", "EAGLE3") or raw.get("speculative_draft_model_path"):
        return None
    if algo in ("EAGLE", "NEXTN") and own_mtp.applies(spec):
        return None  # GLM-4.x's own NextN layer: modelled on every release (pipeline/own_mtp.py)
    if algo in ("EAGLE", "NEXTN") and spec.architecture in own_mtp.ARCHS and not spec.mtp_layers:
        # SGLang would size the NextN draft from num_nextn_predict_layers, which this config lacks
        # (model_runner.py:648-666 @0.5.11): an abbreviated file, not the checkpoint's
        return (f"--speculative-algorithm {algo}: this {spec.architecture} config has no num_nextn_predict_layers "
                "(an abbreviated config.json; the GLM-4.x checkpoints carry 1), so the draft's MTP layer cannot be "
                "sized: give the checkpoint's own config.json as --model")
    if not spec.mtp_layers or algo == "EAGLE3":
        # no draft path and no MTP layer: SGLang builds the EAGLE draft worker from the target's own checkpoint, a
        # second KV pool over every layer (SGLang's own code, the oracle, on Qwen3-8B at 0.5.11 / 0.5.23: a 45.9 /
        # 50.2 GB draft KV pool for EAGLE, EAGLE3 and NEXTN alike), which the planner does not size
        return (f"--speculative-algorithm {algo} without --speculative-draft-model-path: SGLang would build the draft "
                f"from the {spec.architecture} target's own checkpoint (a second full KV pool), which is not modelled; "
                "give the draft's path (an EAGLE3 head), or use STANDALONE (the target as its own draft, modelled)")
    return (f"--speculative-algorithm {raw['speculative_algorithm']}: the {spec.architecture} target's own "
            f"{spec.mtp_layers} MTP / NextN layer(s) as the draft are not modelled; modelled: EAGLE3 heads "
            "(--speculative-draft-model-path), NGRAM, the hybrid Qwen3.5 / 3.6 / Next MTP layer, or GLM-4.x's "
            "(Glm4MoeForCausalLM) own NextN layer")


@lru_cache(maxsize=256)
def _parsed(version_dir: str, flags: tuple[str, ...], model_name: str) -> dict[str, Any] | None:
    try:
        return parse_flags(version_dir, ["--model-path", model_name, *flags])
    except SGLangArgError:
        return None


__all__ = ["TARGET_ARCHS", "DRAFT_ARCHS", "flag_audit", "flag_quantization", "unmodelled", "architecture_refusal", "flag_refusal"]
