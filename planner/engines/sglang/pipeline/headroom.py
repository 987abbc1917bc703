"""What must still fit after the pools, which SGLang 0.5.11 never budgets for exactly.

SGLang sizes the pools from ``P * f`` and leaves everything else to the ``P * (1 - f)`` headroom
(srt/server_args.py:1294-1316 @0.5.11, docstring). We list those later allocations in the order
they happen at startup, each with how it is estimated:

1. draft weights (speculative decoding): the MTP layer(s) at steady state plus, transiently, the
   draft's own embedding and LM head, which are allocated at construction and freed only in
   ``init_lm_head`` after the draft KV pool exists (models/qwen3_5_mtp.py:86-118 @0.5.11);
   for an EAGLE3 head, its parameter count from its config;
2. the FlashInfer workspace: 384 MiB, 512 MiB for the Qwen2/Qwen3/MiMo/Qwen3-VL families
   (layers/attention/flashinfer_backend.py:163-214 @0.5.11);
3. CUDA graphs: FlashInfer's graph buffers, ``max_bs x tokens_per_bs x context_len x 5`` bytes
   (int32 KV indices + uint8 mask, flashinfer_backend.py:527-560 @0.5.11), plus SGLang's own
   heuristic of 2 MiB per batch size up to the captured maximum (server_args.py:1441 @0.5.11);
4. activations of one prefill chunk: a physical estimate, ``chunk x (6 x hidden + 3 x intermediate/tp)
   x 2 B`` (residual, normed input, attention/mixer in and out; gate, up and activated MLP
   intermediates; MoE uses top-k x expert width) plus SGLang's 512 MiB of constant metadata
   (server_args.py:1434 @0.5.11). SGLang's own heuristic, ``max(chunk, 2048) x 1.5 MiB``
   (server_args.py:1436-1439 @0.5.11), is far more conservative; a plan whose headroom covers the
   physical estimate but not the heuristic is reported as tight, not as an out-of-memory risk.
"""

from __future__ import annotations

from typing import Protocol

from planner.catalog.spec import DTYPE_BYTES, ModelSpec
from planner.catalog.weights import estimate_params, mtp_weight_bytes
from planner.engines.interface import NeedLine
from planner.engines.sglang.pipeline.memory_profile import Profile, model_dtype
from planner.engines.sglang.pipeline.server_args import ResolvedArgs

MIB = 1 << 20
_QWEN_512_ARCHS = ("Qwen2", "Qwen3ForCausalLM", "Qwen3Moe", "MiMo", "Qwen3VL")


class _Captured(Protocol):
    capture_bs: list[int] | None  # the CUDA-graph batch sizes the post-pool checks found


def estimate_needs(plan: _Captured, args: ResolvedArgs, model: ModelSpec, prof: Profile,
                   draft: ModelSpec | None) -> list[NeedLine]:
    tp = args.tp_size
    wbytes = DTYPE_BYTES[model_dtype(model)]
    needs: list[NeedLine] = []
    if args.spec_on:
        if draft is not None:
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
    if args.attention_backend == "flashinfer":
        ws = 512 if model.architecture.startswith(_QWEN_512_ARCHS) else 384
        needs.append(NeedLine("FlashInfer workspace", ws * MIB, f"{ws} MiB global workspace"))
    if not args.disable_cuda_graph and plan.capture_bs:
        max_bs = max(plan.capture_bs)
        per_bs = args.speculative_num_draft_tokens if args.spec_on else 1
        graph = max_bs * 2 * MIB
        how = f"2 MiB x max captured bs {max_bs} (SGLang's heuristic)"
        if args.attention_backend == "flashinfer":
            fi = max_bs * per_bs * args.context_len * 5
            graph += fi
            how += f" + FlashInfer buffers {max_bs} x {per_bs} x ctx {args.context_len} x 5 B"
        needs.append(NeedLine("CUDA graphs", graph, how))
    needs.append(activation_need(args, model))
    return needs


def activation_need(args: ResolvedArgs, model: ModelSpec) -> NeedLine:
    chunk = args.chunked_prefill_size if args.chunked_prefill_size > 0 else args.max_prefill_tokens
    if model.num_experts:
        topk = int(model.text.get("num_experts_per_tok") or 8)
        inter = topk * (model.moe_intermediate_size or 0) + (model.shared_expert_intermediate_size or 0)
    else:
        inter = model.intermediate_size or 4 * model.hidden_size
    per_token = (6 * model.hidden_size + 3 * inter // args.tp_size) * 2
    act = chunk * per_token + 512 * MIB
    heuristic = int((512 + max(chunk, 2048) * 1.5) * MIB)
    return NeedLine("activations (prefill chunk)", act,
                    f"512 MiB + chunk {chunk} x (6 x hidden {model.hidden_size} + 3 x intermediate {inter}/tp) x 2 B;"
                    f" SGLang's own heuristic would be {heuristic / (1 << 30):.1f} GiB")
