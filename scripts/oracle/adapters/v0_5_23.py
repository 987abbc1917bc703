"""SGLang 0.5.23: the v0_5_21 adapter unchanged (it detects the 0.5.21-0.5.23 signature changes itself).
Kept as a separate file only because oracle.py picks versions/v<newest <= installed>.py."""
from versions.v0_5_21 import *  # noqa: F401,F403

VERSION = "0.5.23"

# ---- DP attention: one attention-DP rank (tests/golden/dp_ep/) ----
# v0_5_19's stand-in stamps attn_dp_size 1 and attn_tp_size = tp whatever the flags. SGLang publishes the
# widths it resolved from the server args (runtime_context.get_parallel(): attn_dp_size from --attn-dp-size, or
# from --dp-size with the deprecated --enable-dp-attention, arg_groups/parallel_hook.py:39-61 @0.5.23;
# attn_tp_size = tp // attn_dp_size // attn_cp_size); the KV configurator divides --max-running-requests by
# attn_dp_size (mem_cache/kv_cache_configurator.py:3128, 3284-3373; model_executor/pool_configurator.py:956
# @0.5.23). Those two published widths are kept here for rank 0 of the first attention-DP group.
from versions import v0_5_19 as _v19  # noqa: E402

_base_install = _v19.install_distributed_standins


def install_distributed_standins(S, tp_size):
    par = S.get_parallel()
    cfg = getattr(par, "_config", None)  # the published parallel config, not a previous case's overrides
    try:
        attn_dp, attn_tp = int(cfg.attn_dp_size), int(cfg.attn_tp_size)
    except Exception:
        attn_dp, attn_tp = 1, tp_size
    _base_install(S, tp_size)
    if attn_dp > 1:
        ov = S.get_parallel()._overrides
        ov.update(attn_dp_size=attn_dp, attn_tp_size=attn_tp,
                  attn_tp_group=type(ov["attn_tp_group"])(**{**vars(ov["attn_tp_group"]), "world_size": attn_tp,
                                                            "ranks": list(range(attn_tp))}))
        if hasattr(S.parallel_state, "_ATTN_TP"):
            S.parallel_state._ATTN_TP = ov["attn_tp_group"]


# ---- PD disaggregation roles (tests/golden/pp_pd/, the pd set) ----
# no decode graph when the decode phase's backend is disabled (model_executor/model_runner_components/
# cuda_graph_setup.py:729-732 @0.5.23), as a PD prefill role has it by default (arg_groups/cuda_graph_hook.py:557-576
# @0.5.23); v0_5_19's capture_bs asked only --disable-cuda-graph.
_v19_capture_bs = _v19.capture_bs


def capture_bs(S, runner):
    from sglang.srt.model_executor.cuda_graph_config import check_cuda_graph_backend, Backend, Phase

    if check_cuda_graph_backend(Phase.DECODE, Backend.DISABLED):
        return None
    return _v19_capture_bs(S, runner)


# ---- decode context parallel (tests/golden/cp/) ----
# v0_5_19's stand-in stamps dcp_enabled False / attn_dcp_size 1 whatever the flags. SGLang publishes
# dcp_enabled = dcp_size > 1 and attn_dcp_size = dcp_size (runtime_context.py:144-169 @0.5.23), and rank 0 has
# dcp_rank = tp_rank % dcp_size = 0 (runtime_context.py:1592-1594 @0.5.23). Those widths are kept here.
_dp_install = install_distributed_standins


def install_distributed_standins(S, tp_size):  # noqa: F811
    par = S.get_parallel()
    cfg = getattr(par, "_config", None)
    try:
        dcp = int(cfg.dcp_size)
    except Exception:
        dcp = 1
    _dp_install(S, tp_size)
    if dcp > 1:
        ov = S.get_parallel()._overrides
        ov.update(dcp_enabled=True, dcp_size=dcp, dcp_rank=0, attn_dcp_size=dcp, attn_dcp_rank=0,
                  dcp_group=type(ov["dcp_group"])(**{**vars(ov["dcp_group"]), "world_size": dcp,
                                                    "ranks": list(range(dcp))}))
