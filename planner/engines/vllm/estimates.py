"""What vLLM measures at boot, estimated before boot: weights, non-torch memory, the profile run's activation peak,
CUDA-graph memory (issue #26 item 5).

The vLLM oracle takes these as measured inputs (``inputs.Measured``, the oracle's names); a user who has a boot log
gives them (``logs.read_log``), everyone else gets these estimates. Each estimate returns bytes (integers) and a
``how`` line saying what it is made of and, for the fitted parts, on which public logs and with what residual.

* **weights** (:func:`vllm_weights_bytes`): the catalog's weights (``planner/catalog/weights.py``: the architecture's
  parameter count at the checkpoint dtype, or ``planner/catalog/quant.py`` for a quantized checkpoint) per rank, as
  vLLM's meta model holds them: the checkpoint's MTP layer only under MTP speculative decoding, tensors vLLM
  replicates on every rank (norms, MoE routers, K/V heads when ``tp`` > KV heads, DeepSeek's q_a / kv_a projections)
  whole on every rank, the rest split ``1/tp``, plus the rotary embedding's ``cos_sin_cache`` buffer
  (``model_executor/layers/rotary_embedding/base.py:58-63 @0.34.0``: ``max_position x rotary_dim``, the model dtype;
  float32 for YaRN scaling, ``deepseek_scaling_rope.py:229-242``), which ``load_model`` counts too (the oracle's
  ``weights_bytes_meta``: parameter + buffer bytes of the meta model).
* **activation peak** (:func:`peak_activation_bytes`): ``profile_run`` (``v1/worker/gpu/model_runner.py:1070-1110
  @0.34.0``) runs ``_dummy_run(max_num_batched_tokens, skip_attn=True)`` (no attention workspace) and then the
  sampler twice on ``min(max_num_batched_tokens, max_num_seqs)`` logit rows (``_dummy_sampler_run``, :1039-1068: the
  default pass, then the warmup-parameter pass with the fp32 logits pipeline, ``sample/sampler.py:239``, top-k /
  top-p by sort, ``v1/sample/ops/topk_topp_sampler.py:242-255``). The transient peak above what stays allocated is the
  larger of the forward's and the sampler's live sets (:data:`FORWARD_ACT`, :data:`SAMPLER_BYTES`).
* **non-torch memory** (:func:`non_torch_bytes`): what stays in use after the profile run besides the weights
  (cuBLAS / NCCL / custom all-reduce buffers, kernel modules); a constant per GPU class fitted on the public logs
  where ``requested - weights - available - graphs`` is known, minus the activation estimate, plus the NCCL
  buffers of ``tp`` > 1.
* **CUDA graphs** (:func:`cudagraph_bytes`): what ``profile_cudagraph_memory`` returns (0.33, and 0.34 without the
  extensible KV cache; 0.34's extensible cache returns 0 there, ``gpu/model_runner.py:1121-1128``): a constant plus a
  cost per captured graph and layer, fitted on the logs' ``Profiling CUDA graph memory: PIECEWISE=N, FULL=M`` /
  ``Estimated CUDA graph memory: X GiB`` pairs.
* **startup** (:func:`startup_used_bytes`): device memory in use at the worker's init snapshot (CUDA context, cuBLAS
  handles, NCCL for ``tp`` > 1); outside vLLM's budget, it only decides ``request_memory``'s free-memory check.

The fitted coefficients and the residuals per GPU class live in ``calibration.json`` beside this file, written by
``scripts/fit_vllm_calibration.py`` from ``tests/data/calibration/vllm/`` (:func:`calibration_table` prints them).
Pure: no I/O except reading that package data file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from planner.catalog.spec import DTYPE_BYTES, ModelSpec
from planner.errors import BadInput

GIB = 1 << 30
MIB = 1 << 20
CALIBRATION_FILE = Path(__file__).resolve().parent / "calibration.json"
VOCAB_PADDING = 64  # DEFAULT_VOCAB_PADDING_SIZE (model_executor/layers/vocab_parallel_embedding.py @0.34.0)

# GPU classes by compute capability, as planner/engines/sglang/calibration.py keys them (one vocabulary for both
# engines' calibration tables)
GPU_CLASSES = {
    "sm80": "datacenter Ampere (A100)",
    "sm86": "consumer Ampere (RTX 30, A10G, RTX A5000/A6000)",
    "sm89": "Ada (RTX 40, L4, L40S, RTX 6000 Ada)",
    "sm90": "Hopper (H100, H200, H20, GH200)",
    "sm100": "datacenter Blackwell (B200, B300, GB200)",
    "sm12x": "consumer Blackwell (RTX 50, RTX PRO 6000, DGX Spark)",
}


def gpu_class(sm: str | None) -> str:
    """The class of a compute capability string ("12.0", "9.0"); "" when unknown."""
    try:
        major, minor = (int(x) for x in str(sm).split(".")[:2])
    except (TypeError, ValueError):
        return ""
    if major >= 11:
        return "sm12x"
    return {(8, 0): "sm80", (8, 6): "sm86", (8, 7): "sm86", (8, 9): "sm89", (9, 0): "sm90"}.get(
        (major, minor), "sm100" if major == 10 else "")


@dataclass(frozen=True)
class Estimate:
    bytes: int
    how: str

    @property
    def gib(self) -> float:
        return self.bytes / GIB


# ---------------------------------------------------------------------------------------------------------- weights

def _text(spec: ModelSpec) -> dict:
    return spec.text


def rope_cache_bytes(spec: ModelSpec) -> tuple[int, str]:
    """The rotary embedding's ``cos_sin_cache`` buffer: ``max_position x rotary_dim`` elements (cos and sin halves),
    in the model dtype (base.py:58-63 @0.34.0) or float32 for YaRN / DeepSeek-YaRN scaling (yarn_scaling_rope.py,
    deepseek_scaling_rope.py:229-242 keep the float32 cache); one buffer per model (``get_rope`` is cached)."""
    t = _text(spec)
    scaling = t.get("rope_scaling") or t.get("rope_parameters") or {}
    if not isinstance(scaling, dict):
        scaling = {}
    kind = str(scaling.get("rope_type") or scaling.get("type") or "default")
    if spec.mla is not None:
        rotary = spec.mla.qk_rope_head_dim
    else:
        partial = t.get("partial_rotary_factor", scaling.get("partial_rotary_factor", 1.0)) or 1.0
        rotary = int(spec.head_dim * float(partial))
    max_pos = int(t.get("max_position_embeddings") or 0)
    per = DTYPE_BYTES.get(spec.dtype, 2)
    if kind in ("yarn", "deepseek_yarn"):
        orig = int(scaling.get("original_max_position_embeddings") or max_pos)
        factor = float(scaling.get("factor") or 1.0)
        max_pos, per = int(orig * factor), 4
    if spec.architecture == "NemotronHForCausalLM" or not max_pos or not rotary:
        return 0, "no rotary embedding buffer"
    return max_pos * rotary * per, f"rotary cos_sin_cache {max_pos:,} positions x {rotary} x {per} B ({kind})"


def _replicated_bytes(spec: ModelSpec) -> int:
    """Bytes vLLM keeps whole on every rank among the checkpoint's tensors: norms (RMSNorm weights), MoE routers and
    gates (``ReplicatedLinear``), attention sinks; from the tensor list where the family is enumerated, else the norms
    and routers counted from the config."""
    from planner.catalog.quant_tensors import Linear, NotEnumerated, checkpoint_tensors, is_mtp_tensor, numel  # noqa: PLC0415

    per = DTYPE_BYTES.get(spec.dtype, 2)
    try:
        tensors = checkpoint_tensors(spec)
    except NotEnumerated:
        h, layers = spec.hidden_size, spec.num_hidden_layers
        router = layers * h * (spec.num_experts or 0)
        return ((2 * layers + 1) * h + router) * per
    total = 0
    for t in tensors:
        if is_mtp_tensor(t.name, spec) or t.name.startswith(("visual.", "model.visual.")):
            continue
        leaf = t.name.rsplit(".", 1)[-1] if isinstance(t, Linear) else t.name
        if isinstance(t, Linear):
            # DeepSeek's routers are in replicated_mla_bytes (with its q_a / kv_a projections)
            if (t.unquantized or leaf in ("gate", "router")) and spec.mla is None:
                total += numel(t) * per
        elif "norm" in t.name or t.name.endswith("sinks"):
            total += numel(t) * (4 if getattr(t, "float32", False) else per)
    return total


def _loaded_bytes(spec: ModelSpec, mtp: bool, checkpoint_bytes: int | None = None,
                  checkpoint_source: str = "the catalog's checkpoint total") -> tuple[int, str]:
    """The checkpoint's weights as loaded, whole (all ranks together), without the MTP layer unless ``mtp``.
    ``checkpoint_bytes`` (the catalog's ``ResolvedModel.weight_bytes``, MTP included as published) stands where the
    family's tensor list is not enumerated (NemotronH, Llama 4, ...)."""
    from planner.catalog.weights import estimate_weight_bytes, mtp_weight_bytes  # noqa: PLC0415

    if spec.quant_method:
        from planner.catalog.quant import UnmodelledQuantization, quantized_weights  # noqa: PLC0415
        try:
            q = quantized_weights(spec)
        except UnmodelledQuantization as e:
            raise BadInput(f"vLLM weights of a {spec.quant_method} checkpoint: {e}") from e
        if q is None:
            raise BadInput(f"vLLM weights of a {spec.quant_method} checkpoint are not modelled")
        total, how = q.memory_bytes, f"quantized checkpoint ({q.detail})"
        mtp_b = q.mtp_memory_bytes or 0
    else:
        from planner.catalog.quant_tensors import NotEnumerated, Param, checkpoint_tensors, is_mtp_tensor, numel  # noqa: PLC0415

        per = DTYPE_BYTES.get(spec.dtype, 2)
        try:  # the checkpoint's tensor list (reproduces the published BF16 total_size, tests/test_quant_weights.py)
            tensors = checkpoint_tensors(spec)
        except NotEnumerated:
            if checkpoint_bytes:
                total, how = checkpoint_bytes, f"{checkpoint_source}: {checkpoint_bytes:,} B"
            else:
                est = estimate_weight_bytes(spec)
                total, how = est.total, est.detail
            mtp_b = mtp_weight_bytes(spec)
        else:
            def size(t) -> int:
                return numel(t) * (4 if isinstance(t, Param) and t.float32 else per)
            total = sum(size(t) for t in tensors)
            mtp_b = sum(size(t) for t in tensors if is_mtp_tensor(t.name, spec))
            how = f"the checkpoint's {len(tensors):,} tensors at {spec.dtype}: {total:,} B"
    if mtp_b and not mtp:
        total -= mtp_b
        how += f" - MTP layer {mtp_b:,} B (vLLM builds it only under MTP speculative decoding)"
    return total, how


MXFP4_PADDING = {  # (intermediate per partition, hidden) alignment of the MXFP4 MoE backend
    # (model_executor/layers/fused_moe/oracle/mxfp4.py:822-902 @0.34.0, mxfp4_round_up_hidden_size_and_intermediate_size)
    "default": (64, 1),  # the fallback branch (Triton): what the oracle's build selects on SM 9.0 / 10.0 / 12.0
    "marlin": (128, 256),  # weight-only FP4 on GPUs without native FP4 (Marlin)
    "trtllm": (128, 256),
    "cutlass": (128, 128),  # FlashInfer CUTLASS MXFP4
}


def _mxfp4_expert_bytes(layers: int, experts: int, inter: int, hidden: int) -> int:
    """One rank's MXFP4 expert tensors (mxfp4.py create_weights @0.34.0): w13 ``[E, 2I, H/2]`` uint8 + scales
    ``[E, 2I, H/32]``, w2 ``[E, H, I/2]`` + ``[E, H, I/32]``, biases ``[E, 2I]`` / ``[E, H]`` bf16."""
    w13 = 2 * inter * (hidden // 2 + hidden // 32) + 2 * inter * 2
    w2 = hidden * (inter // 2 + inter // 32) + hidden * 2
    return layers * experts * (w13 + w2)


def mxfp4_padding_bytes(spec: ModelSpec, tp: int, backend: str = "default") -> int:
    """Bytes one rank's MXFP4 experts gain from the backend's alignment of the per-partition intermediate size and
    the hidden size (gpt-oss): 0 for other checkpoints."""
    if spec.quant_method != "mxfp4" or not spec.num_experts:
        return 0
    if backend not in MXFP4_PADDING:
        raise BadInput(f"MXFP4 MoE backend {backend!r}: modelled are {', '.join(MXFP4_PADDING)}")
    ia, ha = MXFP4_PADDING[backend]
    inter = (spec.intermediate_size or spec.hidden_size) // tp
    h = spec.hidden_size
    pad_i, pad_h = -(-inter // ia) * ia, -(-h // ha) * ha
    n = spec.num_hidden_layers
    return _mxfp4_expert_bytes(n, spec.num_experts, pad_i, pad_h) - _mxfp4_expert_bytes(n, spec.num_experts, inter, h)


def vllm_weights_bytes(spec: ModelSpec, tp: int = 1, pp: int = 1, *, mtp: bool = False,
                       mxfp4_backend: str = "default", checkpoint_bytes: int | None = None,
                       checkpoint_source: str = "the catalog's checkpoint total") -> Estimate:
    """The weights of one rank as vLLM's ``load_model`` measures them (the oracle's ``weights_bytes_meta``), from the
    catalog's weights: see the module docstring. ``mtp``: MTP speculative decoding (the drafter's layer is loaded
    into the same profiler, ``gpu/model_runner.py:419-424``). ``pp`` > 1 is not modelled (refused by name).
    ``checkpoint_bytes``: the catalog's published checkpoint total (``ResolvedModel.weight_bytes``), used for a family
    without a tensor list; ``mxfp4_backend``: the MXFP4 MoE backend's padding (:data:`MXFP4_PADDING`)."""
    if pp != 1:
        raise BadInput("vLLM weights per pipeline stage (--pipeline-parallel-size > 1) are not modelled")
    if tp < 1:
        raise BadInput(f"tensor parallel size {tp}")
    from planner.catalog.weights import replicated_kv_bytes, replicated_mla_bytes  # noqa: PLC0415

    total, how = _loaded_bytes(spec, mtp, checkpoint_bytes, checkpoint_source)
    per = DTYPE_BYTES.get(spec.dtype, 2)
    pad = (-spec.vocab_size) % VOCAB_PADDING * spec.hidden_size * per * (1 if spec.tie_word_embeddings else 2)
    replicated = _replicated_bytes(spec) if tp > 1 else 0
    split = -(-(total + pad - replicated) // tp)
    kv = replicated_kv_bytes(spec, tp)
    mla = replicated_mla_bytes(spec, tp)
    rope, rope_how = rope_cache_bytes(spec)
    mx = mxfp4_padding_bytes(spec, tp, mxfp4_backend)
    parts = [f"{how}", f"/ tp {tp}" if tp > 1 else ""]
    if pad:
        parts.append(f"+ vocabulary padded to a multiple of {VOCAB_PADDING} ({pad:,} B)")
    if replicated:
        parts.append(f"+ norms and routers kept whole on every rank ({replicated:,} B)")
    if kv:
        parts.append(f"+ K/V heads replicated ({spec.num_key_value_heads} KV heads < tp {tp}: {kv:,} B)")
    if mla:
        parts.append(f"+ MLA q_a / kv_a projections and routers replicated ({mla:,} B)")
    if mx:
        parts.append(f"+ MXFP4 experts padded by the {mxfp4_backend} MoE backend ({mx:,} B)")
    if rope:
        parts.append(f"+ {rope_how} ({rope:,} B)")
    return Estimate(split + replicated + kv + mla + mx + rope, " ".join(p for p in parts if p))


# ------------------------------------------------------------------------------------------- the profile run's peak

SAMPLER_FP32_BYTES = 20  # per logit in the warmup-parameter pass: fp32 copy (sampler.py:239) 4 + sort values 4 +
#                          sort indices (int64) 8 + softmax probabilities 4 (topk_topp_sampler.py:242-255 @0.34.0).
#                          The sort path (sampler.py:334-346); FlashInfer's fused top-k/top-p sampler (sampler.py:300-
#                          333, when FlashInfer is installed) allocates no sort buffers: there this is an upper bound
FORWARD_HIDDEN_COPIES = 3  # residual, normed input and a layer's output live across the MLP (T x hidden each)
NON_TORCH_FLOOR = 160 * MIB  # the smallest non-torch figure a public log reports (V0 breakdown, two H100 logs: 0.16 GiB)
STARTUP_CONTEXT = 450 * MIB  # CUDA context + cuBLAS handles at init (torch's first CUDA call, pytorch/pytorch#109888)


def _mlp_width(spec: ModelSpec, tp: int) -> tuple[int, str]:
    """Per token, the MLP's live intermediate elements in one layer on one rank: gate_up (2 I) + activated (I)."""
    t = _text(spec)
    if spec.num_experts:
        topk = int(t.get("num_experts_per_tok") or t.get("experts_per_token") or t.get("moe_topk") or 1)
        moe = spec.moe_intermediate_size or spec.intermediate_size or spec.hidden_size
        shared = spec.shared_expert_intermediate_size or 0
        if spec.mla is not None:
            shared = spec.mla.n_shared_experts * moe
        w = topk * (3 * moe // tp + spec.hidden_size) + 3 * shared // tp
        return w, f"MoE: top-{topk} x (3 x {moe} / tp + hidden){f' + shared 3 x {shared} / tp' if shared else ''}"
    inter = spec.intermediate_size or 4 * spec.hidden_size
    return 3 * inter // tp, f"3 x intermediate {inter} / tp"


def peak_activation_bytes(spec: ModelSpec, max_num_batched_tokens: int, max_num_seqs: int, tp: int = 1) -> Estimate:
    """The profile run's transient peak above what stays allocated (the oracle's ``peak_activation_gib``): the larger
    of the forward pass at ``max_num_batched_tokens`` tokens without attention (``T x (3 hidden + MLP width) x dtype``)
    and the sampler's two passes on ``R = min(T, max_num_seqs)`` rows of the padded vocabulary
    (``R x V x (dtype + 20 B)``, with the forward's ``T x hidden`` output still alive)."""
    per = DTYPE_BYTES.get(spec.dtype, 2)
    T = max_num_batched_tokens
    R = min(T, max_num_seqs)
    h = spec.hidden_size
    width, width_how = _mlp_width(spec, tp)
    forward = T * (FORWARD_HIDDEN_COPIES * h + width) * per
    vocab = -(-spec.vocab_size // VOCAB_PADDING) * VOCAB_PADDING
    sampler = R * vocab * (per + SAMPLER_FP32_BYTES) + T * h * per
    how = (f"max(forward {T:,} tokens x (3 x {h} + {width_how}) x {per} B = {forward / GIB:.2f} GiB, sampler "
           f"{R:,} rows x {vocab:,} vocab x ({per} + {SAMPLER_FP32_BYTES}) B + the hidden states = {sampler / GIB:.2f} GiB)"
           f" (profile_run, v1/worker/gpu/model_runner.py:1070-1110 @0.34.0)")
    return Estimate(max(forward, sampler), how)


# --------------------------------------------------------------------------------------------- calibration (fitted)

@lru_cache(maxsize=1)
def calibration() -> dict:
    return json.loads(CALIBRATION_FILE.read_text(encoding="utf-8"))


def _class_value(table: str, cls: str, key: str) -> tuple[float, str, int]:
    """(value, the class it came from, its logs): the class's own fit, else the largest of any class."""
    classes = calibration()[table]["classes"]
    if cls in classes:
        return classes[cls][key], cls, classes[cls]["logs"]
    best = max(classes, key=lambda c: classes[c][key])
    return classes[best][key], best, 0


def non_torch_bytes(sm: str | None, tp: int = 1) -> Estimate:
    """Memory that stays in use after the profile run besides the weights (the oracle's ``non_torch_gib``), fitted per
    GPU class on the logs where ``requested - weights - available - CUDA-graph estimate`` is known: that figure less
    :func:`peak_activation_bytes`, the largest on the class's logs (at least :data:`NON_TORCH_FLOOR`)."""
    cls = gpu_class(sm)
    value, src, logs = _class_value("combined", cls, "non_torch_gib")
    b = max(int(value * GIB), NON_TORCH_FLOOR)
    how = (f"{b / GIB:.2f} GiB: fitted on {logs} public log(s) of {GPU_CLASSES.get(src, src)}" if logs else
           f"{b / GIB:.2f} GiB: no public log of {GPU_CLASSES.get(cls, cls or 'this GPU')}, so the largest class "
           f"constant ({src})")
    if tp > 1:  # NCCL's communicators and custom all-reduce buffers exist before the init snapshot: startup_used
        how += "; tp > 1 adds nothing here (the communicators are in use at startup, startup_used_bytes)"
    return Estimate(b, how)


def capture_counts(cudagraph_mode: str, capture_sizes: tuple[int, ...] | list[int], max_num_seqs: int) -> dict:
    """Graphs ``profile_cudagraph_memory`` captures: PIECEWISE = every capture size, FULL = the uniform-decode sizes up
    to ``max_num_seqs`` (as the logs' ``Profiling CUDA graph memory: PIECEWISE=51 (largest=512), FULL=35
    (largest=256)`` show for 256 sequences); none under ``NONE``."""
    mode = str(cudagraph_mode or "NONE").upper()
    sizes = sorted(int(s) for s in capture_sizes or ())
    out = {}
    if "PIECEWISE" in mode and sizes:
        out["PIECEWISE"] = len(sizes)
    if mode.startswith("FULL") and sizes:
        full = [s for s in sizes if s <= max_num_seqs] if "PIECEWISE" in mode else sizes
        if full:
            out["FULL"] = len(full)
    return out


def cudagraph_bytes(spec: ModelSpec, sm: str | None, counts: dict, *, draft_layers: int = 0,
                    extensible_kv_cache: bool = False) -> Estimate:
    """What ``profile_cudagraph_memory`` returns (the oracle's ``cudagraph_gib``): 0 under the 0.34 extensible KV cache
    (``gpu/model_runner.py:1121-1128``) or without graphs, else ``base + per graph-layer x (graphs x layers)``, fitted
    on the public logs' capture profiles (one fit for all classes until a class has its own logs)."""
    if extensible_kv_cache:
        return Estimate(0, "0: the extensible KV cache measures the capture after warmup (gpu/model_runner.py:1121-1128 @0.34.0)")
    graphs = sum(counts.values())
    if not graphs:
        return Estimate(0, "0: no CUDA graphs captured (cudagraph mode NONE / enforce eager)")
    cls = gpu_class(sm)
    fit = calibration()["cudagraph"]
    own = fit["classes"].get(cls)
    base, slope = (own or fit)["base_gib"], (own or fit)["per_graph_layer_mib"]
    layers = spec.num_hidden_layers + draft_layers
    b = int(base * GIB + slope * MIB * graphs * layers)
    src = f"{GPU_CLASSES.get(cls, cls)}'s {own['logs']} log(s)" if own else f"the {fit['logs']} public capture logs of every class"
    return Estimate(b, f"{base:.3f} GiB + {slope:.4f} MiB x {graphs} graphs x {layers} layers (fitted on {src})")


def startup_used_bytes(sm: str | None, tp: int = 1) -> Estimate:
    """Device memory in use at the worker's init snapshot (the oracle's ``startup_used_gib``): the CUDA context for one
    GPU; with ``tp`` > 1 the largest ``total - free on startup`` a public log of the class shows (NCCL, custom
    all-reduce, the other ranks' contexts are not on this device), else the largest of any class."""
    if tp <= 1:
        return Estimate(STARTUP_CONTEXT, f"{STARTUP_CONTEXT // MIB} MiB: CUDA context + cuBLAS handles (no TP buffers)")
    value, src, logs = _class_value("startup", gpu_class(sm), "startup_gib")
    how = (f"{value:.2f} GiB: 'Free memory on device ... on startup' on {logs} public TP log(s) of {src}" if logs else
           f"{value:.2f} GiB: no public TP log of this class, the largest class figure ({src})")
    return Estimate(int(value * GIB), how)


@dataclass(frozen=True)
class Estimates:
    """The oracle's measured inputs for one launch, estimated, each with its ``how``."""

    weights: Estimate
    non_torch: Estimate
    peak_activation: Estimate
    cudagraph: Estimate  # what profile_cudagraph_memory returns (0 under the 0.34 extensible KV cache)
    startup_used: Estimate
    cudagraph_actual: Estimate | None = None  # 0.34 extensible KV cache: the real capture, measured after warmup

    def measured(self):
        """As :class:`planner.engines.vllm.inputs.Measured` (GiB floats, the oracle's names)."""
        from planner.engines.vllm.inputs import Measured  # noqa: PLC0415

        return Measured(startup_used_gib=self.startup_used.gib, weights_gib=self.weights.gib,
                        non_torch_gib=self.non_torch.gib, peak_activation_gib=self.peak_activation.gib,
                        cudagraph_gib=self.cudagraph.gib,
                        cudagraph_actual_gib=None if self.cudagraph_actual is None else self.cudagraph_actual.gib)

    def lines(self) -> list[str]:
        parts = [("weights", self.weights), ("non-torch", self.non_torch), ("activation peak", self.peak_activation),
                 ("CUDA graphs (profile estimate)", self.cudagraph), ("in use at startup", self.startup_used)]
        if self.cudagraph_actual is not None:
            parts.append(("CUDA graphs (the capture itself)", self.cudagraph_actual))
        return [f"{name}: {e.gib:.2f} GiB ({e.how})" for name, e in parts]


def estimate(spec: ModelSpec, device, cfg) -> Estimates:
    """Every measured input for ``spec`` on ``device`` (``inputs.Device``: its ``sm``) under ``cfg`` (a resolved
    ``VllmConfig``, or anything with its field names: ``max_num_batched_tokens``, ``max_num_seqs``,
    ``tensor_parallel_size``, ``pipeline_parallel_size``, ``cudagraph_mode``, ``cudagraph_capture_sizes``,
    ``enable_extensible_kv_cache``, ``speculative_method``, ``num_speculative_tokens``)."""
    tp = int(getattr(cfg, "tensor_parallel_size", 1) or 1)
    pp = int(getattr(cfg, "pipeline_parallel_size", 1) or 1)
    method = getattr(cfg, "speculative_method", None)
    if method not in (None, "mtp", "ngram"):  # ngram: no drafter (its graphs are the capture sizes' own)
        raise BadInput(f"vLLM estimates under speculative method {method!r} (its drafter's weights and graphs) are not "
                       "modelled: give --weights-gib, --non-torch-gib, --peak-activation-gib, --cudagraph-gib and "
                       "--startup-used-gib measured")
    mtp = method == "mtp"
    sm = getattr(device, "sm", None)
    weights = vllm_weights_bytes(spec, tp, pp, mtp=mtp)
    seqs = int(cfg.max_num_seqs)
    counts = capture_counts(getattr(cfg, "cudagraph_mode", "NONE"), getattr(cfg, "cudagraph_capture_sizes", ()), seqs)
    extensible = bool(getattr(cfg, "enable_extensible_kv_cache", False))
    capture = cudagraph_bytes(spec, sm, counts, draft_layers=spec.mtp_layers if mtp else 0)
    graphs = cudagraph_bytes(spec, sm, counts, extensible_kv_cache=True) if extensible else capture
    # under the extensible KV cache the capture itself is measured before the final block count: the same formula
    # stands for it (on the two logs that print both, vLLM's estimate was above the capture: 1.49 vs 1.34 GiB,
    # 0.13 vs 0.09 GiB), so the oracle's cudagraph_actual_gib gets it
    actual = Estimate(capture.bytes, "the capture, measured after warmup (0.34 extensible KV cache): " + capture.how) \
        if extensible else None
    return Estimates(weights, non_torch_bytes(sm, tp), peak_activation_bytes(spec, int(cfg.max_num_batched_tokens), seqs, tp),
                     graphs, startup_used_bytes(sm, tp), actual)


def calibration_table(cal: dict | None = None) -> list[dict]:
    """Per GPU class: the logs each estimate was fitted on, its coefficient and its residuals (measured - estimated,
    GiB; held-out logs flagged), for the README and VLLM_LOGS.md (``cal``: a fit's output, default calibration.json)."""
    cal = cal or calibration()
    rows = []
    for cls in list(GPU_CLASSES) + [""]:
        row = {"class": cls or "unknown", "label": GPU_CLASSES.get(cls, "GPU not named in the log")}
        for part in ("weights", "combined", "cudagraph", "startup"):
            res = [r for r in cal[part]["residuals"] if r["class"] == cls]
            if res:
                row[part] = [{k: r[k] for k in ("log", "measured_gib", "estimated_gib", "residual_gib", "held_out")}
                             for r in res]
        if len(row) > 2:
            rows.append(row)
    return rows


def calibration_markdown(cal: dict | None = None) -> str:
    """:func:`calibration_table` as a Markdown table (README / VLLM_LOGS.md)."""
    out = ["| class | estimate | log | measured GiB | estimated GiB | residual GiB | fitted on it |",
           "|---|---|---|---|---|---|---|"]
    for row in calibration_table(cal):
        for part in ("weights", "combined", "cudagraph", "startup"):
            for r in row.get(part, []):
                out.append(f"| {row['class']} | {part} | {r['log']} | {r['measured_gib']:.2f} | {r['estimated_gib']:.2f} | "
                           f"{r['residual_gib']:+.2f} | {'no (held out)' if r['held_out'] else 'yes'} |")
    return "\n".join(out)
