"""Issue 23 item 4: flags users pass that were refused, each decided by what SGLang 0.5.9-0.5.23 does with it
(the cited lines are in planner/engines/sglang/flag_audit.toml), each end to end through the CLI.

- --disable-custom-all-reduce: no effect on what is sized (its buffers are inside the stated comm figure);
- --mamba-backend: modelled (no buffer; SGLang's accept / reject);
- --speculative-draft-model-quantization: planned where it resolves as the default does or to the draft's own
  checkpoint format, refused otherwise;
- --cpu-offload-gb, --enable-torch-compile, --speculative-draft-attention-backend, --speculative-attention-mode:
  refused with the reason in the line.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from planner.cli import main
from planner.engines.sglang.support import flag_audit
from planner.hardware.profiles import find_profile
from planner.engines.sglang.plan import comm_buffer_mib

ROOT = Path(__file__).parents[1]
CALIB = ROOT / "tests" / "data" / "calibration"
RELEASES = ["0.5.9", "0.5.11", "0.5.14", "0.5.16", "0.5.19", "0.5.23"]
EAGLE_MTP = ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
             "--speculative-num-draft-tokens", "4"]
DFLASH = ["--speculative-algorithm", "DFLASH", "--speculative-draft-model-path", "qwen3.6-27b-dflash"]


def _json(argv: list[str], capsys) -> tuple[int, dict]:
    code = main([*argv, "--no-search", "--json"])
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return code, json.loads(out.out)


def _sized(d: dict) -> dict:
    """What the plan sizes and decides, without the echo of the flags given."""
    return {k: d[k] for k in ("verdict", "resolved", "pools", "after_pools", "capacity", "summary")}


def _refused(argv: list[str], capsys) -> str:
    code = main([*argv, "--no-search"])
    out = capsys.readouterr()
    assert code == 2, out.out[-400:]
    assert out.out == "" and out.err.count("\n") == 1 and "Traceback" not in out.err, out.err
    assert out.err.startswith("plan: error: ")
    return out.err.strip().removeprefix("plan: error: ")


def test_the_issue_flags_are_classified_as_decided():
    audit = flag_audit()
    assert audit["disable_custom_all_reduce"].cls == "no_effect"
    assert audit["mamba_backend"].cls == "modelled"
    assert audit["speculative_draft_model_quantization"].cls == "modelled"
    for dest in ("cpu_offload_gb", "enable_torch_compile", "speculative_draft_attention_backend",
                 "speculative_attention_mode"):
        assert audit[dest].cls == "refused" and audit[dest].enforced_by is None, dest


# --- --disable-custom-all-reduce -----------------------------------------------------------------------------

@pytest.mark.parametrize("version", RELEASES)
@pytest.mark.parametrize("gpu,model", [("rtx4090", "qwen3-8b"), ("rtx5090", "qwen3.6-27b"), ("h200", "qwen3.6-27b")])
def test_disabling_custom_all_reduce_plans_as_the_default_launch(version, gpu, model, capsys):
    """Every public two-GPU consumer launch passes it: same verdict, pools and headroom as without it."""
    base = ["--gpu", gpu, "--model", model, "--tp-size", "2", "--sglang-version", version]
    code, plain = _json(base, capsys)
    code_off, off = _json([*base, "--disable-custom-all-reduce"], capsys)
    assert code_off == code and code in (0, 1)
    assert _sized(off) == _sized(plain)


def _init_dist_gb(log: Path) -> list[float]:
    return [float(x) for x in re.findall(r"Init torch distributed ends\..*?mem usage=([0-9.]+) GB", log.read_text())]


def test_the_comm_figure_covers_the_logs_with_custom_all_reduce_on_and_off():
    """What the flag leaves out is inside the figure: the PCIe figure comes from a tp-2 log with custom all-reduce
    on, and the tp-4 log with it off measured less; both at or under the planner's figure for their class."""
    on = CALIB / "corpus-53944457073-qwen3.5-9b-tp2-rtx4090.log"
    off = CALIB / "corpus-47376055009-qwq-32b-tp4-l4.log"
    assert "disable_custom_all_reduce=True" in off.read_text() and "Custom allreduce is disabled" in off.read_text()
    assert "disable_custom_all_reduce=True" not in on.read_text()
    on_gb, off_gb = max(_init_dist_gb(on)), max(_init_dist_gb(off))
    assert off_gb < on_gb
    for gb, gpu, tp in ((on_gb, "rtx4090", 2), (off_gb, "l4", 4)):
        mib, _ = comm_buffer_mib(find_profile(gpu).interconnect, tp)
        assert gb * 1024 <= mib + 0.005 * 1024, (gpu, tp, gb, mib)  # the log prints two decimals of GB


# --- --mamba-backend -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("version", RELEASES)
def test_mamba_backend_allocates_nothing(version, capsys):
    base = ["--gpu", "h200", "--model", "nemotron-3-nano-30b-a3b", "--sglang-version", version]
    code, triton = _json(base, capsys)
    code_fi, fi = _json([*base, "--mamba-backend", "flashinfer"], capsys)
    assert code_fi == code == 0 and _sized(fi) == _sized(triton)


@pytest.mark.parametrize("version", ["0.5.16", "0.5.19", "0.5.23"])
def test_flashinfer_mamba_kernel_fails_the_tree_verify_of_a_mamba2_model(version, capsys):
    """NGRAM's tree (topk = --speculative-ngram-max-bfs-breadth, 10 by default) on Nemotron-H: the verify metadata
    passes retrieve_parent_token, which FlashInfer's selective-state-update raises on."""
    base = ["--gpu", "h200", "--model", "nemotron-3-nano-30b-a3b", "--sglang-version", version,
            "--speculative-algorithm", "NGRAM"]
    assert main([*base, "--no-search"]) == 0
    capsys.readouterr()
    assert main([*base, "--no-search", "--mamba-backend", "flashinfer"]) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert "WILL NOT BOOT (cuda_graph_capture)" in out and "does not support retrieve_parent_token" in out
    assert main([*base, "--no-search", "--mamba-backend", "flashinfer", "--disable-cuda-graph"]) == 1
    assert "WILL NOT BOOT (target_verify)" in capsys.readouterr().out
    # a chain (breadth 1) passes no parent tokens: planned as with triton
    chain = [*base, "--speculative-ngram-max-bfs-breadth", "1"]
    code, triton = _json(chain, capsys)
    code_fi, fi = _json([*chain, "--mamba-backend", "flashinfer"], capsys)
    assert code_fi == code == 0 and _sized(fi) == _sized(triton)


def test_a_gdn_model_does_not_use_the_mamba2_kernel(capsys):
    base = ["--gpu", "h200", "--model", "qwen3.6-27b", "--sglang-version", "0.5.23", "--speculative-algorithm", "NGRAM"]
    code, triton = _json(base, capsys)
    code_fi, fi = _json([*base, "--mamba-backend", "flashinfer"], capsys)
    assert code_fi == code and _sized(fi) == _sized(triton)


@pytest.mark.parametrize("version,message", [
    ("0.5.16", "requires the Triton linear-attention / Mamba kernels for the strided conv/SSM state; got "
               "['flashinfer', 'triton']. Pass --linear-attn-backend triton and --mamba-backend triton."),
    ("0.5.19", "requires the Triton Mamba kernels for the strided conv/SSM state; got 'flashinfer'."),
    ("0.5.23", "requires the Triton Mamba kernels for the strided conv/SSM state; got 'flashinfer'."),
])
def test_the_page_major_layout_takes_the_triton_mamba_kernels_only(version, message, capsys):
    model = "qwen3.6-27b" if version == "0.5.16" else "nemotron-3-nano-30b-a3b"
    base = ["--gpu", "h200", "--model", model, "--sglang-version", version, "--enable-unified-memory"]
    if version == "0.5.16":
        base += ["--attention-backend", "triton"]  # 0.5.16 checks the full-attention backend first
    assert main([*base, "--no-search", "--mamba-backend", "flashinfer"]) == 1
    out = capsys.readouterr().out
    assert "SGLANG REJECTS THE FLAGS: AssertionError" in out
    assert message in " ".join(out.split())
    main([*base, "--no-search", "--mamba-backend", "triton"])
    out = " ".join(capsys.readouterr().out.split())
    assert "Mamba kernels" not in out and "REJECTS THE FLAGS" not in out


# --- --speculative-draft-model-quantization --------------------------------------------------------------------

@pytest.mark.parametrize("version", ["0.5.11", "0.5.16", "0.5.23"])
@pytest.mark.parametrize("spec,target_quant,draft_quant", [
    (EAGLE_MTP, ["--quantization", "fp8"], "fp8"),  # restates the default: the draft takes the target's
    (EAGLE_MTP, [], "unquant"),  # none either way
    (DFLASH, [], "unquant"),
])
def test_draft_quantization_that_resolves_as_the_default_plans_as_the_default(version, spec, target_quant,
                                                                              draft_quant, capsys):
    base = ["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--sglang-version", version, *spec, *target_quant]
    code, default = _json(base, capsys)
    code_q, given = _json([*base, "--speculative-draft-model-quantization", draft_quant], capsys)
    assert code_q == code and code in (0, 1)
    assert _sized(given) == _sized(default)


def _draft_weights(d: dict) -> list[tuple]:
    """The plan's draft-weight figures: a need after the pools (<= 0.5.13) or the load before sizing (0.5.14+)."""
    needs = [(n["bytes"], n["how"]) for n in d["after_pools"]["needs"] if n["label"] == "draft model weights"]
    loads = [(a["value"], a["why"]) for a in d["inputs"]["assumptions"] if a["name"] == "draft worker's load per GPU"]
    return needs + loads


@pytest.mark.parametrize("version,extra", [
    ("0.5.11", ["--mamba-scheduler-strategy", "extra_buffer", "--max-running-requests", "8"]),  # 0.5.11 refuses
    ("0.5.23", []),  # DFLASH with no_buffer's radix cache, and reserves D states per request up front
])
def test_an_unquantized_draft_head_beside_an_online_fp8_target_is_planned(version, extra, capsys):
    """unquant keeps the DFLASH head at its checkpoint's bf16 (2 B a parameter), the planner's draft figure: the
    same as beside an unquantized target, while the target's weights are fp8."""
    base = ["--gpu", "h200", "--model", "qwen3.6-27b", "--sglang-version", version, *DFLASH, *extra]
    code, bf16 = _json(base, capsys)
    code_q, fp8 = _json([*base, "--quantization", "fp8", "--speculative-draft-model-quantization", "unquant"], capsys)
    assert code in (0, 1) and code_q in (0, 1)
    draft = _draft_weights(fp8)
    assert len(draft) == 1 and "DFLASH draft qwen3.6-27b-dflash" in draft[0][1] and " x 2 B" in draft[0][1]
    assert draft == _draft_weights(bf16)
    assert fp8["inputs"]["free_after_load_bytes"] > bf16["inputs"]["free_after_load_bytes"]  # the target is fp8


@pytest.mark.parametrize("version", ["0.5.9", "0.5.16", "0.5.23"])
def test_draft_quantization_the_planner_cannot_size_is_refused(version, capsys):
    base = ["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--sglang-version", version]
    line = _refused([*base, *EAGLE_MTP, "--speculative-draft-model-quantization", "fp8"], capsys)
    assert line.startswith("--speculative-draft-model-quantization fp8: not modelled by this planner")
    assert "no quantized tensor list for draft heads" in line and "leave it out" in line
    # the target's own MTP layer under online fp8, loaded unquantized beside it
    line = _refused([*base, *EAGLE_MTP, "--quantization", "fp8", "--speculative-draft-model-quantization",
                     "unquant"], capsys)
    assert "the target's own checkpoint, quantized online by --quantization fp8" in line
    assert "--speculative-draft-model-path" in line


def test_draft_quantization_without_a_draft_decides_nothing(capsys):
    code = main(["--gpu", "h200", "--model", "qwen3-8b", "--no-search", "--speculative-draft-model-quantization",
                 "fp8"])
    capsys.readouterr()
    assert code == 0


# --- kept refused, with the reason in the line -----------------------------------------------------------------

@pytest.mark.parametrize("version", RELEASES)
@pytest.mark.parametrize("flags,reason", [
    (["--cpu-offload-gb", "4"], "SGLang offloads whole parameters in registration order"),
    (["--enable-torch-compile"], "torch.compile'd decode graphs' graph memory"),
    (["--torch-compile-max-bs", "8"], "torch.compile'd decode graphs' graph memory"),
    (["--speculative-draft-attention-backend", "triton"], "changes its KV dtype, budget, page size"),
    (["--speculative-attention-mode", "decode"], "which backend's graph state is allocated"),
])
def test_kept_refused_with_the_reason(version, flags, reason, capsys):
    base = ["--gpu", "rtx5090", "--model", "qwen3.6-27b", "--tp-size", "2", "--sglang-version", version,
            "--disable-custom-all-reduce", *EAGLE_MTP]
    line = _refused([*base, *flags], capsys)
    assert line.startswith(f"{' '.join(flags) if flags[0] != '--enable-torch-compile' else flags[0]}: not modelled")
    assert reason in line and "; modelled: " in line
