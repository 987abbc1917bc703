"""Pipeline parallelism (``--pp-size P``): one plan per pp rank, as SGLang runs one scheduler per rank.

Each rank holds a contiguous range of layers, SGLang's ``get_pp_indices`` (srt/distributed/utils.py:95-131
@0.5.16, the same @0.5.23), ``SGLANG_PP_LAYER_PARTITION`` included; its KV pool covers its own layers only
(``layer_info.num_effective_layers``, model_runner_components/layer_setup.py:113-186 @0.5.16). Every rank sizes
its pool from its own free memory, then the ranks all-reduce the token capacity with MIN over the world group
(``KVCacheConfigurator._apply_token_constraints``, mem_cache/kv_cache_configurator.py:1593-1620 @0.5.16), so each
rank's pool holds the smallest rank's token count. The launch fits when every rank does.

Per family (each checked against SGLang's code rank by rank, tests/golden/pp_pd/):
- dense Qwen3, Qwen3-MoE, MLA DeepSeek-V3, bf16 and FP8 checkpoints: the KV cell covers the rank's layers;
- hybrid GDN (Qwen3.5 / Qwen3.6, dense and MoE): each rank allocates its own GDN layers' state pools, reports the
  model's whole ``mamba_cache_per_req``, and its mamba budget charges every GDN layer on 0.5.16 but only the
  heaviest stage's share from 0.5.17 (``pp_layer_scale``, :func:`mamba_share`); the 'auto' mamba strategy is
  resolved before pp turns overlap off (so 'extra_buffer'), and sized with overlap off
  (arg_groups/model_hook.py ``pipeline_parallel_overlap``).

Weights per rank (when free memory after loading is not given) are the planner's weight model, not a
per-stage checkpoint read: the embedding on the first rank (models/qwen2.py:285 @0.5.16), the final norm and the
LM head on the last (qwen2.py:322, qwen3.py:487-488 @0.5.16: with tied embeddings and pp > 1 the last rank builds
its own head, loaded from the embedding, qwen3.py:616), a vision tower on every rank, and the decoder layers'
share weighted by each layer's parameter count (:func:`stage_weight_bytes`).

Release differences, each a named rule checked by the oracle on 0.5.14-0.5.23 (:data:`VERIFIED`):
- the hybrid mamba budget's stage scale from 0.5.17 (:func:`mamba_share`, kv_cache_configurator.py:1837 @0.5.17);
- a rank of GDN layers only: ZeroDivisionError up to 0.5.16 (pool_configurator.py:225 @0.5.14, :273 @0.5.15,
  :290 @0.5.16), a KV-less pool from
  0.5.17 (has_kv_on_another_pp_stage, pool_configurator.py:134-144 @0.5.17), refused by name;
- the breakable prefill CUDA graph off by default with pp from 0.5.19 (arg_groups/cuda_graph_hook.py:122 @0.5.19,
  :146-155 @0.5.23); 0.5.15-0.5.18 capture it; 0.5.14's default tc_piecewise prefill graph is off with pp
  (_disable_tc_piecewise_cudagraph_if_incompatible, srt/server_args.py:3009 @0.5.14);
  pipeline/arg_groups/cuda_graph_hook.py holds both.

Everything else with ``--pp-size > 1`` (other families, other quantizations, 0.5.9-0.5.13, speculative
decoding, DP / EP / PD with pp, micro-batch flags) is refused by name.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from planner.catalog.catalog import ResolvedModel
from planner.errors import BadInput
from planner.hardware.profiles import GpuProfile

# each release checked rank by rank against its own code (tests/golden/pp_pd/sglang-<release>/); 0.5.9-0.5.13 are
# refused: the oracle's pp stand-ins (scripts/oracle/adapters/pp_stage.py) do not run on their adapters
VERIFIED = frozenset({"0.5.14", "0.5.15", "0.5.16", "0.5.17", "0.5.18", "0.5.19", "0.5.20", "0.5.21", "0.5.22", "0.5.23"})
# the families checked rank by rank against SGLang's code (tests/golden/pp_pd/): dense Qwen3, Qwen3-MoE, hybrid GDN
# Qwen3.5 / Qwen3.6 (dense and MoE, their vision tower on every rank), MLA DeepSeek-V3; bf16 and FP8 checkpoints
_ARCHS = frozenset({"Qwen3ForCausalLM", "Qwen3MoeForCausalLM", "Qwen3_5ForConditionalGeneration",
                    "Qwen3_5MoeForConditionalGeneration", "DeepseekV3ForCausalLM"})
_QUANT = frozenset({"fp8"})  # quant_method of the checkpoints checked (FP8 block-quantized)
_DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "float32": 4}


def _vkey(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.split("."))


def pp_size_of(flags: list[str]) -> int:
    """``--pp-size`` / ``--pipeline-parallel-size`` from the flags (1 when absent or not a number)."""
    for i, f in enumerate(flags):
        for name in ("--pp-size", "--pipeline-parallel-size"):
            if f == name and i + 1 < len(flags):
                val = flags[i + 1]
            elif f.startswith(name + "="):
                val = f.split("=", 1)[1]
            else:
                continue
            try:
                return int(val)
            except ValueError:
                return 1  # argparse names the bad value
    return 1


def pp_indices(num_layers: int, rank: int, size: int, env: dict[str, str]) -> tuple[int, int]:
    """get_pp_indices (srt/distributed/utils.py:95-131 @0.5.16): [start, end) of ``rank``'s layers."""
    text = env.get("SGLANG_PP_LAYER_PARTITION")
    if text is not None:
        try:
            parts = [int(x) for x in text.split(",")]
        except ValueError:
            raise BadInput(f"SGLANG_PP_LAYER_PARTITION={text!r}: not a comma-separated list of layer counts "
                           f"(e.g. {num_layers // 2},{num_layers - num_layers // 2})") from None
        if len(parts) != size:
            raise BadInput(f"SGLANG_PP_LAYER_PARTITION={text!r}: {len(parts)} entries, --pp-size is {size}")
        if sum(parts) != num_layers:
            raise BadInput(f"SGLANG_PP_LAYER_PARTITION={text!r}: sums to {sum(parts)}, the model has {num_layers} layers")
        start = sum(parts[:rank])
        return start, start + parts[rank]
    base, rem = divmod(num_layers, size)
    if rank >= size - rem:  # the last ``rem`` ranks take one extra layer
        start = rank * (base + 1) - (size - rem)
        return start, start + base + 1
    return rank * base, rank * base + base


def refusal(model: ResolvedModel, flags: list[str], version: str) -> str | None:
    """One line naming what this planner does not model for a --pp-size > 1 launch, else None."""
    spec = model.spec
    size = pp_size_of(flags)
    modelled = (f"; modelled: --pp-size for {', '.join(sorted(_ARCHS))} (bf16 / FP8 checkpoints) on SGLang "
                + ", ".join(sorted(VERIFIED, key=_vkey)))
    if version not in VERIFIED:
        return f"--pp-size {size}: pipeline parallelism on SGLang {version} is not modelled (not verified){modelled}"
    arch = (spec.raw.get("architectures") or ["?"])[0]
    if arch not in _ARCHS or spec.sliding is not None or (spec.is_mambaish and spec.hybrid != "gdn"):
        return f"--pp-size {size}: pipeline parallelism with {arch} is not modelled{modelled}"
    quant = spec.quant_method
    if spec.dtype not in _DTYPE_BYTES or (quant is not None and quant not in _QUANT):
        return (f"--pp-size with a {quant or spec.dtype} checkpoint: not modelled with pipeline parallelism "
                "(bf16 and FP8 checkpoints are)")
    for f in flags:
        if f.split("=")[0] in ("--speculative-algorithm", "--dp-size", "--data-parallel-size", "--enable-dp-attention",
                               "--disaggregation-mode", "--enable-lora", "--pp-max-micro-batch-size",
                               "--pp-async-batch-depth", "--ep-size", "--expert-parallel-size", "--moe-a2a-backend",
                               "--enable-eplb", "--attn-dp-size", "--enable-dp-lm-head", "--nnodes"):
            return f"{f.split('=')[0]} with --pp-size: not modelled with pipeline parallelism"
    return None


def _layer_params(spec, layer: int) -> int:
    """One decoder layer's parameters, as planner.catalog.weights counts them (attention or the GDN mixer, the
    dense MLP or the MoE block, two norms); an MLA model's from its checkpoint tensor list."""
    from planner.catalog import weights as W  # noqa: PLC0415
    from planner.catalog.spec import is_dense_moe_layer  # noqa: PLC0415

    h, t = spec.hidden_size, spec.text
    n = 2 * h + (W._dense_mlp_params(spec) if is_dense_moe_layer(spec, t, layer) else W._mlp_params(spec, t))
    n += W._attn_params(spec) if layer in spec.full_attention_layer_ids else 0
    return n + (W._mixer_params(spec) if layer in spec.mamba_layer_ids else 0)


def _mla_layer_params(spec) -> dict[int, int]:
    import re  # noqa: PLC0415

    from planner.catalog.quant_tensors import checkpoint_tensors, numel  # noqa: PLC0415

    out: dict[int, int] = {}
    for tensor in checkpoint_tensors(spec):
        m = re.match(r"model\.layers\.(\d+)\.", tensor.name)
        if m and int(m.group(1)) < spec.num_hidden_layers:  # the MTP layer (index n) loads with the draft
            out[int(m.group(1))] = out.get(int(m.group(1)), 0) + numel(tensor)
    return out


def _vision_bytes(spec, tp: int) -> int:
    """The vision tower's bytes per GPU (planner.catalog.weights' count, bf16, split by tp): SGLang builds it on
    every pp rank (Qwen3VLForConditionalGeneration.__init__, models/qwen3_vl.py:1328-1340 @0.5.23)."""
    if not (spec.vision and spec.vision.hidden_size):
        return 0
    vh = spec.vision.hidden_size
    depth = spec.vision.num_hidden_layers or spec.vision.depth or 0
    vinter = int((spec.raw.get("vision_config") or {}).get("intermediate_size") or 4 * vh)
    return -(-depth * (4 * vh * vh + 2 * vh * vinter) * 2 // tp)


def stage_weight_bytes(model: ResolvedModel, per_gpu: int, tp: int, start: int, end: int, size: int) -> tuple[int, str]:
    """Weights one rank holds per GPU, by the planner's weight model (not read from a checkpoint per stage): its
    share of the decoder layers weighted by each layer's parameter count (a MoE model's dense first layers, a
    hybrid model's attention / GDN layers differ), the embedding on the first rank, the final norm and the LM head
    on the last, a vision tower on every rank (see the module docstring)."""
    spec = model.spec
    b = _DTYPE_BYTES[spec.dtype]
    n = spec.num_hidden_layers
    embed = -(-spec.vocab_size * spec.hidden_size * b // tp)  # VocabParallelEmbedding: split by tp
    head = embed
    norm = spec.hidden_size * b
    vision = _vision_bytes(spec, tp)
    layers = per_gpu - embed - norm - vision - (0 if spec.tie_word_embeddings else head)
    weights = _mla_layer_params(spec) if spec.mla is not None else {i: _layer_params(spec, i) for i in range(n)}
    total = sum(weights.get(i, 0) for i in range(n)) or n
    mine = sum(weights.get(i, 0) for i in range(start, end)) if total != n else end - start
    w = layers * mine // total + vision
    parts = [f"layers [{start}, {end}): {mine / total:.4f} of the decoder layers' {layers:,} B (by parameter count)"]
    if vision:
        parts.append(f"+ vision tower {vision:,} B (every rank)")
    if start == 0:
        w += embed
        parts.append(f"+ embedding {embed:,} B (first rank)")
    if end == n:
        w += head + norm
        parts.append(f"+ LM head {head:,} B{' (its own copy of the tied embedding)' if spec.tie_word_embeddings else ''}"
                     f" + final norm {norm:,} B (last rank)")
    return w, " ".join(parts) + f"; per-GPU weights {per_gpu:,} B (the planner's weight model), vocab padding not counted"


def mamba_share(spec, size: int, env: dict[str, str], version: str | None) -> tuple[int, int]:
    """(the model's mamba layers, the layers each rank's mamba budget charges). From 0.5.17 every rank charges
    the heaviest stage's share, ``pp_layer_scale = max_stage_mamba_layers / len(all_mamba_layers)``
    (_handle_max_mamba_cache, mem_cache/kv_cache_configurator.py:1823-1846 @0.5.17, :3233-3260 @0.5.23);
    0.5.16 charges every mamba layer of the model (mamba_cache_per_req, no pp term) while each rank allocates
    only its own layers' pools: the oracle shows both (tests/golden/pp_pd/)."""
    all_ids = spec.mamba_layer_ids
    if version is not None and _vkey(version) < (0, 5, 17):
        return len(all_ids), len(all_ids)
    n = spec.num_hidden_layers
    heaviest = max(sum(1 for i in all_ids if a <= i < b)
                   for a, b in (pp_indices(n, r, size, env) for r in range(size)))
    return len(all_ids), heaviest


@dataclass
class Stage:
    rank: int
    start: int
    end: int
    plan: object  # planner.engines.sglang.plan.Plan
    capacity: int | None  # its token capacity before the pp MIN


def make_pp_plans(gpu: GpuProfile, model: ResolvedModel, flags: list[str], env: dict[str, str], size: int,
                  free_before_gib: float | None = None, free_after_gib: float | list[float] | None = None,
                  version: str | None = None, **kw) -> list[Stage]:
    """Every rank's plan: pass 1 sizes each rank alone, pass 2 again with the group's MIN token capacity.
    ``free_after_gib``: one value for every rank, or one per rank (measured)."""
    from planner.engines.sglang.plan import make_plan, target_weight_bytes, _tp_from_flags  # noqa: PLC0415

    spec = model.spec
    n = spec.num_hidden_layers
    if size > n:
        raise BadInput(f"--pp-size {size}: more ranks than the model's {n} layers")
    tp = _tp_from_flags(flags)
    per_gpu = target_weight_bytes(model, tp)[0]
    ranks = []
    for r in range(size):
        start, end = pp_indices(n, r, size, env)
        ids = tuple(i for i in spec.full_attention_layer_ids if start <= i < end)
        mids = tuple(i for i in spec.mamba_layer_ids if start <= i < end)
        w, how = stage_weight_bytes(model, per_gpu, tp, start, end, size)
        stage_spec = replace(spec, full_attention_layer_ids=ids, mamba_layer_ids=mids, num_hidden_layers=end - start)
        stage_model = replace(model, spec=stage_spec, weight_bytes=w * tp, weight_detail=f"pp rank {r}: {how}")
        ranks.append((r, start, end, stage_model))

    empty = [r for r, start, end, m in ranks if spec.full_attention_layer_ids and not m.spec.full_attention_layer_ids]
    if empty and (version is None or _vkey(version) >= (0, 5, 17)):
        # 0.5.17+ gives such a rank int64-max tokens so the MIN takes the others' (has_kv_on_another_pp_stage,
        # model_executor/pool_configurator.py:134-144 @0.5.17, :240-249 @0.5.23); 0.5.16 divides by its zero
        # cell, which the plan reproduces (pipeline/__init__.py memory_pool_config)
        raise BadInput(f"--pp-size {size}: pp rank {empty[0]} holds no attention layer (only GDN layers); its "
                       "KV-less pool on SGLang 0.5.17+ is not modelled (move an attention layer onto it with "
                       "SGLANG_PP_LAYER_PARTITION)")
    share = mamba_share(spec, size, env, version) if spec.mamba_layer_ids else None

    def run(min_tokens):
        out = []
        for r, start, end, m in ranks:
            fa = free_after_gib[r] if isinstance(free_after_gib, (list, tuple)) else free_after_gib
            p = make_plan(gpu, m, flags, env, free_before_gib, fa, version=version,
                          pp_stage=(r, size, min_tokens, share), **kw)
            # the capacity reached the all-reduce when the sizing completed (a later startup check may still fail)
            cap = p.profile.max_total_num_tokens if p.profile is not None else None
            out.append(Stage(r, start, end, p, cap))
        return out

    first = run(None)
    caps = [s.capacity for s in first]
    if any(c is None for c in caps):
        return first  # a rank stops before the all-reduce: SGLang never reaches it
    return run(min(caps))
