"""Per-version code for SGLang 0.5.19 (experimental; derived from v0_5_16.py). Shared base of 0.5.18-0.5.23:
0.5.18 and 0.5.20 re-export it, v0_5_21.py (0.5.21-0.5.23) defines only its deltas on top.

What changed since 0.5.16 and how the adapter follows it (stand-ins only, no arithmetic):
- ServerArgs.__post_init__ no longer resolves anything: prepare_server_args() returns the
  raw record, and the launcher calls server_args.resolve_once() (the resolution pipeline,
  arg_groups/pipeline.py) before check_server_args(). Resolved values are declarations in
  the record's stash (resolution_result / resolving_view); the fields keep the raw input.
- After check_server_args() the process entry publish(server_args, role=...) projects the
  stash into runtime-context config bags (get_schedule(), get_spec(), get_memory(), ...).
  Sizing code reads only the bags, and writes through get_context().override(...)
  (e.g. max_mamba_cache_size in _handle_max_mamba_cache). The record is read-only then.
- The oracle core reads and copies "server_args" as a plain object; the adapter hands it a
  _SAView (see below) that answers with the published bag leaf / the resolution result.
- KVCacheConfigurator takes kv_cache_dtype_str; configure_kv_cache_dtype takes the
  draft kv dtype; ParallelState has attn_dcp_rank/attn_dcp_size instead of dcp_size;
  the mamba reserve charges the pool's +1 padding slot (0.5.17+).

Inherited from the 0.5.16 adapter:

Differences from 0.5.11 that matter here:
- sizing and pool construction moved from ModelRunnerKVCacheMixin into the
  mem_cache.kv_cache_configurator.KVCacheConfigurator dataclass (fields passed
  explicitly by ModelRunner.init_kv_cache_configurator); the oracle builds that
  dataclass directly instead of a ModelRunner stand-in;
- the parallel topology is read through runtime_context.get_parallel(), which
  the oracle fills through its override slot;
- ModelRunner.__init__/initialize sub-steps are now functions
  (resolve_layer_indices, adjust_hybrid_swa_layer_ids, kv_cache_dtype.configure_kv_cache_dtype,
  resolve_sliding_window_size, resolve_spec_aux_hidden_state_config, is_post_capture_kv_active),
  called here as SGLang's own code.
"""
import socket
import sys
import types

VERSION = "0.5.19"

import copy

from versions.standins import SERVER_ARG_ALIASES  # noqa: F401 - read by oracle.py
from versions.standins import no_kernel_warmups as _no_kernel_warmups


def load():
    import dataclasses

    from sglang.srt import runtime_context as rc
    from sglang.srt.arg_groups.arg_utils import namespace_of

    try:  # 0.5.19: resolution is a declaration stash over the raw record
        from sglang.srt.arg_groups.overrides import resolution_result
    except ImportError:  # 0.5.18: __post_init__ still writes the resolved values onto the fields
        def resolution_result(server_args, field, default=None):
            return getattr(server_args, field, default)
    from sglang.srt.configs.model_config import AttentionArch, ModelConfig
    from sglang.srt.distributed import parallel_state
    try:  # gone in 0.5.21 (v0_5_21: KVCacheConfigurator takes attn_dp_size / pp_size instead of ps)
        from sglang.srt.distributed.parallel_state_wrapper import ParallelState
    except ImportError:
        ParallelState = None
    from sglang.srt.environ import envs
    from sglang.srt.mem_cache import kv_cache_configurator as kvc
    from sglang.srt.mem_cache import kv_cache_dtype as kvd
    from sglang.srt.model_executor import pool_configurator
    from sglang.srt.model_executor.model_runner_components.kv_pool_runtime import is_post_capture_kv_active
    from sglang.srt.model_executor.model_runner_components.layer_setup import resolve_layer_indices
    try:  # gone in 0.5.21+: resolve_layer_indices returns the local hybrid-SWA layer ids itself
        from sglang.srt.model_executor.model_runner_components.layer_setup import adjust_hybrid_swa_layer_ids
    except ImportError:
        adjust_hybrid_swa_layer_ids = None
    from sglang.srt.model_executor.model_runner_components.load_model_utils import resolve_sliding_window_size
    from sglang.srt.model_executor.model_runner_components.spec_aux_hidden_state import (
        resolve_spec_aux_hidden_state_config,
    )
    from sglang.srt.model_executor.runner.base_cuda_graph_runner import get_batch_sizes_to_capture
    from sglang.srt.runtime_context import get_context, get_parallel, publish
    from sglang.srt.server_args import ServerArgs
    from sglang.srt.server_args import prepare_server_args as _sglang_prepare_server_args
    from sglang.srt.speculative.spec_info import SpeculativeAlgorithm
    from sglang.srt.utils.common import get_available_gpu_memory

    S = types.SimpleNamespace(**{k: v for k, v in locals().items()})
    S.namespace_map = namespace_of(ServerArgs)  # {field: "schedule" | "spec.xyz" ...}
    try:  # 0.5.20+: ServerArgs is a msgspec Struct (msgspec.defstruct), not a dataclass
        from sglang.srt.arg_groups.arg_utils import record_fields
    except ImportError:  # 0.5.18 / 0.5.19: a dataclass
        record_fields = dataclasses.fields
    S.field_set = frozenset(f.name for f in record_fields(ServerArgs))
    del S.dataclasses
    # what oracle.py calls as S.prepare_server_args / S.set_global_server_args_for_scheduler
    S.prepare_server_args = lambda argv: _prepare_server_args(S, argv)
    S.set_global_server_args_for_scheduler = lambda sa: _activate(S, sa)
    S.get_global_server_args = lambda: get_context().server_args
    from versions import pp_stage

    pp_stage.install(S, sys.modules[__name__])  # one pp rank when a case sets ORACLE_PP_RANK (pp_stage.py)
    return S


SOURCE_MAP = {
    "sglang_own_code": [
        "server_args.prepare_server_args (argparse -> raw ServerArgs record), then ServerArgs.resolve_once() "
        "(arg_groups.pipeline.run_resolution_pipeline: every validation and resolution step), then "
        "check_server_args(), then runtime_context.publish(server_args, role='scheduler') (config bags)",
        "configs.model_config.ModelConfig.from_server_args (target, and is_draft_model=True for the draft worker)",
        "model_runner_components: resolve_layer_indices, adjust_hybrid_swa_layer_ids, resolve_sliding_window_size, "
        "resolve_spec_aux_hidden_state_config, kv_pool_runtime.is_post_capture_kv_active; "
        "mem_cache.kv_cache_dtype.configure_kv_cache_dtype",
        "utils.common.get_available_gpu_memory (before and after weight load; float32 all_reduce MIN for tp>1)",
        "mem_cache.kv_cache_configurator.KVCacheConfigurator (constructed with the fields ModelRunner."
        "init_kv_cache_configurator passes): _resolve_memory_pool_config -> _profile_available_bytes -> "
        "_handle_max_mamba_cache (writes max_mamba_cache_size through get_context().override); config_from_budget "
        "(pool_configurator); resolve_max_num_reqs -> _calculate_mamba_ratio; _derive_pool_sizes; _init_pools, "
        "for the target and (spec) the draft",
        "model_executor.runner.base_cuda_graph_runner.get_batch_sizes_to_capture",
    ],
    "oracle_stand_ins_not_sglang": [
        "Simulated device queries (shim/cpu_shim.py), as for 0.5.11",
        "The launcher/scheduler entry sequence is replayed: resolve_once -> check_server_args -> "
        "publish(role='scheduler') (engine.py:1064-1090, scheduler process entry); the runtime context is "
        "reset_context()-ed at the start of each case as in a fresh process",
        "The oracle core sees a read handle over the published record (_SAView): reads answer with the published "
        "config-bag leaf (so get_context().override writes are visible), else resolution_result(); a deep copy "
        "carries the bag overrides taken so far; using a copy for a target runner re-publishes the same record "
        "and replays those overrides (get_context().override), as the scheduler process holds them",
        "ModelRunner itself is not constructed; the KVCacheConfigurator fields are filled as "
        "ModelRunner.init_kv_cache_configurator does (model_runner.py:596-625), kv_cache_dtype_str as "
        "ModelRunner.configure_kv_cache_dtype (model_runner.py:1381-1406); the model object is an empty "
        "stand-in; forward_stream=None; pp_group=None",
        "Parallel topology: runtime_context.get_parallel() overrides (tp, attn_tp = tp; dp/pp/cp/ep = 1) and "
        "parallel_state._WORLD/_TP/_ATTN_TP namespaces; a real 1-rank gloo group for the float32 all_reduce",
        "KVCacheConfigurator.configure() is replayed as _resolve_memory_pool_config (device 'cuda', simulated) "
        "then _derive_pool_sizes + _init_pools with device 'cpu' under the meta/cpu TorchFunctionMode",
    ],
}

EXTRA_MOCKED_PACKAGES = ()

# cpu-check hints: buffer-name substring -> the size it scales with (req / mamba / tok)
CPU_CHECK_SIZE_PARAM = [("req_generation", "req"), ("mamba_allocator.free_slots", "mamba"),
                        ("_intermediate_conv_window_phys", "req")]


# ----------------------------------------------------------------------------
# ServerArgs: raw record + resolution stash + published bags
# ----------------------------------------------------------------------------
_ACTIVE = [None]  # the _SAView whose state is installed in the runtime context


def _flat_overrides(S):
    out = {}
    for _src, fields in S.get_context().overrides_log():
        out.update(fields)
    return out


class _SAView:
    """Oracle-side handle on a resolved ServerArgs record (not SGLang's object).

    0.5.19 keeps the operator's raw input on the record's fields; what resolution decided is
    in its declaration stash, and after publish the config bags are the single source of truth
    (sizing writes max_mamba_cache_size there). The oracle core reads attributes off
    "server_args" and deep-copies it, so this handle answers:
      - a ServerArgs field: the published bag leaf while this handle is the active one, else its
        own overrides (carried by deepcopy / set by the oracle) over resolution_result();
      - anything else (methods such as check_server_args, enable_mamba_extra_buffer, private
        bookkeeping): the record itself.
    SGLang functions that take server_args read it through resolving_view(), which works on
    this handle too; the adapter passes the real record (._rec) wherever it builds SGLang objects.
    """

    __slots__ = ("_rec", "_local", "_S")

    def __init__(self, S, rec, local=None):
        object.__setattr__(self, "_S", S)
        object.__setattr__(self, "_rec", rec)
        object.__setattr__(self, "_local", dict(local or {}))

    def __getattr__(self, name):
        S = object.__getattribute__(self, "_S")
        rec = object.__getattribute__(self, "_rec")
        if name.startswith("_") or name not in S.field_set:
            return getattr(rec, name)
        ctx = S.get_context()
        if _ACTIVE[0] is self and ctx._server_args is rec and name in S.namespace_map:
            return ctx.config_leaf(name)
        local = object.__getattribute__(self, "_local")
        if name in local:
            return local[name]
        return S.resolution_result(rec, name)

    def __setattr__(self, name, value):
        S = object.__getattribute__(self, "_S")
        if name not in S.field_set:
            raise AttributeError(f"oracle _SAView: {name!r} is not a ServerArgs field")
        object.__getattribute__(self, "_local")[name] = value
        if _ACTIVE[0] is self and S.get_context()._server_args is self._rec:
            S.get_context().override("oracle.set", **{name: value})

    def __deepcopy__(self, memo):
        S = object.__getattribute__(self, "_S")
        local = dict(object.__getattribute__(self, "_local"))
        if _ACTIVE[0] is self and S.get_context()._server_args is self._rec:
            local.update(_flat_overrides(S))
        # the record is read-only after resolution; the copy shares it
        return _SAView(S, self._rec, copy.deepcopy(local, memo))

    def check_server_args(self):
        """Launcher order (engine.py _launch_subprocesses): resolve_once (done in
        prepare_server_args) -> check_server_args -> publish. The scheduler process
        then publishes the same record with role='scheduler'."""
        self._rec.check_server_args()
        _activate(self._S, self)

    def __repr__(self):
        return f"<oracle _SAView of {type(self._rec).__name__}>"


def _unwrap(sa):
    return sa._rec if isinstance(sa, _SAView) else sa


def _prepare_server_args(S, argv):
    """A new case starts as a fresh process: empty runtime context, then SGLang's own
    prepare_server_args + resolve_once (what launch_server.run_server / Engine do)."""
    S.rc.reset_context()
    _ACTIVE[0] = None
    rec = S._sglang_prepare_server_args(argv)
    if hasattr(rec, "resolve_once"):  # 0.5.19; 0.5.18 resolves in __post_init__
        rec.resolve_once()
    return _SAView(S, rec)


def _activate(S, sa):
    """Install sa's state as the scheduler process's runtime context: publish its record
    (role='scheduler') and replay the overrides it carries."""
    if not isinstance(sa, _SAView):
        S.publish(sa, role="scheduler")
        _ACTIVE[0] = None
        return
    ctx = S.get_context()
    prev = _ACTIVE[0]
    if prev is sa and ctx._server_args is sa._rec:
        return
    if prev is not None and ctx._server_args is prev._rec:
        object.__getattribute__(prev, "_local").update(_flat_overrides(S))
    ctx._overrides_log = []  # re-publishing is deliberate here; keep SGLang's 'dropped overrides' warning out
    S.publish(sa._rec, role="scheduler")
    local = {k: v for k, v in object.__getattribute__(sa, "_local").items() if k in S.namespace_map}
    if local:
        ctx.override("oracle.replay", **local)
    _ACTIVE[0] = sa


# ----------------------------------------------------------------------------
# parallel topology
# ----------------------------------------------------------------------------
def _parallel_overrides(S, tp):
    world = types.SimpleNamespace(world_size=tp, rank_in_group=0, ranks=list(range(tp)), cpu_group=None,
                                  local_rank=0, rank=0, device_group=None)
    grp = lambda n: types.SimpleNamespace(world_size=n, rank_in_group=0, cpu_group=None, device_group=None,
                                          ranks=list(range(n)), local_rank=0, rank=0)
    # 0.5.21+ (v0_5_21 sets S.launch_world_size): _profile_available_bytes reads launch_world_size (= tp)
    launch = dict(launch_world_size=tp) if getattr(S, "launch_world_size", False) else {}
    return world, dict(
        world_size=tp, world_rank=0, **launch, tp_size=tp, tp_rank=0, pp_size=1, pp_rank=0,
        moe_ep_size=1, moe_ep_rank=0, moe_dp_size=1, moe_dp_rank=0, moe_tp_size=tp, moe_tp_rank=0,
        attn_tp_size=tp, attn_tp_rank=0, attn_cp_size=1, attn_cp_rank=0,
        dcp_enabled=False, dcp_size=1, dcp_rank=0, attn_dcp_size=1, attn_dcp_rank=0,
        attn_dp_size=1, attn_dp_rank=0,
        world_group=world, tp_group=grp(tp), pp_group=grp(1), moe_ep_group=grp(1), moe_dp_group=grp(1),
        moe_tp_group=grp(tp), attn_tp_group=grp(tp), attn_cp_group=grp(1), dcp_group=grp(1),
    )


def install_distributed_standins(S, tp_size):
    import torch

    ps_mod = S.parallel_state
    if not torch.distributed.is_initialized():
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        torch.distributed.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", world_size=1, rank=0)
    world, ov = _parallel_overrides(S, tp_size)
    ps_mod._WORLD = world
    ps_mod._TP = ov["tp_group"]
    if hasattr(ps_mod, "_ATTN_TP"):
        ps_mod._ATTN_TP = ov["attn_tp_group"]
    if hasattr(ps_mod, "_ATTN_CP"):
        ps_mod._ATTN_CP = ov["attn_cp_group"]
    if hasattr(ps_mod, "_PP"):
        ps_mod._PP = ov["pp_group"]
    S.get_parallel()._overrides = ov


def _ps(S, sa):
    if S.ParallelState is None:  # 0.5.21+
        return None
    tp = sa.tp_size
    return S.ParallelState(tp_rank=0, tp_size=tp, pp_rank=0, pp_size=1, dp_rank=0, dp_size=1, attn_tp_rank=0,
                           attn_tp_size=tp, attn_cp_rank=0, attn_cp_size=1, attn_dcp_rank=0, attn_dcp_size=1,
                           attn_dp_rank=0, attn_dp_size=1, moe_ep_rank=0, moe_ep_size=1, moe_dp_rank=0,
                           moe_dp_size=1, gpu_id=0)


class _Runner(types.SimpleNamespace):
    """What oracle.py reads from a 'runner'; the real object is .cfg (KVCacheConfigurator)."""

    @property
    def mambaish_config(self):
        return self.cfg.mambaish_config

    def _calculate_mamba_ratio(self):
        return self.cfg._calculate_mamba_ratio()


def make_runner(S, server_args, model_config, is_draft_worker=False, req_to_token_pool=None,
                token_to_kv_pool_allocator=None, memory_pool_config=None):
    sa = server_args
    if not is_draft_worker:
        # the scheduler process entry publishes before ModelRunner.__init__ asserts it
        # (model_runner.py:341); a draft runner never publishes
        _activate(S, sa)
    get_spec = S.rc.get_spec
    get_schedule = S.rc.get_schedule
    r = _Runner(
        S=S, server_args=sa, model_config=model_config,
        mem_fraction_static=get_schedule().mem_fraction_static,  # tp_worker.py:485
        device=S.rc.get_device().device, gpu_id=0, ps=_ps(S, sa), dp_size=1, tp_size=sa.tp_size,
        is_draft_worker=is_draft_worker, memory_pool_config=memory_pool_config,
        spec_algorithm=S.SpeculativeAlgorithm.from_string(get_spec().speculative_algorithm),
        page_size=get_schedule().page_size, req_to_token_pool=req_to_token_pool,
        token_to_kv_pool_allocator=token_to_kv_pool_allocator, token_to_kv_pool=None,
        is_hybrid_swa=model_config.is_hybrid_swa, is_hybrid_swa_compress=model_config.is_hybrid_swa_compress,
        use_mla_backend=model_config.attention_arch == S.AttentionArch.MLA, draft_model_idx=None, cfg=None,
        # model_runner.resolve_draft_attention_backend (model_runner.py:274-289), copied: importing
        # model_runner pulls in distributed.gated_launch -> uvicorn, which this venv does not have.
        # build_draft_tp_worker's supported-backend fallback is not modelled (draft_attention_backend=None).
        draft_attention_backend=(get_spec().speculative_draft_attention_backend if is_draft_worker else None),
    )
    return r


def after_load_model(S, r):
    rec = _unwrap(r.server_args)
    r.model = types.SimpleNamespace()
    # the checkpoint's quant config on the empty model, as v0_5_21.py gives it (loader._get_quantization_config;
    # None, so nothing changes, for an unquantized checkpoint)
    from versions.v0_5_21 import _model_class_keeps_quant_config, _quant_config_for  # noqa: PLC0415
    qc = _quant_config_for(S, r)
    if qc is not None and _model_class_keeps_quant_config(r):
        r.model.quant_config = qc
    r.dtype = r.model_config.dtype
    from versions.standins import give_model_sliding_window  # the loaded model's own window (standins.py)

    give_model_sliding_window(r.model, r.model_config)
    r.sliding_window_size = S.resolve_sliding_window_size(r.model, r.model_config)
    r.spec_aux_config = S.resolve_spec_aux_hidden_state_config(  # ModelRunner.init_spec_aux_hidden_state
        server_args=rec, model_config=r.model_config, spec_algorithm=r.spec_algorithm,
        is_draft_worker=r.is_draft_worker)
    r.layer_info = S.resolve_layer_indices(model=r.model, model_config=r.model_config,
                                           is_draft_worker=r.is_draft_worker, spec_algorithm=r.spec_algorithm)
    S.adjust_hybrid_swa_layer_ids(model_config=r.model_config, start_layer=r.layer_info.start_layer,
                                  end_layer=r.layer_info.end_layer, is_hybrid_swa=r.is_hybrid_swa)
    # ModelRunner.configure_kv_cache_dtype (model_runner.py:1381-1406)
    resolved, r.kv_cache_dtype = S.kvd.configure_kv_cache_dtype(
        server_args_kv_cache_dtype=S.rc.get_model().kv_cache_dtype, model=r.model, model_dtype=r.dtype,
        is_draft_worker=r.is_draft_worker, is_dflash=r.spec_algorithm.is_dflash_family(),
        speculative_draft_attention_backend=r.draft_attention_backend,
        speculative_draft_kv_cache_dtype=S.rc.get_spec().speculative_draft_kv_cache_dtype)
    r.kv_cache_dtype_str = resolved if resolved is not None else S.rc.get_model().kv_cache_dtype
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


def sizing_wraps(S):
    K = S.kvc.KVCacheConfigurator
    return [
        (K, "_profile_available_bytes"),
        (K, "_handle_max_mamba_cache", "handle_max_mamba_cache"),
        (K, "_apply_token_constraints"),
        (K, "resolve_max_num_reqs", "_resolve_max_num_reqs"),
        (K, "_calculate_mamba_ratio"),
        (S.pool_configurator, "create_memory_pool_configurator"),
    ]


def configurator_class(S):
    return getattr(S.pool_configurator, "MemoryPoolConfigurator", None)


def resolve_memory_pool_config(S, runner, pre):
    return runner.cfg._resolve_memory_pool_config(pre)


def apply_memory_pool_config(S, runner, mem_cfg):
    """KVCacheConfigurator.configure() after the config is known (kv_cache_configurator.py:296-332)."""
    cfg = runner.cfg
    cfg.device = runner.device
    if runner.is_draft_worker:
        cfg.memory_pool_config = mem_cfg
    sizes = cfg._derive_pool_sizes(config=mem_cfg)
    with _no_kernel_warmups(S):
        pools = cfg._init_pools(sizes=sizes, req_to_token_pool=runner.req_to_token_pool,
                                token_to_kv_pool_allocator=runner.token_to_kv_pool_allocator)
    runner.req_to_token_pool = pools.req_to_token_pool
    runner.token_to_kv_pool = pools.token_to_kv_pool
    runner.token_to_kv_pool_allocator = pools.token_to_kv_pool_allocator
    runner.max_total_num_tokens = sizes.max_total_num_tokens
    runner.max_running_requests = sizes.max_running_requests


def draft_model_config(S, server_args, target_model_config=None):
    """TpModelWorker._init_model_config for is_draft_worker=True with the context_length every draft-building
    worker passes, the target's context_len (srt/speculative/draft_worker_common.py:89 @0.5.17;
    srt/speculative/eagle_worker_v2.py:179 @0.5.18, :182 @0.5.19, :211 @0.5.20, :210 @0.5.21, :209 @0.5.22),
    which ModelConfig checks the draft's positions against."""
    spec = S.rc.get_spec()
    return S.ModelConfig.from_server_args(
        _unwrap(server_args), model_path=spec.speculative_draft_model_path,
        model_revision=spec.speculative_draft_model_revision, is_draft_model=True,
        context_length=target_model_config.context_len if target_model_config is not None else None)


def spec_reserved_bytes(S, runner, sa, per_req, spec_on):
    """Sized from the final max_mamba_cache_size: see spec_reserved_bytes_after."""
    return 0 if not spec_on else None


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
    dp = runner.ps.attn_dp_size
    if mmcs_before is None and mem.disable_radix_cache and sched.max_running_requests is not None:
        return per_req * (sched.max_mamba_cache_size + 1) * D
    ratio = cfg._calculate_mamba_ratio()
    return per_req * (min(sched.max_running_requests // dp, sched.max_mamba_cache_size // ratio) + 1) * D


def capture_bs(S, runner):
    if S.rc.get_exec().graph.disable_cuda_graph if hasattr(S.rc.get_exec().graph, "disable_cuda_graph") \
            else getattr(runner.server_args, "disable_cuda_graph", False):
        return None
    # no decode graph when the decode phase's backend is disabled, as a PD prefill role has it by default
    # (capture_device_graphs, model_executor/model_runner_components/cuda_graph_setup.py:402 @0.5.17, :430 @0.5.18,
    # :523 @0.5.19, :543 @0.5.20, :692 @0.5.21, :689 @0.5.22; tests/golden/pp_pd/ pd set)
    from sglang.srt.model_executor.cuda_graph_config import Backend, Phase, check_cuda_graph_backend

    if check_cuda_graph_backend(Phase.DECODE, Backend.DISABLED):
        return None
    bs_list, _ = S.get_batch_sizes_to_capture(runner)
    return bs_list
