"""vLLM 0.33.0 / 0.34.0's KV-cache sizing chain, in vLLM's order: ``size(launch, cfg) -> VllmResult``.

The order is ``EngineCore._initialize_kv_caches`` around the worker (``v1/engine/core.py``): the worker's init
snapshot and ``request_memory``, the weight load, ``update_block_size_for_backend``, the layers' KV specs, the
grouping, ``determine_available_memory``, ``get_kv_cache_configs`` (auto-fit, admission check, blocks), and on
0.34 with the extensible KV cache the measurement after warmup and ``finalize_extensible_kv_cache``. The summary
carries the vLLM oracle's field names and values (``summary_version`` 1), so golden cases compare field by field.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from planner.engines.vllm import capacity, grouping, kv_spec, memory
from planner.engines.vllm.config import VllmConfig, VllmRejected
from planner.engines.vllm.inputs import VERSIONS, VllmLaunch
from planner.engines.vllm.memory import StartupFailed, format_gib, gib_bytes
from planner.errors import BadInput

WEIGHTS_SOURCE = "input --weights-gib"
MAX_LEN_KEYS = ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "model_max_length",
                "max_sequence_length", "max_seq_length", "seq_len")


@dataclass
class VllmResult:
    summary: dict
    log: list[str] = field(default_factory=list)


def derived_max_model_len(raw: dict) -> int:
    """The model's own context length, for ``--max-model-len -1`` (``config/model.py`` ``_get_and_verify_max_len``),
    for configs without a length-scaling RoPE (llama3 RoPE keeps the length); others are refused by name."""
    tc = kv_spec.text_config(raw)
    vals = [tc[k] for k in MAX_LEN_KEYS if isinstance(tc.get(k), int)]
    if not vals:
        raise BadInput("vLLM: --max-model-len -1 for a config without max_position_embeddings is not modelled")
    rs = tc.get("rope_scaling") or {}
    kind = rs.get("rope_type") or rs.get("type") if isinstance(rs, dict) else None
    if kind not in (None, "default", "llama3"):
        raise BadInput(f"vLLM: --max-model-len -1 with {kind} RoPE scaling is not modelled")
    return min(vals)


def _base_summary(launch: VllmLaunch, cfg: VllmConfig) -> dict:
    s = {
        "summary_version": 1, "vllm_version": launch.version, "outcome": "ok", "validated": True, "startup_ok": True,
        "stage": None, "error_type": None, "error_message": None,
        "model_runner": cfg.model_runner, "architecture": cfg.architecture,
        "attention_backends": list(cfg.attention_backends), "kv_cache_dtype": cfg.kv_cache_dtype, "dtype": cfg.dtype,
        "max_model_len": cfg.max_model_len, "max_num_seqs": cfg.max_num_seqs,
        "max_num_batched_tokens": cfg.max_num_batched_tokens, "enable_prefix_caching": cfg.enable_prefix_caching,
        "enable_chunked_prefill": cfg.enable_chunked_prefill, "gpu_memory_utilization": cfg.gpu_memory_utilization,
        "enable_extensible_kv_cache": cfg.enable_extensible_kv_cache if launch.version != "0.33.0" else None,
        "tensor_parallel_size": cfg.tensor_parallel_size, "pipeline_parallel_size": cfg.pipeline_parallel_size,
        "data_parallel_size": cfg.data_parallel_size,
        "block_size": None, "mamba_block_size": None, "mamba_cache_mode": cfg.mamba_cache_mode,
        "mamba_page_size_padded": None, "hash_block_size": None, "kv_cache_layout": None,
        "num_kv_cache_groups": None, "groups": None,
        "weights_bytes": None, "weights_source": None, "weights_bytes_meta": None, "init_free_bytes": None,
        "requested_memory_bytes": None, "total_consumed_bytes": None, "transient_peak_headroom_bytes": None,
        "cudagraph_memory_estimate_bytes": None, "available_kv_bytes": None,
        "num_gpu_blocks_capacity": None, "num_gpu_blocks": None, "bytes_per_block": None, "kv_cache_bytes": None,
        "blocks_per_request": None, "kv_cache_size_tokens": None, "max_concurrency": None,
        "cudagraph_mode": cfg.cudagraph_mode, "cudagraph_capture_sizes": list(cfg.cudagraph_capture_sizes),
        "max_cudagraph_capture_size": cfg.max_cudagraph_capture_size, "kernel_block_sizes": None,
        "speculative_method": cfg.speculative_method, "num_speculative_tokens": cfg.num_speculative_tokens,
        "draft_layers": [] if cfg.speculative_method else None, "draft_kv_specs": None,
    }
    return s


def _fail(s: dict, err: StartupFailed) -> None:
    s.update(outcome="startup_failed", startup_ok=False, stage=err.stage, error_type=err.error_type,
             error_message=err.message)


def size(launch: VllmLaunch, cfg: VllmConfig | None = None) -> VllmResult:
    """What vLLM ``launch.version`` computes for the KV cache of ``launch`` (see the module docstring)."""
    if launch.version not in VERSIONS:
        raise BadInput(f"vLLM {launch.version} is not modelled (modelled: {', '.join(VERSIONS)})")
    if cfg is None:
        from planner.engines.vllm import config as config_mod

        try:
            cfg = config_mod.resolve(launch)
        except VllmRejected as e:
            return VllmResult({"summary_version": 1, "vllm_version": launch.version, "outcome": "rejected",
                               "validated": False, "startup_ok": False, "stage": e.stage,
                               "error_type": e.error_type, "error_message": e.message}, [])
    return _Chain(launch, cfg).run()


class _Chain:
    def __init__(self, launch: VllmLaunch, cfg: VllmConfig):
        self.launch, self.cfg, self.version = launch, cfg, launch.version
        self.s = _base_summary(launch, cfg)
        self.log: list[str] = []

    def run(self) -> VllmResult:
        try:
            self._run()
        except StartupFailed as e:
            _fail(self.s, e)
        return VllmResult(self.s, self.log)

    def _refuse_unmodelled(self) -> None:
        cfg, m = self.cfg, self.launch.measured
        if m.weights_gib is None:
            raise BadInput("vLLM: the weights per GPU (weights_gib) are needed to size the KV cache")
        if cfg.kv_cache_memory_bytes is None and (m.non_torch_gib is None or m.peak_activation_gib is None):
            raise BadInput("vLLM: non_torch_gib and peak_activation_gib (measured or estimated) are needed")
        if cfg.model_runner != "v2":
            raise BadInput("vLLM: the V1 model runner's sizing is not modelled")
        if cfg.speculative_method:
            raise BadInput(f"vLLM: speculative decoding ({cfg.speculative_method}) is not modelled yet")
        if cfg.cpu_offload_gb:
            raise BadInput("vLLM: --cpu-offload-gb is not modelled")
        q = (kv_spec.text_config(self.launch.spec.raw).get("quantization_config") or
             self.launch.spec.raw.get("quantization_config") or {})
        if q.get("quant_method") == "fp8" and self.launch.device.sm.startswith("8."):
            raise BadInput(f"vLLM: FP8 checkpoints on SM {self.launch.device.sm} (vLLM's FP8 kernel choice) are not "
                           "modelled")
        if cfg.quantization not in (None, "fp8") or (q and q.get("quant_method") not in ("fp8",)):
            raise BadInput(f"vLLM: quantization {cfg.quantization or q.get('quant_method')} is not modelled")
        if self.launch.env:
            raise BadInput(f"vLLM: environment variables ({', '.join(sorted(self.launch.env))}) are not modelled")

    def _run(self) -> None:
        cfg, launch, s, v = self.cfg, self.launch, self.s, self.version
        self._refuse_unmodelled()
        dev, m = launch.device, launch.measured
        extensible = bool(cfg.enable_extensible_kv_cache) and v != "0.33.0"
        # Worker.init_device: the init snapshot and request_memory (v1/worker/utils.py request_memory)
        total = dev.cuda_total_bytes
        init_free = total - gib_bytes(m.startup_used_gib)
        requested = memory.requested_memory(total, init_free, cfg.gpu_memory_utilization, extensible)
        # load_model: the weights as given (the oracle's DeviceMemoryProfiler on --weights-gib)
        weights = gib_bytes(m.weights_gib)
        s.update(weights_bytes=weights, weights_source=WEIGHTS_SOURCE, init_free_bytes=init_free,
                 requested_memory_bytes=requested)
        # update_block_size_for_backend, then every layer's spec (runner V2 get_kv_cache_spec)
        block = grouping.cache_block_size(v, cfg.block_size, cfg.attention_backends, dev.sm)
        s["block_size"] = block
        s["kv_cache_layout"] = "LBNHC"
        kvb = kv_spec.kv_dtype_bytes(cfg.kv_cache_dtype, cfg.dtype)
        layers = kv_spec.model_layers(launch.spec.raw, cfg.architecture, tp=cfg.tensor_parallel_size,
                                      pp=cfg.pipeline_parallel_size, block_size=block, kv_bytes=kvb)
        groups_w = [grouping.kv_cache_groups(stage) for stage in layers.stages]
        bpbs = [grouping.bytes_per_block(g) for g in groups_w]
        # determine_available_memory
        cg_on = cfg.cudagraph_mode != "NONE"
        budget = memory.determine_available_memory(
            init_free=init_free, requested=requested, weights=weights, non_torch=gib_bytes(m.non_torch_gib),
            transient=gib_bytes(m.peak_activation_gib), cudagraph_estimate=gib_bytes(m.cudagraph_gib) if cg_on else 0,
            kv_cache_memory_bytes=cfg.kv_cache_memory_bytes)
        s.update(total_consumed_bytes=budget.total_consumed_bytes,
                 transient_peak_headroom_bytes=budget.transient_peak_headroom_bytes,
                 cudagraph_memory_estimate_bytes=budget.cudagraph_memory_estimate_bytes,
                 available_kv_bytes=budget.available_kv_bytes)
        self.log.append(f"Available KV cache memory: {format_gib(budget.available_kv_bytes)} GiB")
        # get_kv_cache_configs
        hint = capacity.hint_034(extensible, cfg.gpu_memory_utilization) if v != "0.33.0" else None
        avail = [budget.available_kv_bytes] * len(groups_w)
        if cfg.num_gpu_blocks_override is not None:
            avail = [cfg.num_gpu_blocks_override * b for b in bpbs]
        check = [a - b for a, b in zip(avail, bpbs)]
        max_len = cfg.max_model_len
        upper = None
        if max_len == -1:
            upper = derived_max_model_len(launch.spec.raw)
            s["max_model_len"] = upper
            max_len = capacity.auto_fit(v, groups_w, bpbs, check, upper, hint)
        s["max_model_len"] = max_len
        for groups, bpb, mem in zip(groups_w, bpbs, check):
            capacity.check_enough(v, mem, groups, bpb, max_len, hint)
        num_blocks = min(a // b for a, b in zip(avail, bpbs))
        groups, bpb = groups_w[0], bpbs[0]
        final = num_blocks
        if extensible:
            cg_actual = m.cudagraph_actual_gib if m.cudagraph_actual_gib is not None else m.cudagraph_gib
            warm = m.warmup_peak_gib if m.warmup_peak_gib is not None else m.peak_activation_gib
            measures = []
            for g in groups_w:
                measures.append(memory.measure_after_warmup(
                    budget=budget, weights=weights, non_torch=gib_bytes(m.non_torch_gib),
                    cudagraph_actual=gib_bytes(cg_actual) if (cg_on and not cfg.enforce_eager) else 0,
                    warmup_peak=gib_bytes(warm), reserve_growth=gib_bytes(m.torch_reserve_growth_gib),
                    strides=_segment_strides(g), capacity=num_blocks))
            s["extensible_measure"] = measures[0].as_dict()
            final = min(min(x.num_kv_blocks for x in measures), num_blocks)
        self._fill_groups(groups, bpb, max_len, num_blocks)
        if extensible:
            s["num_gpu_blocks"] = None
            hint_w = capacity.hint_034(True, cfg.gpu_memory_utilization, after_warmup=True)
            if cfg.max_model_len == -1:
                max_len = capacity.auto_fit(v, groups_w, bpbs, [(final - 1) * b for b in bpbs], max_len, hint_w,
                                            after_warmup=True)
                s["max_model_len"] = max_len
                self._fill_groups(groups, bpb, max_len, num_blocks)
            for gs, b in zip(groups_w, bpbs):
                capacity.check_enough(v, (final - 1) * b, gs, b, max_len, hint_w)
        bpr = s["blocks_per_request"]
        tokens, conc, line = capacity.report(final, bpr, max_len)
        s.update(num_gpu_blocks=final, kv_cache_bytes=final * bpb, kv_cache_size_tokens=tokens, max_concurrency=conc)
        self.log.append(line)

    def _fill_groups(self, groups, bpb: int, max_len: int, num_blocks: int) -> None:
        s = self.s
        bprs = capacity.blocks_per_request(groups, max_len)
        s["groups"] = [{"group": i, "type": g.spec.type_name, "block_size": g.spec.block_size,
                        "page_size_bytes": g.spec.page_size_bytes, "num_layers": g.num_layers,
                        "blocks_per_request": n, "num_draft_layers": sum(1 for _ in ())}
                       for i, (g, n) in enumerate(zip(groups, bprs))]
        s.update(num_kv_cache_groups=len(groups), bytes_per_block=bpb, blocks_per_request=sum(bprs),
                 num_gpu_blocks_capacity=num_blocks, num_gpu_blocks=num_blocks, kv_cache_bytes=num_blocks * bpb,
                 hash_block_size=min(g.spec.block_size for g in groups),
                 kernel_block_sizes=[grouping.kernel_block_size(g.spec.block_size, [
                     b for b in self.cfg.attention_backends if b in grouping.KERNEL_BLOCK_SIZES]) for g in groups])


def _segment_strides(groups) -> list[int]:
    """One VMM segment per layer region of the layer-outer layout: the widest group's layers, each its page."""
    widest = max(groups, key=lambda g: g.spec.page_size_bytes * g.num_layers)
    return [widest.spec.page_size_bytes] * widest.num_layers
