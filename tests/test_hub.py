"""--model org/name[@revision] through huggingface_hub: a local Hub-shaped server, a prepared cache, offline.

The real ``huggingface_hub`` client runs every time (nothing of it is mocked): it reads
``HF_ENDPOINT``, ``HF_HOME`` and ``HF_HUB_OFFLINE`` when it is imported, so each environment gets
its own ``python`` process. The server below answers the requests the client makes, shaped like
huggingface.co's:

* ``HEAD|GET /{repo}/resolve/{rev}/{file}``: a branch or tag is redirected (307, relative
  ``Location``) to ``/api/resolve-cache/models/{repo}/{sha}/{file}``; a file answers with
  ``X-Repo-Commit``, ``ETag`` and ``Content-Length``; ``Range: bytes=a-b`` answers 206;
* ``GET /api/models/{repo}/revision/{rev}``: the model info (``sha``, ``siblings``);
* errors with the Hub's ``X-Error-Code``: ``RepoNotFound`` (401 without a token, as the Hub does),
  ``GatedRepo`` (401 without a token, 403 with one that has no access), ``RevisionNotFound``,
  ``EntryNotFound`` (404, with ``X-Repo-Commit``).

Fixtures (tests/data/hub/SOURCES.md): the real Llama-3.1-70B-Instruct config.json, and its
published index ``total_size``. The header-only repo's safetensors files are virtual: the server
builds their JSON headers from the real tensor shapes and answers 500 to any request that reaches
past the first 100,001 bytes, so a test fails if weights are ever fetched.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
import shlex
import struct
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from planner.cli import main

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data" / "hub"
LLAMA = "meta-llama/Llama-3.1-70B-Instruct"
HEADERS_REPO = "test-org/Llama-3.1-70B-headers-only"
LLAMA_CONFIG = (DATA / "meta-llama__Llama-3.1-70B-Instruct.config.json").read_bytes()
LLAMA_INDEX = (DATA / "meta-llama__Llama-3.1-70B-Instruct.model.safetensors.index.json").read_bytes()
PUBLISHED_TOTAL = 141_107_412_992  # tests/data/hub/SOURCES.md
GOOD_TOKEN = "hf_test_granted"
SHA_LLAMA = hashlib.sha1(b"llama-3.1-70b-instruct main").hexdigest()
SHA_HEADERS = hashlib.sha1(b"headers-only main").hexdigest()
SHA_OLD = hashlib.sha1(b"headers-only old").hexdigest()
PLAN = ["--gpu", "h100", "--tp-size", "4", "--json", "--no-search"]


# --------------------------------------------------------------------------- checkpoint content


def llama_tensors(cfg: dict) -> list[tuple[str, list[int]]]:
    """The tensors of a Llama checkpoint (HF LlamaForCausalLM names and shapes), in layer order."""
    h, inter, vocab = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    kv = cfg["num_key_value_heads"] * (h // cfg["num_attention_heads"])
    out = [("model.embed_tokens.weight", [vocab, h])]
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        out += [(p + "input_layernorm.weight", [h]), (p + "post_attention_layernorm.weight", [h]),
                (p + "self_attn.q_proj.weight", [h, h]), (p + "self_attn.k_proj.weight", [kv, h]),
                (p + "self_attn.v_proj.weight", [kv, h]), (p + "self_attn.o_proj.weight", [h, h]),
                (p + "mlp.gate_proj.weight", [inter, h]), (p + "mlp.up_proj.weight", [inter, h]),
                (p + "mlp.down_proj.weight", [h, inter])]
    return out + [("model.norm.weight", [h]), ("lm_head.weight", [vocab, h])]


class VirtualSafetensors:
    """A safetensors file known by its header: the tensor bytes behind it are never materialised."""

    def __init__(self, tensors: list[tuple[str, list[int]]]):
        header: dict = {"__metadata__": {"format": "pt"}}
        offset = 0
        for name, shape in tensors:
            n = 2
            for d in shape:
                n *= d
            header[name] = {"dtype": "BF16", "shape": shape, "data_offsets": [offset, offset + n]}
            offset += n
        raw = json.dumps(header, separators=(",", ":")).encode()
        raw += b" " * (-len(raw) % 8)
        self.head = struct.pack("<Q", len(raw)) + raw
        self.payload = offset
        self.size = len(self.head) + offset
        self.etag = hashlib.sha256(self.head).hexdigest()

    def read(self, start: int, end: int) -> bytes:
        if end >= 100_001:
            raise PermissionError(f"bytes {start}-{end}: past the header, into the weights")
        return (self.head + b"\0" * max(0, end + 1 - len(self.head)))[start:end + 1]


def hub_repos() -> dict:
    cfg = json.loads(LLAMA_CONFIG)
    tensors = llama_tensors(cfg)
    half = len(tensors) // 2
    shards = {"model-00001-of-00002.safetensors": VirtualSafetensors(tensors[:half]),
              "model-00002-of-00002.safetensors": VirtualSafetensors(tensors[half:])}
    old_cfg = dict(cfg, max_position_embeddings=8192, rope_scaling=None)
    return {
        LLAMA: {"gated": True, "refs": {"main": SHA_LLAMA},
                "files": {SHA_LLAMA: {"config.json": LLAMA_CONFIG, "model.safetensors.index.json": LLAMA_INDEX}}},
        HEADERS_REPO: {"gated": False, "refs": {"main": SHA_HEADERS, "old": SHA_OLD},
                       "files": {SHA_HEADERS: {"config.json": LLAMA_CONFIG, **shards},
                                 SHA_OLD: {"config.json": json.dumps(old_cfg, indent=2).encode(), **shards}}},
    }


# --------------------------------------------------------------------------- the Hub-shaped server


class HubHandler(BaseHTTPRequestHandler):
    server: "HubServer"

    def log_message(self, *args):  # quiet
        pass

    def do_HEAD(self):
        self._route(head=True)

    def do_GET(self):
        self._route(head=False)

    def _route(self, head: bool) -> None:
        path = unquote(urlparse(self.path).path)
        self.server.log.append((self.command, path, self.headers.get("Range")))
        if path.startswith("/__case__/"):  # the test driver marking where a case starts
            self.send_response(204)
            self.end_headers()
            return
        if m := re.fullmatch(r"/api/models/([^/]+/[^/]+)/revision/([^/]+)", path):
            return self._model_info(m[1], m[2])
        if m := re.fullmatch(r"/api/resolve-cache/models/([^/]+/[^/]+)/([0-9a-f]{40})/(.+)", path):
            return self._file(m[1], m[2], m[3], head, redirect=False)
        if m := re.fullmatch(r"/([^/]+/[^/]+)/resolve/([^/]+)/(.+)", path):
            return self._file(m[1], m[2], m[3], head, redirect=True)
        self._error(404, None, "Not Found")

    def _error(self, status: int, code: str | None, message: str, commit: str | None = None) -> None:
        body = json.dumps({"error": message}).encode()
        self.send_response(status)
        if code:
            self.send_header("X-Error-Code", code)
        self.send_header("X-Error-Message", message)
        if commit:
            self.send_header("X-Repo-Commit", commit)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _repo(self, repo_id: str) -> dict | None:
        """The repo when this request may read it; otherwise answer the error and return None."""
        auth = self.headers.get("Authorization") or ""
        token = auth.removeprefix("Bearer ").strip() or None
        repo = self.server.repos.get(repo_id)
        if repo is None:
            self._error(401 if token is None else 404, "RepoNotFound", "Repository not found")
            return None
        if repo["gated"] and token != GOOD_TOKEN:
            if token is None:
                self._error(401, "GatedRepo", f"Access to model {repo_id} is restricted. You must have access to "
                            "it and be authenticated to access it. Please log in.")
            else:
                self._error(403, "GatedRepo", f"Access to model {repo_id} is restricted and you are not in the "
                            "authorized list.")
            return None
        return repo

    def _sha(self, repo: dict, rev: str) -> str | None:
        sha = repo["refs"].get(rev, rev)
        if sha not in repo["files"]:
            self._error(404, "RevisionNotFound", f"Invalid rev id: {rev}")
            return None
        return sha

    def _model_info(self, repo_id: str, rev: str) -> None:
        repo = self._repo(repo_id)
        sha = repo and self._sha(repo, rev)
        if not sha:
            return
        body = json.dumps({"_id": sha[:24], "id": repo_id, "modelId": repo_id, "sha": sha, "private": False,
                           "gated": "manual" if repo["gated"] else False, "tags": [],
                           "siblings": [{"rfilename": f} for f in sorted(repo["files"][sha])]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _file(self, repo_id: str, rev: str, filename: str, head: bool, redirect: bool) -> None:
        repo = self._repo(repo_id)
        sha = repo and self._sha(repo, rev)
        if not sha:
            return
        if redirect and rev != sha:
            self.send_response(307)
            self.send_header("Location", f"/api/resolve-cache/models/{repo_id}/{sha}/{filename}")
            self.send_header("X-Repo-Commit", sha)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        content = repo["files"][sha].get(filename)
        if content is None:
            return self._error(404, "EntryNotFound", f"{filename} does not exist on \"{rev}\"", commit=sha)
        virtual = isinstance(content, VirtualSafetensors)
        size = content.size if virtual else len(content)
        etag = content.etag if virtual else hashlib.sha1(content).hexdigest()
        start, end, status = 0, size - 1, 200
        if (rng := self.headers.get("Range")) and not head:
            a, b = re.fullmatch(r"bytes=(\d+)-(\d*)", rng).groups()
            start, end, status = int(a), min(int(b) if b else size - 1, size - 1), 206
        if virtual and not head:
            try:
                body = content.read(start, end) if status == 206 else content.read(0, size - 1)
            except PermissionError as exc:
                self.server.refused.append(str(exc))
                return self._error(500, None, str(exc))
        else:
            body = b"" if head else content[start:end + 1]
        self.send_response(status)
        self.send_header("X-Repo-Commit", sha)
        self.send_header("ETag", f'"{etag}"')
        self.send_header("Accept-Ranges", "bytes")
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.send_header("Content-Length", str(size if head else len(body)))
        self.end_headers()
        if not head:
            self.wfile.write(body)


class HubServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, repos: dict):
        super().__init__(("127.0.0.1", 0), HubHandler)
        self.repos = repos
        self.log: list[tuple[str, str, str | None]] = []
        self.refused: list[str] = []

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


@pytest.fixture(scope="module")
def hub():
    server = HubServer(hub_repos())
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


# --------------------------------------------------------------------------- running the planner


def hf_env(home: Path, endpoint: str = "http://127.0.0.1:9", **extra: str) -> dict[str, str]:
    """A process environment with only the Hugging Face settings given here."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING_FACE", "TRANSFORMERS_"))}
    env.update(PYTHONPATH=str(ROOT), HF_HOME=str(home), HF_ENDPOINT=endpoint, HF_HUB_DISABLE_TELEMETRY="1",
               NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost", **extra)
    return env


def plan_cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    """``plan ARGS`` in a fresh process, as a user runs it."""
    return subprocess.run([sys.executable, "-m", "planner", *args], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


_CASES_DRIVER = r"""
import contextlib, io, json, os, sys, urllib.request
from planner.cli import main
out = []
for name, token, argv in json.loads(sys.argv[1]):
    os.environ.pop("HF_TOKEN", None)
    if token:
        os.environ["HF_TOKEN"] = token
    if os.environ.get("HF_HUB_OFFLINE") != "1":
        urllib.request.urlopen(os.environ["HF_ENDPOINT"] + "/__case__/" + name).close()  # marks the server log
    so, se = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(so), contextlib.redirect_stderr(se):
        rc = main(argv)
    out.append({"name": name, "rc": rc, "stdout": so.getvalue(), "stderr": se.getvalue()})
print(json.dumps(out))
"""


def plan_cases(cases: list[tuple[str, str | None, list[str]]], env: dict[str, str], hub: HubServer | None) -> dict:
    """Several ``plan`` runs (planner.cli.main, the `plan` entry point) in one fresh process with ``env``,
    HF_TOKEN set per case (huggingface_hub reads it at each call). Returns {name: {rc, stdout, stderr,
    requests}}, ``requests`` being what the case asked of the server."""
    proc = subprocess.run([sys.executable, "-c", _CASES_DRIVER, json.dumps(cases)], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    results = {r["name"]: dict(r, requests=[]) for r in json.loads(proc.stdout)}
    current = None
    for method, path, rng in (hub.log if hub is not None else ()):
        if path.startswith("/__case__/"):
            current = results[path.removeprefix("/__case__/")]
        elif current is not None:
            current["requests"].append((method, path, rng))
    return results


def summary(stdout: str) -> dict:
    return json.loads(stdout)["summary"]


@pytest.fixture(scope="module")
def expected() -> dict:
    """The catalog's Llama-3.3-70B-Instruct plan: same tensor shapes and published total_size as 3.1-70B,
    so a 3.1-70B read from the Hub must plan identically."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["--model", "llama-3.3-70b-instruct", *PLAN]) == 0
    return summary(out.getvalue())


def one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    return lines[0]


def cached_snapshot(home: Path, repo_id: str, sha: str) -> Path:
    return home / "hub" / f"models--{repo_id.replace('/', '--')}" / "snapshots" / sha


def prepare_cache(home: Path, repo_id: str, sha: str, files: dict[str, bytes]) -> None:
    """The standard HF cache layout, as `hf download` leaves it: blobs/<etag>, snapshots/<sha>/<file>
    linking to ../../blobs/<etag>, refs/main holding the sha."""
    repo = home / "hub" / f"models--{repo_id.replace('/', '--')}"
    (repo / "blobs").mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(sha)
    snap = repo / "snapshots" / sha
    snap.mkdir(parents=True)
    for name, content in files.items():
        etag = hashlib.sha1(content).hexdigest()
        (repo / "blobs" / etag).write_bytes(content)
        (snap / name).symlink_to(Path("..") / ".." / "blobs" / etag)


# --------------------------------------------------------------------------- tests

ONLINE = [  # in this order: the gated cases run before the repo is in the cache
    ("gated-no-token", None, ["--model", LLAMA, *PLAN]),
    ("gated-no-access", "hf_test_not_granted", ["--model", LLAMA, *PLAN]),
    ("fresh", GOOD_TOKEN, ["--model", LLAMA, *PLAN]),
    ("again", None, ["--model", LLAMA, *PLAN]),
    ("unknown", None, ["--model", "meta-llama/Llama-3.1-8B-Instruc", *PLAN]),
    ("headers", None, ["--model", HEADERS_REPO, *PLAN]),
    ("rev-branch", None, ["--model", f"{HEADERS_REPO}@old", *PLAN]),
    ("rev-sha", None, ["--model", f"{HEADERS_REPO}@{SHA_OLD}", *PLAN]),
    ("rev-missing", None, ["--model", f"{HEADERS_REPO}@v9", *PLAN]),
]


@pytest.fixture(scope="module")
def online(hub, tmp_path_factory):
    """Every online case, in order, in one process: HF_ENDPOINT = the server, an empty HF_HOME."""
    home = tmp_path_factory.mktemp("online") / "hf"
    return home, plan_cases(ONLINE, hf_env(home, hub.endpoint), hub)


def test_llama_70b_through_the_hub_shaped_server_without_a_cache(online, expected):
    """Done when: `plan --gpu h100 --model meta-llama/Llama-3.1-70B-Instruct --tp-size 4` through the
    Hub-shaped server with an empty cache (the repo is gated, as on the Hub: HF_TOKEN is set)."""
    home, res = online
    fresh = res["fresh"]
    assert fresh["rc"] == 0, fresh["stderr"]
    out = json.loads(fresh["stdout"])
    assert out["model"]["name"] == LLAMA and out["model"]["weight_bytes"] == PUBLISHED_TOTAL
    assert summary(fresh["stdout"]) == expected
    assert "safetensors-index" in fresh["stdout"]
    paths = [p for _, p, _ in fresh["requests"]]
    assert f"/{LLAMA}/resolve/main/config.json" in paths  # HEAD, answered 307
    assert f"/api/resolve-cache/models/{LLAMA}/{SHA_LLAMA}/config.json" in paths
    assert f"/{LLAMA}/resolve/{SHA_LLAMA}/model.safetensors.index.json" in paths
    assert not any(p.endswith(".safetensors") for p in paths)


def test_files_read_are_cached_and_read_from_the_cache_first(online, expected):
    home, res = online
    snap = cached_snapshot(home, LLAMA, SHA_LLAMA)
    assert (snap / "config.json").read_bytes() == LLAMA_CONFIG
    assert (snap / "model.safetensors.index.json").read_bytes() == LLAMA_INDEX
    assert (snap.parents[1] / "refs" / "main").read_text() == SHA_LLAMA
    again = res["again"]  # still online, no token: served from the cache, not one request
    assert again["rc"] == 0 and again["requests"] == []
    assert summary(again["stdout"]) == expected


def test_the_downloaded_cache_serves_offline(online, expected):
    """HF_HUB_OFFLINE=1 and the Hub unreachable, on the cache the online run filled."""
    home, _ = online
    res = plan_cases([("llama", None, ["--model", LLAMA, *PLAN]),
                      ("headers-old", None, ["--model", f"{HEADERS_REPO}@old", *PLAN])],
                     hf_env(home, HF_HUB_OFFLINE="1"), None)
    assert res["llama"]["rc"] == 0, res["llama"]["stderr"]
    assert summary(res["llama"]["stdout"]) == expected
    # its config is cached, its headers are not (range requests are not downloads): an estimate, said so
    old = res["headers-old"]
    assert old["rc"] in (0, 1), old["stderr"]
    model = json.loads(old["stdout"])["model"]
    assert model["weight_source"] == "estimate" and "offline" in model["weight_detail"]
    assert "safetensors header of test-org/Llama-3.1-70B-headers-only in the HF cache" in model["weight_detail"]


def test_prepared_cache_offline_is_the_readme_command(tmp_path, expected):
    """Done when: the README's command, from a cache in the standard layout, HF_HUB_OFFLINE=1, no Hub."""
    home = tmp_path / "hf"
    prepare_cache(home, LLAMA, SHA_LLAMA, {"config.json": LLAMA_CONFIG, "model.safetensors.index.json": LLAMA_INDEX})
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    command = f"plan --gpu h100 --model {LLAMA} --tp-size 4"
    assert f"\n{command}\n" in readme
    res = plan_cli(shlex.split(command)[1:], hf_env(home, HF_HUB_OFFLINE="1"))
    assert res.returncode == 0, res.stderr
    assert f"Model: {LLAMA} (LlamaForCausalLM), weights 131.4 GiB" in " ".join(res.stdout.split())  # default report
    res = plan_cli([*shlex.split(command)[1:], "--verbose"], hf_env(home, HF_HUB_OFFLINE="1"))
    assert res.returncode == 0, res.stderr
    words = " ".join(res.stdout.split())  # the report wraps at the terminal width, which differs under xdist
    assert f"Model: {LLAMA} (LlamaForCausalLM); weights 131.42 GiB [safetensors-index:" in words
    assert f"max_total_num_tokens N = {expected['max_total_num_tokens']:,}" in words


def test_offline_and_not_cached_says_so_in_one_line(tmp_path):
    res = plan_cli(["--gpu", "h100", "--model", LLAMA, "--tp-size", "4"],
                   hf_env(tmp_path / "empty", HF_HUB_OFFLINE="1"))
    line = one_line(res.stderr)
    assert res.returncode == 2 and res.stdout == ""
    assert LLAMA in line and "not in the Hugging Face cache" in line and "HF_HUB_OFFLINE=1" in line
    assert "go online" in line and "local config.json or checkpoint directory" in line


def test_gated_repo_names_hf_token_in_one_line(online):
    _, res = online
    for name in ("gated-no-token", "gated-no-access"):
        line = one_line(res[name]["stderr"])
        assert res[name]["rc"] == 2 and "gated" in line and "HF_TOKEN" in line and LLAMA in line, line
    assert "a Hugging Face token is needed" in res["gated-no-token"]["stderr"]
    assert "has no access" in res["gated-no-access"]["stderr"]


def test_unknown_repo_is_one_line_with_near_catalog_matches(online):
    _, res = online
    line = one_line(res["unknown"]["stderr"])
    assert res["unknown"]["rc"] == 2 and "unknown model 'meta-llama/Llama-3.1-8B-Instruc'" in line
    assert "did you mean: llama-3.1-8b-instruct" in line


def test_no_index_reads_safetensors_headers_by_range_never_the_weights(online, hub, expected):
    _, res = online
    h = res["headers"]
    assert h["rc"] == 0, h["stderr"]
    assert json.loads(h["stdout"])["model"]["weight_bytes"] == PUBLISHED_TOTAL
    assert summary(h["stdout"]) == expected
    assert "safetensors-headers" in h["stdout"] and "range requests" in h["stdout"]
    shard_gets = [(p, r) for m, p, r in h["requests"] if p.endswith(".safetensors") and m == "GET"]
    assert len(shard_gets) == 2 and all(r == "bytes=0-100000" for _, r in shard_gets), shard_gets
    assert hub.refused == []
    assert ("GET", f"/api/models/{HEADERS_REPO}/revision/{SHA_HEADERS}", None) in h["requests"]


def test_revision_after_at_selects_that_snapshot(online):
    """A branch and its commit sha give that revision's config (8,192 positions, no rope scaling)."""
    home, res = online
    for name in ("rev-branch", "rev-sha"):
        assert res[name]["rc"] == 0, res[name]["stderr"]
        assert summary(res[name]["stdout"])["context_len"] == 8192
    assert cached_snapshot(home, HEADERS_REPO, SHA_OLD).joinpath("config.json").is_file()
    line = one_line(res["rev-missing"]["stderr"])
    assert res["rev-missing"]["rc"] == 2 and "no revision 'v9'" in line


def test_hub_ids_parse_and_catalog_ids_stay_offline():
    from planner.catalog.catalog import resolve_model
    from planner.catalog.hub import parse_hub_id

    assert parse_hub_id("meta-llama/Llama-3.1-70B-Instruct") == (LLAMA, None)
    assert parse_hub_id(f"{LLAMA}@v1.0") == (LLAMA, "v1.0")
    assert parse_hub_id("a b/c") is None and parse_hub_id("a/b/c") is None
    # a Hugging Face id the catalog carries never reaches the Hub
    assert resolve_model("meta-llama/Llama-3.3-70B-Instruct").catalog_id == "llama-3.3-70b-instruct"
