"""CUDA-graph batch sizes SGLang 0.5.11 captures, clipped to the resolved max_running_requests.

``get_batch_sizes_to_capture`` (srt/model_executor/cuda_graph_runner.py:496-530 @0.5.11), for
one attention-TP group without two-batch overlap or context parallelism (``mul_base`` = 1): when
the list's maximum exceeds R, R is appended, then everything above R is dropped.
"""

from __future__ import annotations


def batch_sizes_to_capture(cuda_graph_bs: list[int], max_running_requests: int, mul_base: int = 1) -> list[int]:
    """``mul_base``: DP attention's attn_tp_size (require_gathered_buffer): R is padded up to a multiple of it and
    only multiples of it are captured (model_executor/runner/base_cuda_graph_runner.py:71-95 @0.5.16)."""
    capture = list(cuda_graph_bs)
    max_running_requests = -(-max_running_requests // mul_base) * mul_base
    if max(capture) > max_running_requests:
        capture += [max_running_requests]
    capture = [bs for bs in capture if bs % mul_base == 0 and bs <= max_running_requests]
    return sorted(set(capture))


def capture_mul(args) -> int:
    """get_batch_sizes_to_capture's ``mul_base`` for a resolved launch: attn_tp = tp // attn_dp_size under DP
    attention (model_executor/runner/base_cuda_graph_runner.py:71-95 @0.5.16), expert_parallel.capture_mul_base
    under DeepEP (the MoE input is scattered: attn-TP gather); 1 otherwise. The pipeline's post-pool checks and the
    search's per-point graphs both take it here."""
    mul = args.tp_size // args.attn_dp_size if args.attn_dp_size > 1 else 1
    if args.raw.get("moe_a2a_backend") == "deepep":
        from planner.engines.sglang.pipeline.expert_parallel import capture_mul_base  # noqa: PLC0415

        mul = capture_mul_base(args)
    return mul
