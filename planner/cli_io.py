"""The CLI's output edge: stdout that may be closed (``plan ... | head``) or unable to encode the text (an ASCII
terminal), and the one-line error on stderr. Shared by :mod:`planner.cli` and the modes it hands off to."""

from __future__ import annotations

import io
import sys


def one_line(text: str) -> str:
    return " ".join(str(text).split("\n")).replace("\r", " ")


_ASCII = {"—": "-", "–": "-", "×": "x", "·": "-", "≥": ">=", "≤": "<=", "→": "->", "←": "<-", "…": "...",
          "’": "'", "‘": "'", "“": '"', "”": '"', "≈": "~", "²": "^2", "µ": "u", "±": "+-"}


def _to_ascii(text: str) -> str:
    for k, v in _ASCII.items():
        text = text.replace(k, v)
    return text.encode("ascii", "replace").decode("ascii")


class _ClosedStdout(Exception):
    pass


def write_out(text: str, stream=None) -> None:
    """Write to stdout (or ``stream``): a stream that cannot encode the text gets it in ASCII; a closed
    pipe (``plan ... | head``) stops the output but not the exit code."""
    stream = stream if stream is not None else sys.stdout
    try:
        try:
            stream.write(text)
        except UnicodeEncodeError:
            stream.write(_to_ascii(text))
        stream.flush()
    except BrokenPipeError:
        _silence_stdout()
        raise _ClosedStdout from None
    except (OSError, ValueError) as exc:  # a closed file object raises ValueError
        if stream is sys.stdout or isinstance(exc, ValueError):
            _silence_stdout()
            raise _ClosedStdout from None
        raise


def _silence_stdout() -> None:
    import os  # noqa: PLC0415

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        pass


def _say_error(message: str) -> None:
    text = f"plan: error: {one_line(message)}\n"
    try:
        try:
            sys.stderr.write(text)
        except UnicodeEncodeError:
            sys.stderr.write(_to_ascii(text))
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
