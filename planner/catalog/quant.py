"""Quantized weight bytes, per quantization scheme SGLang loads.

Each linear layer of the checkpoint (:mod:`planner.catalog.quant_tensors`) is assigned a storage
scheme by the checkpoint's ``quantization_config`` the way SGLang's ``get_quant_method`` assigns
it (skipped modules stay at the config dtype), and sized twice:

* ``checkpoint`` — the tensors the checkpoint stores (reproduces a published ``total_size``);
* ``memory`` — the parameters SGLang's ``create_weights`` allocates for it (what the weights take
  on the GPU once loaded; differs from the checkpoint only in scale dtypes and placeholders).

Schemes, with the SGLang code each follows (``srt/layers/quantization/...@0.5.23``):

* ``fp8-block`` — ``Fp8LinearMethod.create_fp8_weight_`` (fp8.py:620-714): weight e4m3 [N, K] and
  ``weight_scale_inv`` float32 [ceil(N/bn), ceil(K/bk)]; MoE experts the same (fp8.py:1720-1746).
* ``fp8-tensor`` — the same, not block-quantized: float32 ``weight_scale`` per shard (fp8.py:690-697)
  and ``input_scale`` when the activation scheme is static (fp8.py:699-712).
* ``modelopt-fp8`` — ``ModelOptFp8LinearMethod.create_weights`` (modelopt_quant.py:560-609):
  weight e4m3 [N, K], float32 ``weight_scale`` and ``input_scale`` per shard.
* ``nvfp4`` / ``w4a16-nvfp4`` — ``ModelOptFp4LinearMethod`` (modelopt_quant.py:1796-1884) and
  ``ModelOptNvFp4A16LinearMethod`` (modelopt_quant.py:2197-2267): weight uint8 [N, K/2] (two FP4
  per byte), e4m3 ``weight_scale`` [N, K/16], float32 ``weight_scale_2`` and ``input_scale``.
* ``ct-int8`` / ``ct-fp8`` — compressed-tensors W8A8 / W8A16 (``CompressedTensorsW8A8Int8`` /
  ``CompressedTensorsW8A8Fp8``): 8-bit weight [N, K], scale [N, 1] (channel), [1] (tensor),
  [N, K/g] (group) or block, ``input_scale`` when static.
* ``ct-wna16`` — compressed-tensors ``pack-quantized`` (``CompressedTensorsWNA16``): int32
  ``weight_packed`` [N, K*b/32], ``weight_scale`` [N, K/g] at the config dtype,
  ``weight_zero_point`` int32 [N*b/32, K/g] when asymmetric, int64 ``weight_shape`` [2], int32
  ``weight_g_idx`` [K] when ``actorder`` is ``group``.
* ``ct-nvfp4`` — compressed-tensors ``nvfp4-pack-quantized``: as ``nvfp4``.
* ``awq`` — ``AWQLinearMethod.create_weights`` -> the scheme's (awq/awq.py:437-455,
  awq/schemes/awq_linear.py:55-86; awq_marlin.py:57-90 the same shapes): int32 ``qweight``
  [K, N*b/32], int32 ``qzeros`` [K/g, N*b/32], ``scales`` [K/g, N] at 2 bytes (fp16 in the
  checkpoint, params_dtype in memory).
* ``gptq`` — gptq/schemes/gptq_linear.py:80-142: int32 ``qweight`` [K*b/32, N], int32 ``g_idx``
  [K], int32 ``qzeros`` [K/g, N*b/32], ``scales`` [K/g, N] at 2 bytes.
* ``mxfp4`` — ``Mxfp4MoEMethod.create_weights`` (mxfp4.py:444-560): experts only, uint8 blocks
  [N, K/2] and uint8 e8m0 scales [N, K/32] (block 32); the rest stays at the config dtype. The
  backend-dependent padding of the intermediate size (mxfp4.py:461-548) is not modelled.

Not modelled (the loaders' extra buffers): Hopper's optional BF16 expansion of block-FP8 weights
(``SGLANG_OPT_HOPPER_BLOCK_FP8_BF16``, fp8.py:880-905 @0.5.23) and the Marlin workspaces.

Methods not listed here are refused by name (:class:`UnmodelledQuantization`), never sized
as the unquantized model.
"""

from __future__ import annotations

import fnmatch
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable

from planner.catalog.quant_tensors import Linear, NotEnumerated, Param, checkpoint_tensors, is_mtp_tensor, numel
from planner.catalog.spec import DTYPE_BYTES, ModelSpec
from planner.errors import BadInput

MODELLED_METHODS = ("fp8", "modelopt", "modelopt_fp8", "modelopt_fp4", "compressed-tensors",
                    "awq", "awq_marlin", "gptq", "gptq_marlin", "mxfp4")
# ``--quantization X`` on an unquantized checkpoint: what SGLang quantizes online
ONLINE_METHODS = ("fp8",)


class UnmodelledQuantization(BadInput):
    """A quantization method (or a scheme inside one) without a weight model."""


@dataclass(frozen=True)
class Scheme:
    name: str
    checkpoint: Callable[[Linear], int]
    memory: Callable[[Linear], int]


@dataclass(frozen=True)
class QuantWeights:
    method: str
    checkpoint_bytes: int
    memory_bytes: int
    by_scheme: dict[str, int] = field(default_factory=dict)  # linear layers per scheme
    detail: str = ""
    mtp_memory_bytes: int = 0  # the MTP layer's share of memory_bytes (loaded by the draft worker)


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _bias(lin: Linear, dt: int) -> int:
    return lin.out * dt if lin.bias else 0


def fp8_block(bn: int, bk: int, scale_bytes_ckpt: int = 4) -> Scheme:
    def ck(l: Linear) -> int:
        return l.out * l.inp + _ceil(l.out, bn) * _ceil(l.inp, bk) * scale_bytes_ckpt

    def mem(l: Linear) -> int:  # weight_scale_inv float32 (fp8.py:672-689 @0.5.23)
        return l.out * l.inp + _ceil(l.out, bn) * _ceil(l.inp, bk) * 4

    return Scheme(f"fp8-block[{bn},{bk}]", ck, mem)


def fp8_tensor(static_input: bool, name: str = "fp8-tensor") -> Scheme:
    def f(l: Linear) -> int:
        return l.out * l.inp + 4 + (4 if static_input else 0)

    return Scheme(name, f, f)


def modelopt_fp8() -> Scheme:
    def f(l: Linear) -> int:  # weight + weight_scale + input_scale (modelopt_quant.py:586-609)
        return l.out * l.inp + 4 + 4

    return Scheme("modelopt-fp8", f, f)


def nvfp4(group: int = 16, name: str = "nvfp4", input_scale_ckpt: bool = True) -> Scheme:
    def ck(l: Linear) -> int:
        return l.out * l.inp // 2 + l.out * (l.inp // group) + 4 + (4 if input_scale_ckpt else 0)

    def mem(l: Linear) -> int:  # SGLang allocates input_scale in both linear methods
        return l.out * l.inp // 2 + l.out * (l.inp // group) + 4 + 4

    return Scheme(name, ck, mem)


def int8_weight(strategy: str, group: int | None, scale_bytes: int, static_input: bool,
                name: str, block: tuple[int, int] | None = None) -> Scheme:
    def f(l: Linear) -> int:
        if strategy == "channel":
            s = l.out
        elif strategy == "group" and group:
            s = l.out * _ceil(l.inp, group)
        elif strategy == "block" and block:
            s = _ceil(l.out, block[0]) * _ceil(l.inp, block[1])
        else:
            s = 1
        return l.out * l.inp + s * scale_bytes + (4 if static_input else 0)

    return Scheme(name, f, f)


def wna16_packed(bits: int, group: int, symmetric: bool, scale_bytes: int, g_idx: bool = False) -> Scheme:
    pack = 32 // bits

    def f(l: Linear) -> int:
        g = group if group > 0 else l.inp
        groups = _ceil(l.inp, g)
        zp = 0 if symmetric else _ceil(l.out, pack) * groups * 4
        # actorder "group": int32 weight_g_idx [K] (compressed_tensors_wNa16.py:77, 199-206 @0.5.23)
        return l.out * _ceil(l.inp, pack) * 4 + l.out * groups * scale_bytes + zp + 16 + (4 * l.inp if g_idx else 0)

    return Scheme(f"ct-w{bits}a16-g{group}{'-gidx' if g_idx else ''}", f, f)


def awq(bits: int, group: int) -> Scheme:
    pack = 32 // bits

    def f(l: Linear) -> int:
        g = group if group > 0 else l.inp
        groups = _ceil(l.inp, g)
        return l.inp * _ceil(l.out, pack) * 4 + groups * _ceil(l.out, pack) * 4 + groups * l.out * 2

    return Scheme(f"awq-w{bits}-g{group}", f, f)


def gptq(bits: int, group: int) -> Scheme:
    pack = 32 // bits

    def f(l: Linear) -> int:
        g = group if group > 0 else l.inp
        groups = _ceil(l.inp, g)
        return (_ceil(l.inp, pack) * l.out * 4 + l.inp * 4 + groups * _ceil(l.out, pack) * 4
                + groups * l.out * 2)

    return Scheme(f"gptq-w{bits}-g{group}", f, f)


def mxfp4() -> Scheme:
    def f(l: Linear) -> int:
        return l.out * l.inp // 2 + l.out * _ceil(l.inp, 32)

    return Scheme("mxfp4", f, f)


# ---------------------------------------------------------------- name matching ----

def module_path_match(ignored: str, name: str) -> bool:
    """``_module_path_match`` (srt/layers/quantization/utils.py:48-59 @0.5.23), plus the glob
    and ``language_model.`` handling of ModelOpt's ``is_layer_excluded`` (modelopt_quant.py:379-420)."""
    ignored = ignored.rstrip(".")
    name = name.rstrip(".")
    if ignored == name or name.startswith(ignored + "."):
        return True
    if ("." + ignored + ".") in ("." + name + "."):
        return True
    if any(c in ignored for c in "*?["):
        return fnmatch.fnmatchcase(name, ignored) or fnmatch.fnmatchcase(name, ignored + ".*")
    return False


def _variants(name: str) -> list[str]:
    out = [name]
    for a, b in (("model.language_model.", "model."), ("model.language_model.", "language_model.model."),
                 ("model.language_model.", "language_model."), ("model.visual.", "visual."),
                 ("model.", "")):
        if name.startswith(a):
            out.append(b + name[len(a):])
    return out


def skipped(name: str, ignore: list[str]) -> bool:
    for entry in ignore:
        if entry.startswith("re:"):
            pat = re.compile(entry[3:])
            if any(pat.match(v) for v in _variants(name)):
                return True
        elif any(module_path_match(entry, v) for v in _variants(name)):
            return True
    return False


# ---------------------------------------------------------------- per method ----

Assign = Callable[[Linear], "Scheme | None"]


def _fp8(q: dict[str, Any], spec: ModelSpec) -> tuple[Assign, str]:
    """Fp8Config.from_config / get_quant_method (fp8.py:346-475 @0.5.23)."""
    ignore = list(q.get("ignored_layers") or q.get("modules_to_not_convert") or [])
    block = q.get("weight_block_size")
    static = q.get("activation_scheme") == "static"
    scheme = fp8_block(*block) if block else fp8_tensor(static)

    def assign(l: Linear) -> Scheme | None:
        if l.name == "lm_head" or skipped(l.name, ignore):  # ParallelLMHead is not a LinearBase
            return None
        return scheme

    return assign, f"fp8 ({scheme.name}; {len(ignore)} modules_to_not_convert)"


def _modelopt(q: dict[str, Any], spec: ModelSpec) -> tuple[Assign, str]:
    algo = str(q.get("quant_algo") or "").upper()
    exclude = list(q.get("exclude_modules") or q.get("ignore") or [])
    group = int(q.get("group_size") or 16)
    if algo == "MIXED_PRECISION":
        layers = q.get("quantized_layers")
        if not isinstance(layers, dict) or not layers:
            raise UnmodelledQuantization("quantization_config: modelopt MIXED_PRECISION needs a 'quantized_layers' "
                                         "map (SGLang reads it from config.json or hf_quant_config.json)")
        kinds: dict[str, Scheme] = {}

        def pick(entry: dict[str, Any]) -> Scheme:
            a = str(entry.get("quant_algo", "")).upper()
            g = int(entry.get("group_size") or 16)
            key = f"{a}/{g}"
            if key not in kinds:
                if a == "FP8":
                    kinds[key] = modelopt_fp8()
                elif a == "NVFP4":
                    kinds[key] = nvfp4(g)
                elif a == "W4A16_NVFP4":
                    # input_scale is stored too: the published totals of nvidia/Qwen3.6-27B- and -35B-A3B-NVFP4
                    # count 4 B for each W4A16 layer (tests/data/quantized_totals.json)
                    kinds[key] = nvfp4(g, "w4a16-nvfp4")
                else:
                    raise UnmodelledQuantization(
                        f"quantization_config: modelopt MIXED_PRECISION layer algorithm '{a}' has no weight model "
                        "(modelled: FP8, NVFP4, W4A16_NVFP4)")
            return kinds[key]

        def assign(l: Linear) -> Scheme | None:
            if skipped(l.name, exclude):
                return None
            # a routed expert is looked up by its FusedMoE prefix ('...mlp.experts'): _resolve_quant_algo
            # (modelopt_quant.py:978-1008 @0.5.23) gets the module's prefix, not a projection's
            names = _variants(l.name.rsplit(".", 1)[0]) if l.expert else []
            for v in _variants(l.name) + names:
                if v in layers:
                    return pick(layers[v])
            return None  # _resolve_quant_algo finds nothing: UnquantizedLinearMethod (modelopt_quant.py:1060)

        return assign, f"modelopt MIXED_PRECISION ({len(layers)} quantized_layers, {len(exclude)} ignore)"
    if algo == "FP8":
        scheme = modelopt_fp8()
    elif algo in ("NVFP4", "W4A16_NVFP4", "NVFP4_AWQ"):
        scheme = nvfp4(group, "nvfp4" if algo != "W4A16_NVFP4" else "w4a16-nvfp4")
    else:
        raise UnmodelledQuantization(f"quantization_config: modelopt quant_algo '{algo or '?'}' has no weight model "
                                     "(modelled: FP8, NVFP4, W4A16_NVFP4, MIXED_PRECISION)")

    def assign_one(l: Linear) -> Scheme | None:
        return None if skipped(l.name, exclude) else scheme

    return assign_one, f"modelopt {algo} ({scheme.name}; {len(exclude)} exclude_modules)"


def _ct_scheme(group_cfg: dict[str, Any], fmt: str, spec: ModelSpec) -> Scheme:
    w = group_cfg.get("weights") or {}
    bits = int(w.get("num_bits") or 0)
    typ = str(w.get("type") or "int")
    strategy = str(w.get("strategy") or "tensor")
    gsize = w.get("group_size")
    gsize = int(gsize) if gsize else 0
    sym = bool(w.get("symmetric", True))
    ia = group_cfg.get("input_activations") or {}
    static = bool(ia) and not ia.get("dynamic", False) and ia.get("strategy") != "token"
    fmt = str(group_cfg.get("format") or fmt or "")
    scale_bytes = DTYPE_BYTES.get(str(w.get("scale_dtype") or spec.dtype).replace("torch.", ""), 2)
    if fmt == "nvfp4-pack-quantized" or (bits == 4 and typ == "float"):
        return nvfp4(gsize or 16, "ct-nvfp4")
    if bits == 8:
        block = tuple(w.get("block_structure") or ()) or None
        s = int8_weight(strategy, gsize, 4 if strategy == "tensor" else scale_bytes, static,
                        f"ct-{'fp8' if typ == 'float' else 'int8'}-{strategy}", block)  # type: ignore[arg-type]
        return s
    if bits in (4, 2, 3) and typ == "int" and fmt in ("pack-quantized", ""):
        return wna16_packed(bits, gsize, sym, scale_bytes, g_idx=str(w.get("actorder") or "").lower() == "group")
    raise UnmodelledQuantization(f"quantization_config: compressed-tensors scheme {bits}-bit {typ} ({fmt or 'no format'}) "
                                 "has no weight model (modelled: 8-bit int/float, pack-quantized int4, nvfp4)")


def _ct_targets_match(targets: list[str], l: Linear) -> bool:
    for t in targets:
        if t == "Linear" or t == "nn.Linear":
            return True
        if t.startswith("re:"):
            if any(re.match(t[3:], v) for v in _variants(l.name)):
                return True
        elif any(module_path_match(t, v) for v in _variants(l.name)):
            return True
    return False


def _compressed_tensors(q: dict[str, Any], spec: ModelSpec) -> tuple[Assign, str]:
    groups = q.get("config_groups") or {}
    if not isinstance(groups, dict) or not groups:
        raise UnmodelledQuantization("quantization_config: compressed-tensors needs 'config_groups'")
    ignore = list(q.get("ignore") or [])
    fmt = str(q.get("format") or "")
    schemes = [(list(g.get("targets") or ["Linear"]), _ct_scheme(g, fmt, spec)) for g in groups.values()]

    def assign(l: Linear) -> Scheme | None:
        if skipped(l.name, ignore):
            return None
        for targets, s in schemes:
            if _ct_targets_match(targets, l):
                return s
        return None

    return assign, f"compressed-tensors ({', '.join(s.name for _, s in schemes)}; {len(ignore)} ignore)"


def _awq_gptq(q: dict[str, Any], spec: ModelSpec, method: str) -> tuple[Assign, str]:
    bits = int(q.get("bits") or q.get("w_bit") or 4)
    group = int(q.get("group_size") or q.get("q_group_size") or 128)
    ignore = list(q.get("modules_to_not_convert") or [])
    if bits not in (2, 3, 4, 8):
        raise UnmodelledQuantization(f"quantization_config: {method} with {bits} bits has no weight model")
    scheme = awq(bits, group) if method.startswith("awq") else gptq(bits, group)
    dyn = q.get("dynamic") or {}

    def assign(l: Linear) -> Scheme | None:
        if l.name == "lm_head" and not q.get("lm_head"):
            return None
        if skipped(l.name, ignore):
            return None
        for pat, v in (dyn.items() if isinstance(dyn, dict) else ()):
            if pat.startswith("-:") and re.match(pat[2:], l.name):
                return None
        return scheme

    return assign, f"{method} ({scheme.name}; {len(ignore)} modules_to_not_convert)"


def _mxfp4(q: dict[str, Any], spec: ModelSpec) -> tuple[Assign, str]:
    ignore = list(q.get("modules_to_not_convert") or q.get("ignore") or [])
    s = mxfp4()

    def assign(l: Linear) -> Scheme | None:
        return s if l.expert and not skipped(l.name, ignore) else None

    return assign, "mxfp4 (routed experts only)"


def quant_config(spec: ModelSpec) -> dict[str, Any] | None:
    q = spec.raw.get("quantization_config") or spec.text.get("quantization_config")
    return q if isinstance(q, dict) else None


def _assigner(q: dict[str, Any], spec: ModelSpec, method: str) -> tuple[Assign, str]:
    if method == "fp8":
        return _fp8(q, spec)
    if method.startswith("modelopt"):
        return _modelopt(q, spec)
    if method == "compressed-tensors":
        return _compressed_tensors(q, spec)
    if method in ("awq", "awq_marlin", "gptq", "gptq_marlin"):
        return _awq_gptq(q, spec, method)
    if method == "mxfp4":
        return _mxfp4(q, spec)
    raise UnmodelledQuantization(
        f"quantization_config.quant_method '{method}' has no weight model (sizing it as unquantized would be "
        f"wrong); modelled: {', '.join(MODELLED_METHODS)}")


def checkpoint_method(spec: ModelSpec) -> str | None:
    """The method name SGLang resolves from ``quantization_config`` (``quant_method``; a ModelOpt
    config without one is ``modelopt``)."""
    q = quant_config(spec)
    if q is None:
        return None
    m = q.get("quant_method") or ("modelopt" if "quant_algo" in q else None)
    return str(m).lower() if m else None


def quantized_weights(spec: ModelSpec, online: str | None = None) -> QuantWeights | None:
    """:func:`_quantized_weights`; a malformed quantization_config is bad input, never a traceback."""
    try:
        return _quantized_weights(spec, online)
    except (ValueError, TypeError, AttributeError, KeyError, ZeroDivisionError, re.error) as exc:
        raise UnmodelledQuantization(
            f"quantization_config: cannot read it ({type(exc).__name__}: {exc}); give the checkpoint's "
            "config.json as published") from None


def _quantized_weights(spec: ModelSpec, online: str | None = None) -> QuantWeights | None:
    """Weight bytes of a quantized checkpoint (``online=None``), or of an unquantized checkpoint
    loaded with ``--quantization <online>``. None for an unquantized checkpoint without one."""
    q = quant_config(spec)
    method = checkpoint_method(spec)
    if method is None:
        if online is None:
            return None
        if online not in ONLINE_METHODS:
            raise UnmodelledQuantization(
                f"--quantization {online}: online quantization of an unquantized checkpoint is modelled for "
                f"{', '.join(ONLINE_METHODS)} only")
        method, q = "fp8", {"quant_method": "fp8", "activation_scheme": "dynamic"}
        label = "online fp8 (Fp8Config() with is_checkpoint_fp8_serialized=False: weight_utils.py:344-374 @0.5.23)"
    else:
        label = ""
    try:
        tensors = checkpoint_tensors(spec)
    except NotEnumerated:
        raise UnmodelledQuantization(
            f"quantized weights of {spec.architecture} are not modelled (its tensor list is not enumerated); "
            "give the checkpoint directory so its safetensors index sizes them") from None
    assign, desc = _assigner(q or {}, spec, method)
    dt = DTYPE_BYTES.get(spec.dtype.replace("torch.", ""), 2)
    if dt == 4:
        dt = 2  # float32 checkpoints are served in bf16
    ck = mem = mtp = 0
    by: Counter[str] = Counter()
    for t in tensors:
        if isinstance(t, Param):
            c = m = t.numel * (4 if t.float32 else dt)
        else:
            s = None if t.unquantized else assign(t)
            if s is None:
                c = m = numel(t) * dt
            else:
                by[s.name] += t.count
                c = (s.checkpoint(t) + _bias(t, dt)) * t.count
                m = (s.memory(t) + _bias(t, dt)) * t.count
        ck += c
        mem += m
        if is_mtp_tensor(t.name, spec):
            mtp += m
    if not by:
        raise UnmodelledQuantization(
            f"quantization_config ({method}): no linear layer of {spec.architecture} matches its quantized "
            "modules; the config is not understood")
    parts = ", ".join(f"{n} x {k}" for k, n in sorted(by.items()))
    return QuantWeights(method, ck, mem, dict(by), f"{label or desc}: {parts}", mtp)
