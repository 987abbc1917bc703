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

from versions.standins import with_attn_dp_widths, with_dcp_widths  # noqa: E402

install_distributed_standins = with_attn_dp_widths(_v19.install_distributed_standins)


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
install_distributed_standins = with_dcp_widths(install_distributed_standins)  # (standins.py)
