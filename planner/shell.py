"""Shell text both engines print: a launch command wrapped so that it still pastes into a shell as is."""

from __future__ import annotations

import shlex


def shell_wrap(command: str, width: int, indent: str = "  ") -> str:
    """A launch command wrapped with backslash continuations: still pastes into a shell as is."""
    words = shlex.split(command)
    lines, cur = [], indent
    i = 0
    while i < len(words):
        w = shlex.quote(words[i])
        if words[i].startswith("--") and i + 1 < len(words) and not words[i + 1].startswith("--"):
            w += " " + shlex.quote(words[i + 1])  # a flag and its value stay together
            i += 1
        i += 1
        if cur.strip() and len(cur) + 1 + len(w) + 2 > width:
            lines.append(cur + " \\")
            cur = indent + "    " + w
        else:
            cur = cur + (" " if cur.strip() else "") + w
    lines.append(cur)
    return "\n".join(lines)


__all__ = ["shell_wrap"]
