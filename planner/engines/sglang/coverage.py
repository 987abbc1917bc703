"""What the planner covers, as ``plan models`` prints it and the README shows it: the families (architectures by
kind of cache), the releases each is planned on, the quantized checkpoints with a weight model, and what is refused.

Everything is read from the code that decides it (support.TARGET_ARCHS / DRAFT_ARCHS / ARCH_FIRST_RELEASE, the
release rules, planner/catalog/quant.py's method lists, quant_support.MEASURED_WEIGHTS_METHODS), so the table cannot
go stale: tests/test_coverage.py checks that every supported architecture sits in exactly one family, and the README's
copy is the command's output (scripts/readme_outputs.py).
"""

from __future__ import annotations

from planner.catalog.spec import GDN_ARCHS, MAMBA2_ARCHS, MLA_ARCHS
from planner.engines.sglang.rules import RULES
from planner.engines.sglang.support import (ARCH_FIRST_RELEASE, DRAFT_ARCHS, FULL_POOL_SLIDING_ARCHS, SLIDING_ARCHS,
                                            TARGET_ARCHS)

# (family, its architectures); the plain-attention split is the README's (dense / MoE / with a vision tower)
FAMILIES: tuple[tuple[str, frozenset[str]], ...] = (
    ("plain attention, dense", frozenset({"LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM",
                                          "Qwen3ForCausalLM"})),
    ("plain attention, MoE", frozenset({"Glm4MoeForCausalLM", "MiniMaxM2ForCausalLM", "MixtralForCausalLM",
                                        "Qwen3MoeForCausalLM"})),
    ("plain attention + vision", frozenset({"Qwen3VLForConditionalGeneration", "Qwen3VLMoeForConditionalGeneration"})),
    ("hybrid Gated-DeltaNet", frozenset(GDN_ARCHS)),
    ("hybrid Mamba2", frozenset(MAMBA2_ARCHS)),
    ("MLA (+ DSA indexer), MoE", frozenset(MLA_ARCHS)),
    ("sliding window / chunked", frozenset(SLIDING_ARCHS)),
    ("sliding window, one pool", frozenset(FULL_POOL_SLIDING_ARCHS)),
)
REFUSED = ("multi-head latent attention outside DeepSeek-V3's classes (DeepSeek-V2), sliding-window and chunked "
           "attention outside the families above (Gemma 3, a Mistral window, text-only Llama 4), "
           "latent MoE (moe_latent_size: Nemotron-3-Super), "
           "any config key the config audit refuses or does not know, expert / pipeline / data parallelism")


def _release(version_dir: str) -> str:
    return version_dir.removeprefix("v").replace("_", ".")


def _spans(verified: list[str]) -> str:
    """Releases as runs of consecutive modelled releases: 0.5.9-0.5.11, 0.5.13."""
    versions = list(RULES)
    runs: list[list[str]] = []
    for v in versions:
        if v not in verified:
            continue
        if runs and versions.index(runs[-1][-1]) == versions.index(v) - 1:
            runs[-1].append(v)
        else:
            runs.append([v])
    return ", ".join(r[0] if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs)


def _releases(arch: str) -> str:
    versions = list(RULES)
    if arch in MLA_ARCHS:  # the releases pipeline/mla.py checked against SGLang's code (others refused by name)
        from planner.engines.sglang.pipeline.mla import VERIFIED  # noqa: PLC0415

        return _spans(list(VERIFIED))
    first = _release(ARCH_FIRST_RELEASE[arch][0]) if arch in ARCH_FIRST_RELEASE else versions[0]
    return f"{first}-{versions[-1]}"


def _wrap(words: list[str], width: int) -> list[str]:
    lines, cur = [], ""
    for w in words:
        if cur and len(cur) + 2 + len(w) + 1 > width:  # room for the comma a break leaves
            lines.append(cur + ",")
            cur = w
        else:
            cur = f"{cur}, {w}" if cur else w
    return [*lines, cur] if cur else lines


def coverage_text() -> str:
    """The coverage table (plain text, at most 100 columns)."""
    from planner.catalog.quant import MODELLED_METHODS, ONLINE_METHODS  # noqa: PLC0415
    from planner.catalog.quant_support import MEASURED_WEIGHTS_METHODS  # noqa: PLC0415

    versions = list(RULES)
    out = [f"Coverage (SGLang {versions[0]}-{versions[-1]}; each family checked against SGLang's own code, "
           "tests/golden/)"]
    for label, archs in FAMILIES:
        by_range: dict[str, list[str]] = {}
        for arch in sorted(archs):
            by_range.setdefault(_releases(arch), []).append(arch)
        for span, names in by_range.items():
            head = f"  {label:<26}{span:<15}"
            if len(span) >= 15:  # releases with gaps: on their own line, the architectures below them
                out.append(f"  {label:<26}{span}")
                head, label = " " * 43, ""
            lines = _wrap(names, 100 - len(head))
            out.append(head + lines[0])
            out += [" " * len(head) + ln for ln in lines[1:]]
            label = ""
    head = f"  {'drafts':<26}{'where offered':<15}"  # each algorithm in the releases whose argparse has it
    drafts = _wrap(sorted(DRAFT_ARCHS), 100 - len(head))
    out.append(head + drafts[0])
    out += [" " * len(head) + ln for ln in drafts[1:]]
    for title, items in (("quantized checkpoints, weights modelled", MODELLED_METHODS),
                         ("online --quantization", ONLINE_METHODS),
                         ("weights measured only (--free-after-load-gib)", MEASURED_WEIGHTS_METHODS)):
        lines = _wrap(list(items), 96)
        out.append(f"  {title}:")
        out += ["    " + ln for ln in lines]
    # pipeline/quant_method.py W4AFp8Dispatch: the release's reading, not the method, lacks a weight model
    out[-1] += ";"
    out.append("    modelopt MIXED_PRECISION on 0.5.10-0.5.14 (read as w4afp8; SM >= 9.0, no draft)")
    out.append("  refused by name (exit 2):")
    out += ["    " + ln for ln in _wrap(REFUSED.split(", "), 96)]
    return "\n".join(out)


def covered_architectures() -> set[str]:
    return set().union(*(a for _, a in FAMILIES))


def uncovered() -> set[str]:
    """Supported targets in no family (tests/test_coverage.py keeps this empty)."""
    return set(TARGET_ARCHS) - covered_architectures()


__all__ = ["FAMILIES", "coverage_text", "covered_architectures", "uncovered"]
