"""AMD Instinct launches planned through SGLang's ROCm path (planner/engines/sglang/pipeline/rocm.py, docs/rocm.md):
verdicts for MI300X / MI325X / MI355X, the post-pool needs the ROCm backends allocate (aiter's workspace, sized by
SGLang's own buffer shapes), the AMD class's stated bound, what stays refused by name, --gpu any and --gpu auto."""

from __future__ import annotations

import json

import pytest

from planner.catalog.catalog import resolve_model
from planner.cli import main
from planner.engines.sglang import calibration as cal
from planner.engines.sglang.pipeline import rocm
from planner.engines.sglang.plan import make_plan
from planner.errors import BadInput
from planner.hardware import amdsmi as amd
from planner.hardware.profiles import find_profile


def run(argv, capsys):
    code = main(argv)
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def test_llama_8b_on_mi300x_gets_a_verdict_with_sglangs_rocm_defaults(capsys):
    code, out, _ = run(["--gpu", "mi300x", "--model", "llama-3.1-8b", "--no-search", "--json"], capsys)
    assert code == 0
    d = json.loads(out)
    assert d["verdict"] == "fits"
    s = d["summary"]
    assert s["attention_backend"] == "aiter" and s["page_size"] == 1
    # 0.867 x 0.85 (the golden's llama-3.1-8b-tp1-default, tests/golden/rocm/)
    assert s["mem_fraction_static"] == pytest.approx(0.73695)


@pytest.mark.parametrize("model,tp", [("deepseek-v3", 8), ("qwen3-235b-a22b", 8)])
def test_a_tp8_launch_on_mi300x_gets_a_verdict(model, tp, capsys):
    code, out, _ = run(["--gpu", "mi300x", "--model", model, "--tp-size", str(tp), "--no-search"], capsys)
    assert code == 0 and out.startswith("Verdict: FITS"), out[:300]


def test_the_recommended_flags_are_sized_as_sglang_scales_them(capsys):
    """The search's --mem-fraction-static is a given value: SGLang scales it by 0.85 too, and the search's 'Gives'
    is what the plan of its own launch line gives."""
    code, out, _ = run(["--gpu", "mi300x", "--model", "llama-3.1-8b", "--json"], capsys)
    assert code == 0
    d = json.loads(out)
    top = d["search"]["top"][0]
    flags = top["flags"]
    plan = make_plan(find_profile("mi300x"), resolve_model("llama-3.1-8b"), flags, {})
    assert "--mem-fraction-static" in flags  # the fraction axis is searched on AMD too
    mfs = float(flags[flags.index("--mem-fraction-static") + 1])
    assert plan.args.mem_fraction_static == pytest.approx(mfs * 0.85)
    assert plan.profile.max_total_num_tokens == top["kv_tokens"]
    assert plan.headroom_bytes - sum(n.bytes for n in plan.needs) == top["headroom_left_bytes"]


def test_aiter_workspace_is_sglangs_buffer_sized_by_the_request_pool():
    plan = make_plan(find_profile("mi300x"), resolve_model("qwen3-235b-a22b"), ["--tp-size", "8"], {})
    line = next(n for n in plan.needs if n.label == rocm.WORKSPACE_LABEL)
    r, heads, parts = plan.profile.max_running_requests, 64 // 8, -(-40960 // 256)
    assert line.bytes == r * heads * parts * (128 * 4 + 8)
    # none for MLA (DeepSeek-V3) or the triton backend
    mla = make_plan(find_profile("mi300x"), resolve_model("deepseek-v3"), ["--tp-size", "8"], {})
    tri = make_plan(find_profile("mi300x"), resolve_model("llama-3.1-8b"), ["--attention-backend", "triton"], {})
    assert all(n.label != rocm.WORKSPACE_LABEL for n in mla.needs + tri.needs)


def test_a_pool_of_many_requests_makes_aiters_workspace_the_oom_risk():
    """Llama-3.1-8B at 131k context with --max-running-requests 4096: 4096 x 32 heads x 512 partitions x 520 B is
    32.5 GiB of workspace, more than the 0.85 leaves after the pools."""
    plan = make_plan(find_profile("mi300x"), resolve_model("llama-3.1-8b"),
                     ["--max-running-requests", "4096", "--mem-fraction-static", "0.95"], {})
    ws = next(n for n in plan.needs if n.label == rocm.WORKSPACE_LABEL)
    assert ws.bytes == 4096 * 32 * 512 * 520
    assert plan.verdict == "oom_risk"
    assert plan.headroom_bytes - sum(n.bytes for n in plan.needs if n is not ws) > 0  # it fits without the workspace


def test_the_amd_class_is_a_stated_bound_not_a_fit():
    info = cal.class_info("amd")
    assert info.get("bound") and info["logs"] == 0 and info["decode_offset"] == 1 << 30
    plan = make_plan(find_profile("mi300x"), resolve_model("llama-3.1-8b"), [], {})
    graphs = next(n for n in plan.needs if n.label == "CUDA graphs")
    assert "stated bound" in graphs.how and "aiter backend's graph state" in graphs.how
    assert "stated bound" in plan.confidence["line"]
    assert cal.search_margin("amd")[0] >= 2 << 30  # 2 x the 1 GiB error, past the 0.01 GiB workspace residual


@pytest.mark.parametrize("argv,words", [
    (["--model", "qwen3.6-27b"], "Qwen3_5ForConditionalGeneration is not modelled on ROCm"),
    (["--model", "llama-3.1-8b", "--sglang-version", "0.5.17"], "SGLang 0.5.17 is not modelled on ROCm"),
    (["--model", "llama-3.1-8b", "--enable-dp-attention", "--dp-size", "2", "--tp-size", "2"], "not modelled on ROCm"),
    (["--model", "llama-3.1-8b", "--attention-backend", "wave"], "--attention-backend wave is not modelled on ROCm"),
    (["--model", "llama-3.1-8b", "--env", "SGLANG_AITER_KV_CACHE_LAYOUT=vectorized_5d"],
     "--env SGLANG_AITER_KV_CACHE_LAYOUT is not modelled on ROCm"),
])
def test_what_is_not_checked_on_rocm_is_refused_in_one_line(argv, words, capsys):
    code, out, err = run(["--gpu", "mi300x", *argv, "--no-search"], capsys)
    assert code == 2 and words in err and "docs/rocm.md" in err and err.strip().count("\n") == 0, err


def test_gpu_any_ranks_the_modelled_amd_types(capsys):
    code, out, _ = run(["--model", "llama-3.1-8b", "--gpu", "mi300x,mi355x,h200", "--sglang-version", "0.5.23"], capsys)
    assert code == 0
    assert "mi300x: TP 1" in out and "mi355x: TP 1" in out and "not modelled" not in out


def test_gpu_any_names_the_refusal_of_a_family_rocm_does_not_model(capsys):
    code, out, _ = run(["--model", "qwen3.6-27b", "--gpu", "mi300x,h200", "--sglang-version", "0.5.23"], capsys)
    assert code == 0 and "mi300x: --gpu mi300x (SGLang's ROCm path): Qwen3_5ForConditionalGeneration" in out


def test_mi355x_is_gfx950_with_ocp_fp8():
    plan = make_plan(find_profile("mi355x"), resolve_model("llama-3.1-8b"), ["--kv-cache-dtype", "fp8_e4m3"], {})
    from planner.engines.sglang.pipeline.memory_profile import kv_dtype_name  # noqa: PLC0415

    assert plan.args.hip and kv_dtype_name(plan.args, plan.model.spec) == "float8_e4m3fn"
    mi300 = make_plan(find_profile("mi300x"), resolve_model("llama-3.1-8b"), ["--kv-cache-dtype", "fp8_e4m3"], {})
    assert kv_dtype_name(mi300.args, mi300.model.spec) == "float8_e4m3fnuz"


def test_gpu_auto_on_a_rocm_host_reaches_the_plan(monkeypatch, capsys):
    from tests.test_amdsmi import fake_amdsmi  # noqa: PLC0415
    from planner.hardware import live  # noqa: PLC0415
    from planner.hardware.nvml import NvmlUnavailable  # noqa: PLC0415

    def no_nvml(*a, **k):
        raise NvmlUnavailable("NVML Shared Library Not Found")

    monkeypatch.setattr(live, "read_gpus", no_nvml)
    monkeypatch.setattr(amd, "_import_amdsmi", lambda: fake_amdsmi())
    code, out, err = run(["--gpu", "auto", "--model", "llama-3.1-8b", "--no-search"], capsys)
    assert code == 0, err
    assert out.startswith("Verdict: FITS") and "AMD Instinct MI300X (live: 8 selected of 8" in out


def test_an_amd_gpu_without_a_modelled_profile_is_refused_by_name():
    from tests.test_amdsmi import fake_amdsmi  # noqa: PLC0415

    with pytest.raises(BadInput) as e:
        amd.amd_selection("auto", fake_amdsmi(name="AMD Instinct MI250X"))
    assert "AMD Instinct MI250X" in str(e.value) and "modelled for gfx942 / gfx950" in str(e.value)


def test_free_memory_before_the_weights_uses_the_amd_figures():
    """HIP context 737 MiB and, at tp > 1, RCCL + aiter's custom all-reduce 3.83 GB (public MI355X logs,
    tests/data/calibration/amd/README.md): on the safe side of the logged 287.26 GB (tp 1) and 283.5 GB (tp 8)."""
    from planner.engines.sglang.plan import RCCL_MIB_AMD, comm_buffer_mib, default_free_before  # noqa: PLC0415

    mi355 = find_profile("mi355x")
    assert comm_buffer_mib(mi355.interconnect, 8, "amd")[0] == RCCL_MIB_AMD == 3922
    tp1, tp8 = default_free_before(mi355, 1)[0] / (1 << 30), default_free_before(mi355, 8)[0] / (1 << 30)
    assert tp1 == pytest.approx((294896 - 500 - 737) / 1024) and tp1 < 287.26
    assert tp8 < 283.48
