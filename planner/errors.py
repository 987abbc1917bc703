"""Errors that reach the user as one line, and the exit codes they map to."""

from __future__ import annotations

EXIT_FITS = 0
EXIT_DOES_NOT_FIT = 1
EXIT_BAD_INPUT = 2


class PlannerError(Exception):
    """Base class: the message is shown to the user as-is, on one line."""

    exit_code = EXIT_BAD_INPUT


class BadInput(PlannerError):
    """The user's input is wrong (unknown GPU/model, malformed config, bad flag value)."""

    exit_code = EXIT_BAD_INPUT
