"""Issue 23 item 1: CUDA-graph memory, decode and prefill, per release and per GPU class.

The logs are tests/data/calibration/ ('graph', 'prefill_graph' and the held-out 'graph_holdout' entries of
index.json); the fitted figures live in planner/engines/sglang/calibration.json and benchmarks/verdicts.py prints
them per class (the README's "Calibration" table is that output).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import planner
from planner.engines.sglang import calibration_logs as cl
from planner.engines.sglang import calibration as cal

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "calibration"
GIB = 1 << 30


def _need(plan, label):
    return next((n for n in plan.needs if n.label == label), None)


def test_graph_estimate_is_never_a_quarter_under_what_a_log_measured_per_class():
    """Done when: on the calibration logs and on fresh logs held out of the fit, the CUDA-graph estimate (decode +
    prefill) is never under what the log measured by 25% or more, per GPU class (the planner's own estimate
    functions, with each log's captured sizes and its class's factors)."""
    rows = cl.graph_check_rows(cl.load_index())
    held = [r for r in rows if r["holdout"]]
    assert {r["id"] for r in held} >= {"corpus-54815375998", "corpus-70468080142", "corpus-55223199811",
                                       "corpus-69732802710"}
    assert {"sm89", "sm90", "sm100", "sm12x"} <= {r["class"] for r in rows}
    for r in rows:
        assert r["ratio"] > 0.75, (r["id"], r["class"], r["ratio"])
    # the fitted logs: at most UNDER_TARGET under, by construction of the class factors (a check of the fit)
    assert all(r["ratio"] >= 1 - cal.UNDER_TARGET - 0.005 for r in rows if not r["holdout"])


def test_held_out_logs_were_not_fitted():
    """The hold-outs feed no coefficient: refitting without them gives the same calibration."""
    entries = cl.load_index()
    without = [e for e in entries if "graph_holdout" not in e["uses"] and "draft_graph_holdout" not in e["uses"]]
    caps = cl.capture_rows(without)
    fit = cal.fit_graphs(caps)
    c = cal.coefficients()
    assert fit["graph_per_graph_layer"] == c.graph_per_graph_layer
    assert (fit["prefill_per_act"], fit["prefill_per_graph_layer"], fit["prefill_per_graph_layer_breakable"]) == \
        (c.prefill_per_act, c.prefill_per_graph_layer, c.prefill_per_graph_layer_breakable)
    assert {k: v["decode_offset"] for k, v in fit["graph_classes"].items()} == \
        {k: v["decode_offset"] for k, v in c.graph_classes.items()}
    assert (fit["draft_decode_offset"], fit["draft_extend_offset"]) == (c.draft_decode_offset, c.draft_extend_offset)


def test_fit_graphs_recovers_known_coefficients_and_the_class_factor():
    rows = [{"id": f"d{g}", "class": "sm89", "decode": {"graph_layers": g, "known_bytes": 0, "measured_bytes": 3 * g},
             "prefill": None} for g in (100, 400, 900)]
    rows += [{"id": f"p{i}", "class": "sm90", "decode": None,
              "prefill": {"act_bytes": a, "graph_layers": gl, "backend": b, "measured_bytes": 2 * a + k * gl}}
             for i, (a, gl, b, k) in enumerate([(1000, 10, "piecewise", 5), (3000, 40, "piecewise", 5),
                                                (2000, 30, "breakable", 9)])]
    out = cal.fit_graphs(rows)
    assert out["graph_per_graph_layer"] == 3
    assert (out["prefill_per_act"], out["prefill_per_graph_layer"], out["prefill_per_graph_layer_breakable"]) == (2, 5, 9)
    # an exact fit needs no class constant; the prefill factor keeps each log UNDER_TARGET under
    assert out["graph_classes"]["sm89"]["decode_offset"] == 0
    assert out["prefill_factor"] == pytest.approx(1 - cal.UNDER_TARGET, abs=0.01)
    # a class whose small captures the slope under-estimates gets the constant that brings them within the target
    rows.append({"id": "x", "class": "sm12x", "decode": {"graph_layers": 100, "known_bytes": 0,
                                                          "measured_bytes": 300 + (64 << 20)}, "prefill": None})
    out = cal.fit_graphs(rows)
    slope = out["graph_per_graph_layer"]  # the pooled slope moves with the new log
    want = int(np.ceil(((1 - cal.UNDER_TARGET) * (300 + (64 << 20)) - slope * 100) / (1 << 20))) << 20
    assert want > 50 << 20
    assert out["graph_classes"]["sm12x"]["decode_offset"] == want


def test_gpu_classes_follow_the_compute_capability():
    from planner.hardware.profiles import find_profile

    want = {"rtx3090": "sm86", "a10g": "sm86", "rtx4090": "sm89", "l4": "sm89", "h100-sxm": "sm90", "h200": "sm90",
            "b200": "sm100", "b300": "sm100", "rtx5090": "sm12x", "rtxpro6000": "sm12x", "dgx-spark": "sm12x",
            "a100-80gb": "sm80", "mi300x": "amd"}
    for gpu, cls in want.items():
        assert cal.profile_class(find_profile(gpu)) == cls, gpu
        assert cls in cal.GPU_CLASSES


def test_the_prefill_graph_is_a_need_where_the_release_captures_it():
    """0.5.9: piecewise graph opt-in (no need); 0.5.11: piecewise by default for a dense model, after the decode
    graphs; 0.5.23: breakable, captured before them; off with the release's own switch."""
    m = "qwen3-8b"
    p9 = planner.plan("rtx3090", m, "--cuda-graph-max-bs 8", sglang_version="0.5.9")
    p11 = planner.plan("rtx3090", m, "--cuda-graph-max-bs 8", sglang_version="0.5.11")
    p23 = planner.plan("rtx3090", m, "--cuda-graph-max-bs-decode 8", sglang_version="0.5.23")
    assert _need(p9, "prefill CUDA graph") is None
    n11, n23 = _need(p11, "prefill CUDA graph"), _need(p23, "prefill CUDA graph")
    assert n11 and "piecewise" in n11.how and n23 and "breakable" in n23.how
    labels11 = [n.label for n in p11.needs]
    labels23 = [n.label for n in p23.needs]
    assert labels11.index("CUDA graphs") < labels11.index("prefill CUDA graph")
    assert labels23.index("prefill CUDA graph") < labels23.index("CUDA graphs")
    # the capture list is the planner's resolved one (42 sizes up to the 3090's 2048-token chunk)
    assert "42 token sizes up to 2,048" in n11.how
    off11 = planner.plan("rtx3090", m, "--cuda-graph-max-bs 8 --disable-piecewise-cuda-graph", sglang_version="0.5.11")
    off23 = planner.plan("rtx3090", m, "--cuda-graph-max-bs-decode 8 --cuda-graph-backend-prefill disabled",
                         sglang_version="0.5.23")
    assert _need(off11, "prefill CUDA graph") is None and _need(off23, "prefill CUDA graph") is None
    # breakable costs more per captured size than piecewise (fitted: several graph segments per layer)
    assert cal.coefficients().prefill_per_graph_layer_breakable > cal.coefficients().prefill_per_graph_layer


def test_hybrid_models_have_no_piecewise_graph_before_0_5_14():
    """init_piecewise_cuda_graphs disables it when some layers are not standard GQA attention (model_runner.py
    @0.5.11): Nemotron-H (text-only hybrid) keeps the piecewise switch on, and the runtime check takes it off."""
    from planner.engines.sglang.pipeline.headroom import prefill_captured

    p = planner.plan("h200", "nemotron-3-nano-30b-a3b", "", sglang_version="0.5.11")
    assert p.args.prefill_graph_on and not prefill_captured(p.args, p.model.spec)
    assert _need(p, "prefill CUDA graph") is None
    dense = planner.plan("h200", "qwen3-8b", "", sglang_version="0.5.11")
    assert prefill_captured(dense.args, dense.model.spec)


def test_small_batch_consumer_launch_now_counts_gib_of_graphs():
    """The issue: on small-batch RTX 3090 / 5090 launches the estimate was a fraction of what the logs show at
    capture (hundreds of MiB against GiB). With the prefill graph and the class factors it is in the GiB range the
    RTX 5090 log held out of the fit measured (1.16 GiB: 0.04 decode + 1.12 breakable prefill, chunk 4096)."""
    held = next(r for r in cl.graph_check_rows(cl.load_index()) if r["id"] == "corpus-70468080142")
    p = planner.plan("rtx5090", "qwen3-8b", "--cuda-graph-max-bs-decode 8 --chunked-prefill-size 4096",
                     sglang_version="0.5.23")
    graphs = sum(n.bytes for n in p.needs if "CUDA graph" in n.label)
    assert graphs >= 0.75 * held["measured_bytes"]
    assert "consumer Blackwell" in _need(p, "CUDA graphs").how


def test_decode_graph_array_equals_the_scalar_estimate_with_the_class_constant():
    from planner.engines.sglang.pipeline.cuda_graph import batch_sizes_to_capture
    from planner.engines.sglang.pipeline.headroom import cuda_graph_need, cuda_graph_need_array

    for gpu in ("rtx3090", "h100-sxm", "b200", "rtx5090"):
        p = planner.plan(gpu, "qwen3-8b", "", sglang_version="0.5.11")
        spec = p.model.spec
        rs = np.array([1, 3, 8, 24, 160, 512])
        arr = cuda_graph_need_array(p.args, spec, None, rs)
        for r, a in zip(rs, arr):
            bs = batch_sizes_to_capture(list(p.args.cuda_graph_bs), int(r))
            assert a == cuda_graph_need(bs, p.args, spec, None).bytes, (gpu, r)


def test_the_search_uses_the_margin_of_the_launchs_class(monkeypatch):
    import dataclasses

    from planner.catalog.catalog import resolve_model
    from planner.hardware.profiles import find_profile
    from planner.engines.sglang.report import margin_text
    from planner.engines.sglang.search import run_search

    real = cal.coefficients()
    classes = {**real.graph_classes, "sm89": {**real.graph_classes["sm89"], "under_max_gib": 0.9}}
    monkeypatch.setattr(cal, "coefficients", lambda: dataclasses.replace(real, graph_classes=classes))
    res = run_search(find_profile("rtx4090"), resolve_model("qwen3-8b"), [], top=1, version="0.5.11")
    assert res.needs.margin_class == "sm89" and res.needs.margin_bytes == 2 << 30
    assert "Ada" in margin_text(res.needs) and "(given)" not in margin_text(res.needs)
    res = run_search(find_profile("h100-sxm"), resolve_model("qwen3-8b"), [], top=1, version="0.5.11")
    assert res.needs.margin_class == "sm90" and res.needs.margin_bytes == 1 << 30


def test_the_confidence_line_names_the_class_and_how_far_it_was_off():
    p = planner.plan("rtx4090", "qwen3-8b", "", sglang_version="0.5.11")
    c = p.confidence
    info = cal.class_info("sm89")
    assert c["gpu_class"] == "sm89" and "Ada" in c["line"]
    assert f"at most {info['under_max_pct']:.0f}% under" in c["line"]
    p = planner.plan("rtx3090", "qwen3-8b", "", sglang_version="0.5.11")  # no consumer-Ampere log
    assert "has no public log" in p.confidence["line"]
    assert "largest class constant" in _need(p, "CUDA graphs").how


def test_readme_shows_the_per_class_table_as_verdicts_prints_it():
    out = subprocess.run([sys.executable, "benchmarks/verdicts.py", "--table"], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout.strip()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(r"<!-- graph-classes: python benchmarks/verdicts.py --table -->\n(.*?)\n<!-- /graph-classes -->",
                  readme, re.S)
    assert m and m.group(1).strip() == out


def test_a_figure_taken_from_a_table_appears_verbatim_in_its_excerpt():
    for e in cl.load_index():
        table = e.get("capture", {}).get("measured_gib")
        if table:
            text = (DATA / e["file"]).read_text(encoding="utf-8")
            for v in table.values():
                assert f"| {v:.2f} |" in text, (e["id"], v)


def test_post_capture_kv_sizing_is_planned_on_0_5_16_to_0_5_23_and_refused_by_name_where_not_modelled():
    """SGLANG_ENABLE_POST_CAPTURE_KV_SIZING: modelled for 0.5.16-0.5.23, each release's gate and floors checked
    against its own oracle (pipeline/post_capture.py, tests/test_post_capture.py); a launch it does not model (the
    unified arena, which 0.5.16-0.5.20 do not gate) is refused with one line naming it (exit 2), never planned as if
    it were off; 0.5.11 does not read it."""
    from planner.cli import main
    from planner.errors import BadInput

    for release in ("0.5.16", "0.5.20", "0.5.23"):
        on = planner.plan("rtx5090", "qwen3-8b", "", sglang_version=release,
                          env={"SGLANG_ENABLE_POST_CAPTURE_KV_SIZING": "1"})
        assert on.post_capture is not None and on.args.post_capture_kv
    with pytest.raises(BadInput, match="SGLANG_ENABLE_POST_CAPTURE_KV_SIZING=1 with --enable-unified-memory"):
        planner.plan("rtxpro6000", "qwen3.6-27b", "--enable-unified-memory", sglang_version="0.5.20",
                     env={"SGLANG_ENABLE_POST_CAPTURE_KV_SIZING": "1"})
    old = planner.plan("rtx5090", "qwen3-8b", "", sglang_version="0.5.11",
                       env={"SGLANG_ENABLE_POST_CAPTURE_KV_SIZING": "1"})
    assert old.verdict == "fits" and old.post_capture is None
    off = planner.plan("rtx5090", "qwen3-8b", "", sglang_version="0.5.23",
                       env={"SGLANG_ENABLE_POST_CAPTURE_KV_SIZING": "0"})
    assert off.verdict == "fits" and off.post_capture is None
    assert main(["--gpu", "rtxpro6000", "--model", "qwen3.6-27b", "--sglang-version", "0.5.20",
                 "--env", "SGLANG_ENABLE_POST_CAPTURE_KV_SIZING=1", "--", "--enable-unified-memory"]) == 2

# --- the draft's graphs under speculative decoding (issue 23, item 1) -------------------------------------------------

EAGLE_MTP = "--speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 1 " \
            "--speculative-num-draft-tokens 4 --context-length 65536"


def test_the_draft_prefill_graph_is_a_need_from_0_5_14_where_the_prefill_graph_is_breakable():
    """EAGLEWorkerV2 captures the draft's prefill graph when the prefill backend is breakable (eagle_worker_v2.py
    :230-231 @0.5.16, :294-295 @0.5.23): 0.5.15+ by default, 0.5.14 only when chosen (tc_piecewise there by default);
    0.5.14-0.5.18 charge the draft's activations, 0.5.19+ (one pool, one capture stream) only their excess over the
    target's, which an MTP layer of the target's width does not have."""
    from planner.engines.sglang.pipeline.headroom import draft_prefill_graph_need

    def dp(version, extra=""):
        p = planner.plan("rtxpro6000", "qwen3.6-27b", f"{EAGLE_MTP} {extra}", sglang_version=version)
        assert p.args is not None, p.verdict
        return _need(p, "draft prefill CUDA graph"), p

    n14, _ = dp("0.5.14")
    n16, p16 = dp("0.5.16")
    n23, p23 = dp("0.5.23")
    assert n14 is None and n16 is not None and n23 is not None
    assert "0.5.14-0.5.18" in n16.how and "one graph pool and one capture stream" in n23.how
    # 0.5.16: the MTP layer's activations at the largest captured size, like the target's prefill graph
    target = _need(p16, "prefill CUDA graph")
    assert n16.bytes > 0.3 * target.bytes
    # 0.5.23: only the per-size cost of one layer (tens of MiB)
    assert 0 < n23.bytes < 64 << 20
    assert [n.label for n in p23.needs].index("CUDA graphs") < [n.label for n in p23.needs].index(
        "draft prefill CUDA graph")
    off = planner.plan("rtxpro6000", "qwen3.6-27b", f"{EAGLE_MTP} --cuda-graph-backend-prefill disabled",
                       sglang_version="0.5.23")
    assert _need(off, "draft prefill CUDA graph") is None
    # no draft model without speculative decoding, nor under NGRAM
    plain = planner.plan("rtxpro6000", "qwen3.6-27b", "--context-length 65536", sglang_version="0.5.23")
    assert _need(plain, "draft prefill CUDA graph") is None
    assert draft_prefill_graph_need(plain.args, plain.model.spec, None) is None


def test_the_drafts_flashinfer_buffers_follow_each_release():
    """The multi-step draft backend's indices, steps x max_bs x [topk from 0.5.13] x ctx x 4 B (flashinfer_backend.py
    :1617-1622 @0.5.11, spec_utils.py:77 @0.5.13), and the draft-extend backend's indices + mask, draft tokens x ctx x
    5 B per max_bs: FlashInfer is in the V2 worker's draft-extend list from 0.5.14 (eagle_worker_v2.py:427-436
    @0.5.14); before, only the V1 worker (overlap off, 0.5.9-0.5.12) captures it."""
    from types import SimpleNamespace

    from planner.engines.sglang.pipeline.headroom import draft_graph_buffers
    from planner.engines.sglang.rules import rules_for

    def per_bs(version, overlap_off=False, backend="flashinfer", algo="EAGLE", topk=2):
        a = SimpleNamespace(spec_on=True, speculative_algorithm=algo, attention_backend=backend,
                            rules=rules_for(version), speculative_num_steps=3, speculative_eagle_topk=topk,
                            speculative_num_draft_tokens=4, context_len=1000, disable_overlap_schedule=overlap_off)
        return draft_graph_buffers(a)[0]

    assert per_bs("0.5.11") == 3 * 1000 * 4  # no topk factor, no extend graph on the V2 worker
    assert per_bs("0.5.11", overlap_off=True) == 3 * 1000 * 4 + 4 * 1000 * 5
    assert per_bs("0.5.13") == 3 * 2 * 1000 * 4  # topk in the width; FlashInfer not in 0.5.13's extend list
    assert per_bs("0.5.16") == 3 * 2 * 1000 * 4 + 4 * 1000 * 5
    assert per_bs("0.5.16", backend="fa3") == 0 and per_bs("0.5.16", algo="NGRAM") == 0
    assert per_bs("0.5.16", algo="DFLASH") == 0


def test_the_drafts_captures_cost_the_pooled_constants_on_every_class():
    """Draft decode captures of 0.36-0.38 GB at 2-6 batch sizes (two public logs of unnamed GPUs) are far above their
    graphs' slope: a constant per draft capture (decode, extend) fitted on the log with an upstream-shaped pair,
    checked on the other; each added where the release captures that graph, never without a draft."""
    from planner.engines.sglang.pipeline.headroom import _draft_capture_const

    c = cal.coefficients()
    assert c.draft_logs >= 1 and c.draft_decode_offset > 256 << 20 and c.draft_extend_offset > 64 << 20
    rows = {r["id"]: r for r in cl.graph_check_rows(cl.load_index())}
    for rid in ("corpus-63199567676", "corpus-69732802710"):
        assert "draft" in rows[rid]["parts"] and rows[rid]["ratio"] > 0.75, rid
    assert rows["corpus-69732802710"]["holdout"] and not rows["corpus-63199567676"]["holdout"]
    base = dict(capture_bs=[1, 2, 4], layers=64, vocab=248320, tp=2, tokens_per_bs=4, context_len=4096,
                backend="", gpu_cls="sm12x")
    plain, _ = cal.graph_estimate(**base)
    k = c.draft_decode_offset + c.draft_extend_offset
    drafted, how = cal.graph_estimate(**base, draft_layers=1, draft_steps=3, draft_const=k)
    assert drafted - plain == c.graph_per_graph_layer * 3 * 1 * 4 + k
    assert "draft's captures" in how
    arr = cal.graph_bytes_array(cuda_graph_bs=[1, 2, 4], running=np.array([4]), layers=64, vocab=248320, tp=2,
                                tokens_per_bs=4, context_len=4096, backend="", gpu_cls="sm12x", draft_layers=1,
                                draft_steps=3, draft_const=k)
    assert int(arr[0]) == drafted
    # per release: FlashInfer's draft-extend graph only from 0.5.14 on the V2 worker
    p11 = planner.plan("rtx5090", "qwen3.5-9b", "--speculative-algorithm EAGLE --speculative-num-steps 3 "
                       "--speculative-eagle-topk 1 --speculative-num-draft-tokens 4 --mamba-scheduler-strategy "
                       "extra_buffer", sglang_version="0.5.12")
    p16 = planner.plan("rtxpro6000", "qwen3.6-27b", EAGLE_MTP, sglang_version="0.5.16")
    assert p11.args.attention_backend == p16.args.attention_backend == "flashinfer"
    assert _draft_capture_const(p11.args, 1) == c.draft_decode_offset
    assert _draft_capture_const(p16.args, 1) == k
    assert _draft_capture_const(p16.args, 0) == 0
