"""Pipeline parallelism (``--pp-size P``): one plan per pp rank, as SGLang runs one scheduler per rank.

Each rank holds a contiguous range of layers, SGLang's ``get_pp_indices`` (srt/distributed/utils.py:95-131
@0.5.16, the same @0.5.23), ``SGLANG_PP_LAYER_PARTITION`` included; its KV pool covers its own layers only
(``layer_info.num_effective_layers``, model_runner_components/layer_setup.py:113-186 @0.5.16). Every rank sizes
its pool from its own free memory, then the ranks all-reduce the token capacity with MIN over the world group
(``KVCacheConfigurator._apply_token_constraints``, mem_cache/kv_cache_configurator.py:1593-1620 @0.5.16), so each
rank's pool holds the smallest rank's token count. The launch fits when every rank does.

Weights per rank (when free memory after loading is not given): a Qwen2/Qwen3-style dense model keeps the
embedding on the first rank (models/qwen2.py:285 @0.5.16), the final norm and the LM head on the last
(qwen2.py:322, qwen3.py:487-488 @0.5.16: with tied embeddings and pp > 1 the last rank builds its own head,
loaded from the embedding, qwen3.py:616), and the decoder layers in between; the layers' share is the
modelled per-GPU weight minus those three, split by layer count.

Verified against SGLang's own code (tests/golden/pp_pd/, scripts/oracle/pp_pd_cases.py) on the releases in
``VERIFIED`` for plain full-attention dense models; everything else with ``--pp-size > 1`` is refused by name.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from planner.catalog.catalog import ResolvedModel
from planner.errors import BadInput
from planner.hardware.profiles import GpuProfile

VERIFIED = frozenset({"0.5.16", "0.5.23"})
_ARCHS = frozenset({"Qwen3ForCausalLM"})  # dense full attention, embedding / norm / head as in models/qwen2.py
_DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "float32": 4}


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
    modelled = "; modelled: tensor parallelism (--tp-size), --pp-size for dense Qwen3 (Qwen3ForCausalLM) on SGLang "
    modelled += " and ".join(sorted(VERIFIED))
    if version not in VERIFIED:
        return f"--pp-size {size}: pipeline parallelism on SGLang {version} is not modelled (not verified){modelled}"
    arch = (spec.raw.get("architectures") or ["?"])[0]
    if (arch not in _ARCHS or spec.is_mambaish or spec.sliding is not None or spec.mla is not None
            or spec.vision is not None or spec.mtp_layers):
        return f"--pp-size {size}: pipeline parallelism with {arch} is not modelled{modelled}"
    if spec.dtype not in _DTYPE_BYTES or model.spec.raw.get("quantization_config"):
        return "--pp-size with a quantized checkpoint: the per-stage weight split is not modelled"
    for f in flags:
        if f.split("=")[0] in ("--speculative-algorithm", "--dp-size", "--data-parallel-size", "--enable-dp-attention",
                               "--disaggregation-mode", "--enable-lora", "--pp-max-micro-batch-size",
                               "--pp-async-batch-depth"):
            return f"{f.split('=')[0]} with --pp-size: not modelled with pipeline parallelism"
    return None


def stage_weight_bytes(model: ResolvedModel, per_gpu: int, tp: int, start: int, end: int, size: int) -> tuple[int, str]:
    """Weights one rank holds per GPU: its share of the decoder layers, the embedding on the first rank, the
    final norm and the LM head on the last (see the module docstring)."""
    spec = model.spec
    b = _DTYPE_BYTES[spec.dtype]
    n = spec.num_hidden_layers
    embed = -(-spec.vocab_size * spec.hidden_size * b // tp)  # VocabParallelEmbedding: split by tp
    head = embed
    norm = spec.hidden_size * b
    layers = per_gpu - embed - norm - (0 if spec.tie_word_embeddings else head)
    w = layers * (end - start) // n
    parts = [f"{end - start}/{n} of the decoder layers' {layers:,} B"]
    if start == 0:
        w += embed
        parts.append(f"+ embedding {embed:,} B (first rank)")
    if end == n:
        w += head + norm
        parts.append(f"+ LM head {head:,} B{' (its own copy of the tied embedding)' if spec.tie_word_embeddings else ''}"
                     f" + final norm {norm:,} B (last rank)")
    return w, " ".join(parts) + f"; per-GPU weights {per_gpu:,} B, vocab padding not counted"


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
        w, how = stage_weight_bytes(model, per_gpu, tp, start, end, size)
        stage_spec = replace(spec, full_attention_layer_ids=ids, num_hidden_layers=end - start)
        stage_model = replace(model, spec=stage_spec, weight_bytes=w * tp, weight_detail=f"pp rank {r}: {how}")
        ranks.append((r, start, end, stage_model))

    def run(min_tokens):
        out = []
        for r, start, end, m in ranks:
            fa = free_after_gib[r] if isinstance(free_after_gib, (list, tuple)) else free_after_gib
            p = make_plan(gpu, m, flags, env, free_before_gib, fa, version=version,
                          pp_stage=(r, size, min_tokens), **kw)
            # the capacity reached the all-reduce when the sizing completed (a later startup check may still fail)
            cap = p.profile.max_total_num_tokens if p.profile is not None else None
            out.append(Stage(r, start, end, p, cap))
        return out

    first = run(None)
    caps = [s.capacity for s in first]
    if any(c is None for c in caps):
        return first  # a rank stops before the all-reduce: SGLang never reaches it
    return run(min(caps))
