"""SGLang 0.5.11 memory profiling: from free memory to M, N and R.

Mirrors, in order and in the same floating-point operations:

* ``get_available_gpu_memory`` (srt/utils/common.py:498-613 @0.5.11): free bytes / 2^30, with a
  float32 MIN all-reduce when tp > 1;
* ``_profile_available_bytes`` (srt/model_executor/model_runner_kv_cache_mixin.py:56-70 @0.5.11);
* ``handle_max_mamba_cache`` (…kv_cache_mixin.py:72-131 @0.5.11);
* ``DefaultPoolConfigurator`` cell size and page alignment (srt/model_executor/pool_configurator.py:74-182 @0.5.11);
* ``_apply_token_constraints`` and ``_resolve_max_num_reqs`` (…kv_cache_mixin.py:669-717 @0.5.11);
* ``_calculate_mamba_ratio`` (…kv_cache_mixin.py:180-192 @0.5.11).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from planner.cache_kinds import FullAttention
from planner.catalog.spec import DTYPE_BYTES, ModelSpec
from planner.engines.sglang.pipeline.rocm import platform_kv_dtype
from planner.engines.sglang.pipeline.dflash import dflash_cell
from planner.engines.sglang.pipeline import own_mtp
from planner.engines.sglang.pipeline.mamba import MambaState
from planner.engines.sglang.pipeline.post_capture import slack_floor_gib
from planner.engines.sglang.pipeline.server_args import Rejected, ResolvedArgs, _env_bool
from planner.engines.sglang.pipeline.quant_method import checkpoint_kv_quant_algo

GIB = 1 << 30

# srt/model_executor/model_runner_kv_cache_mixin.py:44-46 @0.5.11
MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO = 3
MAMBA_CACHE_V2_ADDITIONAL_RATIO_OVERLAP = 2
MAMBA_CACHE_V2_ADDITIONAL_RATIO_NO_OVERLAP = 1


def available_gib(free_bytes: int, tp_size: int) -> float:
    """get_available_gpu_memory: ``free / (1 << 30)``; tp>1 goes through a float32 all-reduce."""
    if tp_size > 1:
        return float(np.float32(free_bytes)) / GIB
    return free_bytes / GIB


def kv_dtype_name(args: ResolvedArgs, model: ModelSpec) -> str:
    """configure_kv_cache_dtype (srt/model_executor/model_runner.py:2210-2256 @0.5.11)."""
    k = args.kv_cache_dtype
    if k == "auto":
        algo = checkpoint_kv_quant_algo(args, model)  # the checkpoint's, as this release reads it
        if algo and algo.upper() == "FP8":
            return platform_kv_dtype(args, "float8_e4m3fn")
        return model_dtype(model)
    return platform_kv_dtype(args, {"fp8_e5m2": "float8_e5m2", "fp8_e4m3": "float8_e4m3fn", "bf16": "bfloat16",
                                    "bfloat16": "bfloat16"}[k])


def model_dtype(model: ModelSpec) -> str:
    """ModelConfig dtype for ``--dtype auto``: the config dtype, float32 checkpoints served in bf16."""
    d = model.dtype.replace("torch.", "")
    if d == "float32":
        return "bfloat16"
    return d if d in DTYPE_BYTES else "bfloat16"


def num_kv_heads(model: ModelSpec, tp: int) -> int:
    """get_num_kv_heads (srt/configs/model_config.py:756-763 @0.5.11): replicated below 1 per GPU."""
    return max(1, model.num_key_value_heads // tp)


def cell_size(model: ModelSpec, args: ResolvedArgs, draft: ModelSpec | None = None) -> int:
    """Bytes of KV per token over the full-attention layers (pool_configurator.py:83-157 @0.5.11).

    0.5.14+: with an EAGLE-family draft path, ``int(cell x (1 + draft_layers / layers))``
    (srt/model_executor/pool_configurator.py:130-151 @0.5.16).
    """
    n_layers = len(model.full_attention_layer_ids)
    if model.mla is not None:  # the MLA latent (+ DSA indexer keys), not split by tp (pipeline/mla.py)
        from planner.engines.sglang.pipeline import mla  # noqa: PLC0415

        return mla_draft_cell(mla.cell(model, kv_dtype_name(args, model), args.tp_size, args.gpu_sm[0],
                                       args.rules.version), n_layers, model, args, draft)
    kv_size = DTYPE_BYTES[kv_dtype_name(args, model)]
    if model.sliding is not None:  # gpt-oss / Llama 4: the hybrid SWA pool's float cell (pipeline/swa.py)
        from planner.engines.sglang.pipeline import swa  # noqa: PLC0415

        if swa.is_hybrid_swa(args, model):
            return swa.cell(args, model, kv_size)
    cell = FullAttention(n_layers, kv_size, model.num_key_value_heads, model.head_dim,
                         model.v_head_dim).bytes_per_token(args.tp_size // args.attn_dp_size)  # attention-TP rank
    if args.speculative_algorithm == "DFLASH":  # the DFLASH draft's KV term (pipeline/dflash.py)
        return dflash_cell(cell, n_layers, draft, args)
    layers = draft_kv_layers(model, args, draft)
    if layers and n_layers > 0:
        if args.rules.draft_cell_term_rounded_alone:  # srt/model_executor/pool_configurator.py:305-308 @0.5.22
            cell = cell + int(cell * layers / n_layers)
        else:
            cell = int(cell * (1 + layers / n_layers))
    if args.speculative_algorithm == "DSPARK" and draft is not None and n_layers > 0:
        cell = dspark_cell(cell, n_layers, model, args, draft)
    return cell


def mla_draft_cell(cell: int, n_layers: int, model: ModelSpec, args: ResolvedArgs, draft: ModelSpec | None) -> int:
    """An MLA target's cell. Under EAGLE / NEXTN on its own MTP layer SGLang points the draft path at the model
    itself (srt/server_args.py:3492-3508 @0.5.11; srt/arg_groups/speculative_hook.py:528-545 @0.5.16), so 0.5.14+
    adds the draft config's ``num_nextn_predict_layers`` to the cell (spec_aux_hidden_state.py:57-79,
    pool_configurator.py:140-151 @0.5.16) as for any EAGLE draft path (:func:`draft_kv_layers`)."""
    from planner.engines.sglang.pipeline import mla  # noqa: PLC0415

    layers = mla.own_draft_layers(model, args)
    if not layers or not args.rules.draft_layers_in_cell or n_layers <= 0:
        return cell
    if args.rules.draft_cell_term_rounded_alone:  # srt/model_executor/pool_configurator.py:305-308 @0.5.22
        return cell + int(cell * layers / n_layers)
    return int(cell * (1 + layers / n_layers))


def dspark_cell(cell: int, n_layers: int, model: ModelSpec, args: ResolvedArgs, draft: ModelSpec) -> int:
    """DSPARK (DFLASH family): the target cell plus its draft's KV, L = the draft's num_hidden_layers
    (spec_aux_hidden_state.py:120-173 @0.5.18). 0.5.16-0.5.17: ceil(cell x (T + L) / T)
    (srt/speculative/dflash_utils.py:90-96, pool_configurator.py:154-169 @0.5.16); 0.5.18+: cell + the draft's
    own per-token KV, kv_heads(tp) x (head_dim + v_head_dim) x L x bytes of the draft's KV dtype
    (dflash_utils.py:139-152, pool_configurator.py:216-233 @0.5.18)."""
    layers = draft.num_hidden_layers
    if layers <= 0:
        return cell
    if args.rules.dspark_draft_cell == "geometry":
        per = num_kv_heads(draft, args.tp_size) * (draft.head_dim + draft.v_head_dim) * layers
        return cell + per * DTYPE_BYTES[kv_dtype_name(args, draft)]
    return (cell * (n_layers + layers) + n_layers - 1) // n_layers


def draft_kv_layers(model: ModelSpec, args: ResolvedArgs, draft: ModelSpec | None) -> int:
    """eagle_draft_num_layers: the draft's KV layers the target's cell pays for (0.5.14+), 0 when none.

    With a draft path: the draft config's ``num_nextn_predict_layers``, else ``max(num_hidden_layers,
    num_attention_layers)`` (model_runner.py:431-455 @0.5.14); 0.5.20+ also without one, from the
    target's ``num_nextn_predict_layers`` (model_runner_components/spec_aux_hidden_state.py:74-107 @0.5.20).
    """
    if not args.rules.draft_layers_in_cell or args.speculative_algorithm not in ("EAGLE", "EAGLE3", "STANDALONE"):
        return 0
    if draft is not None and args.speculative_draft_model_path:
        from planner.engines.sglang.pipeline.standalone import config_nextn  # noqa: PLC0415

        nextn = config_nextn(draft, args.rules)  # after _config_draft_model's MTP rewrite (STANDALONE module)
        return int(nextn) if nextn is not None else draft.num_hidden_layers
    if own_mtp.own_draft_layers(model, args, draft):  # SGLang sets the draft path to the model (pipeline/own_mtp.py)
        return model.mtp_layers
    if args.rules.pathless_draft_layers_from_target and not args.speculative_draft_model_path:
        nextn = model.text.get("num_nextn_predict_layers")
        return int(nextn) if nextn is not None else 0
    return 0


def mamba_ratio(args: ResolvedArgs, strict: bool = True) -> int:
    """_calculate_mamba_ratio (…kv_cache_mixin.py:180-192 @0.5.11)."""
    if args.disable_radix_cache:
        return 1
    if args.rules.extra_buffer_ratio_by_spec:  # extra_buffer: 3 + (1 if spec else 2) (…kv_cache_mixin.py:355-365 @0.5.9)
        return MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO + ((1 if args.spec_on else 2) if args.extra_buffer else 0)
    # 0.5.17+: SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK drops the base by one; no_buffer adds it back
    # (srt/mem_cache/kv_cache_configurator.py:2045-2073 @0.5.19)
    skip = args.rules.skip_decode_lock_env and _env_flag(args.env, "SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK")
    base = MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO - (1 if skip else 0)
    extra = 1 if skip else 0
    if args.extra_buffer:
        extra = (MAMBA_CACHE_V2_ADDITIONAL_RATIO_NO_OVERLAP if args.disable_overlap_schedule
                 else MAMBA_CACHE_V2_ADDITIONAL_RATIO_OVERLAP)
        if args.mamba_scheduler_strategy == "extra_buffer_lazy":
            if args.disable_overlap_schedule and strict:  # kv_cache_configurator.py:1572-1591 @0.5.16
                raise Rejected("AssertionError", "Lazy extra buffer requires overlap schedule "
                               "(--disable-overlap-schedule is incompatible)",
                               "srt/mem_cache/kv_cache_configurator.py:1586-1589 @0.5.16",
                               stage="resolve_memory_pool_config")
            extra = 1  # MAMBA_CACHE_V2_ADDITIONAL_RATIO_OVERLAP_LAZY (kv_cache_configurator.py:103 @0.5.16)
    return base + extra


def _env_flag(env: dict[str, str], key: str) -> bool:
    return _env_bool(env, key)


class NotEnoughMemory(Rejected):
    """MemoryPoolConfig.__post_init__ (pool_configurator.py:39-44 @0.5.11), with the numbers so far."""

    def __init__(self, prof: "Profile", mfs: float | None = None, fstring: bool = False):
        msg = "Not enough memory. Please try to increase --mem-fraction-static."
        if fstring:  # an f-string with {self.server_args.mem_fraction_static=} (…kv_cache_mixin.py:415-419 @0.5.9)
            msg += f" Current value: self.server_args.mem_fraction_static={mfs}"
        elif mfs is not None:  # MemoryPoolConfig built with the fraction (…kv_cache_mixin.py:54-60, 890 @0.5.10)
            msg += f" Current value: mem_fraction_static={mfs}"
        super().__init__("RuntimeError", msg,
                         "srt/model_executor/pool_configurator.py:39-44 @0.5.11", stage="resolve_memory_pool_config")
        self.profile = prof


@dataclass
class Profile:
    pre_model_load_gib: float  # P
    post_model_load_gib: float
    rest_gib_before_mamba: float
    spec_reserved_bytes: int | None
    max_mamba_cache_size: int | None
    mamba_cache_per_req_bytes: int | None
    available_kv_bytes: int
    kv_cell_bytes_per_token: int
    max_total_num_tokens: int | None = None
    max_running_requests: int | None = None
    mamba_ratio: int | None = None
    # 0.5.9 sizes the request pools for R_pool, which can exceed the scheduler's R (…kv_cache_mixin.py:339-419)
    pool_requests: int | None = None
    max_mamba_cache_source: str = ""
    # 0.5.9's SWA sub-pool tokens, from the unaligned full count (pipeline/swa.py swa_tokens_0_5_9); None otherwise
    swa_tokens: int | None = None


def size_chain(*, pre_gib, post_gib, mfs, per_req, spec_on, r_args, ndraft, m_explicit, radix_off, ratio,
               cell, page, max_total_tokens, context_len, mamba_ratio_, mambaish, solve="classic",
               cap_by_estimate=True, padding_slots=False, mm_reserve_gib=0.0,
               min_one_running=False, pools_sized_separately=False, replay="", ring=0,
               slack_floor_gib=0.0, swa_rescale=None, swa_cap=None) -> dict[str, np.ndarray]:
    """The profiling chain on numpy arrays (or scalars): one implementation for plan and search.

    Every argument broadcasts. Sentinels: ``r_args`` / ``m_explicit`` / ``max_total_tokens`` are -1
    when unset. The float operations are the ones SGLang performs, in its order, in float64:

    * rest = post - pre * (1 - f)                         (…kv_cache_mixin.py:56-68 @0.5.11)
    * rest -= S * R_args * D / 2^30 under spec            (…kv_cache_mixin.py:78-92 @0.5.11)
    * M = explicit | R_args when radix off | int(rest*r/(1+r)*2^30 // S)   (:94-124)
    * rest -= M * S / 2^30; available = int(rest * 2^30)  (:126-131, :70)
    * N = available // C // page * page; fail if N <= 0  (pool_configurator.py:39-44, 170-175)
    * N = min(N, --max-total-tokens) re-aligned           (…kv_cache_mixin.py:669-696)
    * R = min(R_args | N // 2, clamp(int(N / ctx * 512), 2048, 4096)), then min with M // ratio (:698-717)

    Release switches (see ``rules/``): ``solve="joint"`` puts the speculative intermediates inside the
    mamba share (0.5.13+); ``padding_slots`` charges each pool's padding row, ``(M + 1) x S`` and
    ``(min(R, M // ratio) + 1) x D x S`` (0.5.17+, srt/mem_cache/kv_cache_configurator.py:2210-2355
    @0.5.19); ``mm_reserve_gib`` is taken off ``rest`` for multimodal models before the mamba split
    (0.5.18+, srt/mem_cache/kv_cache_configurator.py:132-152, 2016-2021 @0.5.19).
    ``slack_floor_gib`` (post-capture KV sizing on a hybrid model, 0.5.23) floors the slack ``pre * (1 - f)``
    (srt/mem_cache/kv_cache_configurator.py:3020-3032 @0.5.23; pipeline/post_capture.py); 0 leaves it as is.

    Returns arrays: rest_before, spec_reserved, m, available, n, r, fail (N <= 0); on scalar inputs (one
    configuration, as :func:`profile` runs it) the same values as Python numbers, from :func:`_size_chain_scalar`
    (numpy's 0-d operations cost ~100x a float's; tests/test_size_chain_scalar.py proves both paths equal).
    """
    kw = dict(pre_gib=pre_gib, post_gib=post_gib, mfs=mfs, per_req=per_req, spec_on=spec_on, r_args=r_args,
              ndraft=ndraft, m_explicit=m_explicit, radix_off=radix_off, ratio=ratio, cell=cell, page=page,
              max_total_tokens=max_total_tokens, context_len=context_len, mamba_ratio_=mamba_ratio_,
              mambaish=mambaish, solve=solve, cap_by_estimate=cap_by_estimate, padding_slots=padding_slots,
              mm_reserve_gib=mm_reserve_gib, min_one_running=min_one_running,
              pools_sized_separately=pools_sized_separately, replay=replay, ring=ring,
              slack_floor_gib=slack_floor_gib, swa_rescale=swa_rescale, swa_cap=swa_cap)
    if _all_scalar(pre_gib, post_gib, mfs, per_req, spec_on, r_args, ndraft, m_explicit, radix_off, ratio, cell,
                   page, max_total_tokens, context_len, mamba_ratio_, mambaish, mm_reserve_gib, ring, slack_floor_gib):
        out = _size_chain_scalar(**kw)
        if out is not None:
            return out
    return _size_chain_arrays(**kw)


_SCALAR_TYPES = (int, float, np.integer, np.floating, np.bool_)  # bool is an int


def _cell_number(cell):
    """The cell as SGLang holds it: an int, or a float for a hybrid SWA pool (its ratio-weighted SWA term)."""
    return float(cell) if isinstance(cell, (float, np.floating)) else int(cell)


def _all_scalar(*values) -> bool:
    """Every broadcast input a plain number (not an array, list or 0-d array)."""
    return all(isinstance(v, _SCALAR_TYPES) for v in values)


_I64 = 1 << 63
_I64_MAX_F = float(_I64 - 1024)  # the largest float64 below 2^63: where a float cast to int64 saturates


def _magnitude(x) -> float:
    """The largest |value| of an int64 array or number, as a float (two reductions, no temporary array)."""
    x = np.asarray(x)
    return 0.0 if x.size == 0 else max(float(x.max()), -float(x.min()))


def _i64_product(*factors) -> np.ndarray:
    """The int64 product of int64 arrays, saturated at +-(2^63 - 1) where it would overflow (numpy wraps arrays
    silently and warns on scalars). Only absurd explicit counts reach the bound: a product of 2^62 bytes is 10^7
    times any GPU, so the pool fails either way; the plan's scalar path keeps such a product exact. The search's
    grids never come near it, so they take the plain product after one bound check per factor."""
    bound = 1.0
    for f in factors:
        bound *= _magnitude(f)
    if bound < 2.0 ** 62:
        prod = np.asarray(factors[0], dtype=np.int64)
        for f in factors[1:]:
            prod = prod * f
        return prod
    est = np.ones((), dtype=np.float64)
    for f in factors:
        est = est * np.asarray(f, dtype=np.float64)
    over = np.abs(est) >= 2.0 ** 62  # the float product's error is far below this margin
    prod = np.ones((), dtype=np.int64)
    for f in factors:
        prod = prod * np.where(over, 0, f)
    return np.where(over, np.where(est < 0, -(_I64 - 1), _I64 - 1), prod)


def _plus(a, k: int) -> np.ndarray:
    """``a + k`` for a small k >= 0, saturated below 2^63 (an explicit count of 2^63 - 1 plus a padding row)."""
    a = np.asarray(a)
    if a.size == 0 or a.max() <= _I64 - 1 - k:
        return a + k
    return np.minimum(a, _I64 - 1 - k) + k


def _to_i64(x) -> np.ndarray:
    """float64 -> int64 (numpy's astype, which truncates), saturated at the int64 range instead of an invalid cast
    (the callers have replaced non-finite values already)."""
    x = np.asarray(x)
    if x.size == 0 or (x.min() >= -float(_I64) and x.max() <= _I64_MAX_F):
        return x.astype(np.int64)
    return np.clip(x, -float(_I64), _I64_MAX_F).astype(np.int64)


def _size_chain_scalar(*, pre_gib, post_gib, mfs, per_req, spec_on, r_args, ndraft, m_explicit, radix_off, ratio,
                       cell, page, max_total_tokens, context_len, mamba_ratio_, mambaish, solve, cap_by_estimate,
                       padding_slots, mm_reserve_gib, min_one_running, pools_sized_separately, replay,
                       ring, slack_floor_gib=0.0, swa_rescale=None, swa_cap=None) -> dict | None:
    """:func:`size_chain` for one configuration in Python floats (IEEE doubles, numpy's float64) and ints, the same
    operations in the same order as :func:`_size_chain_arrays`. None where numpy's semantics differ from Python's
    (a division by zero, a non-finite float): the caller then runs the array path. A byte count beyond int64 (an
    explicit --max-mamba-cache-size or --max-running-requests no GPU could hold by a factor of millions) stays exact
    here, as in SGLang's Python ints; the array path saturates it instead (:func:`_i64_product`), which keeps the
    verdict (such a pool never fits) but not the magnitude."""
    try:
        return _scalar_chain(float(pre_gib), float(post_gib), float(mfs), int(per_req), bool(spec_on), int(r_args),
                             int(ndraft), int(m_explicit), bool(radix_off), float(ratio), _cell_number(cell), int(page),
                             int(max_total_tokens), int(context_len), int(mamba_ratio_), bool(mambaish), solve,
                             cap_by_estimate, padding_slots, float(mm_reserve_gib), min_one_running,
                             pools_sized_separately, replay, int(ring), float(slack_floor_gib), swa_rescale, swa_cap)
    except (ZeroDivisionError, OverflowError, ValueError):
        return None


def _scalar_chain(pre, post, mfs, per, spec_on, r_args, d, m_exp, radix_off, r, cell, page, mtt, ctx, mr, mamba,
                  solve, cap_by_estimate, padding_slots, mm, min_one_running, pools_sized_separately, replay,
                  ring, slack_floor=0.0, swa_rescale=None, swa_cap=None) -> dict | None:
    slack = pre * (1 - mfs)
    if slack_floor > 0:
        slack = max(slack, slack_floor)
    rest = post - slack - mm
    rest_before = rest
    if min_one_running and r_args >= 0:
        r_args = max(r_args, 1)
    spec = spec_on and mamba
    per_slot_extra = 0
    if replay:
        spec = False
        per_slot_extra = ring if replay == "per_slot" else 0
    mr_safe = mr if mr > 0 else 1
    use_r_args = radix_off and r_args >= 0
    per_safe = per if per > 0 else 1
    fixed = ring * (max(r_args, 0) + 1) if replay == "fixed" else 0
    spec_reserved = 0
    if solve == "classic":
        if spec:
            spec_reserved = per * max(r_args, 0) * d
            rest = rest - spec_reserved / GIB
        raw = rest * r / (1 + r)
        m_ratio = raw * GIB // per_safe
    elif not padding_slots:
        budget_bytes = rest * r / (1 + r) * GIB
        m_ratio = budget_bytes // (per_safe * (1 + d / mr_safe)) if spec else budget_bytes // per_safe
    else:
        budget_bytes = rest * r / (1 + r) * GIB
        slot = per_safe + per_slot_extra
        m_ratio = ((budget_bytes - per * (1 + d)) // (per_safe * (1 + d / mr_safe)) if spec
                   else (budget_bytes - fixed - slot) // slot)
    m_ratio = int(m_ratio) if math.isfinite(m_ratio) else 0
    m = m_exp if m_exp >= 0 else (r_args if use_r_args else m_ratio)
    if not mamba:
        m = 0
    pad = 1 if padding_slots else 0
    if solve != "classic":
        capped = m if (use_r_args and m_exp < 0) else min(max(r_args, 0), m // mr_safe)
        spec_reserved = per * (capped + pad) * d if spec else 0
        if spec:
            rest = rest - spec_reserved / GIB
    rest_after_spec = rest
    fail_m = mamba and m <= 0
    if mamba:
        rest = rest - ((m + pad) * (per + per_slot_extra) + fixed) / GIB
    fail_rest = rest <= 0
    if not math.isfinite(rest):
        return None
    available = int(rest * GIB)  # beyond int64 too (a pool of absurd explicit counts): SGLang's Python ints
    # a hybrid SWA cell is a float: int(available_bytes // cell) (pool_configurator.py:274-278 @0.5.11)
    if swa_cap is not None and radix_off and r_args >= 0:  # 0.5.14+ request-capped SWA pool (pipeline/swa.py)
        per_r, const, swa_b, full_c, min_r = swa_cap
        swa_tok = -(-(per_r * max(r_args, min_r) + const) // page) * page  # ceil_align(cap, page)
        n = int((available - swa_tok * swa_b) // full_c)
    else:
        n = int(available // cell)
    n = n // page * page
    fail = n <= 0
    capped = mtt // page * page if 0 <= mtt < n else n
    fail = fail or capped <= 0
    n = capped
    if swa_rescale is not None:  # 0.5.9 / 0.5.10 hybrid SWA: the all-layer count becomes full tokens (pipeline/swa.py)
        a, dnm = swa_rescale
        n = int(n * a / dnm) // page * page
        fail = fail or n <= 0
    est = max(min(int(n / ctx * 512), 4096), 2048)
    if r_args >= 0:
        r_req = min(r_args, est) if cap_by_estimate else min(r_args, n // 2)
    else:
        r_req = min(est, n // 2)
    if mamba:
        r_req = min(r_req, m // mr_safe)
    r_pool = r_req
    if pools_sized_separately:
        est9 = max(min(int(available // cell / ctx * 512), 4096), 2048)
        r_pool = r_args if r_args >= 0 else est9
        if mamba:
            r_pool = min(r_pool, m // mr_safe)
        r_req = min(r_args, r_pool) if r_args >= 0 else min(n // 2, r_pool)
    return {"r_pool": r_pool, "rest_before": rest_before, "spec_reserved": spec_reserved, "m": m,
            "available": available, "n": n, "r": r_req, "fail": fail, "fail_m": fail_m, "fail_rest": fail_rest,
            "rest_after_mamba": rest, "rest_after_spec": rest_after_spec}


def _size_chain_arrays(*, pre_gib, post_gib, mfs, per_req, spec_on, r_args, ndraft, m_explicit, radix_off, ratio,
                       cell, page, max_total_tokens, context_len, mamba_ratio_, mambaish, solve, cap_by_estimate,
                       padding_slots, mm_reserve_gib, min_one_running, pools_sized_separately, replay,
                       ring, slack_floor_gib=0.0, swa_rescale=None, swa_cap=None) -> dict[str, np.ndarray]:
    """:func:`size_chain` on numpy arrays (the search's grids)."""
    f64 = np.float64
    pre = np.asarray(pre_gib, dtype=f64)
    post = np.asarray(post_gib, dtype=f64)
    slack = pre * (1 - np.asarray(mfs, dtype=f64))
    floor = np.asarray(slack_floor_gib, dtype=f64)
    if np.any(floor > 0):
        slack = np.where(floor > 0, np.maximum(slack, floor), slack)
    rest = post - slack - np.asarray(mm_reserve_gib, dtype=f64)
    rest_before = rest
    per = np.asarray(per_req, dtype=np.int64)
    r_args = np.asarray(r_args, dtype=np.int64)
    if min_one_running:  # max(1, R // dp) (srt/mem_cache/kv_cache_configurator.py:3128 @0.5.23)
        r_args = np.where(r_args >= 0, np.maximum(r_args, 1), r_args)
    mamba = np.asarray(mambaish, dtype=bool)
    spec = np.asarray(spec_on, dtype=bool) & mamba
    # ReplaySSM (0.5.17+): no speculative intermediates; the verify ring rides on every slot ("per_slot") or is
    # a fixed (R + 1)-request scratch ("fixed") (srt/mem_cache/kv_cache_configurator.py:2235-2374 @0.5.19,
    # :2406-2539 @0.5.20)
    per_slot_extra = 0
    if replay:
        spec = np.zeros_like(spec)
        per_slot_extra = ring if replay == "per_slot" else 0
    d = np.asarray(ndraft, dtype=np.int64)
    mr = np.asarray(mamba_ratio_, dtype=np.int64)
    mr_safe = np.where(mr > 0, mr, 1)
    m_exp = np.asarray(m_explicit, dtype=np.int64)
    r = np.asarray(ratio, dtype=f64)
    use_r_args = np.asarray(radix_off, dtype=bool) & (r_args >= 0)
    per_safe = np.where(per > 0, per, 1)
    fixed = 0
    if replay == "fixed":
        fixed = _i64_product(ring, _plus(np.maximum(r_args, 0), 1))
    if solve == "classic":
        spec_reserved = np.where(spec, _i64_product(per, np.maximum(r_args, 0), d), 0)
        rest = np.where(spec, rest - spec_reserved / (1 << 30), rest)
        with np.errstate(divide="ignore", invalid="ignore"):
            raw = rest * r / (1 + r)
            m_ratio = np.floor_divide(raw * (1 << 30), per_safe)
    elif not padding_slots:  # "joint" (srt/mem_cache/kv_cache_configurator.py:1703-1814 @0.5.16)
        with np.errstate(divide="ignore", invalid="ignore"):
            budget_bytes = rest * r / (1 + r) * (1 << 30)
            m_ratio = np.where(spec, np.floor_divide(budget_bytes, per_safe * (1 + d / mr_safe)),
                               np.floor_divide(budget_bytes, per_safe))
    else:  # joint, with the padding rows (srt/mem_cache/kv_cache_configurator.py:2315-2350 @0.5.19)
        with np.errstate(divide="ignore", invalid="ignore"):
            budget_bytes = rest * r / (1 + r) * (1 << 30)
            slot = per_safe + per_slot_extra
            m_ratio = np.where(spec, np.floor_divide(budget_bytes - per * (1 + d), per_safe * (1 + d / mr_safe)),
                               np.floor_divide(budget_bytes - fixed - slot, slot))
    m_ratio = _to_i64(np.where(np.isfinite(m_ratio), m_ratio, 0))
    m = np.where(m_exp >= 0, m_exp, np.where(use_r_args, r_args, m_ratio))
    m = np.where(mamba, m, 0)
    pad = 1 if padding_slots else 0
    if solve != "classic":
        capped = np.where(use_r_args & (m_exp < 0), m, np.minimum(np.maximum(r_args, 0), m // mr_safe))
        spec_reserved = np.where(spec, _i64_product(per, _plus(capped, pad), d), 0)
        rest = np.where(spec, rest - spec_reserved / (1 << 30), rest)
    rest_after_spec = rest
    fail_m = mamba & (m <= 0)
    mamba_bytes = _i64_product(_plus(m, pad), per + per_slot_extra)
    if np.any(fixed):  # ReplaySSM's fixed scratch: the sum saturates too
        mamba_bytes = np.where(mamba_bytes >= _I64 - 1 - np.maximum(fixed, 0), _I64 - 1, mamba_bytes + fixed)
    rest = np.where(mamba, rest - mamba_bytes / (1 << 30), rest)
    fail_rest = rest <= 0
    available = _to_i64(np.trunc(rest * (1 << 30)))
    page = np.asarray(page, dtype=np.int64)
    cell_arr = np.asarray(cell)
    if cell_arr.dtype.kind == "f":  # a hybrid SWA cell (pool_configurator.py:274-278 @0.5.11): int(available // cell)
        n = _to_i64(np.floor_divide(available, cell_arr))
    else:
        n = np.floor_divide(available, np.asarray(cell, dtype=np.int64))
    if swa_cap is not None:  # 0.5.14+ request-capped SWA pool (pipeline/swa.py request_cap)
        per_r, const, swa_b, full_c, min_r = swa_cap
        r_on = np.asarray(r_args, dtype=np.int64)
        on = np.asarray(radix_off, dtype=bool) & (r_on >= 0)
        swa_tok = -(-(per_r * np.maximum(r_on, min_r) + const) // page) * page
        n = np.where(on, np.floor_divide(available - swa_tok * swa_b, np.int64(full_c)), n)
    n = n // page * page
    fail = n <= 0
    mtt = np.asarray(max_total_tokens, dtype=np.int64)
    capped = np.where((mtt >= 0) & (mtt < n), mtt // page * page, n)
    fail = fail | (capped <= 0)
    n = capped
    if swa_rescale is not None:  # 0.5.9 / 0.5.10 hybrid SWA (pipeline/swa.py rescale)
        a, dnm = swa_rescale
        n = _to_i64(np.trunc(n * a / dnm)) // page * page
        fail = fail | (n <= 0)
    r_req, r_pool = _running_requests(n, available, cell, context_len, r_args, m, mamba, mr_safe, cap_by_estimate,
                                      pools_sized_separately)
    return {"r_pool": r_pool, "rest_before": rest_before, "spec_reserved": spec_reserved, "m": m, "available": available,
            "n": n, "r": r_req, "fail": fail, "fail_m": fail_m, "fail_rest": fail_rest, "rest_after_mamba": rest,
            "rest_after_spec": rest_after_spec}


def _running_requests(n, available, cell, context_len, r_args, m, mamba, mr_safe, cap_by_estimate: bool,
                      pools_sized_separately: bool) -> tuple[np.ndarray, np.ndarray]:
    """R: min(R_args | N // 2, clamp(int(N / ctx * 512), 2048, 4096)), then min with M // ratio
    (…kv_cache_mixin.py:698-717 @0.5.11); and the request pools' size (R, or 0.5.9's R_pool)."""
    ctx = np.asarray(context_len, dtype=np.int64)
    est = np.trunc(n / ctx * 512).astype(np.int64)
    est = np.maximum(np.minimum(est, 4096), 2048)
    if cap_by_estimate:
        r_req = np.where(r_args >= 0, np.minimum(r_args, est), np.minimum(est, n // 2))
    else:
        r_req = np.where(r_args >= 0, np.minimum(r_args, n // 2), np.minimum(est, n // 2))
    r_req = np.where(mamba, np.minimum(r_req, m // mr_safe), r_req)
    r_pool = r_req
    if pools_sized_separately:
        # init_memory_pool (…kv_cache_mixin.py:339-368 @0.5.9): the pool size comes from the unaligned,
        # uncapped token count, an explicit R is not capped, then min with M // ratio; the scheduler takes
        # min(N // 2 or R // dp, pool size) (model_runner.py:593-600 @0.5.9)
        n_prof = np.floor_divide(available, np.asarray(cell, dtype=np.int64))
        est9 = np.maximum(np.minimum(np.trunc(n_prof / ctx * 512).astype(np.int64), 4096), 2048)
        r_pool = np.where(r_args >= 0, r_args, est9)
        r_pool = np.where(mamba, np.minimum(r_pool, m // mr_safe), r_pool)
        r_req = np.where(r_args >= 0, np.minimum(r_args, r_pool), np.minimum(n // 2, r_pool))
    return r_req, r_pool


def per_dp_worker(args: ResolvedArgs, r=None):
    """--max-running-requests per attention-DP worker: R // attn_dp_size (mem_cache/kv_cache_configurator.py:1631
    @0.5.16, :2272 @0.5.20, :2301 @0.5.21, :2809 @0.5.22; max(1, R // attn_dp_size) from 0.5.23, :3128 @0.5.23); R without DP
    attention. ``r``: the global value(s) to divide, an int or the search grid's array (default: the launch's)."""
    r, d = args.max_running_requests if r is None else r, args.attn_dp_size
    if d <= 1:
        return r
    per = r // d
    if args.rules.version != "0.5.23":
        return per
    return np.maximum(per, 1) if isinstance(per, np.ndarray) else max(1, per)


def chain_inputs(args: ResolvedArgs, model: ModelSpec, state: MambaState | None,
                 free_before_bytes: int, free_after_bytes: int, draft: ModelSpec | None = None) -> dict:
    """The scalar inputs of :func:`size_chain` for one resolved configuration."""
    tp = args.tp_size
    return dict(
        pre_gib=available_gib(free_before_bytes, tp), post_gib=available_gib(free_after_bytes, tp),
        mfs=args.mem_fraction_static, per_req=state.budget_per_req_bytes if state else 0,
        spec_on=args.spec_on, r_args=-1 if args.max_running_requests is None else per_dp_worker(args),
        ndraft=args.speculative_num_draft_tokens or 0,
        # per DP shard: M // attn_dp_size (kv_cache_configurator.py:1713-1719 @0.5.16, :3304-3309 @0.5.23)
        m_explicit=-1 if args.max_mamba_cache_size is None else args.max_mamba_cache_size // args.attn_dp_size,
        radix_off=args.disable_radix_cache, ratio=args.mamba_full_memory_ratio, cell=cell_size(model, args, draft),
        page=args.page_size, max_total_tokens=-1 if args.max_total_tokens is None else args.max_total_tokens,
        context_len=args.context_len, mamba_ratio_=mamba_ratio(args, strict=False), mambaish=state is not None,
        solve=args.rules.mamba_solve, cap_by_estimate=args.rules.cap_running_by_estimate,
        padding_slots=args.rules.padding_slots, mm_reserve_gib=mm_reserve_gib(args),
        min_one_running=args.rules.min_one_running, pools_sized_separately=args.rules.request_pools_sized_separately,
        slack_floor_gib=slack_floor_gib(args, state is not None), **replay_inputs(args, state),
        swa_rescale=_swa_rescale(args, model), swa_cap=_swa_cap(args, model),
    )


def _swa_cap(args: ResolvedArgs, model: ModelSpec):
    """0.5.14+'s request-capped SWA pool (pipeline/swa.py ``request_cap``), else None."""
    if model.sliding is None:
        return None
    from planner.engines.sglang.pipeline import swa  # noqa: PLC0415

    return swa.request_cap(args, model, DTYPE_BYTES[kv_dtype_name(args, model)])


def _swa_rescale(args: ResolvedArgs, model: ModelSpec):
    """0.5.9 / 0.5.10's hybrid SWA split (pipeline/swa.py ``rescale``), else None."""
    if model.sliding is None:
        return None
    from planner.engines.sglang.pipeline import swa  # noqa: PLC0415

    return swa.rescale(args, model, DTYPE_BYTES[kv_dtype_name(args, model)])


def replay_inputs(args: ResolvedArgs, state: MambaState | None) -> dict:
    """ReplaySSM's sizing inputs (0.5.17+, --enable-linear-replayssm-spec on a GDN model): the layout and the
    ring bytes per request, record length = the draft tokens (0.5.17-0.5.19, else --linear-replayssm-cache-len)
    or the cache length (0.5.20+) (srt/mem_cache/kv_cache_configurator.py:2242-2265 @0.5.19, :2406-2428 @0.5.20)."""
    mode = args.rules.replayssm
    if not mode or state is None or not args.raw.get("enable_linear_replayssm_spec"):
        return {"replay": "", "ring": 0}
    cache_len = args.raw.get("linear_replayssm_cache_len", 16)
    rec = (args.speculative_num_draft_tokens or cache_len) if mode == "per_slot" else cache_len
    return {"replay": mode, "ring": state.replayssm_ring_bytes(rec, mode)}


def mm_reserve_gib(args: ResolvedArgs) -> float:
    """mm_runtime_reservation_gb, 0.5.18+ (srt/mem_cache/kv_cache_configurator.py:132-152 @0.5.19):
    a multimodal model keeps SGLANG_VLM_CACHE_SIZE_MB (100) of the KV budget for its embedding cache,
    plus SGLANG_MM_FEATURE_CACHE_MB (1024) with --mm-feature-transport cuda_ipc / cuda_vmm."""
    if not args.rules.mm_kv_reserve or not args.is_multimodal:
        return 0.0
    mb = _env_int(args.env, "SGLANG_VLM_CACHE_SIZE_MB", 100)
    if args.raw.get("mm_feature_transport") in ("cuda_ipc", "cuda_vmm"):
        mb += _env_int(args.env, "SGLANG_MM_FEATURE_CACHE_MB", 1024)
    return mb / 1024


def _env_int(env: dict[str, str], key: str, default: int) -> int:
    """EnvInt.parse: int(value) (srt/environ.py @0.5.19)."""
    if key not in env:
        return default
    try:
        return int(env[key])
    except ValueError:
        raise Rejected("ValueError", f'"{env[key]}" is not a valid integer value', "srt/environ.py EnvInt") from None


def profile(args: ResolvedArgs, model: ModelSpec, state: MambaState | None,
            free_before_bytes: int, free_after_bytes: int, draft: ModelSpec | None = None) -> Profile:
    """Run the sizing chain for one configuration. Raises NotEnoughMemory where SGLang would."""
    inp = chain_inputs(args, model, state, free_before_bytes, free_after_bytes, draft)
    out = size_chain(**inp)
    mamba = state is not None
    _ratio_inside_spec_solve(args, inp, out, mamba)
    if not mamba:
        source = ""
    elif args.max_mamba_cache_size is not None:
        source = "--max-mamba-cache-size (explicit; --mamba-full-memory-ratio is ignored)"
    elif args.disable_radix_cache and args.max_running_requests is not None:
        source = "max_running_requests, because the radix cache is disabled"
    else:
        r = args.mamba_full_memory_ratio
        replay = replay_inputs(args, state)["replay"]
        if replay:
            source = (f"--mamba-full-memory-ratio {r}: (rest x r/(1+r) - " + ("ring scratch - " if replay == "fixed" else "")
                      + "slot) // slot, slot = S" + (" + ring" if replay == "per_slot" else "")
                      + " (ReplaySSM: no speculative intermediates)")
        elif args.rules.mamba_solve == "joint" and args.spec_on:
            pad = "(B - S x (1 + D)) // " if args.rules.padding_slots else "B // "
            source = (f"--mamba-full-memory-ratio {r}: B = rest x r/(1+r); M = {pad}(S x (1 + D / ratio)), the "
                      "speculative states inside the share")
        elif args.rules.padding_slots:
            source = f"--mamba-full-memory-ratio {r}: (rest x r/(1+r) - S) // S (the pool's padding row charged)"
        else:
            source = f"--mamba-full-memory-ratio {r}: rest x r/(1+r) / per-request state"
    prof = Profile(
        pre_model_load_gib=float(inp["pre_gib"]), post_model_load_gib=float(inp["post_gib"]),
        rest_gib_before_mamba=float(out["rest_before"]),
        spec_reserved_bytes=int(out["spec_reserved"]) if mamba and args.spec_on else None,
        max_mamba_cache_size=int(out["m"]) if mamba else None,
        mamba_cache_per_req_bytes=state.reported_per_req_bytes if mamba else None,
        available_kv_bytes=int(out["available"]), kv_cell_bytes_per_token=_cell_number(inp["cell"]),
        max_mamba_cache_source=source,
    )
    if args.rules.zero_checks:
        _zero_checks(args, prof, inp, out, mamba)
    cap = inp["swa_cap"] if inp["swa_cap"] is not None and inp["radix_off"] and inp["r_args"] >= 0 else None
    if cap is not None:  # 0.5.14+ request-capped SWA pool (pipeline/swa.py request_cap): no SWA floor check
        from planner.engines.sglang.pipeline import swa  # noqa: PLC0415

        swa_tok = swa.request_cap_tokens(cap, int(inp["r_args"]), args.page_size)
        full = (int(out["available"]) - swa_tok * cap[2]) // cap[3] // args.page_size * args.page_size
        if full <= 0:
            exc = swa.request_cap_error(swa_tok, cap[2], int(out["available"]))
            exc.profile = prof
            raise exc
        mtt = args.max_total_tokens  # calculate_pool_sizes_from_max_tokens: SWA = min(cap, mtt) (:1034-1042)
        prof.swa_tokens = min(swa_tok, mtt) if mtt is not None and 0 <= mtt < full else swa_tok
    elif model.sliding is not None:
        from planner.engines.sglang.pipeline import swa  # noqa: PLC0415

        swa.profile_checks(args, model, prof, inp, out)
    if bool(out["fail"]):
        if args.rules.oom_message_names_fraction and mamba:
            # <= 0.5.10 computes the request count, and with it the ratio, before MemoryPoolConfig raises
            # (…kv_cache_mixin.py:871-891 @0.5.10; init_memory_pool :339-419 @0.5.9)
            prof.mamba_ratio = int(inp["mamba_ratio_"])
        raise NotEnoughMemory(prof, args.mem_fraction_static if args.rules.oom_message_names_fraction else None,
                              args.rules.oom_message_fstring)
    if mamba:
        try:
            mamba_ratio(args)  # resolve_max_num_reqs computes the ratio here, and may assert
        except Rejected as exc:
            exc.profile = prof
            raise
    prof.max_total_num_tokens = int(out["n"])
    prof.max_running_requests = int(out["r"])
    if inp["swa_rescale"] is not None and args.rules.request_pools_sized_separately:  # 0.5.9
        from planner.engines.sglang.pipeline import swa  # noqa: PLC0415

        page = args.page_size
        n0 = int(int(out["available"]) // inp["cell"]) // page * page
        if args.max_total_tokens is not None and 0 <= args.max_total_tokens < n0:
            n0 = args.max_total_tokens // page * page
        prof.swa_tokens = swa.swa_tokens_0_5_9(args, model, DTYPE_BYTES[kv_dtype_name(args, model)], n0)
    if args.rules.request_pools_sized_separately:
        prof.pool_requests = int(out["r_pool"])
    prof.mamba_ratio = int(inp["mamba_ratio_"]) if mamba else None
    if args.rules.zero_checks and mamba and prof.max_running_requests <= 0:
        # resolve_max_num_reqs (srt/mem_cache/kv_cache_configurator.py:1645-1654 @0.5.16)
        exc = Rejected(
            "RuntimeError",
            f"Hybrid (mamba/linear-attention) state cache is too small to serve any requests. "
            f"max_mamba_cache_size={prof.max_mamba_cache_size}, mamba_ratio={prof.mamba_ratio}, resulting "
            f"max_num_reqs={prof.max_running_requests}. Try: (1) reduce --max-running-requests, (2) increase "
            f"--mem-fraction-static, or (3) use GPUs with more memory.",
            "srt/mem_cache/kv_cache_configurator.py:1645-1654 @0.5.16", stage="resolve_memory_pool_config")
        prof.max_total_num_tokens = None  # the MemoryPoolConfig never completes
        prof.max_running_requests = None
        exc.profile = prof
        raise exc
    return prof


def _ratio_inside_spec_solve(args: ResolvedArgs, inp: dict, out: dict, mamba: bool) -> None:
    """0.5.17+ (extra_buffer_lazy allowed with speculative decoding): the joint speculative solve calls
    _calculate_mamba_ratio inside _handle_max_mamba_cache, so its lazy-needs-overlap assertion fires before any
    pool number exists; max_mamba_cache_size is set only when given (srt/mem_cache/kv_cache_configurator.py:
    3302-3323, 3350-3358 @0.5.23). Without speculative decoding the ratio is computed after the budget."""
    if not (mamba and args.spec_on and args.rules.lazy_with_spec and args.rules.mamba_solve == "joint"
            and not inp["replay"]):
        return
    if args.max_mamba_cache_size is None and args.disable_radix_cache and args.max_running_requests is not None:
        return  # M = R: no ratio in that branch
    try:
        mamba_ratio(args)
    except Rejected as exc:
        exc.profile = Profile(
            pre_model_load_gib=float(inp["pre_gib"]), post_model_load_gib=float(inp["post_gib"]),
            rest_gib_before_mamba=float(out["rest_before"]), spec_reserved_bytes=None,
            max_mamba_cache_size=args.max_mamba_cache_size, mamba_cache_per_req_bytes=int(inp["per_req"]),
            available_kv_bytes=None, kv_cell_bytes_per_token=None)
        raise


def _zero_checks(args: ResolvedArgs, prof: Profile, inp: dict, out: dict, mamba: bool) -> None:
    """0.5.13+/0.5.14+ startup errors (srt/mem_cache/kv_cache_configurator.py:1549-1568, 1793-1804 @0.5.16)."""
    import math  # noqa: PLC0415

    # What SGLang holds when these fire: no KV budget yet; the ratio only if it was computed
    # (the joint spec solve calls _calculate_mamba_ratio, kv_cache_configurator.py:1735-1790 @0.5.16).
    joint_spec = args.spec_on and not (args.disable_radix_cache and args.max_running_requests is not None
                                       and args.max_mamba_cache_size is None)
    prof.mamba_ratio = int(inp["mamba_ratio_"]) if mamba and joint_spec else None
    if mamba and bool(out["fail_m"]):
        prof.available_kv_bytes = None
        prof.kv_cell_bytes_per_token = None
        prof.spec_reserved_bytes = None
        rest_after_spec = float(out["rest_after_spec"])
        exc = Rejected(
            "RuntimeError",
            f"Not enough GPU memory for hybrid (mamba/linear-attention) state cache. Computed "
            f"max_mamba_cache_size={prof.max_mamba_cache_size} (total_rest_memory={rest_after_spec:.2f} GB, "
            f"mamba_cache_per_req={prof.mamba_cache_per_req_bytes / (1 << 20):.2f} MB). Try: (1) reduce "
            f"--max-running-requests, (2) increase --mem-fraction-static, (3) reduce --speculative-num-draft-tokens, "
            f"or (4) use GPUs with more memory.",
            "srt/mem_cache/kv_cache_configurator.py:1793-1804 @0.5.16", stage="resolve_memory_pool_config")
        exc.profile = prof
        raise exc
    if args.rules.weights_check and bool(out["fail_rest"]):
        prof.available_kv_bytes = None
        prof.kv_cell_bytes_per_token = None
        minimum = 1 - inp["post_gib"] / inp["pre_gib"]
        suggested = math.ceil(minimum * 1000) / 1000
        exc = Rejected(
            "ValueError",
            f"Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static="
            f"{args.mem_fraction_static}. Raise --mem-fraction-static above {suggested:.3f} (minimum viable = "
            f"1 - available/pre = {minimum:.4f}). If using speculative decoding, draft weights are now counted.",
            "srt/mem_cache/kv_cache_configurator.py:1549-1568 @0.5.16", stage="resolve_memory_pool_config")
        exc.profile = prof
        raise exc
