"""Plan for the machine at hand: NVML readings -> a GPU profile and the free memory P.

SGLang keys its defaults on the minimum NVML total over every GPU of the host
(``get_nvgpu_memory_capacity`` runs nvidia-smi, which ignores CUDA_VISIBLE_DEVICES:
srt/utils/common.py:1595-1630 @0.5.11), and measures P as the minimum free memory over its TP
ranks (model_runner.py:1214-1219 @0.5.11). So the profile's total is the host minimum and P is the
minimum free memory over the selected GPUs now (other processes already excluded by NVML), less
the CUDA context (and NCCL buffers at tp>1) that the server itself will add.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass

from planner.errors import BadInput
from planner.hardware.amdsmi import amd_selection
from planner.hardware.nvml import LiveGpu, NvmlUnavailable, host_min_total_mib, read_gpus
from planner.hardware.profiles import INTERCONNECT_DEFAULT, GpuProfile, find_profile

MIB = 1 << 20


@dataclass(frozen=True)
class LiveSelection:
    profile: GpuProfile
    gpus: list[LiveGpu]  # the selected GPUs
    host: list[LiveGpu]  # every GPU of the host
    free_now_bytes: int  # min free over the selected GPUs
    other_processes_bytes: int  # memory other processes hold on the selected GPUs (max over GPUs)
    note: str


def select(selector: str | list[int], nvml=None, meminfo_reader=None, amdsmi=None) -> LiveSelection:
    try:
        host = read_gpus(None, nvml=nvml, meminfo_reader=meminfo_reader)
    except NvmlUnavailable:
        amd = amd_selection(selector, amdsmi)  # a ROCm host: amdsmi's readings (planner/hardware/amdsmi.py)
        if amd is not None:
            return LiveSelection(*amd)
        raise
    if selector == "auto":
        gpus = host
    else:
        wanted = list(selector)
        bad = [i for i in wanted if i < 0 or i >= len(host)]
        if bad:
            raise BadInput(f"--gpu: GPU index {bad[0]} is out of range; this machine has {len(host)} GPU(s)")
        gpus = [host[i] for i in wanted]
    names = {g.name for g in gpus}
    if len(names) > 1:
        raise BadInput(f"--gpu: the selected GPUs differ ({', '.join(sorted(names))}); select one kind, e.g. --gpu 0")
    g0 = gpus[0]
    host_min = host_min_total_mib(host)
    frees = [g.free_bytes for g in gpus if g.free_bytes is not None]
    if not frees or host_min is None:
        raise BadInput(f"--gpu: NVML gave no memory reading for {g0.name}; use --gpu NAME with a profile")
    held = max((sum(p[1] or 0 for p in g.processes) for g in gpus), default=0)
    today = _dt.date.today().isoformat()
    base = None
    if g0.profile_id:
        base = find_profile(g0.profile_id)
    cc = f"{g0.cc[0]}.{g0.cc[1]}" if g0.cc else (base.compute_capability if base else None)
    if cc is None:
        raise BadInput(f"--gpu: NVML gave no compute capability for {g0.name}; use --gpu NAME with a profile")
    src = f"NVML reading on {today} via nvidia-ml-py"
    prof = GpuProfile(
        id=base.id if base else "live",
        display_name=f"{g0.name} (live: {len(gpus)} selected of {len(host)} on this host)",
        vendor="nvidia",
        nvml_names=[g0.name],
        memory_total_mib=int(host_min),
        driver_reserved_mib=(g0.reserved_bytes // MIB) if g0.reserved_bytes is not None else None,
        compute_capability=cc,
        memory_bandwidth_gbps=base.memory_bandwidth_gbps if base else None,
        unified_memory=False,
        interconnect=base.interconnect if base else INTERCONNECT_DEFAULT,
        sources={"memory_total_mib": f"{src}: minimum total over all {len(host)} GPU(s) of the host",
                 "compute_capability": src,
                 **({"driver_reserved_mib": f"{src}: nvmlDeviceGetMemoryInfo_v2 reserved"}
                    if g0.reserved_bytes is not None else {}),
                 **({"memory_bandwidth_gbps": base.sources.get("memory_bandwidth_gbps", "profile")}
                    if base and base.memory_bandwidth_gbps else {}),
                 **({"interconnect": base.sources.get("interconnect", "profile")}
                    if base and base.interconnect != INTERCONNECT_DEFAULT else {})},
    )
    note = (f"SGLang keys its defaults on the minimum NVML total over every GPU of the host "
            f"({int(host_min):,} MiB here), not only the selected ones")
    return LiveSelection(prof, gpus, host, min(frees), held, note)
