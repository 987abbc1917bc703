"""What must still fit after the pools, which SGLang 0.5.11 never budgets for exactly.

SGLang sizes the pools from ``P * f`` and leaves everything else to the ``P * (1 - f)`` headroom
(srt/server_args.py:1294-1316 @0.5.11, docstring). We list those later allocations in the order
they happen at startup, each with how it is estimated:

1. draft weights (speculative decoding), only where the release loads the draft *after* the target's
   pools are sized (<= 0.5.13): the MTP layer(s) at steady state plus, transiently, the draft's own
   embedding and LM head, which are allocated at construction and freed only in ``init_lm_head``
   after the draft KV pool exists (models/qwen3_5_mtp.py:86-118 @0.5.11); for an EAGLE3 head, its
   parameter count from its config. From 0.5.14 the draft worker is built before the pools
   (managers/scheduler.py:846-853 @0.5.16) and its whole load is inside the free memory SGLang
   measures when it sizes them (mem_cache/kv_cache_configurator.py:1527-1548 @0.5.16): see
   :func:`draft_load_before_sizing`; nothing of it is listed again here;
2. the attention workspace: FlashInfer's 384 MiB, 512 MiB for five named architectures
   (layers/attention/flashinfer_backend.py:163-173 @0.5.11), plus the backend initialisation the logs show
   before graph capture (fitted, :mod:`planner.engines.sglang.calibration`);
3. CUDA graphs: a fitted cost per captured graph per layer (target graphs, plus the draft's decode and
   draft-extend graphs under speculative decoding), the shared float32 logits buffer, and FlashInfer's graph
   buffers ``max_bs x tokens_per_bs x context_len x 5`` bytes (int32 KV indices + uint8 mask,
   flashinfer_backend.py:527-560 @0.5.11), plus a constant per GPU class. SGLang's own 2 MiB-per-batch-size
   heuristic (server_args.py:1441 @0.5.11) was 25-40x below what public logs show; and the prefill CUDA graph
   SGLang captures by default (:func:`prefill_graph_need`: piecewise 0.5.10-0.5.14, breakable from 0.5.15,
   before the decode graphs from 0.5.14 and after them before), which its own heuristic counts as 8 MiB per
   captured size (server_args.py:1434-1482 @0.5.11) against the GiB the logs show;
4. activations of one prefill chunk: a physical estimate, ``chunk x (6 x hidden + 3 x intermediate/tp)
   x 2 B`` (residual, normed input, attention/mixer in and out; gate, up and activated MLP
   intermediates; MoE uses top-k x expert width). SGLang's heuristic also reserves 512 MiB of "constant
   meta data (e.g., from attention backend)" (server_args.py:1435-1436 @0.5.11; "+ activation slack" in
   arg_groups/memory_hook.py:308-309 @0.5.23, the same constant): that memory is the
   attention-workspace line above (the calibration logs measure it before graph capture, e.g. 0.64 GB on
   the tp-4 L4 QwQ-32B log against 0.62 GiB estimated), so it is not added again here. SGLang's own
   activation heuristic, ``max(chunk, 2048) x 1.5 MiB`` (server_args.py:1437-1441 @0.5.11), is far more
   conservative and is printed beside the estimate.
"""

from __future__ import annotations

from typing import Protocol

from planner.catalog.spec import DTYPE_BYTES, ModelSpec
from planner.catalog.weights import estimate_params, mtp_weight_bytes
from planner.engines.interface import NeedLine
from planner.engines.sglang.calibration import (
    activation_per_token,
    gpu_class,
    graph_estimate,
    prefill_graph_estimate,
    workspace_estimate,
)
from planner.catalog.draft_heads import DSPARK_ARCHITECTURES
from planner.engines.sglang.pipeline.dflash import draft_weight_bytes
from planner.engines.sglang.pipeline.memory_profile import Profile, model_dtype
from planner.engines.sglang.pipeline.server_args import MM_PIECEWISE_GRAPH_ARCHS, ResolvedArgs

MIB = 1 << 20


class _Captured(Protocol):
    capture_bs: list[int] | None  # the CUDA-graph batch sizes the post-pool checks found


def estimate_needs(plan: _Captured, args: ResolvedArgs, model: ModelSpec, prof: Profile,
                   draft: ModelSpec | None, draft_checkpoint: tuple[int, str] | None = None) -> list[NeedLine]:
    tp = args.tp_size
    wbytes = DTYPE_BYTES[model_dtype(model)]
    needs: list[NeedLine] = []
    if args.spec_on and not args.rules.draft_weights_before_sizing and args.speculative_algorithm != "NGRAM":
        if draft is not None and draft.architecture == "DFlashDraftModel":  # DFLASH: layers + fc (pipeline/dflash.py)
            needs.append(NeedLine("draft model weights", *draft_weight_bytes(draft, tp)))
        elif draft is not None and args.speculative_algorithm == "STANDALONE":  # --- STANDALONE ---
            from planner.engines.sglang.pipeline.standalone import weight_load  # noqa: PLC0415

            needs.append(NeedLine("draft model weights", *weight_load(draft, tp, args.rules, draft_checkpoint)))
        elif draft is not None:
            n = estimate_params(draft) * DTYPE_BYTES.get(draft.dtype, 2) // tp
            needs.append(NeedLine("draft model weights", n,
                                  f"EAGLE head {draft.name}: ~{estimate_params(draft)/1e6:.0f}M params / tp {tp}"))
        elif model.mtp_layers:
            steady = mtp_weight_bytes(model) // tp
            transient = 2 * model.vocab_size * model.hidden_size * wbytes // tp
            needs.append(NeedLine("draft MTP weights", steady,
                                  f"{model.mtp_layers} MTP layer(s) ({steady / MIB:,.0f} MiB per GPU)"))
            needs.append(NeedLine("draft embed + lm_head (transient)", transient,
                                  f"2 x vocab {model.vocab_size:,} x hidden {model.hidden_size} x {wbytes} B / tp {tp}, "
                                  "freed after init_lm_head"))
        else:
            needs.append(NeedLine("draft model weights", 0, "unknown draft model: not estimated"))
    ws, ws_how = workspace_estimate(args.attention_backend or "", model.architecture)
    needs.append(NeedLine("attention workspace", ws, ws_how))
    if args.hip:  # ROCm: aiter's own workspace, sized by the request pool (pipeline/rocm.py)
        from planner.engines.sglang.pipeline import rocm  # noqa: PLC0415

        r = prof.pool_requests if prof.pool_requests is not None else (prof.max_running_requests or 0)
        if rocm.workspace_bytes(args, model, r):
            needs.append(NeedLine(rocm.WORKSPACE_LABEL, int(rocm.workspace_bytes(args, model, r)),
                                  rocm.workspace_how(args, model, r)))
    prefill = prefill_graph_need(args, model)
    if prefill is not None and args.rules.cuda_graph_config:  # 0.5.14+: prefill captured before decode
        needs.append(prefill)
    if not args.disable_cuda_graph and plan.capture_bs:
        needs.append(cuda_graph_need(plan.capture_bs, args, model, draft))
    draft_prefill = draft_prefill_graph_need(args, model, draft)
    if draft_prefill is not None:  # 0.5.14+: the draft worker captures after the target's graphs
        needs.append(draft_prefill)
    if prefill is not None and not args.rules.cuda_graph_config:  # 0.5.10-0.5.13: decode first, then piecewise
        needs.append(prefill)
    needs.append(activation_need(args, model, prof.max_running_requests))
    if args.raw.get("moe_a2a_backend") == "deepep":  # its buffers come at the first MoE dispatch (expert_parallel.py)
        from planner.engines.sglang.pipeline.expert_parallel import buffer_needs  # noqa: PLC0415

        at = next((i for i, n in enumerate(needs) if n.label.startswith(("prefill CUDA graph", "CUDA graphs",
                                                                          "activations"))), len(needs))
        needs[at:at] = buffer_needs(args.raw, model, args.tp_size, args.env)
    return needs


def prefill_captured(args: ResolvedArgs, model: ModelSpec) -> bool:
    """Whether SGLang captures a prefill CUDA graph after the pools.

    The resolved switch (piecewise from 0.5.10, opt-in in 0.5.9; 0.5.14+ the CudaGraphConfig's prefill backend,
    breakable by default from 0.5.15, pipeline/arg_groups/cuda_graph_hook.py), then the runtime check: before
    0.5.14 ``init_piecewise_cuda_graphs`` disables it when some layers are not standard GQA attention, which every
    hybrid (mamba / linear-attention) model has (model_runner.py:2801-2921 @0.5.11); 0.5.14+ a hybrid model's
    breakable graph is captured where the model supports it (model_runner_components/cuda_graph_setup.py:656-678
    @0.5.23), so it is counted (the conservative side; the public 0.5.2x logs of hybrid 27B models on RTX 5090s
    show the breakable capture)."""
    if not args.prefill_graph_on or not args.piecewise_cuda_graph_tokens:
        return False
    if model.is_mambaish and not args.rules.cuda_graph_config:
        return False
    return True


def prefill_backend(args: ResolvedArgs, model: ModelSpec) -> str:
    """breakable or piecewise (torch.compile's, 'tc_piecewise' from 0.5.14): the backend the user set, else the
    release's default (breakable on CUDA from 0.5.15, model_executor/cuda_graph_config.py:100-111 @0.5.16) unless a
    validated multimodal arch switches breakable to tc_piecewise (srt/server_args.py:3572-3830 @0.5.16)."""
    if not args.rules.cuda_graph_config:
        return "piecewise"
    chosen = args.raw.get("cuda_graph_backend_prefill") or args.rules.prefill_graph_default
    if chosen == "breakable" and args.is_multimodal and model.architecture in MM_PIECEWISE_GRAPH_ARCHS \
            and not args.raw.get("cuda_graph_backend_prefill"):
        chosen = "tc_piecewise"
    return "breakable" if chosen == "breakable" else "piecewise"


def prefill_graph_need(args: ResolvedArgs, model: ModelSpec) -> NeedLine | None:
    """The prefill CUDA graph SGLang captures by default (piecewise 0.5.10-0.5.14, breakable from 0.5.15): one graph
    per captured token count, all in one pool that holds the largest count's intermediates
    (:func:`planner.engines.sglang.calibration.prefill_graph_estimate`)."""
    if not prefill_captured(args, model):
        return None
    n, how = prefill_graph_estimate(tokens=list(args.piecewise_cuda_graph_tokens), layers=model.num_hidden_layers,
                                    per_token_bytes=activation_per_token(model.hidden_size, _act_intermediate(model),
                                                                         args.tp_size),
                                    backend=prefill_backend(args, model), gpu_cls=_gpu_cls(args))
    return NeedLine("prefill CUDA graph", n, how)


def _act_intermediate(model: ModelSpec) -> int:
    """The MLP width one token's activations span: dense intermediate, or MoE top-k x expert width + shared expert."""
    if model.num_experts:
        topk = int(model.text.get("num_experts_per_tok") or 8)
        return topk * (model.moe_intermediate_size or 0) + (model.shared_expert_intermediate_size or 0)
    return model.intermediate_size or 4 * model.hidden_size


def draft_embed_head_bytes(model: ModelSpec, tp: int) -> int:
    """The MTP draft's own ``embed_tokens`` + ``lm_head`` (one tensor when tied), vocab-parallel: the
    vocabulary padded to 64 (layers/vocab_parallel_embedding.py DEFAULT_VOCAB_PADDING_SIZE) and split
    over TP (models/qwen3_5_mtp.py:86-118 @0.5.16)."""
    wbytes = DTYPE_BYTES[model_dtype(model)]
    vocab = -(-model.vocab_size // 64) * 64
    tensors = 1 if model.tie_word_embeddings else 2
    return tensors * (vocab // tp) * model.hidden_size * wbytes


def draft_load_before_sizing(model: ModelSpec, draft: ModelSpec | None, tp: int,
                              env: dict[str, str] | None = None) -> tuple[int, str]:
    """Bytes per GPU the draft worker holds when SGLang 0.5.14+ sizes the target's pools, with how.

    0.5.14+ builds the draft worker (its ModelRunner loads every weight of the draft) before
    ``init_memory_pools`` (managers/scheduler.py:846-853 @0.5.16), and ``_profile_available_bytes``
    reads the free memory then (mem_cache/kv_cache_configurator.py:1527-1548 @0.5.16). So the draft's
    whole load is already held: for an MTP draft the MTP layer(s) **and** the draft's own embedding and
    LM head, which ``init_lm_head`` replaces by the target's only after the draft pool exists
    (speculative/eagle_worker_v2.py:181-196, 307-345 @0.5.16); for a separate EAGLE/EAGLE3 head, its
    parameters (estimated from its config). A real 0.5.16 log shows the MTP draft's whole load,
    0.79 GiB layer + 4.74 GiB embedding/LM head = 5.53 GiB, held when the pools are sized.
    """
    if draft is not None and (draft.architecture == "DFlashDraftModel" or draft.architecture in DSPARK_ARCHITECTURES):
        return draft_weight_bytes(draft, tp, env)  # DFLASH / DSPARK heads: pipeline/dflash.py head_weights
    if draft is not None:
        n = estimate_params(draft) * DTYPE_BYTES.get(draft.dtype, 2) // tp
        return n, f"draft head {draft.name}: ~{estimate_params(draft) / 1e6:.0f}M params x {DTYPE_BYTES.get(draft.dtype, 2)} B / tp {tp}"
    if not model.mtp_layers:
        return 0, ""
    layer = mtp_weight_bytes(model) // tp
    eh = draft_embed_head_bytes(model, tp)
    return layer + eh, (f"{model.mtp_layers} MTP layer(s) {layer / (1 << 30):.2f} GiB + the draft's own embedding/LM head "
                        f"{eh / (1 << 30):.2f} GiB (vocab {model.vocab_size:,} x hidden {model.hidden_size}, / tp {tp}), "
                        "all loaded before the pools are sized")


def _graph_args(args: ResolvedArgs, model: ModelSpec, draft: ModelSpec | None) -> dict:
    draft_layers = 0
    ngram = args.speculative_algorithm == "NGRAM"  # NGRAM: no draft model, so no draft graphs
    if args.spec_on and not ngram:
        draft_layers = draft.num_hidden_layers if draft is not None else (model.mtp_layers or 0)
        if draft is not None and args.speculative_algorithm == "STANDALONE":  # --- STANDALONE ---
            from planner.engines.sglang.pipeline.standalone import loaded_as_mtp  # noqa: PLC0415

            if loaded_as_mtp(draft, args.rules):  # SGLang runs the draft's MTP head, not the whole model
                draft_layers = draft.mtp_layers or 1
    return dict(layers=model.num_hidden_layers, vocab=model.vocab_size, tp=args.tp_size,
                tokens_per_bs=(args.speculative_num_draft_tokens or 1) if args.spec_on else 1,
                context_len=args.context_len, backend=args.attention_backend or "", draft_layers=draft_layers,
                draft_steps=(args.speculative_num_steps or 1) if args.spec_on and not ngram else 0,
                gpu_cls=_gpu_cls(args), draft_fi_per_bs=draft_graph_buffers(args)[0],
                draft_const=_draft_capture_const(args, draft_layers))


def _gpu_cls(args: ResolvedArgs) -> str:
    """The post-pool estimates' GPU class: AMD Instinct on a ROCm device (its stated bound, calibration.json
    bound_classes), else the compute capability's."""
    return "amd" if args.hip else gpu_class(args.gpu_sm)


def cuda_graph_need_array(args: ResolvedArgs, model: ModelSpec, draft: ModelSpec | None, running) -> "np.ndarray":
    """:func:`cuda_graph_need` for the search's grid of resolved max_running_requests (same bytes, numpy)."""
    from planner.engines.sglang.calibration import graph_bytes_array  # noqa: PLC0415

    out = graph_bytes_array(cuda_graph_bs=list(args.cuda_graph_bs), running=running, **_graph_args(args, model, draft))
    if args.hip:  # ROCm: the backend's graph state for the largest captured batch (pipeline/rocm.py)
        import numpy as np  # noqa: PLC0415

        from planner.engines.sglang.pipeline import rocm  # noqa: PLC0415

        top = np.minimum(max(args.cuda_graph_bs), np.maximum(np.asarray(running, dtype=np.int64), 0))
        out = out + np.where(out > 0, rocm.graph_buffer_bytes(args, model, top), 0)
    return out


def cuda_graph_need(capture_bs: list[int], args: ResolvedArgs, model: ModelSpec, draft: ModelSpec | None) -> NeedLine:
    """CUDA graphs captured after the pools: the target's decode (verify under speculative decoding) graphs and the
    draft's decode and draft-extend graphs, one per captured batch size, with the fitted per-graph-layer cost
    (:mod:`planner.engines.sglang.calibration`)."""
    n, how = graph_estimate(capture_bs=capture_bs, **_graph_args(args, model, draft))
    dfi_how = draft_graph_buffers(args)[1]
    how += f"; the draft's FlashInfer buffers: {dfi_how}" if dfi_how else ""
    if args.hip:  # ROCm: the backend's graph state for the largest captured batch (pipeline/rocm.py)
        from planner.engines.sglang.pipeline import rocm  # noqa: PLC0415

        n += int(rocm.graph_buffer_bytes(args, model, max(capture_bs)))
        how += rocm.graph_buffer_how(args)
    return NeedLine("CUDA graphs", n, how)


def activation_need(args: ResolvedArgs, model: ModelSpec, running: int | None = None) -> NeedLine:
    """One prefill chunk's activations; a PD decode role's decode batch (``running``: the profile's R)."""
    chunk = args.chunked_prefill_size if args.chunked_prefill_size > 0 else args.max_prefill_tokens
    inter = _act_intermediate(model)
    per_token = activation_per_token(model.hidden_size, inter, args.tp_size)
    # no constant term: SGLang's heuristic reserves 512 MiB of "constant meta data (e.g., from attention backend)"
    # beside its activation term (server_args.py:1435-1441 @0.5.11), and that is the attention-workspace line here
    # (FlashInfer's buffer + the backend init the logs measure before graph capture), not an activation
    running = running or args.max_running_requests
    if args.disaggregation_mode == "decode" and running:
        # a PD decode role runs no prefill forward (the prompt's KV arrives by transfer): its largest forward is the
        # decode batch, R x draft tokens, the count SGLang's own decode reserve uses (srt/server_args.py:4062-4069
        # @0.5.16, arg_groups/memory_hook.py:298-303 @0.5.23)
        tokens = running * (args.speculative_num_draft_tokens or 1)
        return NeedLine("activations (decode batch)", tokens * per_token,
                        f"R {running} x {args.speculative_num_draft_tokens or 1} token(s) x (6 x "
                        f"hidden {model.hidden_size} + 3 x intermediate {inter}/tp) x 2 B (PD decode role)")
    act = chunk * per_token
    heuristic = int(max(chunk, 2048) * 1.5 * MIB)
    return NeedLine("activations (prefill chunk)", act,
                    f"chunk {chunk} x (6 x hidden {model.hidden_size} + 3 x intermediate {inter}/tp) x 2 B;"
                    f" SGLang's own activation heuristic, max(chunk, 2048) x 1.5 MiB, would be"
                    f" {heuristic / (1 << 30):.1f} GiB")


# --- the draft's CUDA graphs under speculative decoding (issue 23) ------------------------------------------------
#
# Per release, for the EAGLE-family algorithms (EAGLE, EAGLE3 / NEXTN heads, MTP layers, STANDALONE: one EAGLE worker;
# NGRAM has no draft model, DFLASH / DSPARK run their own workers, pipeline/dflash.py):
#
# * the draft decode graphs, one per captured batch size (the target's list), each running the draft's
#   speculative_num_steps - 1 forwards of bs x topk tokens, captured when speculative_num_steps > 1
#   (speculative/eagle_worker_v2.py:272-289 @0.5.11, :390 @0.5.14, :507 @0.5.23; eagle_worker.py:277-290 @0.5.11);
# * the draft-extend graphs, one per captured batch size, bs x speculative_num_draft_tokens tokens: with the V1 worker
#   (0.5.9-0.5.12 with the overlap scheduler off) for every draft-extend backend (eagle_worker.py:292-300 @0.5.11);
#   with the V2 worker (0.5.9-0.5.12 with overlap, always from 0.5.13, spec_info.py:192-204 @0.5.13) only for the
#   backends it lists: FlashInfer from 0.5.14 (eagle_worker_v2.py:303-306 @0.5.11, :369-378 @0.5.13, :427-436 @0.5.14,
#   :432-438 @0.5.16); these two cost the fitted per-graph-layer slope (calibration.graph_layers, counted in every
#   release: the careful side where the extend graph is not captured);
# * the draft's FlashInfer index buffers, physical, allocated by the graph runners' init_cuda_graph_state: the
#   multi-step draft backend's speculative_num_steps x max_bs x [topk from 0.5.13] x context int32
#   (layers/attention/flashinfer_backend.py:1617-1622 @0.5.11, :2341-2352 @0.5.16, speculative/spec_utils.py:77-90
#   @0.5.13), and the draft-extend backend's kv indices + custom mask, max_bs x draft tokens x context x (4 + 1) B
#   (flashinfer_backend.py:527-559 @0.5.11; eagle_draft_extend_cuda_graph_runner.py:109-113 @0.5.11, :155-159 @0.5.23);
# * the draft's prefill graph, from 0.5.14 where the prefill graph is breakable: EAGLEWorkerV2 captures it on the
#   draft's model runner after init_lm_head (eagle_worker_v2.py:261-262 @0.5.14, :230-231 @0.5.16, :294-295 @0.5.23;
#   model_executor/model_runner_components/cuda_graph_setup.py:472-700 @0.5.23, role "draft"), at the target's
#   captured token sizes, into the one process-wide graph pool (model_executor/runner_utils/pool.py:109-115 @0.5.23).
#   0.5.13 captures it only under --enable-breakable-cuda-graph, which the planner does not model. Estimated the way
#   the target's is (calibration.prefill_graph_estimate, the draft's layers and activations); from 0.5.19 the captures
#   share one capture stream as well as the pool, so the draft's activations reuse the target's freed blocks and only
#   their excess over the target's counts. No public log with the draft prefill line and a known GPU, model and flags
#   was found to check it.

_EAGLE_FAMILY = ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE")


def _eagle_worker(args: ResolvedArgs) -> bool:
    return args.spec_on and args.speculative_algorithm in _EAGLE_FAMILY


def _version(args: ResolvedArgs) -> tuple[int, ...]:
    from planner.engines.sglang.rules import version_key  # noqa: PLC0415

    return version_key(args.rules.version)


def draft_extend_captured(args: ResolvedArgs) -> bool:
    """Whether the EAGLE worker captures the draft-extend graph: the V1 worker (0.5.9-0.5.12, overlap off) for every
    backend; the V2 worker for the backends it lists (eagle_worker_v2.py:303-306 @0.5.11, :369-378 @0.5.13, :427-436
    @0.5.14, :432-455 @0.5.16, FlashAttention added @0.5.23): not FlashInfer before 0.5.14, not FA3/FA4 before 0.5.23,
    not TRT-LLM MHA before 0.5.13; any backend the planner cannot place counts as captured (the careful side)."""
    if not _eagle_worker(args):
        return False
    ver, backend = _version(args), args.attention_backend or ""
    if ver <= (0, 5, 12) and args.disable_overlap_schedule:
        return True
    unlisted = {"torch_native", "flex_attention"}
    if ver < (0, 5, 13):
        unlisted.add("trtllm_mha")
    if ver < (0, 5, 14):
        unlisted.add("flashinfer")
    if ver < (0, 5, 23):
        unlisted |= {"fa3", "fa4"}
    return backend not in unlisted


def _draft_capture_const(args: ResolvedArgs, draft_layers: int) -> int:
    """The pooled constants of the draft's captures this launch makes (calibration.draft_capture_offset): the draft
    decode graphs when speculative_num_steps > 1 (every draft with graphs: DFLASH / DSPARK capture theirs too), the
    draft-extend graphs where :func:`draft_extend_captured`."""
    from planner.engines.sglang.calibration import draft_capture_offset  # noqa: PLC0415

    if not draft_layers:
        return 0
    n = draft_capture_offset("decode") if (args.speculative_num_steps or 1) > 1 or not _eagle_worker(args) else 0
    return n + (draft_capture_offset("extend") if draft_extend_captured(args) else 0)


def draft_graph_buffers(args: ResolvedArgs) -> tuple[int, str]:
    """The draft's FlashInfer buffers its decode and draft-extend graphs allocate, in bytes per unit of the largest
    captured batch size, with how (see the block above); 0 off FlashInfer or without an EAGLE-family draft."""
    if not _eagle_worker(args) or (args.attention_backend or "") != "flashinfer":
        return 0, ""
    ver = _version(args)
    steps, topk = args.speculative_num_steps or 1, args.speculative_eagle_topk or 1
    ctx, per, parts = args.context_len, 0, []
    if steps > 1:
        width = topk if ver >= (0, 5, 13) else 1
        per += steps * width * ctx * 4
        parts.append(f"decode indices {steps} steps x max_bs" + (f" x topk {topk}" if width > 1 else "")
                     + f" x ctx {ctx} x 4 B")
    if draft_extend_captured(args):
        tokens = args.speculative_num_draft_tokens or 1
        per += tokens * ctx * 5
        parts.append(f"draft-extend indices + mask max_bs x {tokens} x ctx {ctx} x 5 B")
    return per, " + ".join(parts)


def _draft_geometry(args: ResolvedArgs, model: ModelSpec, draft: ModelSpec | None) -> tuple[int, int, int, str]:
    """(layers, hidden, activation width, what) of the draft model the EAGLE worker runs."""
    if draft is not None:
        layers = draft.num_hidden_layers
        if args.speculative_algorithm == "STANDALONE":  # --- STANDALONE ---
            from planner.engines.sglang.pipeline.standalone import loaded_as_mtp  # noqa: PLC0415

            if loaded_as_mtp(draft, args.rules):
                layers = draft.mtp_layers or 1
        return layers, draft.hidden_size, _act_intermediate(draft), f"draft {draft.name}"
    return model.mtp_layers or 0, model.hidden_size, _act_intermediate(model), f"{model.mtp_layers} MTP layer(s)"


def draft_prefill_graph_need(args: ResolvedArgs, model: ModelSpec, draft: ModelSpec | None) -> NeedLine | None:
    """The draft's breakable prefill CUDA graph (0.5.14+, EAGLE-family drafts; see the block above)."""
    if not _eagle_worker(args) or not args.rules.cuda_graph_config:
        return None
    if not prefill_captured(args, model) or prefill_backend(args, model) != "breakable":
        return None
    layers, hidden, inter, what = _draft_geometry(args, model, draft)
    if not layers:
        return None
    tokens = list(args.piecewise_cuda_graph_tokens)
    per_token = activation_per_token(hidden, inter, args.tp_size)
    shared = _version(args) >= (0, 5, 19)
    if shared:  # one pool and one capture stream: the draft reuses the blocks the target's prefill capture freed
        per_token = max(0, per_token - activation_per_token(model.hidden_size, _act_intermediate(model), args.tp_size))
    n, how = prefill_graph_estimate(tokens=tokens, layers=layers, per_token_bytes=per_token, backend="breakable",
                                    gpu_cls=gpu_class(args.gpu_sm))
    why = ("from 0.5.19 every capture shares one graph pool and one capture stream (model_executor/runner_utils/"
           "pool.py:42, 87-93 @0.5.19; runner/prefill_cuda_graph_runner.py:1411 @0.5.19), so its activations reuse the "
           "blocks the target's prefill capture freed and only what exceeds them counts" if shared else
           "0.5.14-0.5.18 capture on a stream per session, so it cannot reuse the target's freed blocks")
    return NeedLine("draft prefill CUDA graph", n,
                    f"{what} (hidden {hidden}), captured by the EAGLE worker after the target's graphs at the same "
                    f"token sizes: {how}; {why}")
