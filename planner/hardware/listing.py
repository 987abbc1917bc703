"""plan gpus: the GPU profiles as a table, one line each, or as JSON rows."""

from __future__ import annotations

from typing import Any

from planner.hardware.profiles import load_profiles


def gpus_rows() -> list[dict[str, Any]]:
    """Every GPU profile as plan gpus shows it (hwprofiles/*.toml; capacity_mib: what SGLang sees)."""
    return [{"id": p.id, "display_name": p.display_name, "vendor": p.vendor, "memory_mib": p.capacity_mib,
             "memory_gib": round(p.capacity_mib / 1024, 2), "memory_estimated": p.memory_total_estimated,
             "unified_memory": p.unified_memory, "interconnect": p.interconnect, "aliases": list(p.aliases),
             "nvml_names": list(p.nvml_names)} for p in load_profiles()]


def render_gpus(rows: list[dict[str, Any]]) -> str:
    """id, memory (MiB and GiB; unified / estimated marked), interconnect, name; aliases: one line per profile."""
    mem = {r["id"]: f"{r['memory_mib']:,} MiB ({r['memory_gib']:.2f} GiB)"
                    + (", unified" if r["unified_memory"] else "") + (", estimated" if r["memory_estimated"] else "")
           for r in rows}
    w_id, w_mem = max(len(r["id"]) for r in rows), max(map(len, mem.values()))
    lines = [f"{'id':<{w_id}}  {'memory':<{w_mem}}  {'interconnect':<12}  name; aliases"]
    lines += [f"{r['id']:<{w_id}}  {mem[r['id']]:<{w_mem}}  {r['interconnect']:<12}  {r['display_name']}; "
              f"{', '.join(r['aliases']) or '-'}" for r in rows]
    return "\n".join(lines)
