"""Mamba / linear-attention state per request, as SGLang 0.5.11 sizes it.

``Mamba2StateShape.create`` and ``mamba_cache_per_req`` (srt/configs/mamba_utils.py:115-175
@0.5.11) with the dtype precedence of ``mamba2_state_dtype`` (srt/configs/mamba_utils.py:47-106
@0.5.11): conv from ``SGLANG_MAMBA_CONV_DTYPE`` (default bfloat16; unknown values silently
bf16); ssm float32, overridden by the config's ``mamba_ssm_dtype``, overridden by
``SGLANG_MAMBA_SSM_DTYPE`` (which ``--mamba-ssm-dtype`` sets, srt/server_args.py:3922-3926 @0.5.11).
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.catalog.spec import DTYPE_BYTES, ModelSpec
from planner.engines.sglang.pipeline.server_args import Rejected

_DTYPES = ("float32", "bfloat16", "float16")


@dataclass(frozen=True)
class MambaState:
    n_layers: int
    conv_shape: tuple[int, int]  # per request per layer: (conv_dim/tp, kernel-1)
    ssm_shape: tuple[int, int, int]  # (heads/tp, head_dim, state_size)
    conv_dtype: str
    ssm_dtype: str
    ssm_dtype_from: str
    # one pipeline-parallel rank (planner/engines/sglang/pp.py): n_layers is the rank's own mamba layers (its
    # pools); SGLang's mamba_cache_per_req still covers the model's ``total_layers``, and its budget charges
    # ``budget_layers`` of them (0 / 0: no pp)
    total_layers: int = 0
    budget_layers: int = 0

    @property
    def conv_bytes_per_layer(self) -> int:
        return self.conv_shape[0] * self.conv_shape[1] * DTYPE_BYTES[self.conv_dtype]

    @property
    def ssm_bytes_per_layer(self) -> int:
        a, b, c = self.ssm_shape
        return a * b * c * DTYPE_BYTES[self.ssm_dtype]

    @property
    def conv_bytes(self) -> int:
        return self.conv_bytes_per_layer * self.n_layers

    @property
    def ssm_bytes(self) -> int:
        return self.ssm_bytes_per_layer * self.n_layers

    @property
    def per_req_bytes(self) -> int:
        """mamba_cache_per_req (srt/configs/mamba_utils.py:115-127 @0.5.11)."""
        return (self.conv_bytes_per_layer + self.ssm_bytes_per_layer) * self.n_layers

    @property
    def reported_per_req_bytes(self) -> int:
        """mamba2_cache_params.mamba_cache_per_req as SGLang reports it: every mamba layer of the model."""
        return (self.conv_bytes_per_layer + self.ssm_bytes_per_layer) * (self.total_layers or self.n_layers)

    @property
    def budget_per_req_bytes(self) -> int:
        """The per-request state the mamba budget charges: under pp, ``int(per_req x pp_layer_scale)``
        (mem_cache/kv_cache_configurator.py:1823-1846 @0.5.17, :3233-3260 @0.5.23; the scale is 1 before 0.5.17)."""
        if not self.total_layers:
            return self.per_req_bytes
        return int(self.reported_per_req_bytes * (self.budget_layers / max(self.total_layers, 1)))

    def gdn_heads(self) -> tuple[int, int, int, int]:
        """(value heads, key heads, v dim, k dim) per TP rank of a GDN layer: the ssm state is (hv, v, k) and the
        conv channels are hv x v + 2 x hk x k (srt/configs/qwen3_next.py @0.5.19)."""
        hv, v, k = self.ssm_shape
        return hv, (self.conv_shape[0] - hv * v) // (2 * k), v, k

    def replayssm_ring_bytes(self, record_len: int, layout: str) -> int:
        """replayssm_ring_bytes_per_req (srt/configs/mamba_utils.py:127-157): per GDN layer, "per_slot"
        (0.5.17-0.5.19): rawv hv x rec x v + rawk hk x rec x k in the conv dtype, beta and g hv x rec fp32;
        "fixed" (0.5.20+): d, k in the conv dtype, g fp32, and the bf16 low parts of d and k unless the conv
        dtype is fp32."""
        hv, hk, v, k = self.gdn_heads()
        cb = DTYPE_BYTES[self.conv_dtype]
        rec = record_len
        if layout == "per_slot":
            per_layer = hv * rec * v * cb + hk * rec * k * cb + hv * rec * 4 + hv * rec * 4
        else:
            per_layer = hv * rec * v * cb + hk * rec * k * cb + hv * rec * 4
            if self.conv_dtype != "float32":
                per_layer += hv * rec * v * cb + hk * rec * k * cb
        return per_layer * self.n_layers


def _divide(a: int, b: int) -> int:
    """srt/distributed/utils.py divide/ensure_divisibility @0.5.11."""
    if a % b != 0:
        raise Rejected("AssertionError", f"{a} is not divisible by {b}",
                       "srt/distributed/utils.py:57-68 @0.5.11", stage="model_config")
    return a // b


def state_dtypes(model: ModelSpec, env: dict[str, str]) -> tuple[str, str, str]:
    conv = env.get("SGLANG_MAMBA_CONV_DTYPE", "bfloat16")
    conv = conv if conv in _DTYPES else "bfloat16"
    ssm, source = "float32", "default float32"
    cfg = model.config_mamba_ssm_dtype
    if cfg is not None and cfg in _DTYPES:
        ssm, source = cfg, f"config mamba_ssm_dtype={cfg}"
    env_ssm = env.get("SGLANG_MAMBA_SSM_DTYPE")
    if env_ssm is not None:
        if env_ssm in _DTYPES:
            ssm, source = env_ssm, f"SGLANG_MAMBA_SSM_DTYPE={env_ssm} (set by --mamba-ssm-dtype or the environment)"
        else:  # a warning, then float32 (mamba_utils.py:95-104 @0.5.11)
            ssm, source = "float32", f"SGLANG_MAMBA_SSM_DTYPE={env_ssm!r} is invalid -> float32"
    return conv, ssm, source


def mamba_state(model: ModelSpec, tp: int, env: dict[str, str]) -> MambaState | None:
    """Mamba2StateShape.create (srt/configs/mamba_utils.py:141-175 @0.5.11); None for plain models."""
    m = model.mamba
    if m is None:
        return None
    n_groups = m.n_groups
    if n_groups % tp != 0:  # extra_groups_for_head_shards: replicate groups up to tp
        n_groups += tp - n_groups
    conv_dim = m.intermediate_size + 2 * n_groups * m.state_size
    conv = (_divide(conv_dim, tp), m.conv_kernel - 1)
    ssm = (_divide(m.num_heads, tp), m.head_dim, m.state_size)
    conv_dt, ssm_dt, src = state_dtypes(model, env)
    return MambaState(len(model.mamba_layer_ids), conv, ssm, conv_dt, ssm_dt, src)
