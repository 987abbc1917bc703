"""Per-version code for SGLang 0.5.21, 0.5.22 and 0.5.23: the v0_5_19 adapter (shared by 0.5.18-0.5.23) plus
the deltas below, each detected from SGLang's own signatures. Only what differs is defined here.

Changes against v0_5_20 (all follow ModelRunner's own calls; no arithmetic):
- distributed.parallel_state_wrapper.ParallelState is gone (0.5.21). ModelRunner.init_kv_cache_configurator
  passes attn_dp_size=get_parallel().attn_dp_size and pp_size=self.pp_group.world_size instead of ps=...
  The adapter passes whichever of ps / attn_dp_size / pp_size the KVCacheConfigurator dataclass declares.
- 0.5.23: KVCacheConfigurator takes draft_parallel_layout (Scheduler.init_target_memory_pool passes the
  draft worker's layout to the target runner). The adapter calls SGLang's
  speculative.draft_parallel.resolve_draft_parallel_layout(legacy_draft_parallel_spec(spec)) for a target
  runner with spec on (see _draft_parallel_layout), None otherwise.
- layer_setup.adjust_hybrid_swa_layer_ids is gone (0.5.21); resolve_layer_indices takes draft_model_idx
  instead of spec_algorithm and returns the local hybrid-SWA ids itself. Called per its signature.
- kv_pool_runtime.is_post_capture_kv_active takes spec_algorithm and token_to_kv_pool_allocator (0.5.23).
  Called per its signature.
- KVCacheConfigurator._profile_available_bytes reads get_parallel().launch_world_size (0.5.21+): added to the
  parallel overrides (= tp, like world_size).
- spec_reserved_bytes_after reads attn_dp_size from the configurator (ps no longer exists).
- The checkpoint's quantization (issue 10): the empty model carries the quant_config SGLang's loader builds
  (model_loader/loader.py _get_quantization_config with the LoadConfig ModelRunner.load_model builds through
  load_model_utils.build_load_config), set only if the architecture's class keeps ``self.quant_config``, so
  configure_kv_cache_dtype reads a checkpoint's kv_cache_scheme / kv_cache_quant_algo as on a GPU (as the
  shared oracle's 0.5.23 adapter does). Unquantized checkpoints are unchanged (no quant config).
"""
import dataclasses
import inspect

from versions import v0_5_19 as _base
from versions.v0_5_19 import *  # noqa: F401,F403
from versions.v0_5_19 import _unwrap
from versions.standins import model_class_keeps_quant_config

VERSION = "0.5.21"


def load():
    S = _base.load()  # ParallelState / adjust_hybrid_swa_layer_ids come back None where they are gone
    try:  # 0.5.23: the target's configurator takes the draft worker's DraftParallelLayout
        from sglang.srt.speculative.draft_parallel import legacy_draft_parallel_spec, resolve_draft_parallel_layout
    except ImportError:
        legacy_draft_parallel_spec = resolve_draft_parallel_layout = None
    S.legacy_draft_parallel_spec = legacy_draft_parallel_spec
    S.resolve_draft_parallel_layout = resolve_draft_parallel_layout
    S.launch_world_size = True  # _parallel_overrides: get_parallel().launch_world_size (0.5.21+)
    S.kvc_fields = frozenset(f.name for f in dataclasses.fields(S.kvc.KVCacheConfigurator) if f.init)
    S.layer_indices_params = frozenset(inspect.signature(S.resolve_layer_indices).parameters)
    S.post_capture_params = frozenset(inspect.signature(S.is_post_capture_kv_active).parameters)
    from versions import pp_stage

    pp_stage.install(S, _base)  # one pp rank when ORACLE_PP_RANK is set (pp_stage.py); else nothing
    return S


def _quant_config_for(S, r):
    """model_loader/loader.py _get_quantization_config(model_config, load_config), with the LoadConfig
    ModelRunner.load_model builds (model_runner.py:1200-1209 @0.5.21, :1267-1277 @0.5.22, :1286-1296 @0.5.23);
    None for an unquantized checkpoint."""
    if r.model_config.quantization is None:
        return None
    from sglang.srt.model_executor.model_runner_components.load_model_utils import build_load_config
    from sglang.srt.model_loader import loader

    m = S.rc.get_model()
    kw = dict(server_args=r.server_args, load_format=None, tp_rank=0,
              remote_instance_weight_transporter_engine=None, remote_instance_weight_transporter_session_id="",
              draft_model_idx=r.draft_model_idx, weight_cache_mode=getattr(m, "weight_cache_mode", None),
              weight_cache_socket=getattr(m, "weight_cache_socket", None), load_group=None)
    params = inspect.signature(build_load_config).parameters
    load_config = build_load_config(**{k: v for k, v in kw.items() if k in params})
    return loader._get_quantization_config(r.model_config, load_config)


def _model_class_keeps_quant_config(r):
    """True if the class SGLang's loader picks stores the quant_config it is built with (standins.py, which the
    0.5.9-0.5.16 adapters share)."""
    return model_class_keeps_quant_config(r)


def after_load_model(S, r):
    rec = _unwrap(r.server_args)
    qc = _quant_config_for(S, r)
    r.model = types.SimpleNamespace()
    if qc is not None and _model_class_keeps_quant_config(r):
        r.model.quant_config = qc
    r.dtype = r.model_config.dtype
    from versions.standins import give_model_sliding_window  # the loaded model's own window (standins.py)

    give_model_sliding_window(r.model, r.model_config)
    r.sliding_window_size = S.resolve_sliding_window_size(r.model, r.model_config)
    r.spec_aux_config = S.resolve_spec_aux_hidden_state_config(  # ModelRunner.init_spec_aux_hidden_state
        server_args=rec, model_config=r.model_config, spec_algorithm=r.spec_algorithm,
        is_draft_worker=r.is_draft_worker)
    li_kw = dict(model=r.model, model_config=r.model_config, is_draft_worker=r.is_draft_worker)
    if "spec_algorithm" in S.layer_indices_params:  # <= 0.5.20
        li_kw["spec_algorithm"] = r.spec_algorithm
    if "draft_model_idx" in S.layer_indices_params:  # 0.5.21+ (ModelRunner passes self.draft_model_idx)
        li_kw["draft_model_idx"] = r.draft_model_idx
    r.layer_info = S.resolve_layer_indices(**li_kw)
    if S.adjust_hybrid_swa_layer_ids is not None:  # <= 0.5.20
        S.adjust_hybrid_swa_layer_ids(model_config=r.model_config, start_layer=r.layer_info.start_layer,
                                      end_layer=r.layer_info.end_layer, is_hybrid_swa=r.is_hybrid_swa)
    # ModelRunner.configure_kv_cache_dtype (model_runner.py:1381-1406)
    resolved, r.kv_cache_dtype = S.kvd.configure_kv_cache_dtype(
        server_args_kv_cache_dtype=S.rc.get_model().kv_cache_dtype, model=r.model, model_dtype=r.dtype,
        is_draft_worker=r.is_draft_worker, is_dflash=r.spec_algorithm.is_dflash_family(),
        speculative_draft_attention_backend=r.draft_attention_backend,
        speculative_draft_kv_cache_dtype=S.rc.get_spec().speculative_draft_kv_cache_dtype)
    r.kv_cache_dtype_str = resolved if resolved is not None else S.rc.get_model().kv_cache_dtype
    # ModelRunner.init_kv_cache_configurator: the parallel fields it passes changed across releases
    #   <= 0.5.20: ps=ParallelState(...); 0.5.21+: attn_dp_size=get_parallel().attn_dp_size,
    #   pp_size=self.pp_group.world_size (1 here); 0.5.23+: draft_parallel_layout (target runner only,
    #   the draft worker's layout as Scheduler.init_target_memory_pool passes it)
    par = {}
    if "ps" in S.kvc_fields:
        par["ps"] = r.ps
    if "attn_dp_size" in S.kvc_fields:
        par["attn_dp_size"] = S.get_parallel().attn_dp_size
    if "pp_size" in S.kvc_fields:
        from versions import pp_stage  # noqa: PLC0415

        par["pp_size"] = pp_stage.current_size()  # self.pp_group.world_size (pp_stage.py)
    if "draft_parallel_layout" in S.kvc_fields:
        par["draft_parallel_layout"] = _draft_parallel_layout(S, r)
    pc_kw = dict(server_args=rec, is_draft_worker=r.is_draft_worker)
    if "spec_algorithm" in S.post_capture_params:
        pc_kw["spec_algorithm"] = r.spec_algorithm
    if "token_to_kv_pool_allocator" in S.post_capture_params:
        pc_kw["token_to_kv_pool_allocator"] = r.token_to_kv_pool_allocator
    r.cfg = S.kvc.KVCacheConfigurator(
        **par,
        device=r.device, gpu_id=r.gpu_id, pp_group=None, model=r.model, model_config=r.model_config,
        server_args=rec, kv_cache_dtype=r.kv_cache_dtype, kv_cache_dtype_str=r.kv_cache_dtype_str,
        model_dtype=r.dtype, page_size=r.page_size,
        sliding_window_size=r.sliding_window_size, spec_algorithm=r.spec_algorithm,
        is_draft_worker=r.is_draft_worker,
        post_capture_kv_active=S.is_post_capture_kv_active(**pc_kw),
        spec_aux_config=r.spec_aux_config, is_hybrid_swa=r.is_hybrid_swa,
        is_hybrid_swa_compress=r.is_hybrid_swa_compress, use_mla_backend=r.use_mla_backend,
        layer_info=r.layer_info, forward_stream=None, req_to_token_pool=r.req_to_token_pool,
        token_to_kv_pool_allocator=r.token_to_kv_pool_allocator, memory_pool_config=r.memory_pool_config,
        draft_model_idx=r.draft_model_idx)


def _draft_parallel_layout(S, r):
    """0.5.23: Scheduler.init_target_memory_pool passes draft_worker.draft_parallel_layout to the
    target runner's configurator (None without spec); the draft runner's own alloc passes none.
    The worker resolves it with speculative.draft_parallel.resolve_draft_parallel_layout(
    model_draft_parallel_spec(draft model config)). Here the legacy (no model-class declaration)
    spec is used: with attn-dp off and attn_cp_size 1 (all the oracle models) the layout does not
    depend on the spec (tp_group None, attn_tp_size = get_parallel().attn_tp_size)."""
    if r.is_draft_worker or r.spec_algorithm.is_none() or S.resolve_draft_parallel_layout is None:
        return None
    return S.resolve_draft_parallel_layout(S.legacy_draft_parallel_spec(r.spec_algorithm))


def spec_reserved_bytes_after(S, runner, sa, per_req, spec_on, mmcs_before):
    """Bytes _handle_max_mamba_cache subtracts for speculative intermediate states
    (kv_cache_configurator.py:2264-2346), from the bag values after it ran. Since 0.5.17 every
    branch charges the pool's +1 padding slot. pp = 1 here, so stage_per_req == per_req."""
    if not spec_on:
        return 0
    cfg = runner.cfg
    if S.rc.get_exec().mamba.enable_linear_replayssm_spec and cfg.hybrid_gdn_config is not None:
        return 0  # ReplaySSM: no intermediate_ssm reserve (kimi-linear not modelled)
    sched, spec, mem = S.rc.get_schedule(), S.rc.get_spec(), S.rc.get_memory()
    D = spec.speculative_num_draft_tokens
    dp = runner.cfg.attn_dp_size if hasattr(runner.cfg, "attn_dp_size") else runner.ps.attn_dp_size
    if mmcs_before is None and mem.disable_radix_cache and sched.max_running_requests is not None:
        return per_req * (sched.max_mamba_cache_size + 1) * D
    ratio = cfg._calculate_mamba_ratio()
    return per_req * (min(sched.max_running_requests // dp, sched.max_mamba_cache_size // ratio) + 1) * D


# ---- DP attention: one attention-DP rank (tests/golden/dp_ep/), 0.5.21 and 0.5.22 (v0_5_22 imports this) ----
# As v0_5_23's: v0_5_19's stand-in stamps attn_dp_size 1 and attn_tp_size = tp whatever the flags; SGLang 0.5.21+
# publishes the widths it resolved (runtime_context.get_parallel(): attn_dp_size = dp_size with
# --enable-dp-attention, attn_tp_size = tp // attn_dp_size // attn_cp_size) and its KV configurator takes
# attn_dp_size=get_parallel().attn_dp_size (mem_cache/kv_cache_configurator.py:2301 @0.5.21, :2809 @0.5.22), so the
# stand-in keeps those published widths for rank 0 of the first attention-DP group. (0.5.17-0.5.20 pass a
# ParallelState the stand-in builds with attn_dp_size 1: not stamped, DP attention there is not verified.)
from versions.standins import with_attn_dp_widths  # noqa: E402

install_distributed_standins = with_attn_dp_widths(install_distributed_standins)  # noqa: F405 (v0_5_19's)
