"""SGLang 0.5.10-0.5.12: the "classic" sizing of ``model_runner_kv_cache_mixin`` (0.5.11 is the pipeline's
own reference, so its switches are all at their defaults).

* 0.5.11: ``srt/model_executor/model_runner_kv_cache_mixin.py`` and ``pool_configurator.py`` @0.5.11.
* 0.5.12: the sizing code is 0.5.11's (kv_cache_mixin, pool_configurator, memory_pool unchanged for these
  models); ``--speculative-algorithm`` became a free string looked up in a registry
  (srt/server_args.py _handle_speculative_decoding @0.5.12, srt/speculative/spec_info.py:47-60 @0.5.16).
"""

from __future__ import annotations

from dataclasses import replace

from planner.engines.sglang.rules import Rules

V0_5_11 = Rules(version="0.5.11", flags="v0_5_11")
V0_5_12 = replace(V0_5_11, version="0.5.12", flags="v0_5_12", spec_algo_registry=True)

RELEASES = {r.version: r for r in (V0_5_11, V0_5_12)}
