"""One plan: model + GPU + SGLang flags -> every pool, the capacity, and a verdict.

This is the pure core (no I/O): :func:`make_plan` takes resolved inputs and returns a
:class:`Plan`. The free-memory inputs default to a stated model of the GPU (driver reserve, CUDA
context, NCCL) and the weights; ``free_before_gib`` / ``free_after_gib`` override them with
measured values (e.g. ``Load weight begin/end`` of a boot log).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from planner.catalog.catalog import NOT_MODELLED, ResolvedModel
from planner.catalog.spec import ModelSpec
from planner.catalog.weights import (dp_attention_draft_bytes, dp_attention_gqa_bytes, dp_attention_mla_bytes,
                                     dp_lm_head_bytes, mtp_weight_bytes, replicated_kv_bytes, replicated_mla_bytes)
from planner.engines.interface import OUTCOME_FAILED, OUTCOME_OK, OUTCOME_REJECTED, EngineInput, EngineResult, NeedLine
from planner.engines.sglang import pipeline as engine
from planner.engines.sglang.cli_flags import SGLangArgError
from planner.engines.sglang.post_releases import post_base, resolve_post
from planner.engines.sglang.rules import RULES, Rules, default_version, rules_for
from planner.engines.sglang.support import flag_quantization, unmodelled
from planner.errors import BadInput
from planner.hardware.profiles import INTERCONNECTS, GpuProfile

GIB = 1 << 30
MIB = 1 << 20

# Stated assumptions for the default free-memory model (hardware-nvml-ecosystem.md §2.4).
CUDA_CONTEXT_MIB = 450  # "around 400MB" (pytorch/pytorch#109888); 287-426 MiB measured
DEFAULT_DRIVER_RESERVED_MIB = 500  # typical of the 300-760 MiB NVML 'Reserved' readings
# NCCL / custom all-reduce buffers at tp > 1, per interconnect: what SGLang logs as 'Init torch distributed ends.
# mem usage=' (free memory after set_device minus after the NCCL / gloo groups and the custom all-reduce,
# model_executor/model_runner.py:1125-1237 @0.5.11), the LARGEST logged value of each class (the evidence is thin:
# tests/data/calibration/, notebooks/calibration.ipynb). At tp 1 the ~0.1 GiB SGLang logs is inside CUDA_CONTEXT_MIB:
# docs-send-request (A100, tp 1) logs P = 78.81 GB where 81157 MiB visible - 450 MiB gives 78.82 GiB.
NCCL_MIB_PCIE = 195  # 0.19 GB: corpus-53944457073 (tp 2, RTX 4090); corpus-47376055009 (tp 4, L4) 0.13 GB
NCCL_MIB_PCIE_OVER_4 = 512  # PCIe at tp > 4: no log; the former constant, 2.6x the largest PCIe log (stated choice)
NCCL_MIB_NVLINK = 2059  # 2.01 GB: sglang-11716 (tp 8, 8 x H200 over NVLink, 1.77-2.01 GB on its ranks)
# AMD Instinct (ROCm; tests/data/calibration/amd/README.md): the HIP context and RCCL + aiter's custom all-reduce, from
# public MI355X logs: tp 1 free before the weights 287.26 GB of 287.98 GiB (0.72 GiB in use: 737 MiB), tp 8 'Init
# torch distributed ends. mem usage=' 3.41-3.83 GB (family-corpus-1266093507), so the largest, 3.83 GB, at any tp > 1
AMD_CONTEXT_MIB = 737
RCCL_MIB_AMD = 3922
# Across nodes (--nnodes > 1, one TP group over every node's GPUs): SGLang turns custom all-reduce off for a group
# that spans nodes (device_communicators/custom_all_reduce.py:94 @0.5.9; custom_all_reduce_utils.py:420 @0.5.10,
# :433 @0.5.13-0.5.16, :460 @0.5.18-0.5.23; the JIT v2 keeps it only for one multi-node NVLink clique with a VMM
# allocator, custom_all_reduce_v2.py:482 @0.5.17, :589 @0.5.23) and NCCL reaches the other nodes over IB / RoCE
# (its network proxies and per-peer channel buffers). The public multi-node logs (tests/data/calibration/, README
# "Multi-node logs") log 0.22-0.58 GB at 'Init torch distributed ends', all on 0.4.x releases and all below the
# one-node NVLink figure; none on a 0.5.x release or a PCIe cluster. So every NVIDIA multi-node plan takes at least
# the largest NVIDIA figure logged anywhere (NCCL_MIB_NVLINK: 3.5x the largest multi-node log): a stated choice.
NCCL_MIB_MULTINODE = NCCL_MIB_NVLINK
MULTINODE_LOG_MAX_GB = 0.58  # sglang-5347: DeepSeek-V3 on 2 x 8 H200 (NCCL 2.25.1), the largest multi-node log


def context_mib(vendor: str = "nvidia") -> tuple[int, str]:
    """MiB the server's own device context takes before the weights, with its source."""
    if vendor == "amd":
        return AMD_CONTEXT_MIB, ("HIP context: a public MI355X tp-1 log's free memory before the weights, 0.72 GiB "
                                 "under the total (tests/data/calibration/amd/README.md)")
    return CUDA_CONTEXT_MIB, "torch's first CUDA call (~400 MB, lazy loading)"


def comm_buffer_mib(interconnect: str, tp: int, vendor: str = "nvidia", *, nnodes: int = 1) -> tuple[int, str]:
    """MiB per GPU the NCCL groups and custom all-reduce take before the weights, with the evidence it rests on.

    ``interconnect``: the GPU profile's field (planner.hardware.profiles.INTERCONNECTS). Only "pcie" (every variant a
    PCIe card without NVSwitch) takes the PCIe figure; "nvlink", "mixed" (SXM and PCIe variants, e.g. the A100s),
    "other" (AMD, single-GPU modules) and "unknown" take the NVLink one: the conservative side. ``nnodes`` > 1: the
    server's groups span nodes (TP over nodes, or PP / DP ranks on other nodes: NCCL over the network either way;
    NCCL_MIB_MULTINODE's comment): never less than the multi-node figure."""
    if interconnect not in INTERCONNECTS:
        raise ValueError(f"interconnect {interconnect!r}: expected one of {', '.join(INTERCONNECTS)}")
    if nnodes < 1:
        raise ValueError(f"nnodes {nnodes}: expected 1 or more")
    mib, why = _one_node_comm_mib(interconnect, tp, vendor)
    if nnodes == 1 or tp <= 1:
        return mib, why
    if vendor == "amd":
        return mib, why + f"; across {nnodes} nodes: no multi-node ROCm log, the one-node figure kept"
    across = (f"across {nnodes} nodes (a group over nodes: no custom all-reduce, NCCL over the network): the "
              "multi-node logs show "
              f"0.22-{MULTINODE_LOG_MAX_GB} GB (sglang-5347, 2 x 8 H200; sglang-3888, 2 x 8 80 GB), all on 0.4.x, "
              "none on 0.5.x or a PCIe cluster")
    if mib >= NCCL_MIB_MULTINODE:
        return mib, f"{why}; {across}: the one-node figure kept, already above them"
    return NCCL_MIB_MULTINODE, (f"{across}: the largest NVIDIA figure logged, 2.01 GB (sglang-11716, tp 8 H200), "
                                f"taken as the conservative choice (one node would be {mib} MiB)")


def _one_node_comm_mib(interconnect: str, tp: int, vendor: str) -> tuple[int, str]:
    if tp <= 1:
        return 0, "tp 1: inside the CUDA-context figure (docs-send-request, A100: logged P within 0.01 GiB)"
    if vendor == "amd":  # RCCL and aiter's custom all-reduce (AMD_CONTEXT_MIB's comment)
        return RCCL_MIB_AMD, ("AMD Instinct: largest logged 'Init torch distributed ends. mem usage', 3.83 GB (tp 8 "
                              "MI355X, tests/data/calibration/families/family-corpus-1266093507)")
    pcie = interconnect == "pcie"
    if pcie and tp <= 4:
        return NCCL_MIB_PCIE, ("PCIe card: largest logged 'Init torch distributed ends. mem usage', 0.19 GB "
                               "(corpus-53944457073 tp 2 RTX 4090; corpus-47376055009 tp 4 L4 0.13 GB)")
    if pcie:
        return NCCL_MIB_PCIE_OVER_4, (f"PCIe card at tp {tp}: no log above tp 4; a conservative 512 MiB, 2.6x the "
                                      "largest PCIe log (0.19 GB, corpus-53944457073)")
    return NCCL_MIB_NVLINK, ("not a PCIe-only profile, so NVLink's figure: largest logged 'Init torch distributed "
                             "ends. mem usage', 2.01 GB (sglang-11716, tp 8 H200)"
                             + ("" if tp == 8 else f"; no NVLink log at tp {tp}, the tp-8 figure taken as the "
                                "conservative choice"))


@dataclass
class Assumption:
    name: str
    value: str
    why: str


@dataclass
class Plan:
    gpu: GpuProfile
    model: ResolvedModel
    flags: list[str]
    env: dict[str, str]
    sglang_version: str
    free_before_bytes: int
    free_after_bytes: int
    free_before_source: str
    free_after_source: str
    assumptions: list[Assumption]
    rules: Rules = None  # type: ignore[assignment]  # set by make_plan
    version_source: str = ""
    weights_per_gpu_bytes: int | None = None  # modelled target weights, when free_after was not given
    outcome: str = OUTCOME_OK
    stage: str | None = None
    error_type: str | None = None
    error_message: str | None = None
    rule: str | None = None
    args: Any = None  # engine.ResolvedArgs
    state: Any = None  # engine.MambaState
    profile: Any = None  # engine.Profile
    pools: Any = None  # engine.Pools
    capture_bs: list[int] | None = None
    needs: list[NeedLine] = field(default_factory=list)
    headroom_bytes: int | None = None
    verdict: str = "fits"  # fits | rejected | oom_risk
    notes: list[str] = field(default_factory=list)  # context for the reader (e.g. live GPU state)
    oom_allocation: str | None = None
    binding: str = ""
    advice: list[str] = field(default_factory=list)
    confidence: dict | None = None  # measured vs modelled inputs, margin vs calibration error (issue 10)
    post_capture: dict | None = None  # SGLANG_ENABLE_POST_CAPTURE_KV_SIZING (engines/sglang/pipeline/post_capture.py)

    @property
    def fits(self) -> bool:
        return self.verdict == "fits"


def default_free_before(gpu: GpuProfile, tp: int, nnodes: int = 1) -> tuple[int, str, list[Assumption]]:
    """Free memory before weight loading (SGLang's P), per GPU, with the assumptions stated (``nnodes``: the TP
    group's nodes, --nnodes)."""
    notes = []
    if gpu.unified_memory:
        total = gpu.capacity_mib
        notes.append(Assumption("capacity", f"{total} MiB", "unified memory: system memory visible to CUDA "
                                "(SGLang uses the system's available memory on these parts)"))
        visible = total
    elif gpu.cuda_total_mib is not None:
        visible = gpu.cuda_total_mib
        notes.append(Assumption("CUDA-visible total", f"{visible} MiB", "profile's measured cudaMemGetInfo total"))
    else:
        reserved = gpu.driver_reserved_mib if gpu.driver_reserved_mib is not None else DEFAULT_DRIVER_RESERVED_MIB
        visible = gpu.capacity_mib - reserved
        src = "profile" if gpu.driver_reserved_mib is not None else "typical 300-760 MiB readings; no reading for this card"
        notes.append(Assumption("driver reserve", f"{reserved} MiB", src))
    used, ctx_why = context_mib(gpu.vendor)
    notes.append(Assumption("CUDA context" if gpu.vendor != "amd" else "HIP context", f"{used} MiB", ctx_why))
    if tp > 1:
        comm, why = comm_buffer_mib(gpu.interconnect, tp, gpu.vendor, nnodes=nnodes)
        used += comm
        name = "NCCL / custom all-reduce (tp>1)" if nnodes == 1 else f"NCCL across {nnodes} nodes (tp>1)"
        notes.append(Assumption(name, f"{comm} MiB per GPU", why))
    free = (visible - used) * MIB
    return free, f"modelled: {visible} MiB visible - {used} MiB in use", notes


def target_weight_bytes(model: ResolvedModel, tp: int, ngram: bool = False, attn_dp: int = 1,
                        flags: list[str] | None = None, dp_lm_head: bool = False) -> tuple[int, str]:
    """Bytes the target's weights take per GPU (MTP weights load later, with the draft; under NGRAM never)."""
    total = model.weight_bytes
    mtp = mtp_weight_bytes(model.spec)
    detail = f"{model.weight_source}: {total:,} B"
    if mtp:
        total -= mtp
        # the target's loader skips the checkpoint's MTP weights; NGRAM has no draft worker to load them
        detail += f" - MTP layer {mtp:,} B " + ("(never loaded: NGRAM has no draft worker)" if ngram
                                                else "(loaded by the draft worker)")
    per = -(-total // tp)
    if tp > 1:
        detail += f", / tp {tp} (even split assumed)"
    mla_repl = replicated_mla_bytes(model.spec, tp)
    if mla_repl:
        per += mla_repl
        detail += f" + {mla_repl:,} B of MLA q_a / kv_a projections and MoE routers replicated on every GPU"
    dp_repl = (dp_attention_mla_bytes(model.spec, tp, attn_dp) if model.spec.mla is not None
               else dp_attention_gqa_bytes(model.spec, tp, attn_dp))
    if dp_repl:
        per += dp_repl
        detail += (f" + {dp_repl:,} B: DP attention splits the attention projections and the embedding over "
                   f"attn_tp {tp // attn_dp} instead of tp {tp}")
    if flags:  # expert parallel: DeepEP's unsplit shared experts, redundant experts (pipeline/expert_parallel.py)
        from planner.engines.sglang.pipeline.expert_parallel import weight_terms  # noqa: PLC0415

        for extra, why in weight_terms(model.spec, flags, tp):
            per += extra
            detail += f" + {extra:,} B: {why}"
    lm = dp_lm_head_bytes(model.spec, tp, attn_dp) if dp_lm_head else 0
    if lm:
        per += lm
        detail += f" + {lm:,} B: --enable-dp-lm-head splits the LM head over attn_tp {tp // attn_dp}"
    repl = replicated_kv_bytes(model.spec, tp)
    if repl:
        per += repl
        detail += (f" + {repl:,} B of k/v projections replicated ({model.spec.num_key_value_heads} KV heads < tp {tp}: "
                   "one head per GPU)")
    return per, detail


def make_plan(gpu: GpuProfile, model: ResolvedModel, flags: list[str], env: dict[str, str] | None = None,
              free_before_gib: float | None = None, free_after_gib: float | None = None,
              draft: ModelSpec | None = None, free_before_source: str | None = None,
              version: str | None = None, default: tuple[str, str] | None = None,
              pp_stage: tuple[int, int, int | None] | None = None) -> Plan:
    """``default``: :func:`default_version`'s (version, why) when the caller has it already (a batch asks once).
    ``pp_stage``: one pipeline-parallel rank (planner/engines/sglang/pp.py drives the ranks; ``model`` holds its layers)."""
    env = dict(env or {})
    if version is None:
        version, version_source = default or default_version()
    elif post_base(version):  # a .postN release runs on its base's rules and says so
        version_source = resolve_post(version, list(RULES))[1]
    else:
        version_source = "--sglang-version"
    rules = rules_for(version)
    algorithm, ngram = _algorithm_in(flags), _ngram_in(flags)
    if draft is None:
        draft = draft_from_flags(flags)
    if draft is None and algorithm == "STANDALONE":  # --- STANDALONE ---
        draft = model.spec  # no draft path: the draft worker loads the target itself (standalone_draft_source)
    # what the pipeline does not model: exit 2 (measured free memory after the weights needs no weight model)
    scope = flags if pp_stage is None else without_flag(without_flag(flags, "--pp-size"), "--pipeline-parallel-size")
    refusal = unmodelled(rules.flags, model.spec, scope, draft, measured_weights=free_after_gib is not None)
    if not refusal and free_after_gib is None and model.weight_source == NOT_MODELLED:
        refusal = model.weight_detail
    if not refusal and env:
        from planner.engines.sglang.env_vars import env_refusal  # noqa: PLC0415

        refusal = env_refusal(env, rules.version)
    if not refusal and pp_stage is None and "SGLANG_PP_LAYER_PARTITION" in env:  # get_pp_indices reads it
        refusal = "SGLANG_PP_LAYER_PARTITION: the layer split of --pp-size > 1 (planner/engines/sglang/pp.py); drop it for one rank"
    if refusal:
        raise BadInput(refusal)
    tp_guess = _tp_from_flags(flags)
    from planner.catalog.catalog import with_online_quantization  # noqa: PLC0415

    # --quantization fp8 etc., as the release's parser read it for the refusal above (none when it rejects the flags)
    model = with_online_quantization(model, flag_quantization(rules.flags, flags, model.spec.name))
    assumptions: list[Assumption] = []
    if free_before_gib is None:
        fb, fb_src, notes = default_free_before(gpu, tp_guess, _nnodes_from_flags(flags))
        assumptions += notes
    else:
        fb = int(free_before_gib * GIB)
        fb_src = free_before_source or f"given: --free-before-load-gib {free_before_gib}"
    w = None
    if free_after_gib is None:
        w, wdetail = target_weight_bytes(model, tp_guess, ngram=ngram, attn_dp=_attn_dp_from_flags(flags),
                                       flags=flags, dp_lm_head="--enable-dp-lm-head" in flags)
        fa = fb - w
        fa_src = f"modelled: free before - weights ({wdetail})"
        assumptions.append(Assumption("target weights per GPU", f"{w / GIB:.2f} GiB", wdetail))
        if rules.draft_weights_before_sizing and _spec_in(flags) and not ngram:  # NGRAM loads no draft
            from planner.engines.sglang.pipeline.headroom import draft_load_before_sizing  # noqa: PLC0415

            dw, how = draft_load_before_sizing(model.spec, draft, tp_guess, env)
            if draft is not None and algorithm == "STANDALONE":  # --- STANDALONE ---
                from planner.engines.sglang.pipeline.standalone import weight_load  # noqa: PLC0415

                dw, how = weight_load(draft, tp_guess, rules, standalone_checkpoint_weights(flags, model))
            dp_draft = dp_attention_draft_bytes(model.spec, tp_guess, _attn_dp_from_flags(flags),
                                                "--enable-dp-lm-head" in flags) if draft is None else 0
            if dp_draft:
                dw += dp_draft
                how += (f" + {dp_draft:,} B under DP attention (estimate: the draft's embedding and its MTP "
                        "layer's attention over attn_tp, weights.dp_attention_draft_bytes)")
            if draft is None:  # DeepEP: the MTP layer's shared experts unsplit (pipeline/expert_parallel.py)
                from planner.engines.sglang.pipeline.expert_parallel import draft_weight_terms  # noqa: PLC0415

                for extra, why in draft_weight_terms(model.spec, flags, tp_guess):
                    dw += extra
                    how += f" + {extra:,} B: {why}"
            if dw:
                fa -= dw
                w += dw
                assumptions.append(Assumption("draft worker's load per GPU", f"{dw / GIB:.2f} GiB",
                                              f"SGLang {rules.version} loads the draft before sizing the pools: {how}"))
    else:
        fa, fa_src = int(free_after_gib * GIB), f"given: --free-after-load-gib {free_after_gib}"
    plan = Plan(gpu=gpu, model=model, flags=list(flags), env=env, sglang_version=rules.version,
                rules=rules, version_source=version_source,
                free_before_bytes=fb, free_after_bytes=fa, free_before_source=fb_src,
                free_after_source=fa_src, assumptions=assumptions, weights_per_gpu_bytes=w)
    job = EngineInput(gpu=gpu, model=model, flags=plan.flags, env=env, rules=rules, free_before_bytes=fb,
                      free_after_bytes=fa, weights_per_gpu_bytes=w,
                      draft_checkpoint=standalone_checkpoint_weights(flags, model) if algorithm == "STANDALONE" else None,
                      pp_stage=pp_stage)
    _take(plan, engine.run(job, draft))
    if plan.args is not None:  # what the planner assumed where its input is incomplete (the engine says so)
        plan.notes.extend(w for w in plan.args.warnings if w.startswith(("planner assumption:",
                                                                          "SGLANG_ENABLE_POST_CAPTURE_KV_SIZING=1")))
    if draft is not None and algorithm == "STANDALONE":  # --- STANDALONE ---
        plan.notes.extend(standalone_notes(plan, draft, tp_guess))
    if plan.args is not None and plan.args.speculative_algorithm == "NGRAM":  # the trie is host memory
        from planner.engines.sglang.pipeline.ngram import trie_note  # noqa: PLC0415

        plan.notes.append(trie_note(int(plan.args.raw.get("speculative_ngram_capacity") or 0),
                                    rules.ngram_trie_node_bytes, plan.args.tp_size, rules.version))
    if plan.args is not None and plan.args.attn_dp_size > 1:  # DP attention: the numbers are one rank's
        from planner.engines.sglang.pipeline.dp_attention import rank_note  # noqa: PLC0415

        plan.notes.append(rank_note(plan.args, plan.profile))
    if plan.args is not None and plan.args.raw.get("moe_a2a_backend") == "deepep":  # pipeline/expert_parallel.py
        from planner.engines.sglang.pipeline.expert_parallel import rank_note as ep_rank_note  # noqa: PLC0415

        plan.notes.append(ep_rank_note(plan.args.raw, plan.model.spec, plan.env, plan.args.attn_dp_size,
                                       plan.args.chunked_prefill_size))
    from planner.engines.sglang.calibration import confidence  # noqa: PLC0415

    plan.confidence = confidence(plan)
    if plan.post_capture is not None:
        from planner.engines.sglang.pipeline.post_capture import note  # noqa: PLC0415

        plan.notes.append(note(plan))
    return plan


def _take(plan: Plan, res: EngineResult) -> None:
    """Copy what the engine decided onto the plan (the same field names)."""
    for name in _ENGINE_FIELDS:
        setattr(plan, name, getattr(res, name))


_ENGINE_FIELDS = tuple(f.name for f in fields(EngineResult))


def draft_from_flags(flags: list[str]) -> ModelSpec | None:
    """The draft named by --speculative-draft-model-path: a catalog draft or model, a config.json, a checkpoint
    directory, or a Hugging Face id (planner.catalog.drafts.resolve_draft). The spec carries the draft's kind
    and weight bytes (``draft_kind``, ``checkpoint_weight_*``). None when there is no such flag (an MTP draft
    comes from the target)."""
    from planner.catalog.drafts import draft_spec_with_weights, resolve_draft  # noqa: PLC0415

    for i, f in enumerate(flags):
        name = None
        if f in ("--speculative-draft-model-path", "--speculative-draft-model") and i + 1 < len(flags):
            name = flags[i + 1]
        elif f.startswith(("--speculative-draft-model-path=", "--speculative-draft-model=")):
            name = f.split("=", 1)[1]
        if name:
            return draft_spec_with_weights(resolve_draft(name))
    return None


# --- STANDALONE ---
def _algorithm_in(flags: list[str]) -> str | None:
    for i, f in enumerate(flags):
        if f == "--speculative-algorithm" and i + 1 < len(flags):
            return flags[i + 1].upper()
        if f.startswith("--speculative-algorithm="):
            return f.split("=", 1)[1].upper()
    return None


def standalone_checkpoint_weights(flags: list[str], target: ResolvedModel | None = None) -> tuple[int, str] | None:
    """The STANDALONE draft checkpoint's total bytes and their source (catalog, safetensors index or headers of a
    checkpoint directory, else the estimate from its config), as the target's weights are found. Without
    --speculative-draft-model-path the draft worker's ModelConfig falls back to the target's path
    (managers/tp_worker.py:405-411, configs/model_config.py:525 @0.5.16): the target's own weights, again."""
    from planner.catalog.catalog import resolve_model  # noqa: PLC0415

    if target is not None and draft_from_flags(flags) is None:
        return target.weight_bytes, (f"no --speculative-draft-model-path, so SGLang loads the target itself as the "
                                     f"draft (configs/model_config.py:525 @0.5.16): {target.weight_source}")
    for i, f in enumerate(flags):
        name = flags[i + 1] if f in ("--speculative-draft-model-path", "--speculative-draft-model") and i + 1 < len(flags) \
            else (f.split("=", 1)[1] if f.startswith(("--speculative-draft-model-path=", "--speculative-draft-model="))
                  else None)
        if name:
            try:
                r = resolve_model(name)
            except BadInput:
                return None
            return r.weight_bytes, f"{r.weight_source} ({r.weight_detail})"
    return None


def standalone_notes(plan: Plan, draft: ModelSpec, tp: int) -> list[str]:
    """What the report says about a STANDALONE draft: its weights and KV, how each was computed, and a WARNING
    where SGLang's sizing charges the draft's KV wrongly (planner/engines/sglang/pipeline/standalone.py)."""
    from planner.engines.sglang.pipeline.memory_profile import draft_kv_layers, kv_dtype_name  # noqa: PLC0415
    from planner.engines.sglang.pipeline.standalone import kv_budget_note, weight_load  # noqa: PLC0415

    if plan.args is None:
        return []
    kv = kv_budget_note(plan, draft, draft_kv_layers(plan.model.spec, plan.args, draft),
                        kv_dtype_name(plan.args, plan.model.spec))
    w, how = weight_load(draft, tp, plan.rules, standalone_checkpoint_weights(plan.flags, plan.model))
    when = ("loaded before the pools are sized (in the free memory they are sized from)"
            if plan.rules.draft_weights_before_sizing else "loaded after the pools (a post-pool need)")
    return [f"STANDALONE draft weights: {w / GIB:.2f} GiB per GPU, {when}; {how}", *kv]


def without_flag(flags: list[str], name: str) -> list[str]:
    """``flags`` with every ``name VALUE`` and ``name=VALUE`` taken out (to give the flag a value of one's own)."""
    out, skip = [], False
    for f in flags:
        if skip:
            skip = False
            continue
        if f == name:
            skip = True
            continue
        if f.startswith(name + "="):
            continue
        out.append(f)
    return out


def _spec_in(flags: list[str]) -> bool:
    return any(f == "--speculative-algorithm" or f.startswith("--speculative-algorithm=") for f in flags)


def _ngram_in(flags: list[str]) -> bool:
    """--speculative-algorithm NGRAM (any case): the drafts come from a host-memory trie, no draft model."""
    for i, f in enumerate(flags):
        v = flags[i + 1] if f == "--speculative-algorithm" and i + 1 < len(flags) else (
            f.split("=", 1)[1] if f.startswith("--speculative-algorithm=") else None)
        if v is not None and v.upper() == "NGRAM":
            return True
    return False


def _attn_dp_from_flags(flags: list[str]) -> int:
    """The attention-DP width (pipeline/dp_attention.py width), read leniently: --attn-dp-size, or --dp-size with
    --enable-dp-attention; 1 otherwise."""
    def value(name: str) -> int:
        for i, f in enumerate(flags):
            v = flags[i + 1] if f == name and i + 1 < len(flags) else f[len(name) + 1:] if f.startswith(name + "=") else None
            if v is not None:
                try:
                    return max(1, int(v))
                except ValueError:
                    return 1
        return 1
    if value("--attn-dp-size") > 1:
        return value("--attn-dp-size")
    dp = max(value("--dp-size"), value("--data-parallel-size"), value("--dp"))  # --dp: argparse's abbreviation
    return dp if "--enable-dp-attention" in flags else 1


def _nnodes_from_flags(flags: list[str]) -> int:
    """--nnodes, read leniently (1 when absent or unreadable: the engine parses the flags for real)."""
    for i, f in enumerate(flags):
        val = flags[i + 1] if f == "--nnodes" and i + 1 < len(flags) else f.split("=", 1)[1] if f.startswith(
            "--nnodes=") else None
        if val is not None:
            try:
                return max(1, int(val))
            except ValueError:
                return 1
    return 1


def _tp_from_flags(flags: list[str]) -> int:
    """The tp size, read leniently (the engine parses the flags for real)."""
    for i, f in enumerate(flags):
        if not f.startswith(("--tp", "--tensor-parallel-size")):  # none of the names below
            continue
        for name in ("--tp-size", "--tensor-parallel-size", "--tp"):
            if f == name and i + 1 < len(flags):
                try:
                    return max(1, int(flags[i + 1]))
                except ValueError:
                    return 1
            if f.startswith(name + "="):
                try:
                    return max(1, int(f.split("=", 1)[1]))
                except ValueError:
                    return 1
    return 1


__all__ = ["Plan", "make_plan", "SGLangArgError", "NeedLine", "mtp_weight_bytes", "OUTCOME_OK", "OUTCOME_REJECTED",
           "OUTCOME_FAILED", "json_verdict"]


def json_verdict(plan: Plan) -> str:
    """The JSON ``verdict`` (planner/schema): fits | oom_risk | rejected (SGLang's ServerArgs refuses the flags) |
    startup_failed (SGLang accepts them, then raises while starting: weights, memory pools, CUDA graphs). The
    plan's own ``verdict`` is "rejected" for both; its ``outcome`` (the oracle's) tells them apart."""
    if plan.verdict == "rejected" and plan.outcome == OUTCOME_FAILED:
        return "startup_failed"
    return plan.verdict
