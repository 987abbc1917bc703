"""CUDA graphs: the piecewise (prefill) graph switch and, from 0.5.14, the decode/prefill graph config.

SGLang: ``_handle_piecewise_cuda_graph`` (srt/server_args.py:1194-1261 @0.5.11); ``_parse_cuda_graph_config``
/ ``_apply_cuda_graph_compatibility`` (srt/server_args.py:3572-3830 @0.5.16) with
``srt/model_executor/cuda_graph_config.py``. The capture lists' sizes feed mem_fraction_static
(:mod:`.memory_hook`); the list the runner captures is :mod:`planner.engines.sglang.pipeline.cuda_graph`.
"""

from __future__ import annotations

from typing import Any

from planner.engines.sglang.pipeline.server_args import (
    MM_BREAKABLE_GRAPH_ARCHS,
    MM_PIECEWISE_GRAPH_ARCHS,
    PCG_DISABLED_ARCHS,
    ArgState,
    Rejected,
    _piecewise_tokens,
)
from planner.engines.sglang.pipeline import disaggregation, dp_attention, expert_parallel, mla
from planner.engines.sglang.rules import RULES, Rules


def piecewise_cuda_graph(s: ArgState) -> None:
    """0.2 _handle_piecewise_cuda_graph (srt/server_args.py:1194-1261 @0.5.11)."""
    a, rules = s.a, s.rules
    pcg_off = bool(a["disable_piecewise_cuda_graph"])
    if rules.piecewise_graph_opt_in:  # opt-in, no auto-disable (srt/server_args.py:604, 703-798 @0.5.9)
        pcg_off = not a.get("enable_piecewise_cuda_graph", False)
    elif a["enforce_piecewise_cuda_graph"]:
        pcg_off = False
    else:
        arch_off = mla.arch_pcg_disabled(s) if s.model.mla is not None else s.arch in PCG_DISABLED_ARCHS
        if arch_off or s.is_mm or a["enable_torch_compile"]:
            pcg_off = True
        if rules.spec_disables_piecewise_graph and s.spec_user is not None:  # srt/server_args.py:1088-1090 @0.5.10
            pcg_off = True
        if a["enable_deterministic_inference"] or a["enable_symm_mem"] or (a["debug_cuda_graph"] and not rules.spec_disables_piecewise_graph):
            pcg_off = True
        if a["moe_a2a_backend"] != "none" or a["load_format"] == "gguf" or a["quantization"] == "gguf":
            pcg_off = True
        if a["enable_eplb"] or a["expert_distribution_recorder_mode"] is not None:
            pcg_off = True
    s.pcg_off = pcg_off or s.dev.hip  # ROCm: no piecewise graph (pipeline/rocm.py)


def graph_backends(s: ArgState) -> None:
    """Which graphs are on: the decode graph unless disabled, the piecewise one unless off; 0.5.14+ the
    CudaGraphConfig decides both and the prefill capture list."""
    s.decode_graph_on = not s.a["disable_cuda_graph"]
    s.prefill_graph_on = not s.pcg_off
    if s.rules.cuda_graph_config:
        s.decode_graph_on, s.prefill_graph_on, s.pcg_tokens = _cuda_graph_config_v0_5_16(
            s.a, s.arch, s.is_mm, s.cps, ctx_flag=s.a["context_length"], rules=s.rules,
            mla_pmax=mla.prefill_capture_max(s, s.cps) if s.model.mla is not None else None,
            arch_off=mla.arch_pcg_disabled(s) if s.model.mla is not None else None)
        if s.model.mla is not None and not mla.prefill_graph_allowed(s) and s.a.get("cuda_graph_backend_prefill") is None:
            s.prefill_graph_on = False  # breakable prefill graph off for MLA (srt/server_args.py:3772-3774 @0.5.16)
        if ((s.a.get("pp_size") or 1) > 1 and (tuple(map(int, s.rules.version.split("."))) >= (0, 5, 19)
                                                or s.rules.prefill_graph_default == "tc_piecewise")
                and s.a.get("cuda_graph_backend_prefill") is None):  # pp: 0.5.14-0.5.23 (planner/engines/sglang/pp.py)
            # breakable prefill graph off by default from 0.5.19 (arg_groups/cuda_graph_hook.py:122 @0.5.19,
            # :146-155 @0.5.23); 0.5.15-0.5.18 keep it; 0.5.14's default tc_piecewise prefill graph is off with pp
            # (_disable_tc_piecewise_cudagraph_if_incompatible, srt/server_args.py:3009 @0.5.14)
            s.prefill_graph_on = False
    if s.dev.hip:  # ROCm: no prefill graph by default (pipeline/rocm.py)
        from planner.engines.sglang.pipeline import rocm  # noqa: PLC0415

        rocm.prefill_graph_off(s)
    if dp_attention.prefill_graph_off(s.raw, s.rules.version):
        s.prefill_graph_on = False  # DP attention's prefill-graph rule (pipeline/dp_attention.py)
    disaggregation.graph_roles(s)  # PD roles: the other role's graph off


def _cuda_graph_config_v0_5_16(a: dict[str, Any], arch: str, is_mm: bool, cps: int,
                               ctx_flag: int | None, rules: Rules = RULES["0.5.16"],
                               mla_pmax: int | None = None, arch_off: bool | None = None) -> tuple[bool, bool, list[int]]:
    """Decode/prefill CUDA-graph backends and the prefill capture list, 0.5.14+.

    _parse_cuda_graph_config / _apply_cuda_graph_compatibility (srt/server_args.py:3572-3830 @0.5.16):
    decode defaults to FULL, prefill to BREAKABLE on CUDA (model_executor/cuda_graph_config.py:100-111);
    a prefill backend the user set is locked; otherwise breakable becomes tc_piecewise for validated
    multimodal archs, and each backend is disabled by its incompatibility rules.
    """
    decode = a.get("cuda_graph_backend_decode") or "full"
    prefill = a.get("cuda_graph_backend_prefill")
    if rules.tc_piecewise_removed:  # parse_cuda_graph_backend_arg (srt/model_executor/cuda_graph_config.py:237-243 @0.5.23)
        for phase, value in (("decode", a.get("cuda_graph_backend_decode")), ("prefill", prefill)):
            if value == "tc_piecewise":
                raise Rejected("SystemExit", f"sglang serve: error: argument --cuda-graph-backend-{phase}: "
                               "tc_piecewise was removed; select breakable, full, or disabled",
                               "srt/model_executor/cuda_graph_config.py:237-243 @0.5.23")
    locked = prefill is not None
    if a["disable_cuda_graph"]:
        decode, prefill, locked = "disabled", "disabled", True
    if a["disable_prefill_cuda_graph"]:
        prefill, locked = "disabled", True
    if a["disable_decode_cuda_graph"]:
        decode = "disabled"
    if prefill is None:
        prefill = rules.prefill_graph_default  # tc_piecewise in 0.5.14 (cuda_graph_config.py:90-92 @0.5.14)
    if not locked:
        if prefill == "breakable" and is_mm and arch in MM_PIECEWISE_GRAPH_ARCHS:
            prefill = "tc_piecewise"
        if prefill == "tc_piecewise":
            if ((arch in PCG_DISABLED_ARCHS if arch_off is None else arch_off) or a["enable_torch_compile"] or (is_mm and arch not in MM_PIECEWISE_GRAPH_ARCHS)
                    or a["load_format"] == "gguf" or a["quantization"] == "gguf" or (a["cpu_offload_gb"] or 0) > 0
                    or a["enable_deterministic_inference"] or a["enable_symm_mem"] or a["enable_eplb"]
                    or a["expert_distribution_recorder_mode"] is not None or a["debug_cuda_graph"]
                    or a["moe_a2a_backend"] != "none"):
                prefill = "disabled"
        elif prefill == "breakable":
            allowed = rules.mm_breakable_allowlist and arch in MM_BREAKABLE_GRAPH_ARCHS
            if rules.nemotron_no_breakable and arch == "NemotronHForCausalLM":  # srt/server_args.py:4452-4522 @0.5.17
                prefill = "disabled"
            elif (is_mm and not allowed) or expert_parallel.a2a_blocks_breakable(a, rules):
                prefill = "disabled"
    # prefill max_bs and capture list (srt/server_args.py:3998-4030, 4265-4280 @0.5.16)
    pmax = a.get("cuda_graph_max_bs_prefill")
    if pmax is None:
        pmax = cps if mla_pmax is None else mla_pmax  # MLA: pipeline/mla.py prefill_capture_max
        if a["max_total_tokens"] is not None:
            pmax = min(pmax, a["max_total_tokens"])
        if "llama-2" in str(a["model_path"]).lower():
            pmax = min(pmax, 4096)
    if ctx_flag is not None and rules.prefill_ctx_clamp:
        pmax = min(pmax, ctx_flag)
    tokens = a.get("cuda_graph_bs_prefill") or _piecewise_tokens(pmax)
    return decode != "disabled", prefill != "disabled", list(tokens)


