"""Per-version code for SGLang 0.5.14 (and 0.5.15: versions/v0_5_15.py re-exports this file).

0.5.14 / 0.5.15 sit between the 0.5.11 and 0.5.16 layouts:
- sizing is still ModelRunnerKVCacheMixin (model_executor/model_runner_kv_cache_mixin.py) plus
  model_executor/pool_configurator.py, as in 0.5.11, so the oracle drives a ModelRunner.__new__
  instance like the 0.5.11 adapter;
- the arithmetic is 0.5.16's: _profile_available_bytes raises "Loaded weights leave no GPU memory ...",
  handle_max_mamba_cache solves max_mamba_cache_size jointly with the speculative intermediates,
  and DefaultPoolConfigurator scales the cell size by (1 + eagle_draft_num_layers / num_layers)
  for EAGLE/STANDALONE (draft KV counted; draft weights loaded before sizing);
- ModelRunner.__init__ (model_runner.py:367-520 in 0.5.14) sets more attributes than 0.5.11:
  model_is_mrope, dp_rank, eagle_draft_num_layers / eagle3 aux ids (built from the draft
  ModelConfig), dflash_*; the post-load block (model_runner.py:729-767) now treats
  num_nextn_predict_layers == 0 as "no MTP layers", and rewrites the SWA/full layer ids only
  for hybrid-SWA models (adjust_hybrid_swa_layers_for_pp, called as SGLang's own method);
- the parallel topology is read through runtime_context.get_parallel() (get_batch_sizes_to_capture)
  as well as through parallel_state (get_attention_tp_size): both are filled;
- get_batch_sizes_to_capture moved to model_executor/runner/base_cuda_graph_runner.py and reads
  server_args.cuda_graph_config.decode.bs (0.5.16-style per-phase CUDA-graph config);
- --mamba-radix-cache-strategy replaces --mamba-scheduler-strategy;
- the checkpoint's quantization: the empty model carries the quant config SGLang's loader builds
  (standins.give_model_quant_config: loader._get_quantization_config with the LoadConfig of ModelRunner.load_model's
  own statements, model_runner.py:1368-1384 @0.5.14), set only if the architecture's class keeps
  ``self.quant_config``, so configure_kv_cache_dtype sees a ModelOpt checkpoint's kv_cache_quant_algo /
  kv_cache_scheme (the only configs that set kv_cache_quant_algo in 0.5.14/0.5.15; compressed-tensors and Fp8Config
  have no such attribute yet). Unquantized checkpoints are unchanged.
"""
import socket
import types

from versions.standins import SERVER_ARG_ALIASES  # noqa: F401 - read by oracle.py
from versions.standins import dflash_runner_fields, give_model_quant_config, load_model_sliding_window
from versions.standins import no_kernel_warmups as _no_kernel_warmups

VERSION = "0.5.14"


def load():
    """Import the SGLang symbols the oracle needs (after the CPU shim)."""
    from sglang.srt.configs.model_config import AttentionArch, ModelConfig
    from sglang.srt.distributed import parallel_state
    from sglang.srt.environ import envs
    from sglang.srt.model_executor import model_runner_kv_cache_mixin as kv_mixin
    from sglang.srt.model_executor import pool_configurator
    from sglang.srt.model_executor.cuda_graph_config import Backend
    from sglang.srt.model_executor import model_runner as model_runner_mod
    from sglang.srt.model_executor.model_runner import ModelRunner
    from sglang.srt.model_executor.runner.base_cuda_graph_runner import get_batch_sizes_to_capture
    from sglang.srt import runtime_context
    from sglang.srt.runtime_context import get_parallel
    from sglang.srt.server_args import (
        ServerArgs,
        get_global_server_args,
        prepare_server_args,
        set_global_server_args_for_scheduler,
    )
    from sglang.srt.speculative.spec_info import SpeculativeAlgorithm
    from sglang.srt.utils.common import get_available_gpu_memory

    S = types.SimpleNamespace(**{k: v for k, v in locals().items()})
    from versions import pp_stage

    pp_stage.install_v0_5_14(S)  # one pp rank when a case sets ORACLE_PP_RANK (pp_stage.py)
    return S


SOURCE_MAP = {
    "sglang_own_code": [
        "server_args.prepare_server_args -> ServerArgs.from_cli_args -> ServerArgs.__post_init__ (all validation and "
        "resolution, incl. _handle_cuda_graph_config and the mamba radix-cache strategy), then check_server_args()",
        "configs.model_config.ModelConfig.from_server_args (target, the draft worker's is_draft_model=True config, "
        "and the draft config ModelRunner.__init__ builds via ModelRunner._build_model_config for "
        "eagle_draft_num_layers)",
        "configs.qwen3_next / qwen3_5 mamba2_cache_params / configs.mamba_utils (mamba_cache_per_req, shapes, dtypes)",
        "ModelRunner.model_specific_adjustment, ModelRunner.adjust_hybrid_swa_layers_for_pp, "
        "ModelRunner.configure_kv_cache_dtype, ModelRunner.mambaish_config (real ModelRunner class, instance "
        "created with __new__)",
        "utils.common.get_available_gpu_memory (before and after weight load; float32 all_reduce MIN for tp>1 over a "
        "real 1-rank gloo group)",
        "ModelRunnerKVCacheMixin._resolve_memory_pool_config -> _profile_available_bytes (incl. 'Loaded weights "
        "leave no GPU memory' check) -> handle_max_mamba_cache (joint mamba/intermediate solve); "
        "pool_configurator.create_memory_pool_configurator/DefaultPoolConfigurator (cell size incl. the EAGLE draft "
        "layer factor); _apply_token_constraints; _resolve_max_num_reqs -> _calculate_mamba_ratio",
        "ModelRunnerKVCacheMixin._apply_memory_pool_config -> _init_pools, for the target and (spec) the draft worker",
        "model_executor.runner.base_cuda_graph_runner.get_batch_sizes_to_capture",
    ],
    "oracle_stand_ins_not_sglang": [
        "Simulated device queries (shim/cpu_shim.py), as for 0.5.11",
        "ModelRunner.__init__ / initialize are NOT run. The attributes they set are copied onto a ModelRunner.__new__ "
        "instance (0.5.14 model_runner.py:367-530 Parse-args block incl. the eagle/dflash draft-layer block, "
        "and :729-767 after load_model); the model object is an empty stand-in (no quant_config, no "
        "start_layer/end_layer -> getattr defaults); self.dtype = model_config.dtype as load_model does",
        "ModelRunner.init_memory_pool is replayed as its two calls: _resolve_memory_pool_config on device='cuda' "
        "(simulated), then _apply_memory_pool_config with runner.device='cpu' inside the meta/cpu TorchFunctionMode",
        "Distributed state: parallel_state._WORLD/_TP/_ATTN_TP/_ATTN_CP/_PP namespaces and runtime_context."
        "get_parallel() overrides (tp, attn_tp = tp; dp/pp/cp/ep = 1); a real 1-rank gloo group",
        "Kernels: triton (real wheel, never launched), torchvision (C ops absent), sgl_kernel / flashinfer mocks; "
        "MHATokenToKVPool._init_kv_copy_and_warmup (if present) is a no-op, as in the 0.5.16 adapter",
    ],
}

EXTRA_MOCKED_PACKAGES = ()

CPU_CHECK_SIZE_PARAM = [("req_generation", "req"), ("mamba_allocator.free_slots", "mamba"),
                        ("_intermediate_conv_window_phys", "req")]


def install_distributed_standins(S, tp_size):
    import torch

    ps_mod = S.parallel_state
    if not torch.distributed.is_initialized():
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        torch.distributed.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", world_size=1, rank=0)
    grp = lambda n: types.SimpleNamespace(world_size=n, rank_in_group=0, cpu_group=None, device_group=None,
                                          ranks=list(range(n)), local_rank=0, rank=0)
    world = grp(tp_size)
    ov = dict(
        world_size=tp_size, world_rank=0, tp_size=tp_size, tp_rank=0, pp_size=1, pp_rank=0,
        moe_ep_size=1, moe_ep_rank=0, moe_dp_size=1, moe_dp_rank=0, moe_tp_size=tp_size, moe_tp_rank=0,
        attn_tp_size=tp_size, attn_tp_rank=0, attn_cp_size=1, attn_cp_rank=0, attn_dp_size=1, attn_dp_rank=0,
        world_group=world, tp_group=grp(tp_size), pp_group=grp(1), moe_ep_group=grp(1), moe_dp_group=grp(1),
        moe_tp_group=grp(tp_size), attn_tp_group=grp(tp_size), attn_cp_group=grp(1),
    )
    fields = getattr(S.runtime_context, "_PARALLEL_FIELDS", None)
    if fields is not None:
        ov = {k: v for k, v in ov.items() if k in fields}
    ps_mod._WORLD = world
    ps_mod._TP = ov["tp_group"]
    ps_mod._ATTN_TP = ov["attn_tp_group"]
    ps_mod._ATTN_CP = ov["attn_cp_group"]
    ps_mod._PP = ov["pp_group"]
    S.get_parallel()._overrides = ov


def make_runner(S, server_args, model_config, is_draft_worker=False, req_to_token_pool=None,
                token_to_kv_pool_allocator=None, memory_pool_config=None):
    """A real ModelRunner instance without running __init__: attributes as set by the Parse-args block
    (0.5.14 model_runner.py:367-530) for a single rank (tp_rank 0, gpu 0)."""
    r = parse_args_block(S, server_args, model_config, is_draft_worker, req_to_token_pool,
                         token_to_kv_pool_allocator, memory_pool_config)
    # model_runner.py:521-530
    r.model_specific_adjustment()
    S.set_global_server_args_for_scheduler(server_args)
    S.get_global_server_args().use_mla_backend = r.use_mla_backend
    init_tail(S, r)
    return r


def init_tail(S, r):
    """Attributes __init__ sets after model_specific_adjustment and before initialize() that sizing reads."""
    r.forward_stream = None
    # model_runner.py:566-569 (just before initialize())
    r.hisparse_coordinator = None
    r._linear_attn_registry_cache = S.model_runner_mod._UNSET


def parse_args_block(S, server_args, model_config, is_draft_worker=False, req_to_token_pool=None,
                     token_to_kv_pool_allocator=None, memory_pool_config=None):
    """model_runner.py:367-518 (Parse args ... auxiliary hidden capture mode)."""
    r = S.ModelRunner.__new__(S.ModelRunner)
    sa = server_args
    r.mem_fraction_static = sa.mem_fraction_static
    r.memory_pool_config = memory_pool_config
    r.device = sa.device
    r.gpu_id = 0
    r.tp_rank = 0
    r.tp_size = sa.tp_size
    r.moe_ep_rank = 0
    r.moe_ep_size = sa.ep_size
    r.dp_rank = None
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
    r.device_timer = None
    r.is_multimodal = model_config.is_multimodal
    r.is_multimodal_chunked_prefill_supported = model_config.is_multimodal_chunked_prefill_supported
    r.spec_algorithm = S.SpeculativeAlgorithm.from_string(sa.speculative_algorithm)
    r.page_size = sa.page_size
    r.req_to_token_pool = req_to_token_pool
    r.token_to_kv_pool_allocator = token_to_kv_pool_allocator
    r.is_hybrid_swa = model_config.is_hybrid_swa
    r.is_hybrid_swa_compress = getattr(model_config, "is_hybrid_swa_compress", False)
    r.use_mla_backend = model_config.attention_arch == S.AttentionArch.MLA
    r.attention_chunk_size = model_config.attention_chunk_size
    rope_scaling = getattr(model_config.hf_text_config, "rope_parameters", None) or getattr(
        model_config.hf_text_config, "rope_scaling", {})
    r.model_is_mrope = rope_scaling is not None and "mrope_section" in rope_scaling
    r.enable_elastic_ep = sa.elastic_ep_backend is not None
    r.forward_pass_id = 0
    r.init_new_workspace = False
    r.draft_model_idx = None
    r.enable_hisparse = sa.enable_hisparse
    r.msprobe_debugger = None
    # auxiliary hidden capture mode (model_runner.py:428-512)
    r.eagle_use_aux_hidden_state = False
    r.eagle_draft_num_layers = None
    r.dflash_use_aux_hidden_state = False
    r.dflash_target_layer_ids = None
    r.dflash_draft_num_layers = None
    spec = r.spec_algorithm
    if (spec.is_eagle() or spec.is_standalone()) and not is_draft_worker and sa.speculative_draft_model_path:
        dmc = r._build_model_config(sa, model_path=sa.speculative_draft_model_path,
                                    model_revision=sa.speculative_draft_model_revision, is_draft_model=True)
        nnpl = dmc.num_nextn_predict_layers
        if nnpl is not None:
            r.eagle_draft_num_layers = int(nnpl)
        else:
            r.eagle_draft_num_layers = int(max(dmc.num_hidden_layers, dmc.num_attention_layers))
        if spec.is_eagle3():
            r.eagle_use_aux_hidden_state = True
            try:
                eagle_config = getattr(dmc.hf_config, "eagle_config", None)
                r.eagle_use_aux_hidden_state = eagle_config.get("use_aux_hidden_state", True)
                r.eagle_aux_hidden_state_layer_ids = eagle_config["eagle_aux_hidden_state_layer_ids"]
            except Exception:
                r.eagle_aux_hidden_state_layer_ids = None
    if spec.is_dflash() and not is_draft_worker:
        dflash_runner_fields(r, sa, model_config)
    return r


def after_load_model(S, r):
    """model_runner.py:729-767 (after self.load_model()), with an empty model object."""
    r.model = types.SimpleNamespace()
    r.dtype = r.model_config.dtype  # load_model
    nnpl = r.model_config.num_nextn_predict_layers
    model_has_mtp_layers = nnpl is not None and nnpl > 0
    model_num_layers = (
        r.model_config.num_nextn_predict_layers
        if r.is_draft_worker and model_has_mtp_layers
        else max(r.model_config.num_hidden_layers, r.model_config.num_attention_layers)
    )
    if r.model_config.hf_config.architectures[0] in ("MiMoV2MTP", "Step3p5MTP"):
        model_num_layers = 1
    r.start_layer = getattr(r.model, "start_layer", 0)
    r.end_layer = getattr(r.model, "end_layer", model_num_layers)
    r.num_effective_layers = r.end_layer - r.start_layer
    r.adjust_hybrid_swa_layers_for_pp()  # SGLang's own
    loop_num = getattr(r.model_config.hf_config, "loop_num", 1)
    if loop_num > 1:
        r.num_effective_layers = r.num_effective_layers * loop_num
    assert ((not model_has_mtp_layers) or r.spec_algorithm.is_none()
            or r.num_effective_layers == model_num_layers), "PP is not compatible with MTP models."
    # the loader's quant config on the empty model (standins.give_model_quant_config; None, so nothing changes,
    # for an unquantized checkpoint): configure_kv_cache_dtype reads its kv_cache_quant_algo
    # (model_runner.py:2337-2352 @0.5.14, :2446-2461 @0.5.15)
    give_model_quant_config(r, S.ModelRunner)
    r.configure_kv_cache_dtype()  # SGLang's own
    # load_model's own sliding_window_size block (model_runner.py:1469-1481 @0.5.14; standins.load_model_sliding_window):
    # SWAChunkCapPoolConfigurator reads it (pool_configurator.py:354 @0.5.14), so a request-capped SWA pool stopped at
    # an AttributeError without it; the ratio pool does not read it
    load_model_sliding_window(S, r)


def sizing_wraps(S):
    return [
        (S.ModelRunner, "_profile_available_bytes"),
        (S.ModelRunner, "handle_max_mamba_cache"),
        (S.ModelRunner, "_apply_token_constraints"),
        (S.ModelRunner, "_resolve_max_num_reqs"),
        (S.ModelRunner, "_calculate_mamba_ratio"),
        (S.pool_configurator, "create_memory_pool_configurator"),
    ]


def configurator_class(S):
    return S.pool_configurator.MemoryPoolConfigurator


def resolve_memory_pool_config(S, runner, pre):
    return runner._resolve_memory_pool_config(pre)


def apply_memory_pool_config(S, runner, mem_cfg):
    if runner.is_draft_worker:
        runner.memory_pool_config = mem_cfg
    with _no_kernel_warmups(S):
        runner._apply_memory_pool_config(mem_cfg)  # SGLang: sets sizes, calls _init_pools


def draft_model_config(S, server_args, target_model_config=None):
    """The draft worker's ModelConfig. The EAGLE worker first sets the draft's context length to the target's
    (server_args.context_length = target ... context_len: srt/speculative/eagle_worker_v2.py:964-965 @0.5.14,
    :1066-1067 @0.5.15), so ModelConfig checks the draft's positions against it; SGLang writes it into the shared
    ServerArgs after the target pools exist, the oracle into a shallow copy used for this config only."""
    import copy  # noqa: PLC0415
    sa = server_args
    if target_model_config is not None:
        sa = copy.copy(server_args)
        sa.context_length = target_model_config.context_len
    return S.ModelConfig.from_server_args(
        sa, model_path=server_args.speculative_draft_model_path,
        model_revision=server_args.speculative_draft_model_revision, is_draft_model=True)


def spec_reserved_bytes(S, runner, sa, per_req, spec_on):
    """Reserve depends on the final max_mamba_cache_size (joint solve): see spec_reserved_bytes_after."""
    return 0 if not spec_on else None


def spec_reserved_bytes_after(S, runner, sa, per_req, spec_on, mmcs_before):
    """Bytes handle_max_mamba_cache (model_runner_kv_cache_mixin.py:122-224) subtracts for speculative
    intermediate states, from the values after it ran."""
    if not spec_on:
        return 0
    D = sa.speculative_num_draft_tokens
    dp = runner.dp_size if sa.enable_dp_attention else 1
    if mmcs_before is None and sa.disable_radix_cache and sa.max_running_requests is not None:
        return per_req * sa.max_mamba_cache_size * D
    ratio = runner._calculate_mamba_ratio()
    return per_req * min(sa.max_running_requests // dp, sa.max_mamba_cache_size // ratio) * D


def capture_bs(S, runner):
    """init_decode_cuda_graph (model_runner.py:2517-2560): no decode graph when the decode backend is disabled."""
    sa = runner.server_args
    if getattr(sa, "disable_cuda_graph", False) or sa.cuda_graph_config.decode.backend == S.Backend.DISABLED:
        return None
    bs_list, _ = S.get_batch_sizes_to_capture(runner)
    return bs_list
