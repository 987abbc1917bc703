"""The built-in model catalog, and ``--model`` resolution (catalog name, config.json, checkpoint).

``resolve_model(text)`` accepts, case-insensitively: a catalog id, an alias, a Hugging Face id
(``Qwen/Qwen3.6-27B``), a path to a ``config.json``, or a checkpoint directory holding one; any other
``org/name[@revision]`` is read from the Hugging Face cache or Hub (:mod:`planner.catalog.hub`). The
result carries the :class:`ModelSpec` and the weight bytes with where they came from:

* ``safetensors-index``: ``model.safetensors.index.json`` ``metadata.total_size`` of a local
  checkpoint;
* ``safetensors-headers``: the sum of tensor sizes read from each ``*.safetensors`` header;
* ``catalog``: the published ``total_size`` recorded in ``catalog.toml`` with its source;
* ``quant-model``: a quantized checkpoint (``quantization_config``) without a published total:
  its tensors as SGLang allocates them, scheme by scheme (:mod:`planner.catalog.quant`);
* ``estimate``: computed from the architecture and dtype (:mod:`planner.catalog.weights`).

For a quantized checkpoint the model-based figure is printed beside an index / header / catalog
total as a cross-check; a ``quant_method`` without a weight model is refused by name (exit 2),
never sized as the unquantized model.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from planner.catalog.config_file import read_json_file, validate_index, validate_quant_file
from planner.catalog.safetensors_header import safetensors_payload_bytes
from planner.catalog.spec import ModelSpec
from planner.catalog.weights import estimate_weight_bytes
from planner.datafiles import load_toml
from planner.errors import BadInput

_HERE = Path(__file__).resolve().parent
CONFIG_DIR = _HERE / "configs"


@dataclass(frozen=True)
class CatalogEntry:
    id: str
    hf_id: str
    file: str
    aliases: tuple[str, ...]
    verbatim: str
    weight_bytes: int | None
    weight_source: str | None
    params: int | None
    params_source: str | None
    draft: bool
    # drafts (planner/catalog/drafts.py): EAGLE3 | DFLASH | DSPARK ..., the catalog targets it fits, the
    # public head(s) its config stands for (Hugging Face ids, resolved offline), where its config comes from
    kind: str = ""
    targets: tuple[str, ...] = ()
    published_as: tuple[str, ...] = ()
    note: str = ""
    hub_first: bool = False  # its org/name id goes to the HF cache / Hub (planner.catalog.hub); the id names this copy
    quant_file: str = ""  # the checkpoint's standalone hf_quant_config.json (config.json has no quantization_config)

    @property
    def names(self) -> tuple[str, ...]:
        if self.hub_first:
            return (self.id, *self.aliases, self.hf_id.split("/")[-1])
        return (self.id, *self.aliases, self.hf_id, self.hf_id.split("/")[-1], *self.published_as,
                *(p.split("/")[-1] for p in self.published_as))


# ResolvedModel.weight_source of a quantized checkpoint whose weights have no model (and no total at hand): its
# weight_detail is the refusal; a plan runs only with the free memory after the weights measured
NOT_MODELLED = "not modelled"


@dataclass(frozen=True)
class ResolvedModel:
    spec: ModelSpec
    weight_bytes: int
    weight_source: str  # 'safetensors-index' | 'safetensors-headers' | 'catalog' | 'catalog-params' | 'estimate'
    weight_detail: str
    catalog_id: str | None
    path: str | None  # the local path given, if any


@lru_cache(maxsize=1)
def load_catalog() -> tuple[CatalogEntry, ...]:
    data = load_toml(_HERE / "catalog.toml")
    out = []
    for m in data["model"]:
        out.append(
            CatalogEntry(
                id=m["id"],
                hf_id=m["hf_id"],
                file=m["file"],
                aliases=tuple(m.get("aliases", ())),
                verbatim=m.get("verbatim", "?"),
                weight_bytes=m.get("weight_bytes"),
                weight_source=m.get("weight_source"),
                params=m.get("params"),
                params_source=m.get("params_source"),
                draft=bool(m.get("draft", False)),
                kind=m.get("kind", ""),
                targets=tuple(m.get("targets", ())),
                published_as=tuple(m.get("published_as", ())),
                note=m.get("note", ""),
                hub_first=bool(m.get("hub_first", False)),
                quant_file=m.get("quant_file", ""),
            )
        )
    return tuple(out)


def find_entry(name: str) -> CatalogEntry | None:
    return _entries_by_name().get(name.strip().lower())


@lru_cache(maxsize=1)
def _entries_by_name() -> dict[str, CatalogEntry]:
    """Every name of every entry, lower-cased -> the first entry that has it (the catalog's order)."""
    out: dict[str, CatalogEntry] = {}
    for e in load_catalog():
        for n in e.names:
            out.setdefault(n.lower(), e)
    return out


@lru_cache(maxsize=64)
def _spec_for_entry(entry_id: str) -> ModelSpec:
    entry = next(e for e in load_catalog() if e.id == entry_id)
    if entry.quant_file:
        cfg = read_json_file(CONFIG_DIR / entry.file)
        hf_quant = validate_quant_file(read_json_file(CONFIG_DIR / entry.quant_file), entry.quant_file)
        return ModelSpec.from_hf_config(with_hf_quant_config(cfg, hf_quant), name=entry.id, source=entry.file)
    return ModelSpec.from_file(CONFIG_DIR / entry.file, name=entry.id)


def with_hf_quant_config(cfg: dict, hf_quant: object) -> dict:
    """config.json as SGLang reads it when it has no ``quantization_config`` and the checkpoint has a standalone
    ``hf_quant_config.json`` (ModelOpt exports: configs/model_config.py:1743-1822 @0.5.23): the file's
    ``quantization`` block, with the quant_method ``_parse_modelopt_quant_config`` derives for an FP8 / FP4
    ``quant_algo`` (model_config.py:1838-1869); ModelOpt's config classes then read that block (exclude_modules,
    group_size, kv_cache_quant_algo)."""
    if cfg.get("quantization_config") or not isinstance(hf_quant, dict):
        return cfg
    block = hf_quant.get("quantization", hf_quant)
    if not isinstance(block, dict) or not block.get("quant_algo"):
        return cfg
    algo = str(block["quant_algo"]).upper()
    method = {"FP8": "modelopt_fp8"}.get(algo, "modelopt_fp4" if "FP4" in algo else "modelopt")
    return {**cfg, "quantization_config": {"quant_method": method, **block}}


def unknown_model_message(name: str) -> str:
    names = {n.lower(): e.id for e in load_catalog() if not e.draft for n in (e.id, *e.aliases)}
    import difflib  # noqa: PLC0415 - only for a name that is not found

    near = difflib.get_close_matches(name.lower(), list(names), n=5, cutoff=0.5)
    ids = list(dict.fromkeys(names[n] for n in near))
    hint = f"did you mean: {', '.join(ids)}?" if ids else (
        "known: " + ", ".join(e.id for e in load_catalog() if not e.draft)
    )
    return f"--model: unknown model '{name}'; {hint} (or pass a path to a config.json or checkpoint dir)"


def resolve_model(name: str) -> ResolvedModel:
    """Resolve ``--model`` (see module docstring)."""
    if not name or not name.strip():
        raise BadInput("--model: empty; give a catalog name (e.g. qwen3.6-27b) or a path")
    entry = find_entry(name)
    if entry is not None:
        return _catalog_model(entry.id)
    try:
        path = Path(name).expanduser()
        is_dir, is_file = path.is_dir(), path.is_file()
    except (OSError, RuntimeError) as exc:  # a name longer than the file system allows; ~user of no such user
        shown = name if len(name) <= 120 else name[:117] + "..."
        raise BadInput(f"--model: cannot use '{shown}': {getattr(exc, 'strerror', None) or exc}") from None
    if is_dir:
        return _from_checkpoint_dir(path)
    if is_file:
        spec = ModelSpec.from_file(path)
        return _modelled(spec, None, str(path))
    looks_like_hf_id = name.count("/") == 1 and not name.startswith((".", "/", "~"))
    if ("/" in name or name.endswith(".json")) and not looks_like_hf_id:
        raise BadInput(f"--model: no such file or directory: '{name}' (give a config.json, a checkpoint dir, "
                       "or a catalog name such as qwen3.6-27b)")
    if looks_like_hf_id and not name.endswith(".json"):
        return _from_hub(name)
    raise BadInput(unknown_model_message(name))


@lru_cache(maxsize=64)
def _catalog_model(entry_id: str) -> ResolvedModel:
    """A catalog entry resolved once per process (the catalog does not change while it runs; the result is frozen)."""
    entry = next(e for e in load_catalog() if e.id == entry_id)
    spec = _spec_for_entry(entry.id)
    if entry.weight_bytes is not None:
        return ResolvedModel(spec, entry.weight_bytes, "catalog",
                             (entry.weight_source or "") + _cross_check(spec, entry.weight_bytes), entry.id, None)
    if entry.params is not None:
        est = estimate_weight_bytes(spec, entry.params, entry.params_source)
        return ResolvedModel(spec, est.total, "catalog-params", est.detail, entry.id, None)
    return _modelled(spec, entry.id, None)


def _from_hub(name: str) -> ResolvedModel:
    """An ``org/name[@revision]`` that is not a catalog model: the HF cache, then the Hub (planner.catalog.hub)."""
    from planner.catalog.hub import parse_hub_id, resolve_hub_model  # noqa: PLC0415 - imports huggingface_hub

    parsed = parse_hub_id(name)
    if parsed is None:
        raise BadInput(f"--model: '{name}' is not a valid Hugging Face id (org/name[@revision]) nor a path")
    repo_id, revision = parsed
    bundled = next((e.id for e in load_catalog() if e.hub_first and e.hf_id.lower() == repo_id.lower()), None)
    try:
        hub = resolve_hub_model(repo_id, revision, near=_near_catalog_models(repo_id))
    except BadInput as exc:
        if bundled is None:
            raise
        raise BadInput(f"{exc}; or --model {bundled}, the copy bundled with the planner") from None
    spec = ModelSpec.from_hf_config(hub.config, name=repo_id, source=f"{repo_id}'s config.json")
    if hub.weights is not None:
        return ResolvedModel(spec, hub.weights.total, hub.weights.source,
                             f"{hub.weights.detail}, from {hub.where}", None, None)
    est = estimate_weight_bytes(spec)
    return ResolvedModel(spec, est.total, "estimate", f"{est.detail} ({hub.why_no_weights})", None, None)


def _near_catalog_models(repo_id: str) -> str:
    """'did you mean: ...?' over the catalog's ids and Hugging Face ids, or ''."""
    names = {n.lower(): e.id for e in load_catalog() if not e.draft
             for n in (e.id, *e.aliases, e.hf_id, e.hf_id.split("/")[-1])}
    import difflib  # noqa: PLC0415 - only for a name that is not found

    near = difflib.get_close_matches(repo_id.lower(), list(names), n=5, cutoff=0.6)
    near += difflib.get_close_matches(repo_id.split("/")[-1].lower(), list(names), n=5, cutoff=0.6)
    ids = list(dict.fromkeys(names[n] for n in near))
    return f"did you mean: {', '.join(ids)}?" if ids else ""


def _from_checkpoint_dir(path: Path) -> ResolvedModel:
    cfg = path / "config.json"
    if not cfg.is_file():
        raise BadInput(f"--model: directory {path} has no config.json")
    spec = ModelSpec.from_file(cfg, name=path.name)
    hf_quant = path / "hf_quant_config.json"
    if hf_quant.is_file() and not spec.quant_method:
        quant = validate_quant_file(read_json_file(hf_quant), str(hf_quant))
        spec = ModelSpec.from_hf_config(with_hf_quant_config(dict(spec.raw), quant), name=path.name, source=str(cfg))
    index = path / "model.safetensors.index.json"
    if index.exists():
        # an index without metadata.total_size (it is optional) leaves the headers to count the weights
        total = (validate_index(read_json_file(index), str(index)).get("metadata") or {}).get("total_size")
        if total:
            return ResolvedModel(spec, total, "safetensors-index",
                                 f"{index.name} metadata.total_size" + _cross_check(spec, total), None, str(path))
    shards = sorted(path.glob("*.safetensors"))
    if shards:
        total = sum(safetensors_payload_bytes(s) for s in shards)
        if total <= 0:  # SGLang would find no weight to load
            raise BadInput(f"--model: the safetensors files in {str(path)[:200]} hold no tensor data (their headers "
                           "list 0 bytes); give the checkpoint's files as published")
        return ResolvedModel(spec, total, "safetensors-headers",
                             f"sum of tensor sizes in {len(shards)} safetensors header(s)" + _cross_check(spec, total),
                             None, str(path))
    return _modelled(spec, None, str(path))


def _modelled(spec: ModelSpec, catalog_id: str | None, path: str | None) -> ResolvedModel:
    """No total at hand: the quantized weight model for a quantized checkpoint, else the estimate."""
    if spec.quant_method:
        from planner.catalog.quant import UnmodelledQuantization, quantized_weights  # noqa: PLC0415

        try:
            q = quantized_weights(spec)
        except UnmodelledQuantization as exc:  # usable only with measured free memory after the weights:
            # planner.engines.sglang.plan.make_plan raises this line (exit 2) when the weights have to be modelled
            return ResolvedModel(spec, 0, NOT_MODELLED, str(exc), catalog_id, path)
        assert q is not None
        return ResolvedModel(spec, q.memory_bytes, "quant-model",
                             f"modelled from quantization_config, {q.detail}; checkpoint tensors "
                             f"{q.checkpoint_bytes:,} B, as SGLang allocates them {q.memory_bytes:,} B",
                             catalog_id, path)
    est = estimate_weight_bytes(spec)
    return ResolvedModel(spec, est.total, "estimate", est.detail, catalog_id, path)


def _cross_check(spec: ModelSpec, total: int) -> str:
    """The model-based figure of a quantized checkpoint, beside an exact total."""
    if not spec.quant_method:
        return ""
    from planner.catalog.quant import UnmodelledQuantization, quantized_weights  # noqa: PLC0415

    try:
        q = quantized_weights(spec)
    except UnmodelledQuantization as exc:
        return f" (no weight model to cross-check: {exc})"
    if q is None:
        return ""
    return (f" (cross-check, {q.method} weight model: {q.checkpoint_bytes:,} B, "
            f"{(q.checkpoint_bytes - total) / total:+.3%})")


def with_online_quantization(model: ResolvedModel, method: str | None) -> ResolvedModel:
    """``--quantization <method>``: an unquantized checkpoint quantized while loading.

    SGLang builds ``Fp8Config()`` (no serialized checkpoint: srt/model_loader/weight_utils.py:344-374
    @0.5.23), each linear is created at the checkpoint dtype, loaded, then quantized to fp8 with a
    per-tensor scale in ``process_weights_after_loading`` (srt/model_loader/loader.py:1078-1090,
    srt/layers/quantization/fp8.py:1142 @0.5.23); ``get_available_gpu_memory`` empties the cache
    before the pools are sized, so the weights count at the fp8 size (the bf16 copy is a load-time
    peak only). A quantized checkpoint keeps its own method: SGLang checks the two agree.
    """
    if not method or model.spec.quant_method:
        return model
    from planner.catalog.quant import quantized_weights  # noqa: PLC0415

    q = quantized_weights(model.spec, online=method)
    assert q is not None
    return ResolvedModel(model.spec, q.memory_bytes, "quant-model",
                         f"--quantization {method} on a {model.spec.dtype} checkpoint: {q.detail} "
                         f"({model.weight_source} total {model.weight_bytes:,} B before quantization; "
                         f"the load peaks at that size)", model.catalog_id, model.path)


