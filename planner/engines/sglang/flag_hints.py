"""Flag errors that point at the fix, and the release an old spelling narrows the launch to (for planner.cli).

* :func:`flag_error`: SGLang's argparse refusing the flags -> one line naming the command the user gave and, per
  option the release does not take, the releases that take it or the near match in its own flag list;
* :func:`spelling_default`: the release to plan when none is given and nothing installed here says which: the
  newest that takes every spelling given (an old spelling narrows the release; the default is never moved to
  newer rules by a rename);
* :func:`spelling_range_note`: then, how every release of that range decides the launch.
"""

from __future__ import annotations

from planner.engines.sglang.rules import RULES
from planner.errors import BadInput
from planner.engines.sglang.plan import Plan


def flag_error(plan: Plan, launcher: str | None = None) -> BadInput | None:
    """SGLang's argparse refusing a flag is bad input for the user (exit 2), not a verdict. The line names the
    command the user gave (``launcher``, the paste's own, else the release's flags) and, for each option the
    release does not take, the releases that do or the near matches in its own flag list (flag_advice)."""
    if plan.error_type == "SystemExit":
        from planner.engines.sglang.cli_flags import build_parser, flag_advice, known_flag_names, option_names  # noqa: PLC0415

        msg = plan.error_message or "SGLang flag error"
        if plan.rules is None:
            return BadInput(msg)
        where = f"{launcher} (SGLang {plan.sglang_version})" if launcher else f"SGLang {plan.sglang_version} flags"
        prog = f"{build_parser(plan.rules.flags).prog}: error: "
        msg = f"{where}: {msg[len(prog):] if msg.startswith(prog) else msg}"
        known = known_flag_names(plan.rules.flags)
        releases = {v: r.flags for v, r in RULES.items()}
        hints = [flag_advice(n, plan.sglang_version, releases) for n in option_names(plan.flags)
                 if not any(k.startswith(n) for k in known)]  # an ambiguous abbreviation: argparse lists them
        hints = [h for h in hints if h]
        if hints:
            msg += f" ({'; '.join(hints)})"
        return BadInput(msg)
    return None


def spelling_default(flags: list[str], default: tuple[str, str] | None) -> tuple[str, str]:
    """The release to plan when none is given: ``default`` (default_version()) unless no sglang is installed
    here to go by and the flags use a spelling that release does not take but others do (an old spelling
    narrows the release): then the newest release that takes every given spelling, and why."""
    from planner.engines.sglang.cli_flags import accepting_releases, accepts, known_flag_names, option_names, release_span  # noqa: PLC0415
    from planner.engines.sglang.post_releases import post_base  # noqa: PLC0415
    from planner.engines.sglang.rules import default_version, installed_sglang  # noqa: PLC0415

    default = default or default_version()
    names = option_names(flags)
    rules = RULES.get(default[0])
    if not names or rules is None:
        return default
    known = known_flag_names(rules.flags)
    odd = [n for n in names if not accepts(n, known)]
    inst = installed_sglang()
    if not odd or (inst is not None and (inst in RULES or post_base(inst))):
        return default  # the installed release is the one the user runs: its argparse says what is wrong
    releases = {v: r.flags for v, r in RULES.items()}
    ok = accepting_releases(names, releases)
    if not ok:
        return default
    spans = "; ".join(f"{n} is the {release_span(accepting_releases([n], releases), list(releases))} spelling"
                      for n in odd)
    return ok[-1], (f"{spans}: the newest release that takes {'it' if len(odd) == 1 else 'them'} (the default, "
                    f"{default[0]}, does not); add --sglang-version X to plan the release you run")


def spelling_range_note(plan: Plan, flags: list[str]) -> str | None:
    """After :func:`spelling_default` narrowed the release: how every release that takes the spellings given
    decides the same launch, so that a user of an older one in that range sees whether the choice matters (the
    seed's 0.5.11 launch fails where 0.5.19 fits)."""
    from planner.engines.sglang.cli_flags import accepting_releases, option_names  # noqa: PLC0415
    from planner.engines.sglang.report import RANGE_DIFFERS, other_versions, verdict_line  # noqa: PLC0415

    ok = accepting_releases(option_names(flags), {v: r.flags for v, r in RULES.items()})
    if len(ok) < 2 or plan.free_before_source.startswith("live"):
        return None
    groups: list[tuple[list[str], str]] = []  # runs of releases with the same verdict headline
    for vs, other in other_versions(plan, ok):
        outcome = "refused" if other is None else verdict_line(other).split(":", 1)[0]
        if groups and groups[-1][1] == outcome:
            groups[-1][0].extend(vs)
        else:
            groups.append((list(vs), outcome))

    def span(vs: list[str]) -> str:
        return vs[0] if len(vs) == 1 else f"{vs[0]}-{vs[-1]}"

    if len(groups) == 1:
        return f"every release that takes these spellings ({span(ok)}) decides this launch the same: {groups[0][1]}"
    return (RANGE_DIFFERS + ": "
            + ", ".join(f"{span(vs)} {outcome}" for vs, outcome in groups)
            + "; add --sglang-version X for the one you run (--compare-releases says what changed)")
