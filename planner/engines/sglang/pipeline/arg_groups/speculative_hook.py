"""Speculative decoding: the algorithm, its step/topk/draft-token defaults, and what it does to overlap.

SGLang: ``_handle_speculative_decoding`` (srt/server_args.py:3286-3630 @0.5.11); since 0.5.13
``srt/arg_groups/speculative_hook.py``.
"""

from __future__ import annotations

from planner.engines.sglang.pipeline.dflash import dflash_block_size, dflash_draft_backend
from planner.engines.sglang.pipeline.server_args import ArgState, Rejected, _env_bool, _NotModelled, standalone_dp_attention

_ALGORITHMS = ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM", "DFLASH", "DSPARK")


def _algorithm(s: ArgState) -> str | None:
    """0.5.12+: a free string, upper-cased, looked up in a registry
    (srt/arg_groups/speculative_hook.py:80-121, srt/speculative/spec_info.py:47-60 @0.5.16)."""
    algo = s.spec_user
    if s.rules.spec_algo_registry and algo is not None:
        algo = algo.upper()
        if algo not in _ALGORITHMS:
            raise Rejected("ValueError", f"Unknown speculative algorithm name: {s.spec_user}",
                           "srt/speculative/spec_info.py:47-60 @0.5.16")
    return algo


def _overlap(s: ArgState) -> None:
    """Whether EAGLE keeps the overlap schedule (spec v2), per release."""
    rules, env, why, topk = s.rules, s.env, s.why, s.topk
    if not rules.spec_v2_env:
        pass  # 0.5.14+: overlap is kept (srt/arg_groups/speculative_hook.py:495-520 @0.5.16)
    elif rules.spec_v2_default_off:
        # SGLANG_ENABLE_SPEC_V2 (default False, srt/environ.py:442 @0.5.10) forces overlap on or off
        # (srt/server_args.py:2999-3019 @0.5.10)
        if _env_bool(env, "SGLANG_ENABLE_SPEC_V2", default=False):
            s.overlap_off = False
            why["disable_overlap_schedule"] = "SGLANG_ENABLE_SPEC_V2 turns overlap on (server_args.py:2999-3004 @0.5.10)"
            if topk is not None and topk > 1:
                raise Rejected("ValueError", "Spec v2 currently only supports topk = 1 for speculative decoding.",
                               "srt/server_args.py:3005-3012 @0.5.10")
        else:
            s.overlap_off = True
            why["disable_overlap_schedule"] = ("spec v2 is off by default in 0.5.10, so no overlap schedule "
                                               "(server_args.py:3013-3019 @0.5.10)")
    elif rules.spec_topk_disables_overlap and topk is not None and topk > 1 and not s.overlap_off:
        s.overlap_off = True
        why["disable_overlap_schedule"] = "spec v2 only supports topk = 1, so spec v1 (server_args.py:3461-3467 @0.5.11)"
    elif not _env_bool(env, "SGLANG_ENABLE_SPEC_V2", default=True) and not s.overlap_off:
        s.overlap_off = True
        why["disable_overlap_schedule"] = "SGLANG_ENABLE_SPEC_V2=False, so spec v1 (server_args.py:3468-3473 @0.5.11)"


def _draft_shape(s: ArgState) -> None:
    """steps / topk / draft tokens: auto-chosen, then checked (srt/server_args.py:3518-3555 @0.5.11)."""
    a, why = s.a, s.why
    if s.steps is None:
        if not (s.topk is None and s.ndraft is None):
            raise Rejected("AssertionError", "", "srt/server_args.py:3518-3522 @0.5.11")
        s.steps, s.topk, s.ndraft = (5, 4, 8) if s.arch == "LlamaForCausalLM" else (3, 1, 4)
        why["speculative_num_steps"] = f"auto_choose_speculative_params -> ({s.steps}, {s.topk}, {s.ndraft}) " \
                                       "(server_args.py:7471-7506 @0.5.11)"
    if s.topk is None:
        # --speculative-num-steps given without --speculative-eagle-topk: SGLang's own
        # `speculative_eagle_topk > 1` comparison raises (srt/server_args.py:3548-3550 @0.5.11,
        # srt/arg_groups/speculative_hook.py:639-642 @0.5.16)
        raise Rejected("TypeError", "'>' not supported between instances of 'NoneType' and 'int'",
                       "srt/server_args.py:3548-3550 @0.5.11")
    topk, page, attn = s.topk, s.page, s.attn
    if attn == "trtllm_mha" or a["decode_attention_backend"] == "trtllm_mha" \
            or a["prefill_attention_backend"] == "trtllm_mha":
        if topk > 1:
            raise Rejected("ValueError", "trtllm_mha backend only supports topk = 1 for speculative decoding.",
                           "srt/server_args.py:3529-3537 @0.5.11")
    if topk == 1 and s.ndraft != s.steps + 1:
        s.ndraft = s.steps + 1
        why["speculative_num_draft_tokens"] = ("speculative_num_steps + 1 when topk == 1 "
                                               "(server_args.py:3539-3546 @0.5.11)")
    if s.rules.page_tree_triton:
        if topk > 1 and page > 1 and attn not in ("flashinfer", "fa3", "triton"):
            raise Rejected("ValueError", "speculative_eagle_topk > 1 with page_size > 1 is only supported on "
                           f"('flashinfer', 'fa3', 'triton'); got attention_backend={attn!r}. Use page_size == 1 "
                           "or one of those backends.", "srt/arg_groups/speculative_hook.py:376-386 @0.5.13")
    elif topk > 1 and page > 1 and attn not in ("flashinfer", "fa3"):
        raise Rejected("ValueError", "speculative_eagle_topk > 1 with page_size > 1 is unstable and produces "
                       "incorrect results for paged attention backends. This combination is only supported "
                       "for the 'flashinfer' backend.", "srt/server_args.py:3548-3555 @0.5.11")


# --- DFLASH ---
def _handle_dflash(s: ArgState) -> None:
    """DFLASH: steps and topk forced to 1, D = the verify block, max_running_requests 48
    (srt/server_args.py:3319-3446 @0.5.11; _handle_dflash, srt/arg_groups/speculative_hook.py:133-251 @0.5.13,
    :350-470 @0.5.16, @0.5.23). pp > 1 and DP attention are refused earlier (check_scope), and so is
    --speculative-draft-window-size (the compact draft cache is not modelled)."""
    a, why = s.a, s.why
    if a["speculative_draft_model_path"] is None:
        raise Rejected("ValueError", "DFLASH speculative decoding requires setting --speculative-draft-model-path.",
                       "srt/server_args.py:3330-3333 @0.5.11")
    if s.draft is not None and s.draft.architecture != "DFlashDraftModel":
        raise _NotModelled(f"--speculative-algorithm DFLASH with a {s.draft.architecture} draft: not modelled by this "
                           "planner (a DFlashDraftModel head is)")
    for key, name in (("steps", "speculative_num_steps"), ("topk", "speculative_eagle_topk")):
        if getattr(s, key) is None or int(getattr(s, key)) != 1:
            if getattr(s, key) is not None:
                s.warn.append(f"DFLASH only supports {name} == 1; overriding {name}={getattr(s, key)} to 1.")
            setattr(s, key, 1)
            why[name] = "DFLASH forces 1 (srt/server_args.py:3335-3356 @0.5.11)"
    block = a.get("speculative_dflash_block_size")
    if block is not None:
        if int(block) <= 0:
            raise Rejected("ValueError", f"DFLASH requires --speculative-dflash-block-size to be positive, got {block}.",
                           "srt/server_args.py:3358-3363 @0.5.11")
        if s.ndraft is not None and int(s.ndraft) != int(block):
            raise Rejected("ValueError", "Both --speculative-num-draft-tokens and --speculative-dflash-block-size are "
                           "set but they differ. For DFLASH they must match. speculative_num_draft_tokens="
                           f"{s.ndraft}, speculative_dflash_block_size={block}.", "srt/server_args.py:3364-3372 @0.5.11")
        s.ndraft = int(block)
        why["speculative_num_draft_tokens"] = "--speculative-dflash-block-size (server_args.py:3373-3375 @0.5.11)"
    if s.ndraft is None:
        s.ndraft, how = dflash_block_size(s.draft)
        why["speculative_num_draft_tokens"] = f"{how} (server_args.py:3387-3420 @0.5.11)"
    s.dflash_draft_backend = dflash_draft_backend(s.rules.dflash_draft_backend, a["prefill_attention_backend"] or s.attn,
                                                  s.draft, s.dev.sm100)
    if s.mrr is None:
        s.mrr = 48
        why["max_running_requests"] = "reset to 48 for DFLASH (server_args.py:3430-3434 @0.5.11)"
    if s.rules.dflash_overlap_off:
        s.overlap_off = True
        why["disable_overlap_schedule"] = ("DFLASH turns the overlap scheduler off in 0.5.11-0.5.13 (spec v2 not yet "
                                           "supported, server_args.py:3436-3439 @0.5.11)")


# --- STANDALONE ---
def _handle_standalone(s: ArgState) -> None:
    """STANDALONE's own rules before the EAGLE-family ones it shares: SGLang rejects DP attention, and
    auto-chosen parameters are (3, 1, 4) whatever the target's architecture (srt/server_args.py:2355-2360,
    5749-5751 @0.5.9; srt/arg_groups/speculative_hook.py:261-268, 518-519 @0.5.14)."""
    if standalone_dp_attention(s.raw):
        raise Rejected("ValueError", "Currently standalone speculative decoding does not support dp attention.",
                       "srt/arg_groups/speculative_hook.py:261-268 @0.5.14")
    if s.steps is None and s.topk is None and s.ndraft is None:
        s.steps, s.topk, s.ndraft = 3, 1, 4
        s.why["speculative_num_steps"] = ("auto_choose_speculative_params: (3, 1, 4) for STANDALONE "
                                          "(srt/arg_groups/speculative_hook.py:518-519 @0.5.14)")


# --- DSPARK ---
def _dspark_draft_gamma(path: str | None) -> int | None:
    """The draft config's DSpark gamma as read_draft_checkpoint_gamma reads it: ``dspark_block_size``, else the
    DFlash ``dflash_config.block_size`` / top-level ``block_size`` (parse_dspark_draft_config,
    srt/speculative/dspark_components/dspark_config.py:213-295, dflash_utils.py:459-468 @0.5.16); None when the
    config cannot be read (SGLang only warns, dspark_config.py:271-285)."""
    if not path:
        return None
    from planner.catalog.catalog import resolve_model  # noqa: PLC0415 (the draft's config.json, as SGLang reads it)
    from planner.errors import BadInput  # noqa: PLC0415

    try:
        cfg = resolve_model(path).spec.raw
    except BadInput:
        return None
    for raw in (cfg.get("dspark_block_size"), (cfg.get("dflash_config") or {}).get("block_size"), cfg.get("block_size")):
        if raw is not None:
            return int(raw)
    return None


def _handle_dspark(s: ArgState) -> None:
    """_handle_dspark (srt/arg_groups/speculative_hook.py:276-420 @0.5.16, :666-880 @0.5.23): steps = topk = 1,
    D = gamma + 1, max_running_requests 48. DP attention and pp > 1 are refused before this runs (check_scope)."""
    a, why = s.a, s.why
    cite = "srt/arg_groups/speculative_hook.py:276-420 @0.5.16"
    path = a.get("speculative_draft_model_path")
    if not path:  # no dspark_* keys on our targets' configs, no dspark/ subfolder (:721-748 @0.5.23)
        raise Rejected("ValueError", "DSpark dense speculative decoding requires setting "
                       "--speculative-draft-model-path.", cite)
    if s.steps is not None and int(s.steps) != 1:
        s.warn.append(f"DSpark only supports speculative_num_steps == 1; overriding speculative_num_steps={s.steps} to 1.")
    if s.topk is not None and int(s.topk) != 1:
        s.warn.append(f"DSpark only supports speculative_eagle_topk == 1; overriding speculative_eagle_topk={s.topk} to 1.")
    s.steps, s.topk = 1, 1
    why["speculative_num_steps"] = f"DSPARK forces steps = topk = 1 ({cite})"
    block = a.get("speculative_dspark_block_size")
    if block is not None:
        if int(block) <= 0:
            raise Rejected("ValueError", "DSpark requires --speculative-dspark-block-size to be positive, "
                           f"got {block}.", cite)
        gamma, src = int(block), "--speculative-dspark-block-size"
    else:
        gamma, src = _dspark_draft_gamma(path), "the draft config's block_size"
        if gamma is None and s.ndraft is None:
            gamma, src = 7, "DEFAULT_DSPARK_GAMMA (dspark_config.py:16 @0.5.16)"
            s.warn.append("DSpark gamma is not set; defaulting to 7.")
    if gamma is not None:
        verify = gamma + 1
        if s.ndraft is not None and int(s.ndraft) != verify:
            raise Rejected("ValueError", "DSpark speculative_num_draft_tokens must equal gamma + 1 "
                           f"(= {verify} for gamma={gamma}), but got speculative_num_draft_tokens={s.ndraft}.", cite)
        s.ndraft = verify
        why["speculative_num_draft_tokens"] = f"DSPARK verify width = gamma + 1 = {verify}, gamma from {src} ({cite})"
    if s.ndraft is None:
        raise Rejected("ValueError", "DSpark could not resolve speculative_num_draft_tokens; set "
                       "--speculative-dspark-block-size (= gamma).", cite)
    if int(s.ndraft) < 2:
        raise Rejected("ValueError", "DSpark speculative_num_draft_tokens must be >= 2 (= gamma + 1), "
                       f"got {s.ndraft}.", cite)
    if s.mrr is None:
        s.mrr = 48
        why["max_running_requests"] = f"reset to 48 for DSPARK speculative decoding ({cite}); it also sizes the " \
                                      "speculative reservation"


# --- NGRAM ---
def _handle_ngram(s: ArgState) -> None:
    """NGRAM: drafts come from a token trie in host memory (no draft model, no draft KV pool).

    ``_handle_speculative_decoding``'s NGRAM branch (srt/server_args.py:2461-2501 @0.5.9, :3557-3617
    @0.5.11); ``_handle_ngram`` (srt/arg_groups/speculative_hook.py:389-447 @0.5.13, :466-535 @0.5.16,
    :1285-1371 @0.5.23): max_running_requests 48 unless given; topk = --speculative-ngram-max-bfs-breadth;
    D = --speculative-num-draft-tokens, else the release's default; 0.5.14+ steps = D // topk when not
    given; overlap off (<= 0.5.13) and mixed chunk off; topk > 1 with page > 1 only on flashinfer.
    """
    a, rules, why = s.a, s.rules, s.why
    if s.mrr is None:
        s.mrr = 48
        why["max_running_requests"] = ("reset to 48 for speculative decoding (_handle_ngram, "
                                       "srt/arg_groups/speculative_hook.py:1293-1301 @0.5.23; server_args.py:2467-2471 @0.5.9)")
    if rules.ngram_disables_overlap:
        s.overlap_off = True
        why["disable_overlap_schedule"] = ("NGRAM turns the overlap scheduler off "
                                           "(srt/server_args.py:2473 @0.5.9; arg_groups/speculative_hook.py:399 @0.5.13)")
    breadth = a.get("speculative_ngram_max_bfs_breadth")
    s.topk = 10 if breadth is None else int(breadth)
    why["speculative_eagle_topk"] = (f"--speculative-ngram-max-bfs-breadth {s.topk} "
                                     "(srt/arg_groups/speculative_hook.py:1309-1313 @0.5.23; server_args.py:2475 @0.5.9)")
    if s.ndraft is None:
        if rules.ngram_draft_tokens_from_window:
            window = a.get("speculative_ngram_max_match_window_size")
            s.ndraft = 12 if window is None else int(window)
            why["speculative_num_draft_tokens"] = (f"--speculative-ngram-max-match-window-size {s.ndraft} "
                                                   "(srt/server_args.py:2476-2479 @0.5.9)")
        else:
            s.ndraft = 12
            why["speculative_num_draft_tokens"] = ("12 by default for NGRAM (srt/arg_groups/speculative_hook.py:"
                                                   "1314-1323 @0.5.23; server_args.py:3571-3576 @0.5.11)")
    if rules.ngram_steps_from_draft_tokens and s.steps is None:
        if s.topk == 0:  # --speculative-ngram-max-bfs-breadth 0: SGLang's own D // topk raises
            raise Rejected("ZeroDivisionError", "integer division or modulo by zero",
                           "srt/arg_groups/speculative_hook.py:1324-1330 @0.5.23")
        s.steps = s.ndraft // s.topk
        why["speculative_num_steps"] = (f"D {s.ndraft} // topk {s.topk} (srt/arg_groups/speculative_hook.py:"
                                        "1324-1330 @0.5.23; :484-488 @0.5.14)")
    if s.topk > 1 and s.page > 1 and s.attn != "flashinfer":
        raise Rejected("ValueError", f"speculative_eagle_topk({s.topk}) > 1 with page_size({s.page}) > 1 is "
                       "unstable and produces incorrect results for paged attention backends. This combination is "
                       "only supported for the 'flashinfer' backend.",
                       "srt/arg_groups/speculative_hook.py:1355-1366 @0.5.23; server_args.py:2486-2495 @0.5.9")


def speculative_decoding(s: ArgState) -> None:
    """0.9 _handle_speculative_decoding (srt/server_args.py:3286-3630 @0.5.11)."""
    a = s.a
    algo = _algorithm(s)
    s.steps, s.topk, s.ndraft = a["speculative_num_steps"], a["speculative_eagle_topk"], a["speculative_num_draft_tokens"]
    s.mrr = a["max_running_requests"]
    s.mrr_user = s.mrr is not None
    if algo == "NEXTN":
        algo = "EAGLE"
        s.why["speculative_algorithm"] = "NEXTN is an alias of EAGLE (server_args.py:3310-3311 @0.5.11)"
    s.algo = algo
    if algo == "DFLASH":
        _handle_dflash(s)
    if algo == "STANDALONE":
        _handle_standalone(s)
    if algo in ("EAGLE", "EAGLE3", "STANDALONE"):
        if s.mrr is None:
            s.mrr = 48
            s.why["max_running_requests"] = ("reset to 48 for speculative decoding (server_args.py:3454-3458 @0.5.11); "
                                             "it also sizes the speculative reservation")
        _overlap(s)
        _draft_shape(s)
    elif algo == "DSPARK" and s.rules.dspark:
        _handle_dspark(s)
    elif algo == "DSPARK":  # not registered before 0.5.16 (srt/speculative/spec_info.py:30-57 @0.5.15)
        raise Rejected("ValueError", f"Unknown speculative algorithm name: {s.spec_user}",
                       "srt/speculative/spec_info.py:44-57 @0.5.15")
    elif algo == "NGRAM":
        _handle_ngram(s)
