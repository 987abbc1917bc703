"""Per-version code for SGLang 0.5.9.

0.5.9 has neither a pool configurator nor MemoryPoolConfig. ModelRunner.init_memory_pool
(model_executor/model_runner_kv_cache_mixin.py:339-) sizes AND builds the pools in one method:

  max_num_reqs = server_args.max_running_requests
  max_total_num_tokens = profile_max_num_token(pre)     # get_cell_size_per_token, handle_max_mamba_cache,
                                                        # int(rest*2**30) // cell_size  (as 0.5.10)
  max_num_reqs default = min(max(int(tokens/context_len*512), 2048), 4096)
  mamba: ratio (local) = 1 with radix off, else 3 + (1 if extra_buffer and spec else 2 if extra_buffer else 0)
         max_num_reqs = min(max_num_reqs, max_mamba_cache_size // ratio)
  --max-total-tokens cap, page alignment, PP sync; draft worker: tokens/reqs from server_args
  "Not enough memory ... Current value: self.server_args.mem_fraction_static=..." RuntimeError
  then req_to_token_pool(size=max_num_reqs), token_to_kv_pool, allocator.

and ModelRunner.initialize (model_runner.py:593-600), right after init_memory_pool, sets

  self.max_running_requests = min(max_total_num_tokens // 2 if server_args.max_running_requests is None
                                  else server_args.max_running_requests // dp_size, req_to_token_pool.size)

which is what TpModelWorker / the scheduler use (tp_worker.py:281).

How the oracle replays it (stand-ins only; every number comes from SGLang's code):

  * resolve step: SGLang's init_memory_pool runs on the ModelRunner stand-in with the simulated device for
    the profile; as soon as profile_max_num_token has returned (pass-through instance wrapper) runner.device
    is set to 'cpu' and the pools are built under RedirectDevice('meta') (no RAM), exactly as the core's
    allocate() does for the other versions; device is restored afterwards.
  * `ratio` and `max_num_reqs` are init_memory_pool locals. They are read from its frame when it returns
    (a sys.settrace hook limited to that one code object); nothing is recomputed.
  * max_running_requests: the assignment statement `self.max_running_requests = min(...)` is taken from
    SGLang's own ModelRunner.initialize source (ast), compiled with its real file name / line numbers, and
    executed on the runner. No copy of the expression lives in this file.
  * apply step (core's allocate(), full size on 'meta'): SGLang's init_memory_pool again, with
    profile_max_num_token answering the value it returned in the resolve step (the profile is not re-run;
    max_mamba_cache_size is already in the copied server_args); the draft worker takes its sizes from
    server_args.draft_runner_cache_size / max_num_reqs, which the target's init_memory_pool wrote.
  * summary fields recorded through PROBE (as in the 0.5.10 adapter): create_memory_pool_configurator
    (cell size), _profile_available_bytes (int(handle_max_mamba_cache return * 2**30)),
    _calculate_mamba_ratio (the `ratio` local), _resolve_max_num_reqs (the `max_num_reqs` local, which is
    req_to_token_pool.size).
"""
import ast
import dataclasses
import inspect
import sys
import textwrap
import types

from versions.standins import no_kernel_warmups
from typing import Optional

from versions.v0_5_10 import CellSizeRecord
from versions.v0_5_11 import after_load_model as _after_load_model_0_5_11
from versions.v0_5_11 import (  # noqa: F401  (re-exported for oracle.py)
    capture_bs,
    draft_model_config,
    install_distributed_standins,
    spec_reserved_bytes,
)


def after_load_model(S, r):
    """The 0.5.11 adapter's after_load_model, then load_model's sliding-window block (standins.py
    load_model_sliding_window): 0.5.9 / 0.5.10 size a hybrid SWA pool from it."""
    from versions.standins import load_model_sliding_window

    _after_load_model_0_5_11(S, r)
    load_model_sliding_window(S, r)

VERSION = "0.5.9"


# sgl_kernel op *schemas* (no kernels) that 0.5.9 registers fake implementations for at import time
# (fp8_kernel.py:2032-2051, fp8_utils.py:64-72; `if _is_cuda:`); the shim defines 0.5.11's one.
SGL_KERNEL_SCHEMAS = [
    "sgl_per_token_group_quant_8bit(Tensor input, Tensor(a!) output_q, Tensor(b!) output_s, int group_size, "
    "float eps, float fp8_min, float fp8_max, bool scale_ue8m0) -> ()",
    "sgl_per_token_group_quant_fp8(Tensor input, Tensor(a!) output_q, Tensor(b!) output_s, int group_size, "
    "float eps, float fp8_min, float fp8_max, bool scale_ue8m0) -> ()",
    "sgl_per_token_quant_fp8(Tensor input, Tensor(a!) output_q, Tensor(b!) output_s) -> ()",
    # layers/quantization/fp8_utils.py:64-72
    "fp8_scaled_mm(Tensor mat_a, Tensor mat_b, Tensor scales_a, Tensor scales_b, ScalarType out_dtype, "
    "Tensor? bias=None) -> Tensor",
]


def _define_sgl_kernel_schemas():
    import cpu_shim

    if cpu_shim._SGL_LIB is None:
        return
    import torch

    for sch in SGL_KERNEL_SCHEMAS:
        name = sch.split("(", 1)[0]
        if not hasattr(torch.ops.sgl_kernel, name):
            cpu_shim._SGL_LIB.define(sch)


def load():
    """Import the SGLang symbols the oracle needs (after the CPU shim)."""
    _define_sgl_kernel_schemas()
    from sglang.srt.configs.model_config import AttentionArch, ModelConfig
    from sglang.srt.distributed import parallel_state
    from sglang.srt.environ import envs
    from sglang.srt.model_executor import model_runner as model_runner_module
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

    init_memory_pool_code = ModelRunner.init_memory_pool.__code__
    max_running_requests_stmt = _initialize_statement(ModelRunner, "self.max_running_requests")
    return types.SimpleNamespace(**{k: v for k, v in locals().items()})


def _initialize_statement(ModelRunner, target):
    """Compile the `<target> = ...` assignment of SGLang's ModelRunner.initialize, keeping its
    file name and line numbers (tracebacks point into SGLang's model_runner.py)."""
    fn = ModelRunner.initialize
    src_lines, first = inspect.getsourcelines(fn)
    tree = ast.parse(textwrap.dedent("".join(src_lines)))
    found = [n for n in ast.walk(tree) if isinstance(n, ast.Assign) and len(n.targets) == 1
             and ast.unparse(n.targets[0]) == target]
    if len(found) != 1:
        raise ImportError(f"ModelRunner.initialize: expected one assignment to {target}, found {len(found)}")
    mod = ast.Module(body=[found[0]], type_ignores=[])
    ast.increment_lineno(mod, first - 1)
    return compile(mod, inspect.getsourcefile(fn), "exec")


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
        "ModelRunnerKVCacheMixin.init_memory_pool (0.5.9: sizing and pool construction in one method) -> "
        "profile_max_num_token -> get_cell_size_per_token, handle_max_mamba_cache; max_num_reqs / mamba ratio / "
        "--max-total-tokens cap / page alignment / 'Not enough memory' check; HybridReqToTokenPool/MambaPool, "
        "HybridLinearKVPool, TokenToKVPoolAllocator, for the target and (spec) the draft worker",
        "ModelRunner.initialize's `self.max_running_requests = min(...)` statement (model_runner.py:593-600), "
        "compiled from SGLang's own source and executed on the runner",
        "model_executor.cuda_graph_runner.get_batch_sizes_to_capture (effective CUDA-graph batch sizes)",
    ],
    "oracle_stand_ins_not_sglang": [
        "Kernel warm-up: MHATokenToKVPool._init_kv_copy_and_warmup (on with speculative decoding: memory_pool.py:743-764 @0.5.9) "
        "reads data_strides[0].item() and launches a Triton copy kernel on a dummy; it allocates nothing that lasts. "
        "Replaced by a no-op leaving _kv_copy_config = None while the pools are built (standins.no_kernel_warmups)",
        "Simulated device queries (shim/cpu_shim.py): torch.cuda.is_available/get_device_capability/"
        "get_device_properties/mem_get_info, torch.version.cuda, nvidia-smi memory.total & driver_version",
        "ModelRunner.__init__ / ModelRunner.initialize are NOT run (they need NCCL + weights). The oracle sets the "
        "attributes of the 0.5.9 Parse-args block and the post-load block; the model object is an empty stand-in",
        "init_memory_pool: after profile_max_num_token returns, runner.device='cpu' and tensor factories are sent "
        "to 'meta' (full size, no RAM). In the allocation replay profile_max_num_token answers the value it "
        "returned in the sizing step (the memory profile is not run twice)",
        "init_memory_pool locals `ratio` and `max_num_reqs` are read from its frame on return (sys.settrace on "
        "that code object only); reported as _calculate_mamba_ratio / _resolve_max_num_reqs",
        "kv_cell_bytes_per_token / available_kv_bytes: pass-through wrappers around get_cell_size_per_token and "
        "handle_max_mamba_cache (available_kv_bytes = int(handle_max_mamba_cache return * 2**30))",
        "Distributed state: parallel_state._WORLD/_TP/_ATTN_TP/_ATTN_CP replaced by namespaces with world_size "
        "(tp, tp, tp, 1); no dp-attention / pp / cp modelled",
        "Kernels: triton (real wheel, never launched), torchvision (real, C ops absent), "
        "sgl_kernel / flashinfer (inert import mocks) - none is called on this path",
    ],
}


def make_runner(S, server_args, model_config, is_draft_worker=False, req_to_token_pool=None,
                token_to_kv_pool_allocator=None, memory_pool_config=None):
    """A real ModelRunner instance without running __init__: attributes as set by the 0.5.9
    Parse-args block (model_runner.py:~300-345) for a single rank (tp_rank 0, gpu 0)."""
    r = S.ModelRunner.__new__(S.ModelRunner)
    sa = server_args
    r.mem_fraction_static = sa.mem_fraction_static
    r.device = sa.device
    r.gpu_id = 0
    r.tp_rank = 0
    r.tp_size = sa.tp_size
    r.moe_ep_rank = 0
    r.moe_ep_size = sa.ep_size
    r.dp_size = sa.dp_size if sa.enable_dp_attention else 1
    r.pp_rank = 0
    r.pp_size = sa.pp_size
    r.attn_cp_rank = 0
    r.attn_cp_size = sa.attn_cp_size
    r.moe_dp_rank = 0
    r.moe_dp_size = sa.moe_dp_size
    r.model_config = model_config
    r.dist_port = 0
    r.server_args = sa
    r.is_draft_worker = is_draft_worker
    r.is_generation = model_config.is_generation
    r.is_multimodal = model_config.is_multimodal
    r.is_multimodal_chunked_prefill_supported = model_config.is_multimodal_chunked_prefill_supported
    r.spec_algorithm = S.SpeculativeAlgorithm.from_string(sa.speculative_algorithm)
    r.page_size = sa.page_size
    r.req_to_token_pool = req_to_token_pool
    r.token_to_kv_pool_allocator = token_to_kv_pool_allocator
    r.is_hybrid_swa = model_config.is_hybrid_swa
    r.is_hybrid_swa_compress = model_config.is_hybrid_swa_compress
    r.use_mla_backend = model_config.attention_arch == S.AttentionArch.MLA
    r.attention_chunk_size = model_config.attention_chunk_size
    r.forward_pass_id = 0
    r.init_new_workspace = False
    r.draft_model_idx = None
    r.eagle_use_aux_hidden_state = False
    r.model_specific_adjustment()
    S.set_global_server_args_for_scheduler(sa)
    S.get_global_server_args().use_mla_backend = r.use_mla_backend
    return r


def _probe_passthrough(value):
    return value


def _probe_cell_size(cell_size):
    return CellSizeRecord(cell_size)


# recording points only; the oracle core wraps these attributes with its Recorder
PROBE = types.SimpleNamespace(_profile_available_bytes=_probe_passthrough,
                              create_memory_pool_configurator=_probe_cell_size,
                              _calculate_mamba_ratio=_probe_passthrough,
                              _resolve_max_num_reqs=_probe_passthrough)


# cpu check (single mode): in 0.5.10 and earlier the request->mamba index mapping and the ping-pong
# track-buffer mapping have max_mamba_cache_size rows (memory_pool.py HybridReqToTokenPool._init_mamba_pool,
# size=mamba_size), not req-pool rows as in 0.5.11
CPU_CHECK_SIZE_PARAM = (("req_index_to_mamba_index_mapping", "mamba"),
                        ("req_index_to_mamba_ping_pong_track_buffer_mapping", "mamba"))


def sizing_wraps(S):
    return [
        (S.ModelRunner, "profile_max_num_token"),
        (S.ModelRunner, "get_cell_size_per_token"),
        (S.ModelRunner, "handle_max_mamba_cache"),
        (PROBE, "_profile_available_bytes"),
        (PROBE, "create_memory_pool_configurator"),
        (PROBE, "_calculate_mamba_ratio"),
        (PROBE, "_resolve_max_num_reqs"),
    ]


def configurator_class(S):
    return CellSizeRecord


@dataclasses.dataclass
class MemoryPoolConfig:
    """The oracle's record of what 0.5.9's init_memory_pool + initialize decided (no such class in 0.5.9)."""
    max_total_num_tokens: int
    max_running_requests: int
    req_to_token_pool_size: int  # init_memory_pool's max_num_reqs
    profiled_tokens: int  # profile_max_num_token's return
    pre_model_load_memory: float
    mamba_ratio: Optional[int] = None
    resolved_max_total_num_tokens: Optional[int] = None  # stays when the core's cpu check replaces the sizes


def _frame_locals_on_return(code, names):
    got = {}

    def local_trace(frame, event, arg):
        if event == "return":
            for n in names:
                if n in frame.f_locals:
                    got[n] = frame.f_locals[n]
        return local_trace

    def global_trace(frame, event, arg):
        return local_trace if frame.f_code is code else None

    return got, global_trace


def resolve_memory_pool_config(S, runner, pre):
    import cpu_shim

    cell_fn = runner.get_cell_size_per_token  # bound; the class attribute may be the Recorder's wrapper
    handle_fn = runner.handle_max_mamba_cache
    prof_fn = runner.profile_max_num_token
    real_device = runner.device
    profiled = {}
    redirect = cpu_shim.RedirectDevice("meta")

    def get_cell_size_per_token(num_layers):
        cell = cell_fn(num_layers)
        PROBE.create_memory_pool_configurator(cell)
        return cell

    def handle_max_mamba_cache(total_rest_memory):
        rest = handle_fn(total_rest_memory)
        PROBE._profile_available_bytes(int(rest * (1 << 30)))
        return rest

    def profile_max_num_token(total_gpu_memory):
        tokens = prof_fn(total_gpu_memory)  # on the simulated device
        profiled["tokens"] = tokens
        runner.device = "cpu"  # pools are built on cpu/meta, as in the core's allocate()
        redirect.__enter__()
        profiled["redirect"] = True
        return tokens

    runner.get_cell_size_per_token = get_cell_size_per_token
    runner.handle_max_mamba_cache = handle_max_mamba_cache
    runner.profile_max_num_token = profile_max_num_token
    got, tracer = _frame_locals_on_return(S.init_memory_pool_code, ("ratio", "max_num_reqs"))
    old_trace = sys.gettrace()
    sys.settrace(tracer)
    try:
        with no_kernel_warmups(S):  # a stand-in for the kernel warm-up only (SOURCE_MAP)
            runner.init_memory_pool(pre)
    finally:
        sys.settrace(old_trace)
        if profiled.get("redirect"):
            redirect.__exit__(None, None, None)
        runner.device = real_device
        del runner.get_cell_size_per_token
        del runner.handle_max_mamba_cache
        del runner.profile_max_num_token
        if "ratio" in got:
            ratio = PROBE._calculate_mamba_ratio(got["ratio"])
            runner._calculate_mamba_ratio = lambda: ratio  # the core asks the runner for it
    PROBE._resolve_max_num_reqs(got.get("max_num_reqs"))
    # ModelRunner.initialize: `self.max_running_requests = min(...)` (SGLang's own statement)
    exec(S.max_running_requests_stmt, dict(vars(S.model_runner_module)),
         {"self": runner, "server_args": runner.server_args})
    return MemoryPoolConfig(
        max_total_num_tokens=runner.max_total_num_tokens,
        max_running_requests=runner.max_running_requests,
        req_to_token_pool_size=runner.req_to_token_pool.size,
        profiled_tokens=profiled["tokens"],
        pre_model_load_memory=pre,
        mamba_ratio=got.get("ratio"),
        resolved_max_total_num_tokens=runner.max_total_num_tokens,
    )


def apply_memory_pool_config(S, runner, mem_cfg):
    """SGLang's init_memory_pool builds the pools; the profile answers the sizing step's value.
    For the core's small real-allocation check (mem_cfg with replaced max_total_num_tokens) it answers that
    small token count instead, so nothing full-size is ever allocated on 'cpu'. 0.5.9 then derives
    max_num_reqs itself (min(default, max_mamba_cache_size // ratio)), which is not the check's request
    count: the check's request-sized buffers do not extrapolate (see the adapter notes)."""
    if mem_cfg.max_total_num_tokens != mem_cfg.resolved_max_total_num_tokens:
        tokens = mem_cfg.max_total_num_tokens
    else:
        tokens = mem_cfg.profiled_tokens
    runner.profile_max_num_token = lambda total_gpu_memory: tokens
    try:
        with no_kernel_warmups(S):  # a stand-in for the kernel warm-up only (SOURCE_MAP)
            runner.init_memory_pool(mem_cfg.pre_model_load_memory)
    finally:
        del runner.profile_max_num_token
