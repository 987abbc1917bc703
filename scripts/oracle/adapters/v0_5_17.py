"""SGLang 0.5.17: the v0_5_19 adapter plus one read stand-in.

Kept as a separate file because oracle.py picks versions/v<newest <= installed>.py (else v0_5_16,
which fails on 0.5.17: sizing reads the config bags, which v0_5_16 never publishes).
The v0_5_19 adapter's 0.5.18 fallbacks apply (no ServerArgs.resolve_once: __post_init__ resolves
and writes the fields; no overrides.resolution_result). 0.5.17 has the runtime-context config bags,
publish() and get_context().override(), but not RuntimeContext.config_leaf (added in 0.5.18), which
the adapter's _SAView uses to read one leaf by field name. The stand-in below answers it exactly as
0.5.18's config_leaf does (walk namespace_of(type(server_args))[name] through the published bags);
it is a read path only and does not change any value.

Two more 0.5.17 signatures differ from 0.5.19's, so this file carries its own copies:
- ParallelState (distributed/parallel_state_wrapper.py) has dcp_size, not attn_dcp_rank/attn_dcp_size:
  _ps_0517 builds it with the same trivial topology (dcp_size=1), installed as v0_5_19._ps at load().
- ModelRunner.configure_kv_cache_dtype (model_runner.py:1198-1224) passes no
  speculative_draft_kv_cache_dtype (the field does not exist yet), reads kv_cache_dtype and
  speculative_draft_attention_backend off self.server_args (0.5.17's __post_init__ has written the
  resolved values there): after_load_model below does the same.
"""
import dataclasses
import types
from versions import v0_5_19 as _base
from versions.v0_5_19 import *  # noqa: F401,F403

VERSION = "0.5.17"


class _CtxWithConfigLeaf:
    """Proxy over 0.5.17's RuntimeContext adding config_leaf (0.5.18 semantics)."""

    __slots__ = ("_ctx", "_nsmap")

    def __init__(self, ctx, nsmap):
        object.__setattr__(self, "_ctx", ctx)
        object.__setattr__(self, "_nsmap", nsmap)

    def __getattr__(self, name):
        return getattr(object.__getattribute__(self, "_ctx"), name)

    def __setattr__(self, name, value):
        setattr(object.__getattribute__(self, "_ctx"), name, value)

    def config_leaf(self, name):
        ctx = object.__getattribute__(self, "_ctx")
        if ctx._config_bags is None:
            raise ValueError("config not published; cannot read a config leaf")
        path = object.__getattribute__(self, "_nsmap").get(name)
        if path is None:
            raise ValueError(f"{name!r} is not a config leaf (no NS namespace)")
        parts = path.split(".")
        bag = ctx.config_bag(parts[0])
        for seg in parts[1:]:
            bag = object.__getattribute__(bag, "_subs").get(seg)
            if bag is None:
                raise ValueError(f"subgroup {seg!r} missing under {path!r}")
        return getattr(bag, name)


def _ps_0517(S, sa):
    tp = sa.tp_size
    names = {f.name for f in dataclasses.fields(S.ParallelState)}
    kw = dict(tp_rank=0, tp_size=tp, pp_rank=0, pp_size=1, dp_rank=0, dp_size=1, attn_tp_rank=0,
              attn_tp_size=tp, attn_cp_rank=0, attn_cp_size=1, attn_dp_rank=0, attn_dp_size=1,
              moe_ep_rank=0, moe_ep_size=1, moe_dp_rank=0, moe_dp_size=1, dcp_size=1,
              attn_dcp_rank=0, attn_dcp_size=1, gpu_id=0)
    return S.ParallelState(**{k: v for k, v in kw.items() if k in names})


def after_load_model(S, r):
    """v0_5_19.after_load_model with 0.5.17's ModelRunner.configure_kv_cache_dtype."""
    rec = _base._unwrap(r.server_args)
    r.model = types.SimpleNamespace()
    # the checkpoint's quant config on the empty model, as v0_5_19.after_load_model gives it
    from versions.v0_5_21 import _model_class_keeps_quant_config, _quant_config_for  # noqa: PLC0415
    qc = _quant_config_for(S, r)
    if qc is not None and _model_class_keeps_quant_config(r):
        r.model.quant_config = qc
    r.dtype = r.model_config.dtype
    from versions.standins import give_model_sliding_window  # the loaded model's own window (standins.py)

    give_model_sliding_window(r.model, r.model_config)
    r.sliding_window_size = S.resolve_sliding_window_size(r.model, r.model_config)
    r.spec_aux_config = S.resolve_spec_aux_hidden_state_config(
        server_args=rec, model_config=r.model_config, spec_algorithm=r.spec_algorithm,
        is_draft_worker=r.is_draft_worker)
    r.layer_info = S.resolve_layer_indices(model=r.model, model_config=r.model_config,
                                           is_draft_worker=r.is_draft_worker, spec_algorithm=r.spec_algorithm)
    S.adjust_hybrid_swa_layer_ids(model_config=r.model_config, start_layer=r.layer_info.start_layer,
                                  end_layer=r.layer_info.end_layer, is_hybrid_swa=r.is_hybrid_swa)
    resolved, r.kv_cache_dtype = S.kvd.configure_kv_cache_dtype(
        server_args_kv_cache_dtype=rec.kv_cache_dtype, model=r.model, model_dtype=r.dtype,
        is_draft_worker=r.is_draft_worker, is_dflash=r.spec_algorithm.is_dflash_family(),
        speculative_draft_attention_backend=getattr(rec, "speculative_draft_attention_backend", None))
    r.kv_cache_dtype_str = resolved if resolved is not None else rec.kv_cache_dtype
    r.cfg = S.kvc.KVCacheConfigurator(
        device=r.device, gpu_id=r.gpu_id, ps=r.ps, pp_group=None, model=r.model, model_config=r.model_config,
        server_args=rec, kv_cache_dtype=r.kv_cache_dtype, kv_cache_dtype_str=r.kv_cache_dtype_str,
        model_dtype=r.dtype, page_size=r.page_size,
        sliding_window_size=r.sliding_window_size, spec_algorithm=r.spec_algorithm,
        is_draft_worker=r.is_draft_worker,
        post_capture_kv_active=S.is_post_capture_kv_active(server_args=rec, is_draft_worker=r.is_draft_worker),
        spec_aux_config=r.spec_aux_config, is_hybrid_swa=r.is_hybrid_swa,
        is_hybrid_swa_compress=r.is_hybrid_swa_compress, use_mla_backend=r.use_mla_backend,
        layer_info=r.layer_info, forward_stream=None, req_to_token_pool=r.req_to_token_pool,
        token_to_kv_pool_allocator=r.token_to_kv_pool_allocator, memory_pool_config=r.memory_pool_config,
        draft_model_idx=r.draft_model_idx)


def load():
    S = _base.load()
    _base._ps = _ps_0517  # this process runs 0.5.17 only; v0_5_19's make_runner calls _ps
    from versions import pp_stage

    pp_stage.wrap_ps(_base)  # the pp rank on 0.5.17's ParallelState too (pp_stage.py)
    real_get_context = S.get_context
    if not hasattr(type(real_get_context()), "config_leaf"):
        S.get_context = lambda: _CtxWithConfigLeaf(real_get_context(), S.namespace_map)
        S.get_global_server_args = lambda: real_get_context().server_args
    return S


def draft_model_config(S, server_args, target_model_config=None):
    """0.5.17's draft workers differ in the context length they give the draft's ModelConfig: the EAGLE
    (EAGLE3, NEXTN), multi-layer EAGLE and STANDALONE workers build TpModelWorker(is_draft_worker=True) without
    one (srt/speculative/eagle_worker_v2.py:165-172, multi_layer_eagle_worker_v2.py:154-161,
    standalone_worker_v2.py:71-78 @0.5.17), so ModelConfig takes --context-length (srt/configs/model_config.py:553-557
    @0.5.17); only DFLASH's draft_server_args_copy sets the target's (srt/speculative/draft_worker_common.py:119
    @0.5.17)."""
    spec = S.rc.get_spec()
    dflash = S.SpeculativeAlgorithm.from_string(spec.speculative_algorithm).is_dflash_family()
    return _base.draft_model_config(S, server_args, target_model_config=target_model_config if dflash else None)
