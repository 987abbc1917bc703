"""SGLang's launch shapes the CLI hands to their own modules before its one-plan path: a PD deployment (``--prefill-replicas``
/ ``--decode-replicas``, :mod:`planner.engines.sglang.pd_deploy`), one plan per pipeline-parallel rank
(``--pp-size`` > 1, :mod:`planner.engines.sglang.pp_cli`) and the hardware search / export (``--gpu any`` or a list of GPU types,
``--export``, :mod:`planner.engines.sglang.deploy`). The CLI passes its own helpers in, so neither module imports the CLI."""

from __future__ import annotations

from typing import Any, Callable

from planner.engines.sglang.deploy import add_hardware_args  # noqa: F401 - the CLI's parser adds the hardware options from here


def other_mode(ns: Any, model: Any, sglang_flags: list[str], env: dict[str, str], write_out: Callable,
               build_needs: Callable, resolve_model: Callable) -> int | None:
    """The exit code of the mode these arguments ask for, or None for the ordinary plan."""
    from planner.engines.sglang.deploy import hardware_main, is_gpu_set  # noqa: PLC0415
    from planner.engines.sglang.pd_deploy import wants_deployment  # noqa: PLC0415
    from planner.engines.sglang.pp import pp_size_of  # noqa: PLC0415

    if wants_deployment(sglang_flags):  # a PD deployment: roles x replicas (planner/engines/sglang/pd_deploy.py)
        from planner.engines.sglang.pd_deploy import deploy_main  # noqa: PLC0415

        return deploy_main(ns, model, sglang_flags, env, write_out)
    if pp_size_of(sglang_flags) > 1 and not is_gpu_set(ns.gpu):  # one plan per pipeline-parallel rank (pp.py);
        from planner.engines.sglang.pp_cli import pp_main  # noqa: PLC0415  (with --gpu any: deploy.py refuses it)

        return pp_main(ns, model, sglang_flags, env, write_out)
    if getattr(ns, "layouts", None) is not None and not is_gpu_set(ns.gpu):
        from planner.errors import BadInput  # noqa: PLC0415

        raise BadInput("--layouts: only with --gpu any or a list of GPU types (the hardware search); one launch's "
                       "layout is its own flags")
    if is_gpu_set(ns.gpu) or ns.export:  # which hardware: GPU type x count x layout (planner/engines/sglang/deploy.py)
        return hardware_main(ns, model and resolve_model(model), sglang_flags, env, build_needs, write_out)
    return None
