"""Per-version code for SGLang 0.5.10.

0.5.10 has no model_executor/pool_configurator.py. The whole sizing chain lives in
model_executor/model_runner_kv_cache_mixin.py (ModelRunnerKVCacheMixin):

  _resolve_memory_pool_config(pre)
    -> profile_max_num_token(pre)          # get_cell_size_per_token(num_layers);
                                           # rest = post - pre*(1-mfs); handle_max_mamba_cache(rest);
                                           # returns int(rest*2**30) // cell_size
    -> _resolve_token_capacity(tokens)     # min with --max-total-tokens, page alignment, PP sync
    -> MemoryPoolConfig(...)               # dataclass in the mixin module; __post_init__ raises
                                           # "Not enough memory ..." when max_total_num_tokens <= 0
       max_running_requests=_resolve_max_num_reqs(tokens) -> _calculate_mamba_ratio()

ModelRunner.__init__ (Parse args block, model_runner.py:311-350) and the post-load block are the
same as 0.5.11 for this path, so make_runner / after_load_model / the distributed stand-ins /
the draft ModelConfig / get_batch_sizes_to_capture are reused from the 0.5.11 adapter.

The oracle core reads two summary fields from recorded calls whose 0.5.11 functions do not exist
in 0.5.10: `_profile_available_bytes` (available KV bytes) and `create_memory_pool_configurator`
(its `_cell_size`). This adapter records them through a probe object (PROBE) that is called from
thin instance-level wrappers around SGLang's own `get_cell_size_per_token` and
`handle_max_mamba_cache`; the wrappers pass SGLang's values through unchanged:

  * kv_cell_bytes_per_token = the value SGLang's get_cell_size_per_token(num_layers) returned;
  * available_kv_bytes      = int(handle_max_mamba_cache(...) * (1 << 30)), i.e. the dividend of
    profile_max_num_token's last line (model_runner_kv_cache_mixin.py:177). It is only reported;
    SGLang's own profile_max_num_token computes the token count (recorded as well, so
    available_kv_bytes // cell == profile_max_num_token's return can be checked).
"""
import types

from versions.standins import no_kernel_warmups

from versions.v0_5_11 import after_load_model as _after_load_model_0_5_11
from versions.v0_5_11 import (  # noqa: F401  (re-exported for oracle.py)
    capture_bs,
    draft_model_config,
    install_distributed_standins,
    make_runner,
    spec_reserved_bytes,
)


def after_load_model(S, r):
    """The 0.5.11 adapter's after_load_model, then load_model's sliding-window block (standins.py
    load_model_sliding_window): 0.5.9 / 0.5.10 size a hybrid SWA pool from it."""
    from versions.standins import load_model_sliding_window

    _after_load_model_0_5_11(S, r)
    load_model_sliding_window(S, r)

VERSION = "0.5.10"


def load():
    """Import the SGLang symbols the oracle needs (after the CPU shim)."""
    from sglang.srt.configs.model_config import AttentionArch, ModelConfig
    from sglang.srt.distributed import parallel_state
    from sglang.srt.environ import envs
    from sglang.srt.model_executor import model_runner_kv_cache_mixin as kv_mixin
    from sglang.srt.model_executor.cuda_graph_runner import get_batch_sizes_to_capture
    from sglang.srt.model_executor.model_runner import ModelRunner
    from sglang.srt.server_args import (
        ServerArgs,
        get_global_server_args,
        prepare_server_args,
        set_global_server_args_for_scheduler,
    )
    from sglang.srt.speculative.spec_info import SpeculativeAlgorithm
    from sglang.srt.utils.common import get_available_gpu_memory

    MemoryPoolConfig = kv_mixin.MemoryPoolConfig
    return types.SimpleNamespace(**{k: v for k, v in locals().items()})


SOURCE_MAP = {
    "sglang_own_code": [
        "server_args.prepare_server_args -> ServerArgs.from_cli_args -> ServerArgs.__post_init__ (all validation, "
        "_handle_gpu_memory_settings, _handle_model_specific_adjustments/_handle_mamba_radix_cache, "
        "_handle_speculative_decoding, _handle_page_size, ...), then ServerArgs.check_server_args()",
        "configs.model_config.ModelConfig.from_server_args (target, and is_draft_model=True for the draft worker)",
        "configs.qwen3_next.Qwen3NextConfig.mamba2_cache_params / configs.mamba_utils (mamba_cache_per_req, shapes, dtypes)",
        "ModelRunner.model_specific_adjustment, ModelRunner.configure_kv_cache_dtype, ModelRunner.mambaish_config "
        "(real ModelRunner class, instance created with __new__)",
        "utils.common.get_available_gpu_memory (before and after weight load; float32 all_reduce MIN for tp>1 over a "
        "real 1-rank gloo group)",
        "ModelRunnerKVCacheMixin._resolve_memory_pool_config (0.5.10) -> profile_max_num_token -> "
        "get_cell_size_per_token, handle_max_mamba_cache; _resolve_token_capacity (user cap, page alignment); "
        "MemoryPoolConfig.__post_init__ ('Not enough memory'); _resolve_max_num_reqs -> _calculate_mamba_ratio",
        "ModelRunnerKVCacheMixin._apply_memory_pool_config -> _init_pools (HybridReqToTokenPool/MambaPool, "
        "HybridLinearKVPool/MHATokenToKVPool, TokenToKVPoolAllocator), for the target and (spec) the draft worker",
        "model_executor.cuda_graph_runner.get_batch_sizes_to_capture (effective CUDA-graph batch sizes)",
    ],
    "oracle_stand_ins_not_sglang": [
        "Kernel warm-up: MHATokenToKVPool._init_kv_copy_and_warmup (on with speculative decoding: memory_pool.py:787-808 @0.5.10) "
        "reads data_strides[0].item() and launches a Triton copy kernel on a dummy; it allocates nothing that lasts. "
        "Replaced by a no-op leaving _kv_copy_config = None while the pools are built (standins.no_kernel_warmups)",
        "Simulated device queries (shim/cpu_shim.py): torch.cuda.is_available/get_device_capability/"
        "get_device_properties/mem_get_info, torch.version.cuda, nvidia-smi memory.total & driver_version",
        "ModelRunner.__init__ / ModelRunner.initialize are NOT run (they need NCCL + weights). The oracle sets the "
        "attributes they set (0.5.10 model_runner.py:311-350 Parse args block, identical to 0.5.11 for these "
        "attributes; a few 0.5.11-only attributes are set too and are never read by 0.5.10) and the post-load "
        "block (start_layer/end_layer/num_effective_layers/full_attention_layer_ids); the model object is an empty "
        "stand-in (no quant_config), and self.dtype = model_config.dtype as load_model does",
        "ModelRunner.init_memory_pool is replayed as its two calls: _resolve_memory_pool_config on device='cuda' "
        "(simulated), then _apply_memory_pool_config with runner.device='cpu' inside a TorchFunctionMode that "
        "sends every tensor factory to 'meta' (exact full-size shapes without RAM) or 'cpu' (small real allocations)",
        "0.5.10 has no pool configurator / _profile_available_bytes: summary fields kv_cell_bytes_per_token and "
        "available_kv_bytes are recorded by pass-through instance wrappers around get_cell_size_per_token and "
        "handle_max_mamba_cache (available_kv_bytes = int(handle_max_mamba_cache return * 2**30), the dividend in "
        "profile_max_num_token); recorded as calls 'create_memory_pool_configurator' / '_profile_available_bytes'",
        "Distributed state: parallel_state._WORLD/_TP/_ATTN_TP/_ATTN_CP replaced by namespaces with world_size "
        "(tp, tp, tp, 1); no dp-attention / pp / cp modelled",
        "Kernels: triton (real 3.8.0 wheel, never launched), torchvision (real, C ops absent), "
        "sgl_kernel / flashinfer (inert import mocks) - none is called on this path",
    ],
}


class CellSizeRecord:
    """What the probe returns for the recorded cell size (the core reads `_cell_size`)."""

    def __init__(self, cell_size):
        self._cell_size = cell_size


def _probe_available_bytes(available_bytes):
    return available_bytes


def _probe_cell_size(cell_size):
    return CellSizeRecord(cell_size)


# recording points only; the oracle core wraps these attributes with its Recorder
PROBE = types.SimpleNamespace(_profile_available_bytes=_probe_available_bytes,
                              create_memory_pool_configurator=_probe_cell_size)


# cpu check (single mode): in 0.5.10 and earlier the request->mamba index mapping and the ping-pong
# track-buffer mapping have max_mamba_cache_size rows (memory_pool.py HybridReqToTokenPool._init_mamba_pool,
# size=mamba_size), not req-pool rows as in 0.5.11
CPU_CHECK_SIZE_PARAM = (("req_index_to_mamba_index_mapping", "mamba"),
                        ("req_index_to_mamba_ping_pong_track_buffer_mapping", "mamba"))


def sizing_wraps(S):
    """Functions of the sizing chain whose arguments / return values are recorded
    (the originals always run). Order matters only for restoring."""
    return [
        (S.ModelRunner, "profile_max_num_token"),
        (S.ModelRunner, "get_cell_size_per_token"),
        (S.ModelRunner, "handle_max_mamba_cache"),
        (S.ModelRunner, "_resolve_token_capacity"),
        (S.ModelRunner, "_resolve_max_num_reqs"),
        (S.ModelRunner, "_calculate_mamba_ratio"),
        (PROBE, "_profile_available_bytes"),
        (PROBE, "create_memory_pool_configurator"),
    ]


def configurator_class(S):
    return CellSizeRecord


def resolve_memory_pool_config(S, runner, pre):
    """SGLang's _resolve_memory_pool_config, with pass-through instance wrappers that report the
    cell size and the available KV bytes to PROBE (see module docstring)."""
    cell_fn = runner.get_cell_size_per_token  # bound; the class attribute may be the Recorder's wrapper
    handle_fn = runner.handle_max_mamba_cache

    def get_cell_size_per_token(num_layers):
        cell = cell_fn(num_layers)
        PROBE.create_memory_pool_configurator(cell)
        return cell

    def handle_max_mamba_cache(total_rest_memory):
        rest = handle_fn(total_rest_memory)
        PROBE._profile_available_bytes(int(rest * (1 << 30)))
        return rest

    runner.get_cell_size_per_token = get_cell_size_per_token
    runner.handle_max_mamba_cache = handle_max_mamba_cache
    try:
        return runner._resolve_memory_pool_config(pre)
    finally:
        del runner.get_cell_size_per_token
        del runner.handle_max_mamba_cache


def apply_memory_pool_config(S, runner, mem_cfg):
    with no_kernel_warmups(S):  # a stand-in for the kernel warm-up only (SOURCE_MAP)
        runner._apply_memory_pool_config(mem_cfg)  # SGLang: sets sizes, calls _init_pools
