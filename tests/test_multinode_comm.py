"""Issue 25 item 5: what the communication groups take per GPU when one TP group spans nodes (--nnodes > 1).

planner.engines.sglang.plan.comm_buffer_mib(..., nnodes=N): across nodes SGLang turns custom all-reduce off
(device_communicators/custom_all_reduce.py:94 @0.5.9; custom_all_reduce_v2.py:589 @0.5.23 keeps it only for one
multi-node NVLink clique) and NCCL reaches the other nodes over the network. The public multi-node logs
(tests/data/calibration/, uses "multinode") are checked here against the planner's figure and its free memory.
"""

from __future__ import annotations

import pytest

from planner.catalog.catalog import resolve_model
from planner.engines.sglang import calibration_logs as cl
from planner.engines.sglang.plan import (GIB, MIB, MULTINODE_LOG_MAX_GB, NCCL_MIB_MULTINODE, NCCL_MIB_NVLINK,
                                         NCCL_MIB_PCIE, NCCL_MIB_PCIE_OVER_4, RCCL_MIB_AMD, _nnodes_from_flags,
                                         comm_buffer_mib, default_free_before, make_plan)
from planner.hardware.profiles import INTERCONNECTS, find_profile
from planner.logs.events import InitDistributedEnd

# how far below a logged free memory the planner's may be (its conservative side): the planner charges 2.01 GB for
# the groups where these 0.4.x logs show 0.22-0.58 GB, and its 450 MiB CUDA context is a typical figure
RESIDUAL_BOUND_GIB = 2.0


def _multinode_entries() -> list[dict]:
    return [e for e in cl.load_index() if "multinode" in e["uses"]]


def _logged(e: dict):
    """(Init torch distributed mem usage values, Load weight begin avail, Load weight end avail), GiB (SGLang's GB)."""
    quoted = e["multinode"].get("quoted_gib", {})
    la = cl._launch(cl.DEFAULT_DIR, e)
    ranks = list(la.ranks.values()) if la is not None else []
    dist = [x.mem_usage_gib for r in ranks for x in r.of(InitDistributedEnd) if x.mem_usage_gib is not None]
    begin = [r.load_begin.avail_gib for r in ranks if r.load_begin is not None and r.load_begin.avail_gib]
    end = [r.load_end.avail_gib for r in ranks if r.load_end is not None and r.load_end.avail_gib]
    return dist or quoted.get("dist_init", []), begin, end


def test_one_node_figure_is_unchanged_and_nnodes_is_keyword_only():
    for ic in INTERCONNECTS:
        for tp in (1, 2, 4, 8, 16):
            for vendor in ("nvidia", "amd"):
                assert comm_buffer_mib(ic, tp, vendor) == comm_buffer_mib(ic, tp, vendor, nnodes=1)
    with pytest.raises(TypeError):
        comm_buffer_mib("pcie", 16, "nvidia", 2)  # type: ignore[misc]
    with pytest.raises(ValueError):
        comm_buffer_mib("nvlink", 16, nnodes=0)


def test_across_nodes_never_below_the_multinode_figure():
    # NVLink / unknown: the one-node figure already is the largest NVIDIA log, kept, and the reason says so
    mib, why = comm_buffer_mib("nvlink", 16, nnodes=2)
    assert mib == NCCL_MIB_NVLINK == NCCL_MIB_MULTINODE and "across 2 nodes" in why and "kept" in why
    assert "sglang-5347" in why and "no custom all-reduce" in why
    # PCIe cards across nodes: no log of a PCIe cluster, so the NVLink figure, not the one-node 512 MiB
    assert comm_buffer_mib("pcie", 16)[0] == NCCL_MIB_PCIE_OVER_4
    mib, why = comm_buffer_mib("pcie", 16, nnodes=2)
    assert mib == NCCL_MIB_MULTINODE > NCCL_MIB_PCIE_OVER_4 and "conservative" in why and "512 MiB" in why
    assert comm_buffer_mib("pcie", 2, nnodes=2)[0] == NCCL_MIB_MULTINODE > NCCL_MIB_PCIE
    # AMD: RCCL's figure is larger still; no multi-node ROCm log, said so
    mib, why = comm_buffer_mib("other", 16, "amd", nnodes=2)
    assert mib == RCCL_MIB_AMD and "no multi-node ROCm log" in why
    # the multi-node figure is above every multi-node log, by the stated margin
    assert NCCL_MIB_MULTINODE / 1024 > 3 * MULTINODE_LOG_MAX_GB


def test_nnodes_is_read_from_the_flags():
    assert _nnodes_from_flags([]) == 1
    assert _nnodes_from_flags(["--tp-size", "16", "--nnodes", "2"]) == 2
    assert _nnodes_from_flags(["--nnodes=4"]) == 4
    assert _nnodes_from_flags(["--nnodes", "x"]) == 1


def test_a_multinode_plan_states_the_term_and_charges_it():
    """l40s (PCIe) at tp 16 over 2 nodes: the report's assumption names the nodes, and P drops by exactly the
    difference between the multi-node and the one-node figure."""
    gpu = find_profile("l40s")
    one, _, _ = default_free_before(gpu, 16)
    two, src, notes = default_free_before(gpu, 16, 2)
    assert one - two == (NCCL_MIB_MULTINODE - NCCL_MIB_PCIE_OVER_4) * MIB
    (a,) = [a for a in notes if a.name.startswith("NCCL")]
    assert a.name == "NCCL across 2 nodes (tp>1)" and a.value == f"{NCCL_MIB_MULTINODE} MiB per GPU"
    plan = make_plan(gpu, resolve_model("qwen3-8b"), ["--tp-size", "16", "--nnodes", "2"], version="0.5.16")
    assert plan.free_before_bytes == two
    assert any(x.name == "NCCL across 2 nodes (tp>1)" for x in plan.assumptions)
    one_node = make_plan(gpu, resolve_model("qwen3-8b"), ["--tp-size", "8"], version="0.5.16")
    assert not any("across" in x.name for x in one_node.assumptions)


def test_every_multinode_log_is_a_tp_group_over_nodes_with_a_profile():
    entries = _multinode_entries()
    assert {e["id"] for e in entries} >= {"sglang-3888", "sglang-5347", "sglang-3254"}
    for e in entries:
        assert e["nnodes"] > 1 and e["tp"] % e["nnodes"] == 0
        find_profile(e["multinode"]["profile"])
        assert e["multinode"]["checks"]


def test_logged_communication_buffers_are_within_the_multinode_figure():
    """Every multi-node 'Init torch distributed ends. mem usage' <= the figure the planner charges for that launch;
    the largest of them is the figure the reason text names."""
    seen = []
    for e in _multinode_entries():
        if "dist_init" not in e["multinode"]["checks"]:
            continue
        dist, _, _ = _logged(e)
        assert dist, e["id"]
        prof = find_profile(e["multinode"]["profile"])
        mib, _ = comm_buffer_mib(prof.interconnect, e["tp"], prof.vendor, nnodes=e["nnodes"])
        assert max(dist) * 1024 <= mib, e["id"]
        seen += dist
    assert max(seen) == MULTINODE_LOG_MAX_GB and min(seen) == 0.22


def test_logged_free_memory_against_the_planners():
    """The residual bound: the planner's free memory per GPU (before the weights: P; after: P - weights) is never
    above a multi-node log's and at most RESIDUAL_BOUND_GIB below it."""
    checked = 0
    for e in _multinode_entries():
        _, begin, end = _logged(e)
        prof = find_profile(e["multinode"]["profile"])
        if "free_before" in e["multinode"]["checks"]:
            planned = default_free_before(prof, e["tp"], e["nnodes"])[0] / GIB
            assert 0 <= min(begin) - planned <= RESIDUAL_BOUND_GIB, (e["id"], planned, begin)
            checked += 1
        if "free_after" in e["multinode"]["checks"]:
            p = e["plan"]
            plan = make_plan(find_profile(p["gpu"]), resolve_model(p["model"]), p["flags"], version=p["version"])
            planned = plan.free_after_bytes / GIB
            assert 0 <= min(end) - planned <= RESIDUAL_BOUND_GIB, (e["id"], planned, end)
            checked += 1
    assert checked >= 2
