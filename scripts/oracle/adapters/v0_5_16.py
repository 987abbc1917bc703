"""SGLang 0.5.16: the shared oracle's own 0.5.16 adapter (copied beside this file as shared_v0_5_16.py by
oracle_copy.sh) plus the DSPARK draft worker, which the shared adapter refuses (NotImplementedError).

DSparkWorkerV2.__init__ (srt/speculative/dspark_components/dspark_worker_v2.py:64-112 @0.5.16) builds its draft
with build_draft_tp_worker(algo_label="DSPARK") (srt/speculative/draft_worker_common.py:57-112 @0.5.16): a deep
copy of the server args with context_length = the target's and the draft attention backend, then
TpModelWorker(is_draft_worker=True), i.e. an ordinary draft ModelRunner with its own KV pool; its
alloc_memory_pool (dspark_worker_v2.py:278-290) passes the target's memory_pool_config, req_to_token_pool and
token_to_kv_pool_allocator straight through, as every other draft worker does. So the oracle's generic draft
runner (is_draft_worker=True, the target's context length) is what SGLang builds; no arithmetic is added.
The draft attention backend only matters for is_dflash() (configure_kv_cache_dtype's fa4 branch), which
ModelRunner.configure_kv_cache_dtype passes as spec_algorithm.is_dflash() (model_runner.py:1082-1096): False
for DSPARK. A DeepSeek-V4 (MoE) self-drafting checkpoint is not modelled (it raises as before).

The checkpoint's quantization: the shared adapter's empty model has no quant config. ``after_load_model`` below gives
it the quant config SGLang's loader builds (standins.give_model_quant_config: model_loader/loader.py
_get_quantization_config with the LoadConfig ModelRunner.load_model builds, ``build_load_config(server_args,
tp_rank=self.ps.tp_rank, remote_instance_weight_transporter.engine / .session_id, draft_model_idx)``,
model_runner.py:919-925 @0.5.16, whose transporter defaults are engine None, session_id ""), set only if the
architecture's class keeps ``self.quant_config``, before mem_cache/kv_cache_dtype.configure_kv_cache_dtype reads
``getattr(model, "quant_config", None).kv_cache_quant_algo`` (kv_cache_dtype.py:23-45 @0.5.16; ModelRunner passes
self.model, model_runner.py:1082-1096). In 0.5.16 only ModelOpt's configs (and petit) set ``kv_cache_quant_algo``;
compressed-tensors' ``kv_cache_scheme`` and Fp8Config's ``kv_cache_quant_algo`` key are not read. Unquantized
checkpoints are unchanged (no quant config).
"""
from versions import shared_v0_5_16 as _base
from versions.shared_v0_5_16 import *  # noqa: F401,F403
from versions.standins import give_model_quant_config, give_model_sliding_window

VERSION = _base.VERSION


def load():
    """The shared adapter's load, then the pp-stage stand-ins when ORACLE_PP_RANK is set (pp_stage.py)."""
    from versions import pp_stage

    S = _base.load()
    pp_stage.install(S, _base)
    return S


def __getattr__(name):  # private helpers oracle.py may reach for
    return getattr(_base, name)


def has_draft_worker(S, spec, server_args):
    """DSPARK builds a draft TpModelWorker (dspark_worker_v2.py:94-104 @0.5.16) unless the draft is a
    DeepSeek-V4 checkpoint (draft_is_deepseek_v4, dspark_config.py:24-38), which the oracle does not model."""
    if spec.name == "DSPARK" and not getattr(server_args, "enable_multi_layer_eagle", False):
        from sglang.srt.speculative.dspark_components.dspark_config import draft_is_deepseek_v4

        if draft_is_deepseek_v4(server_args=server_args):
            raise NotImplementedError("DSPARK with a DeepSeek-V4 draft is not modelled by the oracle")
        return True
    return _base.has_draft_worker(S, spec, server_args)


def _load_config(S, r):
    """model_runner.py:919-925 @0.5.16: build_load_config as ModelRunner.load_model calls it."""
    from sglang.srt.model_executor.model_runner_components.load_model_utils import build_load_config

    return build_load_config(server_args=r.server_args, tp_rank=r.ps.tp_rank,
                             remote_instance_weight_transporter_engine=None,
                             remote_instance_weight_transporter_session_id="", draft_model_idx=r.draft_model_idx)


def after_load_model(S, r):
    """The shared adapter's after_load_model, with the loader's quant config on the empty model when SGLang's
    configure_kv_cache_dtype reads it (see the module docstring)."""
    real = S.kvd.configure_kv_cache_dtype

    def configure_kv_cache_dtype(**kw):
        give_model_quant_config(r, load_config=lambda: _load_config(S, r))
        return real(**kw)  # SGLang's own

    S.kvd.configure_kv_cache_dtype = configure_kv_cache_dtype
    real_window = S.resolve_sliding_window_size

    def resolve_sliding_window_size(model, model_config):
        give_model_sliding_window(model, model_config)  # the loaded model's own answer (standins.py)
        return real_window(model, model_config)  # SGLang's own

    S.resolve_sliding_window_size = resolve_sliding_window_size
    try:
        _base.after_load_model(S, r)
    finally:
        S.kvd.configure_kv_cache_dtype = real
        S.resolve_sliding_window_size = real_window


# ---- DP attention: one attention-DP rank (tests/golden/dp_ep/) ----
# The shared adapter's ParallelState has attn_dp_size 1 and attn_tp_size = tp whatever the flags. SGLang's
# ModelRunner takes them from compute_dp_attention_world_info (layers/dp_attention.py:293-307 @0.5.16):
# attn_dp_size = dp_size if enable_dp_attention else 1, attn_tp_size = tp // attn_dp_size // attn_cp_size; the
# KV configurator divides --max-running-requests by ps.attn_dp_size (mem_cache/kv_cache_configurator.py:1631,
# 1718-1781; model_executor/pool_configurator.py:496, 605 @0.5.16). Rank 0 of the first attention-DP group.
_shared_ps = _base._ps


def _ps(S, sa):
    ps = _shared_ps(S, sa)
    if not getattr(sa, "enable_dp_attention", False) or sa.dp_size <= 1:
        return ps
    import dataclasses

    _, attn_tp, _, attn_dp = _world_info(sa)
    grp = S.get_parallel()._overrides
    grp.update(attn_tp_size=attn_tp, attn_dp_size=attn_dp,
               attn_tp_group=type(grp["attn_tp_group"])(**{**vars(grp["attn_tp_group"]), "world_size": attn_tp,
                                                           "ranks": list(range(attn_tp))}))
    S.parallel_state._ATTN_TP = grp["attn_tp_group"]
    return dataclasses.replace(ps, attn_tp_size=attn_tp, attn_dp_size=attn_dp)


def _world_info(sa):
    from sglang.srt.layers.dp_attention import compute_dp_attention_world_info

    return compute_dp_attention_world_info(True, 0, sa.tp_size, sa.dp_size, 1)


_base._ps = _ps


# ---- PD disaggregation roles (tests/golden/pp_pd/, the pd set) ----
# capture_device_graphs returns before any decode graph when the decode phase's backend is disabled
# (model_executor/model_runner_components/cuda_graph_setup.py:283-286 @0.5.16), which a PD prefill role does by
# default (_apply_cuda_graph_disaggregation_roles, srt/server_args.py:3680-3686 @0.5.16). The shared adapter asked
# only --disable-cuda-graph.
def capture_bs(S, runner):
    from sglang.srt.model_executor.cuda_graph_config import check_cuda_graph_backend, Backend, Phase

    if getattr(runner.server_args, "disable_cuda_graph", False) or check_cuda_graph_backend(Phase.DECODE,
                                                                                           Backend.DISABLED):
        return None
    bs_list, _ = S.get_batch_sizes_to_capture(runner)
    return bs_list
