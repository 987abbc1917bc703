"""Per-version code for SGLang 0.5.13: the 0.5.11 adapter (versions/v0_5_11.py, which 0.5.12 also runs) plus the
one ModelRunner.__init__ attribute 0.5.13 adds that the sizing reads.

0.5.13's ModelRunner.__init__ sets ``self._linear_attn_registry_cache = _UNSET`` (srt/model_executor/model_runner.py:568
@0.5.13) and ``mambaish_config`` -> ``_get_linear_attn_registry_result`` (:2219-2224) reads it, filling it from
SGLang's own ``get_linear_attn_config`` on first use. The oracle builds the runner with ``ModelRunner.__new__``
(``__init__`` needs NCCL and weights), so without the attribute every model whose config is not one of the hybrid
classes checked before it (dense Llama / Qwen / Mixtral ...) stops at runner_setup with an AttributeError, an oracle
artifact. Stand-in: the class gets the same initial value, ``_UNSET``, so the first read on each fresh runner
behaves as after ``__init__`` (the property then writes the instance attribute, as in SGLang). Nothing else differs.
"""
from versions import v0_5_11 as _base
from versions.v0_5_11 import *  # noqa: F401,F403  (re-exported for oracle.py)

globals().update({k: getattr(_base, k) for k in dir(_base) if k.startswith("_") and not k.startswith("__")})

VERSION = "0.5.13"


def load():
    S = _base.load()
    from sglang.srt.model_executor import model_runner as mr  # noqa: PLC0415

    if hasattr(mr, "_UNSET") and not hasattr(mr.ModelRunner, "_linear_attn_registry_cache"):
        mr.ModelRunner._linear_attn_registry_cache = mr._UNSET  # model_runner.py:568 @0.5.13 (__init__'s value)
    return S


SOURCE_MAP = {**_base.SOURCE_MAP, "oracle_stand_ins_not_sglang": [
    *_base.SOURCE_MAP["oracle_stand_ins_not_sglang"],
    "ModelRunner._linear_attn_registry_cache: the initial value ModelRunner.__init__ sets (_UNSET, "
    "model_runner.py:568 @0.5.13) given as a class attribute, since the runner is built with __new__"]}
