"""``--speculative-draft-model-path``: which draft a launch names, what kind it is, what it weighs.

``resolve_draft(text)`` accepts what SGLang's flag accepts, resolved the way ``--model`` is
(:func:`planner.catalog.catalog.resolve_model`):

* a catalog draft (``plan models`` lists them): its id, an alias, or the Hugging Face id of the public
  head it stands for (``z-lab/Qwen3.6-27B-DFlash``), offline;
* a catalog model used as a whole separate draft (STANDALONE);
* a ``config.json``, or a checkpoint directory holding one: its weights exact from the directory's
  ``model.safetensors.index.json`` ``metadata.total_size`` or the tensor sizes in its ``*.safetensors``
  headers when present;
* any other ``org/name[@revision]``: the Hugging Face cache, then the Hub (:mod:`planner.catalog.hub`).

A name that is none of these is one line naming the flag with the near catalog drafts (exit 2).

A launch line prints the Hugging Face id SGLang loads instead of the catalog name (:func:`launch_flags`,
:func:`launch_id`): the published head a catalog draft stands for, with its pinned revision; a catalog draft
with no published checkpoint (a SpecForge training template) keeps its name and the report says so
(:func:`unpublished_draft`).

The draft's *kind* follows its ``architectures[0]`` the way SGLang picks the draft model class
(``EntryClass`` lists of srt/models/*.py @0.5.23): DFLASH heads (srt/models/dflash.py:1317-1324),
DSPARK heads (srt/models/dspark.py:995, dspark_minimax.py:326, lfm2_dspark.py:16;
``is_dspark_draft`` srt/configs/model_config.py:255-256), EAGLE3 / EAGLE heads
(srt/models/llama_eagle3.py:387, kimi_k25_eagle3.py:523, llama_eagle.py:153, qwen2_eagle.py:151,
mistral_eagle.py:210), MTP / NextN layers (srt/models/*_mtp.py, *_nextn.py), anything else a full
causal LM, usable as a STANDALONE draft.

Weights: :func:`head_weight_bytes` counts the tensors a DFLASH / DSPARK head holds, as SGLang builds
the module (srt/models/dflash.py:728-772, srt/models/dspark.py:198-199, 313, 345, 437 @0.5.23), with the
pipeline's own count (``planner/catalog/draft_heads.py`` ``head_weights``): the draft layers, the final
norm, ``fc`` (one ``hidden_size`` block per target layer it reads) and ``hidden_norm``, plus DSpark's
Markov head, and its float32 confidence head only where SGLANG_RAGGED_VERIFY_MODE builds one (not by
default). These heads hold no embedding and no LM head: they use the target's. A checkpoint's own
total (index / headers), when given, wins.
"""

from __future__ import annotations

import difflib
import json
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

from planner.catalog.catalog import NOT_MODELLED, CatalogEntry, ResolvedModel, find_entry, load_catalog, resolve_model
from planner.catalog.spec import ModelSpec
from planner.catalog.draft_heads import head_weights
from planner.errors import BadInput

FLAG = "--speculative-draft-model-path"

DFLASH_ARCHS = frozenset({"DFlashDraftModel", "DFlashLagunaForCausalLM", "MuseGlimmerAssistantModel",
                          "DFlash2DraftModel", "DFlash2BeamDraftModel", "MiniMaxDFlash2DraftModel"})
DSPARK_ARCHS = frozenset({"DSparkDraftModel", "Qwen3DSparkModel", "LingDSparkModel", "DSparkMiniMaxDraftModel",
                          "Lfm2DSparkDraftModel", "DeepseekV4ForCausalLMDSpark"})

KINDS = ("EAGLE3", "EAGLE", "DFLASH", "DSPARK", "MTP", "STANDALONE")
#: which --speculative-algorithm values take a draft of each kind (SGLang's own names)
ALGORITHMS_FOR_KIND = {
    "EAGLE3": ("EAGLE3",),
    "EAGLE": ("EAGLE",),
    "DFLASH": ("DFLASH",),
    "DSPARK": ("DSPARK",),
    "MTP": ("EAGLE", "NEXTN"),
    "STANDALONE": ("STANDALONE",),
}


def draft_kind(spec: ModelSpec) -> str:
    """EAGLE3 | EAGLE | DFLASH | DSPARK | MTP | STANDALONE, from ``architectures[0]`` (module docstring)."""
    arch = spec.architecture
    if arch in DFLASH_ARCHS:
        return "DFLASH"
    if arch in DSPARK_ARCHS or "DSpark" in arch:
        return "DSPARK"
    if "Eagle3" in arch:
        return "EAGLE3"
    if "Eagle" in arch:
        return "EAGLE"
    if arch.endswith(("MTP", "NextN")):
        return "MTP"
    return "STANDALONE"


@dataclass(frozen=True)
class ResolvedDraft:
    spec: ModelSpec
    kind: str
    weight_bytes: int
    weight_source: str  # 'safetensors-index' | 'safetensors-headers' | 'catalog' | 'head-model' | 'estimate' | ...
    weight_detail: str
    catalog_id: str | None
    targets: tuple[str, ...]  # catalog ids of the targets the draft fits (catalog drafts)
    note: str  # where the config comes from (catalog drafts), or ''


def catalog_drafts() -> tuple[CatalogEntry, ...]:
    return tuple(e for e in load_catalog() if e.draft)


def _draft_names() -> dict[str, str]:
    return {n.lower(): e.id for e in catalog_drafts() for n in e.names}


def unknown_draft_message(name: str) -> str:
    names = _draft_names()
    near = difflib.get_close_matches(name.lower(), list(names), n=5, cutoff=0.5)
    near += difflib.get_close_matches(name.split("/")[-1].lower(), list(names), n=5, cutoff=0.6)
    ids = list(dict.fromkeys(names[n] for n in near))
    hint = f"did you mean: {', '.join(ids)}?" if ids else "catalog drafts: " + ", ".join(e.id for e in catalog_drafts())
    return (f"{FLAG}: unknown draft '{name}'; {hint} (or give a config.json, a checkpoint dir, "
            "or a Hugging Face id org/name; `plan models` lists the drafts)")


def resolve_draft(name: str) -> ResolvedDraft:
    """Resolve ``--speculative-draft-model-path`` (module docstring)."""
    if not isinstance(name, str) or not name.strip():
        raise BadInput(f"{FLAG}: empty; give a catalog draft (e.g. qwen3.6-27b-dflash), a config.json, "
                       "a checkpoint dir or a Hugging Face id")
    entry = find_entry(name)
    if entry is not None:
        return _from_model(resolve_model(entry.id), entry)
    path = Path(name).expanduser()
    looks_like_hub = name.count("/") == 1 and not name.startswith((".", "/", "~")) and not name.endswith(".json")
    if not path.exists() and not looks_like_hub:
        if "/" in name or name.endswith(".json"):
            raise BadInput(f"{FLAG}: no such file or directory: '{name}' (give a config.json, a checkpoint dir, "
                           "a Hugging Face id org/name, or a catalog draft; `plan models` lists them)")
        raise BadInput(unknown_draft_message(name))
    try:
        model = resolve_model(name)
    except BadInput as exc:
        text = str(exc)
        if text.startswith("--model:"):
            text = FLAG + ":" + text[len("--model:"):]
        raise BadInput(text) from None
    return _from_model(model, None)


def _from_model(model: ResolvedModel, entry: CatalogEntry | None) -> ResolvedDraft:
    spec = model.spec
    kind = entry.kind if entry is not None and entry.kind else draft_kind(spec)
    total, source, detail = model.weight_bytes, model.weight_source, model.weight_detail
    if source == NOT_MODELLED:  # a draft's weights are sized, never measured
        raise BadInput(f"{FLAG}: {detail}")
    if source in ("estimate", "catalog-params") and kind in ("DFLASH", "DSPARK"):
        head = head_weight_bytes(spec)
        if head is not None:
            total, source, detail = head[0], "head-model", head[1]
    targets = entry.targets if entry is not None else ()
    note = entry.note if entry is not None else ""
    return ResolvedDraft(spec, kind, total, source, detail, entry.id if entry else None, targets, note)


def draft_spec_with_weights(d: ResolvedDraft) -> ModelSpec:
    """The draft's ModelSpec carrying its kind and weight bytes (``draft_kind``, ``checkpoint_weight_*``),
    for the pipeline, whose stages take a ModelSpec."""
    return d.spec.model_copy(update={"draft_kind": d.kind, "checkpoint_weight_bytes": d.weight_bytes,
                                     "checkpoint_weight_source": f"{d.weight_source}: {d.weight_detail}"})


# ----------------------------------------------------------------------------- the id a launch line prints

_HUB_ID_RE = re.compile(r"([A-Za-z0-9][\w.-]*/[\w.-]+)(?:@([0-9a-f]{7,40}))?(?: \(.*\))?")
REVISION_FLAG = "--speculative-draft-model-revision"


def launch_id(entry: CatalogEntry) -> tuple[str, str | None] | None:
    """(Hugging Face id, pinned revision or None) that SGLang loads for a catalog entry: the published head a
    draft's config stands for (``published_as``), else the entry's own ``hf_id`` when it names a Hub repo
    (``org/name[@revision]``); None for a config with no published checkpoint (a SpecForge training template)."""
    m = _HUB_ID_RE.fullmatch(entry.hf_id.strip())
    if entry.published_as:
        repo = entry.published_as[0]
        return repo, m.group(2) if m and m.group(1).lower() == repo.lower() else None
    return (m.group(1), m.group(2)) if m else None


def _draft_value_at(flags: list[str]) -> tuple[int, str] | None:
    for i, f in enumerate(flags):
        if f == FLAG and i + 1 < len(flags):
            return i + 1, flags[i + 1]
        if f.startswith(FLAG + "="):
            return i, f.split("=", 1)[1]
    return None


def _catalog_draft_entry(value: str) -> CatalogEntry | None:
    """The catalog entry a --speculative-draft-model-path value names, unless it is a path that exists (the
    user's own file or directory is printed as given)."""
    if Path(value).expanduser().exists():
        return None
    return find_entry(value)


def launch_flags(flags: list[str]) -> list[str]:
    """``flags`` as a launch line prints them: a catalog draft name after --speculative-draft-model-path becomes
    the Hugging Face id SGLang loads (with --speculative-draft-model-revision where the catalog pins one and the
    flags name none); a ``config.json`` becomes the directory holding it (what SGLang loads); another path or an
    id that is not in the catalog stays as given."""
    at = _draft_value_at(flags)
    if at is None:
        return list(flags)
    i, value = at
    if Path(value).name == "config.json" and Path(value).expanduser().is_file():  # SGLang loads the directory
        out = list(flags)
        parent = str(Path(value).parent)
        out[i] = parent if out[i] == value else f"{FLAG}={parent}"
        return out
    entry = _catalog_draft_entry(value)
    lid = None if entry is None else launch_id(entry)
    if lid is None:
        return list(flags)
    repo, rev = lid
    out = list(flags)
    out[i] = repo if out[i] == value else f"{FLAG}={repo}"
    if rev and not any(f == REVISION_FLAG or f.startswith(REVISION_FLAG + "=") for f in flags):
        out[i + 1:i + 1] = [REVISION_FLAG, rev]
    return out


def unpublished_draft(flags: list[str]) -> str | None:
    """A line for a launch whose --speculative-draft-model-path is a catalog config with no published head (the
    launch line keeps the catalog name, which SGLang cannot load); None otherwise."""
    at = _draft_value_at(flags)
    entry = None if at is None else _catalog_draft_entry(at[1])
    if entry is None or launch_id(entry) is not None:
        return None
    return (f"Draft: {entry.id} is a catalog config with no published checkpoint: put your head's Hugging Face "
            f"id or directory after {FLAG}.")


# ----------------------------------------------------------------------------- weights of a head


def _dflash_cfg(spec: ModelSpec) -> dict:
    raw = spec.raw
    out = dict(raw.get("dflash_config") or {})
    out.update(raw.get("dspark_config") or {})
    return out


def head_weight_bytes(spec: ModelSpec, env: dict[str, str] | None = None) -> tuple[int, str] | None:
    """(bytes, how) of a DFLASH / DSPARK head from its config, at tp 1 under ``env`` (SGLang's defaults when
    None); None for another kind. The count is the pipeline's own (planner/catalog/draft_heads.py
    ``head_weights``), the one the draft worker's load is sized with."""
    kind = draft_kind(spec)
    if kind not in ("DFLASH", "DSPARK"):
        return None
    w = head_weights(spec, 1, env, dspark=kind == "DSPARK")
    f32 = f" + {w.f32_bytes:,} B float32" if w.f32_bytes else ""
    return w.total_bytes, (f"computed from the head's config: {w.params:,} params x {w.dtype_bytes} B{f32} ({w.how}); "
                           "no embedding / LM head (the target's)")


# ----------------------------------------------------------------------------- fit to a target


def fit_problems(draft: ModelSpec, target: ModelSpec) -> list[str]:
    """Why a draft cannot sit on a target, by the geometry the draft reads from it; [] when it fits.

    DFLASH / DSPARK / EAGLE3 heads read the target's hidden states (``fc`` in = k x target hidden) and
    share its vocabulary (its embedding and LM head); a DFLASH head's ``target_layer_ids`` index the
    target's layers. A STANDALONE draft needs the same vocabulary (the two models exchange token ids).
    """
    kind = draft_kind(draft)
    out = []
    if kind in ("DFLASH", "DSPARK", "EAGLE3", "EAGLE") and draft.hidden_size != target.hidden_size:
        target_hidden = draft.raw.get("target_hidden_size")
        if target_hidden != target.hidden_size:
            out.append(f"hidden_size {draft.hidden_size} != the target's {target.hidden_size}")
    if draft.vocab_size and target.vocab_size and draft.vocab_size != target.vocab_size:
        out.append(f"vocab_size {draft.vocab_size} != the target's {target.vocab_size}")
    if kind in ("DFLASH", "DSPARK"):
        n = draft.raw.get("num_target_layers") or _dflash_cfg(draft).get("num_target_layers")
        if isinstance(n, int) and n != target.num_hidden_layers:
            out.append(f"num_target_layers {n} != the target's {target.num_hidden_layers} layers")
        ids = _dflash_cfg(draft).get("target_layer_ids")
        if isinstance(ids, list) and ids and max(ids) >= target.num_hidden_layers:
            out.append(f"target_layer_ids reach layer {max(ids)} of a {target.num_hidden_layers}-layer target")
    return out


def listing() -> str:
    """``plan models``: the catalog's target models, then its drafts with their kind and targets."""
    from planner.catalog.catalog import CONFIG_DIR  # noqa: PLC0415

    rows = ["Models (--model):"]
    for e in load_catalog():
        if e.draft:
            continue
        aliases = f"  (also {', '.join(e.aliases)})" if e.aliases else ""
        rows.append(f"  {e.id:<30} {e.hf_id}{aliases}")
    rows.append("")
    rows.append("Drafts (--speculative-draft-model-path; any model above also works as a STANDALONE draft):")
    for e in catalog_drafts():
        cfg = json.loads((CONFIG_DIR / e.file).read_text(encoding="utf-8"))
        arch = (cfg.get("architectures") or ["?"])[0]
        rows.append(f"  {e.id:<30} {e.kind:<7} for {', '.join(e.targets) or '-'}")
        text = f"{arch}; config level {e.verbatim} (configs/SOURCES.md): {e.note}"
        rows += textwrap.wrap(text, width=110, initial_indent=" " * 33, subsequent_indent=" " * 33)
    return "\n".join(rows)
