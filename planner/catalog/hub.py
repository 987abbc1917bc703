"""``--model org/name[@revision]``: a model's config.json and weight size from the Hugging Face cache or Hub.

Everything goes through ``huggingface_hub``'s own functions, so its environment is honoured as-is:
``HF_HOME`` / ``HF_HUB_CACHE`` (the standard cache layout, ``models--org--name/snapshots/<sha>/``),
``HF_HUB_OFFLINE``, ``HF_ENDPOINT`` and ``HF_TOKEN``. ``huggingface_hub`` is imported only here, and
only when a Hub id is resolved (the planner's cold start stays light).

What is read, cache first, then the Hub when online:

1. ``config.json`` (``try_to_load_from_cache``, else ``hf_hub_download``: cached like any download);
2. the weights' size, never the weights:
   * ``model.safetensors.index.json`` ``metadata.total_size`` (downloaded and cached the same way);
   * no index: the ``*.safetensors`` files of the snapshot (``model_info`` siblings), each one's JSON
     header only, through HTTP range requests (``HfApi.parse_safetensors_file_metadata``, the way
     hf-mem reads a repo), summing the tensors' ``data_offsets``; a header of a file already in the
     cache is read from disk.
   Offline with neither in the cache, the caller estimates from the architecture and says why.

Every failure becomes one :class:`BadInput` line (exit 2): offline and not cached (with the two ways
out), a gated repo (a token is needed: ``HF_TOKEN``), an unknown repo or revision, an unreachable Hub.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planner.errors import BadInput

CONFIG = "config.json"
INDEX = "model.safetensors.index.json"

# What huggingface_hub accepts as a repo id (utils/_validators.py: REPO_ID_REGEX), plus '@revision'.
_HUB_ID = re.compile(r"^(?P<repo>[\w.\-]{1,96}/[\w.\-]{1,96})(?:@(?P<rev>[^\s@]+))?$")


@dataclass(frozen=True)
class HubWeights:
    total: int
    source: str  # 'safetensors-index' | 'safetensors-headers'
    detail: str


@dataclass(frozen=True)
class HubModel:
    repo_id: str
    revision: str | None  # as the user gave it (None: main)
    commit: str  # the snapshot's commit sha
    config: dict[str, Any]
    weights: HubWeights | None  # None: no index / header could be read (offline, or no safetensors)
    why_no_weights: str  # when weights is None: why, for the estimate's label
    where: str  # 'HF cache' or the endpoint it came from


def parse_hub_id(text: str) -> tuple[str, str | None] | None:
    """``org/name`` or ``org/name@revision`` -> (repo_id, revision); None when ``text`` is not of that form."""
    m = _HUB_ID.match(text.strip())
    if m is None:
        return None
    return m["repo"], m["rev"]


def resolve_hub_model(repo_id: str, revision: str | None, near: str = "") -> HubModel:
    """Config and weight size of ``repo_id`` at ``revision`` (see the module docstring).

    ``near`` is appended to the unknown-repo line (the catalog's near matches, computed by the caller)."""
    from huggingface_hub import constants  # noqa: PLC0415
    from huggingface_hub.utils import are_progress_bars_disabled, disable_progress_bars, enable_progress_bars  # noqa: PLC0415

    rev = revision or "main"
    quiet_before = are_progress_bars_disabled()
    disable_progress_bars()  # a few KiB of JSON: no download bars on the planner's stderr
    try:
        config_path, where = _config_file(repo_id, rev)
        commit = _snapshot_commit(config_path)
        config = _read_json(config_path, repo_id)
        weights, why = _weights(repo_id, commit, Path(config_path).parent)
    except BadInput:
        raise
    except Exception as exc:  # noqa: BLE001 - every huggingface_hub failure becomes one line
        raise _one_line(exc, repo_id, revision, near, constants) from None
    finally:
        if not quiet_before:
            enable_progress_bars()
    return HubModel(repo_id, revision, commit, config, weights, why, where)


# --------------------------------------------------------------------------- config.json


def _config_file(repo_id: str, rev: str) -> tuple[str, str]:
    """(path of config.json in the HF cache, where it came from): cache first, then the Hub."""
    from huggingface_hub import constants, hf_hub_download, try_to_load_from_cache  # noqa: PLC0415
    from huggingface_hub.errors import EntryNotFoundError, LocalEntryNotFoundError  # noqa: PLC0415

    cached = try_to_load_from_cache(repo_id, CONFIG, revision=rev)
    if isinstance(cached, str):
        return cached, "HF cache"
    if constants.is_offline_mode():
        raise BadInput(_offline_line(repo_id, rev, constants.HF_HUB_CACHE))
    try:
        _commit_of(repo_id, rev)  # fails fast; the download below records refs/<rev> in the cache
        return hf_hub_download(repo_id, CONFIG, revision=rev), constants.ENDPOINT
    except EntryNotFoundError as exc:
        if isinstance(exc, LocalEntryNotFoundError):
            raise
        at = "" if rev == "main" else f"@{rev}"
        raise BadInput(f"--model: {repo_id}{at} has no {CONFIG} (not a transformers checkpoint?); "
                       "pass a local config.json instead") from None


def _commit_of(repo_id: str, rev: str) -> str:
    """The commit ``rev`` names, from one HEAD of config.json (``get_hf_file_metadata``).

    Made without retries, so an unreachable Hub, an unknown repo, a gated repo or a missing revision
    is reported at once (``hf_hub_download`` alone retries a failed connection for ~25 s)."""
    from huggingface_hub import get_hf_file_metadata, hf_hub_url  # noqa: PLC0415

    meta = get_hf_file_metadata(hf_hub_url(repo_id, CONFIG, revision=rev))
    if not meta.commit_hash:
        raise BadInput(f"--model: {hf_hub_url(repo_id, CONFIG, revision=rev)} answered without an X-Repo-Commit "
                       "header: HF_ENDPOINT does not look like a Hugging Face Hub")
    return meta.commit_hash


def _offline_line(repo_id: str, rev: str, cache: str) -> str:
    at = "" if rev == "main" else f"@{rev}"
    return (f"--model: {repo_id}{at} is not in the Hugging Face cache ({cache}) and HF_HUB_OFFLINE=1; "
            "go online (unset HF_HUB_OFFLINE) or pass a local config.json or checkpoint directory")


def _snapshot_commit(path: str) -> str:
    """The commit sha of a cached file: ``.../snapshots/<sha>/config.json``."""
    return Path(path).parent.name


def _read_json(path: str, repo_id: str) -> dict[str, Any]:
    """A cached JSON file of the repo, read and checked at the edge (planner.catalog.config_file): one line naming
    the repo and the file when it is not a JSON object."""
    from planner.catalog.config_file import read_json_file  # noqa: PLC0415

    shown = f"{repo_id}'s cached {Path(path).name}"
    data = read_json_file(Path(path), shown=shown)
    if not isinstance(data, dict):
        raise BadInput(f"--model: {shown} must hold a JSON object")
    return data


# --------------------------------------------------------------------------- weights


def _weights(repo_id: str, commit: str, snapshot: Path) -> tuple[HubWeights | None, str]:
    """The checkpoint's weight bytes at ``commit``, from the index or the safetensors headers."""
    from huggingface_hub import constants  # noqa: PLC0415

    offline = constants.is_offline_mode()
    index = _index_file(repo_id, commit, offline)
    if isinstance(index, str):
        from planner.catalog.config_file import validate_index  # noqa: PLC0415

        data = validate_index(_read_json(index, repo_id), f"{repo_id}'s {INDEX}")
        total = (data.get("metadata") or {}).get("total_size")
        if total:
            return HubWeights(total, "safetensors-index",
                              f"{INDEX} metadata.total_size ({repo_id} @ {commit[:12]})"), ""
        shards = sorted(set((data.get("weight_map") or {}).values()))
        return _headers(repo_id, commit, snapshot, shards, offline)
    if offline:  # index not cached (None) or known to be absent (False): weights the cache holds, if any
        cached = sorted(p.name for p in snapshot.glob("*.safetensors"))
        if cached:
            return _headers(repo_id, commit, snapshot, cached, offline)
        if index is None:
            return None, f"offline: {INDEX} of {repo_id} is not in the HF cache"
        return None, f"offline: no {INDEX} and no safetensors header of {repo_id} in the HF cache"
    return _headers(repo_id, commit, snapshot, _safetensors_files(repo_id, commit), offline)


def _index_file(repo_id: str, commit: str, offline: bool) -> str | bool | None:
    """Path of the cached index (downloading it when online); False: the repo has none; None: unknown (offline)."""
    from huggingface_hub import hf_hub_download, try_to_load_from_cache  # noqa: PLC0415
    from huggingface_hub.errors import RemoteEntryNotFoundError  # noqa: PLC0415

    cached = try_to_load_from_cache(repo_id, INDEX, revision=commit)
    if isinstance(cached, str):
        return cached
    if cached is not None:  # _CACHED_NO_EXIST: huggingface_hub recorded that the file does not exist
        return False
    if offline:
        return None
    try:
        return hf_hub_download(repo_id, INDEX, revision=commit)
    except RemoteEntryNotFoundError:  # a 404 from the Hub (recorded in the cache's .no_exist)
        return False


def _safetensors_files(repo_id: str, commit: str) -> list[str]:
    """Top-level ``*.safetensors`` files of the repo at ``commit`` (``model_info`` siblings)."""
    from huggingface_hub import HfApi  # noqa: PLC0415

    info = HfApi().model_info(repo_id, revision=commit)
    return sorted(s.rfilename for s in (info.siblings or ())
                  if s.rfilename.endswith(".safetensors") and "/" not in s.rfilename)


def _headers(repo_id: str, commit: str, snapshot: Path, files: list[str],
             offline: bool) -> tuple[HubWeights | None, str]:
    """Sum of tensor bytes over ``files``' safetensors headers: from disk when cached, else range requests."""
    from planner.catalog.safetensors_header import safetensors_payload_bytes  # noqa: PLC0415

    if not files:
        return None, f"{repo_id} @ {commit[:12]} has no safetensors weights"
    total = 0
    remote = 0
    for name in files:
        local = snapshot / name
        if local.is_file():
            total += safetensors_payload_bytes(local)
            continue
        if offline:
            return None, f"offline: the safetensors header of {repo_id}/{name} is not in the HF cache"
        total += _remote_header_bytes(repo_id, commit, name)
        remote += 1
    if total <= 0:  # SGLang would find no weight to load
        raise BadInput(f"--model: the safetensors files of {repo_id} @ {commit[:12]} hold no tensor data (their "
                       "headers list 0 bytes); pass a local checkpoint directory instead")
    how = "range requests" if remote else "the HF cache"
    return HubWeights(total, "safetensors-headers",
                      f"sum of tensor sizes in {len(files)} safetensors header(s) of {repo_id} @ {commit[:12]}"
                      f" (read through {how}, no weights)"), ""


def _remote_header_bytes(repo_id: str, commit: str, filename: str) -> int:
    from huggingface_hub import HfApi  # noqa: PLC0415

    meta = HfApi().parse_safetensors_file_metadata(repo_id, filename, revision=commit)
    return sum(int(t.data_offsets[1]) - int(t.data_offsets[0]) for t in meta.tensors.values())


# --------------------------------------------------------------------------- errors


def _one_line(exc: Exception, repo_id: str, revision: str | None, near: str, constants) -> BadInput:
    """The one line a huggingface_hub failure shows the user."""
    from huggingface_hub import errors as e  # noqa: PLC0415
    from huggingface_hub.utils import get_token  # noqa: PLC0415

    at = f"@{revision}" if revision else ""
    endpoint = constants.ENDPOINT
    token = get_token()
    if isinstance(exc, e.GatedRepoError):
        if token:
            return BadInput(f"--model: {repo_id} is gated and the token in use (HF_TOKEN) has no access to it; "
                            f"request access at {endpoint}/{repo_id}, or pass a local config.json")
        return BadInput(f"--model: {repo_id} is gated: a Hugging Face token is needed; accept its terms at "
                        f"{endpoint}/{repo_id} and set HF_TOKEN (or run `hf auth login`)")
    if isinstance(exc, e.RevisionNotFoundError):
        return BadInput(f"--model: {repo_id} has no revision '{revision}' on {endpoint}; "
                        "give a branch, tag or commit sha after '@'")
    if isinstance(exc, e.RepositoryNotFoundError):
        private = "" if token else " (if it is private or gated, set HF_TOKEN)"
        return BadInput(f"--model: unknown model '{repo_id}{at}': no such repo on {endpoint}{private}"
                        f"{'; ' + near if near else ''}")
    if isinstance(exc, e.EntryNotFoundError) and not isinstance(exc, e.LocalEntryNotFoundError):
        return BadInput(f"--model: {repo_id}{at}: a file listed by {endpoint} was not found there; try again, "
                        "or pass a local checkpoint directory")
    if isinstance(exc, e.OfflineModeIsEnabled):
        return BadInput(_offline_line(repo_id, revision or "main", constants.HF_HUB_CACHE))
    if isinstance(exc, e.HFValidationError):
        return BadInput(f"--model: '{repo_id}{at}' is not a valid Hugging Face id (org/name[@revision])")
    if isinstance(exc, e.HfHubHTTPError):
        status = exc.response.status_code if exc.response is not None else "?"
        if status == 403:
            return BadInput(f"--model: {endpoint} refused access to {repo_id} (403); check that HF_TOKEN "
                            "has read access to it")
        return BadInput(f"--model: {endpoint} answered HTTP {status} for {repo_id}{at}; try again, or pass a "
                        "local config.json or checkpoint directory")
    if isinstance(exc, (e.SafetensorsParsingError, e.NotASafetensorsRepoError)):
        return BadInput(f"--model: {repo_id}{at}: a safetensors header could not be read; pass a local "
                        "checkpoint directory instead")
    if isinstance(exc, (e.LocalEntryNotFoundError, OSError)) or type(exc).__module__.startswith(("httpx", "httpcore")):
        return BadInput(f"--model: cannot reach {endpoint} and {repo_id}{at} is not in the Hugging Face cache "
                        f"({constants.HF_HUB_CACHE}); check the network (or HF_ENDPOINT), or pass a local "
                        "config.json or checkpoint directory")
    return BadInput(f"--model: {repo_id}{at}: {type(exc).__name__} while reading it from {endpoint}")
