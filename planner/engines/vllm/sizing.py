"""vLLM 0.33.0 / 0.34.0's KV-cache sizing chain, in vLLM's order: ``size(launch, cfg) -> VllmResult``.

The order is ``EngineCore._initialize_kv_caches`` around the worker (``v1/engine/core.py``): the worker's init
snapshot and ``request_memory``, the weight load, ``update_block_size_for_backend``, the layers' KV specs, the
grouping, ``determine_available_memory``, ``get_kv_cache_configs`` (auto-fit, admission check, blocks), and on
0.34 with the extensible KV cache the measurement after warmup and ``finalize_extensible_kv_cache``. The summary
carries the vLLM oracle's field names and values (``summary_version`` 1), so golden cases compare field by field.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from planner.engines.vllm import capacity, grouping, hybrid, kv_spec, memory
from planner.engines.vllm.config import VllmConfig, VllmRejected
from planner.engines.vllm.inputs import VERSIONS, VllmLaunch
from planner.engines.vllm.memory import StartupFailed, format_gib, gib_bytes
from planner.errors import BadInput

WEIGHTS_SOURCE = "input --weights-gib"
# the oracle's summary keys, in its order (/work/shared/tools/vllm-oracle/oracle.py SUMMARY_FIELDS)
SUMMARY_FIELDS = (
    "summary_version", "vllm_version", "outcome", "validated", "startup_ok", "stage", "error_type", "error_message",
    "model_runner", "architecture", "attention_backends", "kv_cache_dtype", "dtype",
    "max_model_len", "max_num_seqs", "max_num_batched_tokens", "enable_prefix_caching", "enable_chunked_prefill",
    "gpu_memory_utilization", "enable_extensible_kv_cache", "tensor_parallel_size", "pipeline_parallel_size",
    "data_parallel_size", "block_size", "mamba_block_size", "mamba_cache_mode", "mamba_page_size_padded",
    "hash_block_size", "kv_cache_layout", "num_kv_cache_groups", "groups", "weights_bytes", "weights_source",
    "weights_bytes_meta", "init_free_bytes", "requested_memory_bytes", "total_consumed_bytes",
    "transient_peak_headroom_bytes", "cudagraph_memory_estimate_bytes", "available_kv_bytes",
    "num_gpu_blocks_capacity", "num_gpu_blocks", "bytes_per_block", "kv_cache_bytes", "blocks_per_request",
    "kv_cache_size_tokens", "max_concurrency", "cudagraph_mode", "cudagraph_capture_sizes",
    "max_cudagraph_capture_size", "kernel_block_sizes", "speculative_method", "num_speculative_tokens",
    "draft_layers", "draft_kv_specs",
)
FULL_MODES = ("FULL", "FULL_AND_PIECEWISE", "FULL_DECODE_ONLY")
# flags with a memory effect the chain does not model (refused by name)
UNMODELLED_FLAGS = ("--gdn-prefill-backend", "--mamba-ssm-cache-dtype", "--mamba-cache-dtype",
                    "--kv-cache-dtype-skip-layers", "--decode-context-parallel-size", "-dcp", "--enable-expert-parallel",
                    "--kv-transfer-config", "--kv-sharing-fast-prefill", "--disable-hybrid-kv-cache-manager",
                    "--prefix-match-unit", "--cpu-offload-gb")
MAX_LEN_KEYS = ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "model_max_length",
                "max_sequence_length", "max_seq_length", "seq_len")


@dataclass
class VllmResult:
    summary: dict
    log: list[str] = field(default_factory=list)


def derived_max_model_len(raw: dict) -> int:
    """The model's own context length, for ``--max-model-len -1`` (``config/model.py`` ``_get_and_verify_max_len``),
    for configs whose RoPE scaling keeps the length (llama3, YaRN, ...); a length-multiplying factor is refused."""
    tc = kv_spec.text_config(raw)
    vals = [tc[k] for k in MAX_LEN_KEYS if isinstance(tc.get(k), int)]
    if not vals:
        raise BadInput("vLLM: --max-model-len -1 for a config without max_position_embeddings is not modelled")
    rs = tc.get("rope_scaling") or {}
    kind = rs.get("rope_type") or rs.get("type") if isinstance(rs, dict) else None
    # config/model.py:2643-2678 @0.34.0: these RoPE kinds leave max_position_embeddings as the length
    if kind not in (None, "default", "llama3", "yarn", "deepseek_yarn", "su", "longrope", "deepseek_llama_scaling"):
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
        # create_engine_config's mode until the KV-cache init resolves it (a failure before keeps that one)
        "cudagraph_mode": getattr(cfg, "cudagraph_mode_engine_config", None) or cfg.cudagraph_mode,
        "cudagraph_capture_sizes": list(cfg.cudagraph_capture_sizes),
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
            s = {k: None for k in SUMMARY_FIELDS}
            s.update(summary_version=1, vllm_version=launch.version, outcome="rejected", stage=e.stage,
                     error_type=e.error_type, error_message=e.message)
            return VllmResult(s, [])
    return _Chain(launch, cfg).run()


# EAGLE3 as verified against the oracle (tests/golden/vllm/<release>/dense/eagle3*.jsonl): the targets, the drafters
EAGLE3_TARGETS = frozenset({"LlamaForCausalLM", "Qwen3ForCausalLM"})
EAGLE3_DRAFTS = frozenset({"LlamaForCausalLMEagle3"})


class _Chain:
    def __init__(self, launch: VllmLaunch, cfg: VllmConfig):
        self.launch, self.cfg, self.version = launch, cfg, launch.version
        self.s = _base_summary(launch, cfg)
        self.log: list[str] = []
        self.extensible = bool(cfg.enable_extensible_kv_cache) and launch.version != "0.33.0"
        self.planned = False
        self.draft_names: frozenset[str] = frozenset()

    def run(self) -> VllmResult:
        try:
            self._run()
        except StartupFailed as e:
            _fail(self.s, e)
            if self.planned and self.extensible:
                # the extensible cache never reached its measured size: only the reserved capacity exists
                self.s.update(num_gpu_blocks=None, kv_cache_bytes=None, kv_cache_size_tokens=None,
                              max_concurrency=None)
        return VllmResult(self.s, self.log)

    def _refuse_unmodelled(self) -> None:
        cfg, m, launch = self.cfg, self.launch.measured, self.launch
        if m.weights_gib is None:
            raise BadInput("vLLM: the weights per GPU (weights_gib) are needed to size the KV cache")
        if cfg.kv_cache_memory_bytes is None and (m.non_torch_gib is None or m.peak_activation_gib is None):
            raise BadInput("vLLM: non_torch_gib and peak_activation_gib (measured or estimated) are needed")
        if cfg.model_runner != "v2":
            raise BadInput("vLLM: the V1 model runner's sizing is not modelled")
        if cfg.speculative_method and not (
                (cfg.speculative_method == "mtp" and cfg.architecture in hybrid.GDN_ARCHS | kv_spec.MLA_ARCHS)
                or (cfg.speculative_method == "eagle3" and cfg.architecture in EAGLE3_TARGETS)
                or (cfg.speculative_method == "ngram" and cfg.architecture not in hybrid.GDN_ARCHS | hybrid.MAMBA2_ARCHS)):
            raise BadInput(f"vLLM: speculative decoding ({cfg.speculative_method}) on {cfg.architecture} is not "
                           "modelled")
        if cfg.cpu_offload_gb:
            raise BadInput("vLLM: --cpu-offload-gb is not modelled")
        raw = launch.spec.raw
        q = kv_spec.text_config(raw).get("quantization_config") or raw.get("quantization_config") or {}
        qm = q.get("quant_method")
        if qm in ("fp8", "mxfp4") and launch.device.sm.startswith("8."):
            raise BadInput(f"vLLM: {qm} checkpoints on SM {launch.device.sm} (vLLM's {qm} kernel choice) are not "
                           "modelled")
        # vLLM's names for the verified checkpoints' quantization (gpt-oss resolves to gpt_oss_mxfp4 in 0.34)
        if cfg.quantization not in (None, "fp8", "mxfp4", "gpt_oss_mxfp4") or (q and qm not in ("fp8", "mxfp4")):
            raise BadInput(f"vLLM: quantization {cfg.quantization or qm} is not modelled")
        if launch.env:
            raise BadInput(f"vLLM: environment variables ({', '.join(sorted(launch.env))}) are not modelled")
        for f in launch.flags:
            name = f.split("=", 1)[0]
            if name in UNMODELLED_FLAGS:
                raise BadInput(f"vLLM: {name} is not modelled")

    def _block_backends(self) -> tuple[str, ...]:
        """The attention backends as their kernel block sizes see them (grouping.sized_backends)."""
        cfg, tc = self.cfg, kv_spec.text_config(self.launch.spec.raw)
        tp = cfg.tensor_parallel_size
        qo = tc.get("num_attention_heads") or 0
        kv = tc.get("num_key_value_heads") or qo
        return grouping.sized_backends(cfg.attention_backends, self.launch.device.sm, qo // tp, max(1, kv // tp))

    def _layers(self, block1: int, kvb: int):
        """(per-stage layers, cache block size) after update_block_size_for_backend; fills the hybrid fields."""
        cfg, launch, s = self.cfg, self.launch, self.s
        raw, dev = launch.spec.raw, launch.device
        if cfg.architecture in hybrid.GDN_ARCHS | hybrid.MAMBA2_ARCHS:
            if dev.flashinfer != "cubin":
                raise BadInput(f"vLLM: hybrid models with FlashInfer {dev.flashinfer} are not modelled")
            if cfg.mamba_cache_mode not in ("align", "none"):
                raise BadInput(f"vLLM: Mamba cache mode {cfg.mamba_cache_mode} is not modelled")
            if cfg.max_model_len == -1 and cfg.mamba_cache_mode != "align":
                raise BadInput("vLLM: --max-model-len -1 without prefix caching on a hybrid model is not modelled")
            k = cfg.num_speculative_tokens or 0
            if k and cfg.kv_cache_dtype not in ("auto", "fp8"):
                raise BadInput(f"vLLM: MTP with a {cfg.kv_cache_dtype} KV cache is not modelled")
            if cfg.architecture in hybrid.MAMBA2_ARCHS:
                hl = hybrid.mamba2_layers(raw, cfg.architecture, tp=cfg.tensor_parallel_size,
                                          pp=cfg.pipeline_parallel_size, block_size=block1, kv_bytes=kvb,
                                          model_dtype=cfg.dtype, mamba_cache_mode=cfg.mamba_cache_mode,
                                          max_model_len=cfg.max_model_len, backends=self._block_backends())
            else:
                hl = hybrid.gdn_layers(raw, cfg.architecture, tp=cfg.tensor_parallel_size,
                                       pp=cfg.pipeline_parallel_size, block_size=block1, kv_bytes=kvb,
                                       model_dtype=cfg.dtype,
                                       mamba_cache_mode=cfg.mamba_cache_mode, max_model_len=cfg.max_model_len,
                                       num_spec=k, backends=self._block_backends(), sm=dev.sm,
                                       cuda_version=dev.cuda_version)
            self.log.extend(hl.log)
            s.update(mamba_block_size=hl.mamba_block_size, mamba_page_size_padded=hl.mamba_page_size_padded)
            if cfg.speculative_method:
                self._drafts(hl.draft_layers, hl.draft_spec)
            return hl.stages, hl.block_size
        # max_in_flight_tokens (config/vllm.py:560-577): (pp + 1) batches under async scheduling
        in_flight = (cfg.pipeline_parallel_size + 1) * cfg.max_num_batched_tokens
        layers = kv_spec.model_layers(raw, cfg.architecture, tp=cfg.tensor_parallel_size,
                                      pp=cfg.pipeline_parallel_size, block_size=block1, kv_bytes=kvb,
                                      max_in_flight_tokens=in_flight)
        stages = layers.stages
        if cfg.speculative_method == "eagle3":
            stages = self._eagle3(stages, block1, kvb)
        if cfg.speculative_method == "mtp" and cfg.architecture in kv_spec.MLA_ARCHS:
            # DeepSeekMTP: num_nextn_predict_layers layers numbered on from the target's, each an MLA layer with
            # the target's spec, in the same KV cache group (model_executor/models/deepseek_mtp.py:148-160
            # @0.34.0, 151-163 @0.33.0; oracle summaries: draft_layers model.layers.61.self_attn.attn)
            if cfg.pipeline_parallel_size > 1:
                raise BadInput("vLLM: MTP with pipeline parallelism is not modelled")
            tc = kv_spec.text_config(raw)
            n, nd = tc["num_hidden_layers"], tc.get("num_nextn_predict_layers") or 0
            if nd < 1:
                raise BadInput("vLLM MTP on a model without MTP layers is not modelled")
            spec = stages[-1][-1][1]
            drafts = tuple(f"model.layers.{i}.self_attn.attn" for i in range(n, n + nd))
            stages = stages[:-1] + (stages[-1] + tuple((d, spec) for d in drafts),)
            self._drafts(drafts, spec)
        return stages, block1

    def _eagle3(self, stages, block1: int, kvb: int):
        """EAGLE3's drafter (LlamaForCausalLMEagle3): its ``num_hidden_layers`` decoder layers numbered on from the
        target's (``start_layer_id = target layers``, model_executor/models/llama_eagle3.py:167-206, 317-325
        @0.34.0), full attention with the drafter's own heads on this rank, the target's KV dtype and block size;
        one KV cache group with the target's layers when the specs are equal (oracle summaries)."""
        cfg, draft = self.cfg, self.launch.draft
        if draft is None:
            raise BadInput("vLLM EAGLE3: the drafter's config (--speculative-config's model) is needed")
        arch = (draft.raw.get("architectures") or [None])[0]
        if arch not in EAGLE3_DRAFTS:
            raise BadInput(f"vLLM EAGLE3 drafter architecture {arch} is not modelled (modelled: "
                           f"{', '.join(sorted(EAGLE3_DRAFTS))})")
        if cfg.pipeline_parallel_size > 1:
            raise BadInput("vLLM: a speculative drafter with pipeline parallelism is not modelled")
        kv_heads, head = kv_spec.attention_shape(draft.raw, cfg.tensor_parallel_size)
        spec = kv_spec.FullAttentionSpec(block1, kv_heads, head, head, kvb)
        if spec != stages[-1][-1][1]:
            raise BadInput("vLLM: an EAGLE3 drafter whose KV spec differs from the target's is not modelled")
        n = kv_spec.text_config(self.launch.spec.raw)["num_hidden_layers"]
        drafts = tuple(f"model.layers.{i}.self_attn.attn" for i in range(n, n + draft.raw["num_hidden_layers"]))
        self._drafts(drafts, spec)
        return stages[:-1] + (stages[-1] + tuple((d, spec) for d in drafts),)

    def _drafts(self, names, d) -> None:
        """The drafter's layers and their KV spec as the oracle's summary lists them."""
        cfg, s = self.cfg, self.s
        self.draft_names = frozenset(names)
        s["draft_layers"] = sorted(names)
        # the KV dtype as the spec holds it: fp8 caches are uint8 with FP8_PER_TENSOR (1)
        spec = {"type": d.type_name, "block_size": d.block_size, "page_size_bytes": d.page_size_bytes,
                "num_kv_heads": d.num_kv_heads, "head_size": d.head_size, "head_size_v": d.head_size_v,
                "dtype": cfg.dtype if cfg.kv_cache_dtype == "auto" else "uint8", "is_draft": True}
        if isinstance(d, kv_spec.MLAAttentionSpec):
            spec["cache_dtype_str"] = cfg.kv_cache_dtype  # MLAAttentionSpec.cache_dtype_str
        spec["kv_quant_mode"] = 0 if cfg.kv_cache_dtype == "auto" else 1
        s["draft_kv_specs"] = [{"spec": spec, "num_layers": len(names), "layers": sorted(names)}]

    def _run(self) -> None:
        cfg, launch, s, v = self.cfg, self.launch, self.s, self.version
        self._refuse_unmodelled()
        dev, m = launch.device, launch.measured
        extensible = self.extensible
        # Worker.init_device: the init snapshot and request_memory (v1/worker/utils.py request_memory)
        total = dev.cuda_total_bytes
        init_free = total - gib_bytes(m.startup_used_gib)
        requested = memory.requested_memory(total, init_free, cfg.gpu_memory_utilization, extensible)
        # load_model: the weights as given (the oracle's DeviceMemoryProfiler on --weights-gib)
        weights = gib_bytes(m.weights_gib)
        s.update(weights_bytes=weights, weights_source=WEIGHTS_SOURCE, init_free_bytes=init_free,
                 requested_memory_bytes=requested)
        # update_block_size_for_backend, then every layer's spec (runner V2 get_kv_cache_spec)
        block1 = grouping.cache_block_size(v, cfg.block_size, self._block_backends(), dev.sm)
        kvb = kv_spec.kv_dtype_bytes(cfg.kv_cache_dtype, cfg.dtype)
        stages, block = self._layers(block1, kvb)
        s["block_size"] = block
        s["kv_cache_layout"] = grouping.kv_cache_layout(cfg.attention_backends, dev.sm)
        groups_w = [grouping.kv_cache_groups(stage) for stage in stages]
        self.log.extend(grouping.padding_warnings(stages[0]))
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
        if max_len == -1:
            upper = getattr(cfg, "derived_max_model_len", None) or derived_max_model_len(launch.spec.raw)
            s["max_model_len"] = upper
            max_len = capacity.auto_fit(v, groups_w, bpbs, check, upper, hint)
        s["max_model_len"] = max_len
        for groups, bpb, mem in zip(groups_w, bpbs, check):
            capacity.check_enough(v, mem, groups, bpb, max_len, hint)
        num_blocks = min(a // b for a, b in zip(avail, bpbs))
        groups, bpb = groups_w[0], bpbs[0]
        self._fill_groups(groups, bpb, max_len, num_blocks)
        self.planned = True
        if not extensible:
            self._report(num_blocks, max_len)
        # initialize_from_config -> initialize_kv_cache -> resolve_cudagraph_mode_and_sizes
        # (config/compilation.py:1560-1610 @0.34.0): chunked local attention cannot run full CUDA graphs, so
        # FULL_AND_PIECEWISE becomes PIECEWISE (attention is compiled piecewise)
        # (the resolved config's cudagraph_mode is the mode after this step where config.resolve models it)
        mode = s["cudagraph_mode"]
        s["cudagraph_mode"] = cfg.cudagraph_mode
        if any(isinstance(g.spec, kv_spec.ChunkedLocalAttentionSpec) for g in groups):
            if mode == "FULL_AND_PIECEWISE":
                s["cudagraph_mode"] = "PIECEWISE"
            elif mode in FULL_MODES:
                raise BadInput(f"vLLM: cudagraph mode {cfg.cudagraph_mode} with chunked local attention is not "
                               "modelled")
        # the Mamba check
        # (config/compilation.py:1659-1681 @0.34.0, :1510-1532 @0.33.0), on the capacity under the extensible cache
        if (any(isinstance(g.spec, kv_spec.MambaSpec) for g in groups) and s["cudagraph_mode"] in FULL_MODES
                and cfg.max_num_seqs > num_blocks):
            raise StartupFailed(
                "initialize_kv_caches", "ValueError",
                f"max_num_seqs ({cfg.max_num_seqs}) exceeds available Mamba cache blocks ({num_blocks}). Each decode "
                "sequence requires one Mamba cache block, so CUDA graph capture cannot proceed. Please lower "
                f"max_num_seqs to at most {num_blocks} or increase gpu_memory_utilization.")
        if not extensible:
            return
        # 0.34: compile_or_warm_up_model, measure_kv_cache_blocks, finalize_extensible_kv_cache
        cg_actual = m.cudagraph_actual_gib if m.cudagraph_actual_gib is not None else m.cudagraph_gib
        warm = m.warmup_peak_gib if m.warmup_peak_gib is not None else m.peak_activation_gib
        measures = [memory.measure_after_warmup(
            budget=budget, weights=weights, non_torch=gib_bytes(m.non_torch_gib),
            cudagraph_actual=gib_bytes(cg_actual) if (cg_on and not cfg.enforce_eager) else 0,
            warmup_peak=gib_bytes(warm), reserve_growth=gib_bytes(m.torch_reserve_growth_gib),
            strides=_segment_strides(g), capacity=num_blocks) for g in groups_w]
        s["extensible_measure"] = measures[0].as_dict()
        final = min(min(x.num_kv_blocks for x in measures), num_blocks)
        hint_w = capacity.hint_034(True, cfg.gpu_memory_utilization, after_warmup=True)
        if cfg.max_model_len == -1:
            max_len = capacity.auto_fit(v, groups_w, bpbs, [(final - 1) * b for b in bpbs], max_len, hint_w,
                                        after_warmup=True)
            s["max_model_len"] = max_len
            self._fill_groups(groups, bpb, max_len, num_blocks)
        for gs, b in zip(groups_w, bpbs):
            capacity.check_enough(v, (final - 1) * b, gs, b, max_len, hint_w)
        s.update(num_gpu_blocks=final, kv_cache_bytes=final * bpb)
        self._report(final, max_len)

    def _report(self, num_blocks: int, max_len: int) -> None:
        tokens, conc, line = capacity.report(num_blocks, self.s["blocks_per_request"], max_len)
        self.s.update(kv_cache_size_tokens=tokens, max_concurrency=conc)
        self.log.append(line)

    def _fill_groups(self, groups, bpb: int, max_len: int, num_blocks: int) -> None:
        s, cfg = self.s, self.cfg
        bprs = capacity.blocks_per_request(groups, max_len)
        attn = [b for b in self._block_backends() if b in grouping.KERNEL_BLOCK_SIZES]
        s["groups"] = [{"group": i, "type": g.spec.type_name, "block_size": g.spec.block_size,
                        "page_size_bytes": g.spec.page_size_bytes, "num_layers": g.num_layers,
                        "blocks_per_request": n,
                        "num_draft_layers": sum(1 for name in g.layers if name in self.draft_names)}
                       for i, (g, n) in enumerate(zip(groups, bprs))]
        block = min(g.spec.block_size for g in groups)
        s.update(num_kv_cache_groups=len(groups), bytes_per_block=bpb, blocks_per_request=sum(bprs),
                 num_gpu_blocks_capacity=num_blocks, num_gpu_blocks=num_blocks, kv_cache_bytes=num_blocks * bpb,
                 block_size=block,
                 hash_block_size=grouping.hash_block_size(groups, block, cfg.enable_prefix_caching),
                 kernel_block_sizes=[g.spec.block_size if isinstance(g.spec, kv_spec.MambaSpec)
                                     else grouping.kernel_block_size(g.spec.block_size, attn) for g in groups])


def _segment_strides(groups) -> list[int]:
    """One VMM segment per layer region of the layer-outer layout: the widest group's layers, each its page."""
    widest = max(groups, key=lambda g: g.spec.page_size_bytes * g.num_layers)
    return [widest.spec.page_size_bytes] * widest.num_layers
