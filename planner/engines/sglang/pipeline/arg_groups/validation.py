"""The last steps of ServerArgs: environment variables the flags set, and ``check_server_args``.

SGLang: ``_handle_environment_variables`` (srt/server_args.py:3922-3926 @0.5.11) and ``check_server_args``
(srt/server_args.py:6773-6830 @0.5.11).
"""

from __future__ import annotations

from planner.engines.sglang.pipeline.server_args import ArgState, Rejected


def environment_variables(s: ArgState) -> None:
    """0.10 _handle_environment_variables (srt/server_args.py:3922-3926 @0.5.11)."""
    s.env = dict(s.env)
    if s.a["mamba_ssm_dtype"] is not None:
        s.env["SGLANG_MAMBA_SSM_DTYPE"] = s.a["mamba_ssm_dtype"]


def check_server_args(s: ArgState) -> None:
    """check_server_args (srt/server_args.py:6773-6830 @0.5.11): the checks that touch sizing."""
    if s.cps > 0 and s.cps % s.page != 0:
        raise Rejected("AssertionError", "chunked_prefill_size must be divisible by page_size",
                       "srt/server_args.py:6823-6826 @0.5.11")
