"""The paste form: a launch command as people paste it -> (model path, SGLang flags, env).

Accepted shapes (everything after ``plan ... --``, or one quoted string):

* ``python -m sglang.launch_server ...``, ``python3 -m ...``, any interpreter path
  (``/opt/venv/bin/python3.12 -m ...``), ``sglang serve ...``, ``launch_server ...``;
* environment assignments first (``CUDA_VISIBLE_DEVICES=0 SGLANG_... =1 python -m ...``, also
  ``env A=1 ...``): they become ``--env`` entries (SGLang reads its own from the environment);
* ``uv run [uv options] python -m ...``;
* ``docker run [docker options] IMAGE python3 -m ...``: docker's own options (and ``-e K=V``
  assignments, which become ``--env``) are stripped;
* backslash continuations (``\\`` + newline, or a lone ``\\`` token) anywhere;
* setup commands before the launch, joined by ``&&`` or ``;`` (``pip install sglang==0.5.11 && python -m ...``).

:func:`release_of_paste` reads the SGLang release the command runs, where it names one: a docker image tag
(``lmsysorg/sglang:v0.5.11-cu129``; ``:latest`` names none), ``uv run --with sglang==X``, ``pip install sglang==X``.

This module is pure string handling; it raises :class:`planner.errors.BadInput` with one line.
"""

from __future__ import annotations

import re
import shlex

from planner.errors import BadInput

_ENV_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_PY_RE = re.compile(r"^(?:.*/)?python(?:\d+(?:\.\d+)*)?(?:\.exe)?$")
_MODULES = ("sglang.launch_server", "sglang.srt.server", "sglang")
# docker run options that take a value (the rest are switches); `-e`/`--env` are read as env
_DOCKER_VALUED = {
    "-e", "--env", "--env-file", "-v", "--volume", "-p", "--publish", "--name", "--gpus", "--shm-size",
    "--ipc", "--network", "--net", "-w", "--workdir", "-u", "--user", "--entrypoint", "--runtime",
    "--mount", "--device", "--ulimit", "--memory", "-m", "--cpus", "--label", "-l", "--platform",
    "--pull", "--restart", "--hostname", "-h", "--add-host", "--cap-add", "--cap-drop", "--security-opt",
    "--log-driver", "--log-opt", "--cidfile", "--pid", "--uts", "--cgroupns", "--stop-signal",
    "--stop-timeout", "--health-cmd", "--tmpfs", "--group-add", "--dns", "--expose", "--link",
}
_UV_VALUED = {"--with", "--python", "-p", "--project", "--directory", "--env-file", "--extra", "--group",
              "--index", "--index-url", "--extra-index-url", "--from"}
HELP = ("expected a launch command such as 'python -m sglang.launch_server --model-path X ...' "
        "(also: env assignments first, any python path, uv run, docker run ... IMAGE ..., sglang serve)")


def tokens_of(tokens: list[str]) -> list[str]:
    """Join what a shell would: one quoted string is split; backslash continuations are dropped."""
    if len(tokens) == 1 and (" " in tokens[0] or "\n" in tokens[0]):
        try:
            tokens = shlex.split(tokens[0].replace("\\\n", " "))
        except ValueError as exc:
            raise BadInput(f"after '--': cannot split the pasted command ({exc})") from None
    out = []
    for t in tokens:
        t = t.replace("\\\n", "").strip("\n") if "\n" in t else t
        if t in ("\\", ""):
            continue
        out.append(t)
    return out


def _take_env(tokens: list[str], i: int, env: dict[str, str]) -> int:
    if i < len(tokens) and tokens[i] == "env":
        i += 1
    while i < len(tokens) and _ENV_RE.match(tokens[i]):
        k, v = tokens[i].split("=", 1)
        env[k] = v
        i += 1
    return i


def _skip_docker(tokens: list[str], i: int, env: dict[str, str]) -> int:
    """``docker run [options] IMAGE`` -> the index after IMAGE; -e K=V go to env."""
    i += 2  # docker run
    while i < len(tokens) and tokens[i].startswith("-"):
        opt, eq, val = tokens[i].partition("=")
        if opt in ("-e", "--env"):
            kv = val if eq else (tokens[i + 1] if i + 1 < len(tokens) else "")
            if "=" in kv:
                k, v = kv.split("=", 1)
                env[k] = v
        i += 1 if eq or opt not in _DOCKER_VALUED else 2
    if i >= len(tokens):
        raise BadInput("after '--': 'docker run' without an image and a command; " + HELP)
    return i + 1  # the image


def _skip_uv(tokens: list[str], i: int) -> int:
    i += 2  # uv run
    while i < len(tokens) and tokens[i].startswith("-"):
        opt, eq, _ = tokens[i].partition("=")
        i += 1 if eq or opt not in _UV_VALUED else 2
    return i


def _skip_launcher(tokens: list[str], i: int) -> tuple[int, str | None]:
    """The interpreter and module, or ``sglang serve``: (where the flags start, the launcher as typed, e.g.
    ``python3 -m sglang.launch_server``; None when the paste starts with the flags)."""
    start = i
    if i < len(tokens) and _PY_RE.match(tokens[i]):
        i += 1
        while i < len(tokens) and tokens[i] in ("-u", "-O", "-B", "-X") or (i < len(tokens) and tokens[i].startswith("-X")):
            i += 2 if tokens[i] == "-X" else 1
        if i + 1 < len(tokens) and tokens[i] == "-m" and tokens[i + 1] in _MODULES:
            i += 2
            if tokens[i - 1] == "sglang" and i < len(tokens) and tokens[i] in ("serve", "launch_server"):
                i += 1
            # the interpreter by its name (a venv path says nothing about the launcher), then the module
            return i, " ".join([tokens[start].rsplit("/", 1)[-1], *tokens[start + 1:i]])
        got = " ".join(tokens[i:i + 2]) or "nothing"
        raise BadInput(f"after '--': the interpreter runs '{got[:60]}', not sglang.launch_server; " + HELP)
    if i + 1 < len(tokens) and tokens[i] == "sglang" and tokens[i + 1] in ("serve", "launch_server"):
        return i + 2, f"sglang {tokens[i + 1]}"
    if i < len(tokens) and tokens[i] in ("launch_server", "sglang.launch_server"):
        return i + 1, tokens[i]
    return i, None


_SEPARATORS = ("&&", ";", "||")


def _segments(tokens: list[str]) -> list[list[str]]:
    """The commands of a pasted line joined by ``&&`` / ``;`` / ``||`` (a trailing ``;`` on a word counts too)."""
    out: list[list[str]] = [[]]
    for t in tokens:
        if t in _SEPARATORS:
            out.append([])
        elif t.endswith(";") and len(t) > 1:
            out[-1].append(t[:-1])
            out.append([])
        else:
            out[-1].append(t)
    return [x for x in out if x]


def _launch_segment(tokens: list[str]) -> list[str]:
    """The launch command of a pasted line: the last of its commands (setup such as ``pip install`` comes first)."""
    segs = _segments(tokens)
    return segs[-1] if len(segs) > 1 else tokens


_RELEASE = r"v?(\d+\.\d+\.\d+(?:\.post\d+)?)"
_PIN_RES = {pkg: re.compile(rf"^{pkg}(?:\[[^\]]*\])?\s*==\s*{_RELEASE}$", re.IGNORECASE) for pkg in ("sglang", "vllm")}
_TAG_RE = re.compile(rf"^{_RELEASE}(?:[-_+.].*)?$")
# the images each engine's releases ship as (the name's last component holds the engine's name)
_IMAGES = {"sglang": ("an SGLang", "lmsysorg/sglang"), "vllm": ("a vLLM", "vllm/vllm-openai")}


def _pin_in(spec: str, package: str = "sglang") -> str | None:
    """'sglang==0.5.11' / 'sglang[all]==0.5.11' (also one item of uv's comma-separated --with) -> '0.5.11'."""
    for part in spec.split(","):
        m = _PIN_RES[package].match(part.strip().strip("'\""))
        if m:
            return m.group(1)
    return None


def _image_name_tag(image: str) -> tuple[str, str]:
    name, tag = image, "latest"
    if "@" in image:
        name, tag = image.split("@", 1)[0], ""
    last = name.rsplit("/", 1)[-1]
    if ":" in last:
        name, tag = name.rsplit(":", 1)
    return name, tag


def _image_release(image: str, package: str = "sglang") -> tuple[str | None, str]:
    """(release or None, where it was read) for a docker image reference."""
    name, tag = _image_name_tag(image)
    src = f"the pasted docker image {image}"
    title, repo = _IMAGES[package]
    if package not in name.lower():
        return None, f"{src} is not {title} image ({repo}): it names no release"
    m = _TAG_RE.match(tag)
    if m:
        return m.group(1), f"the tag of {src[len('the '):]}"
    return None, f"{src} names no release (tag '{tag or 'a digest'}')"


def release_of_paste(tokens: list[str], package: str = "sglang") -> tuple[str | None, str] | None:
    """Where a pasted launch command names the release of ``package`` (sglang, vllm) it runs: (release, where it
    was read), with release None when that place names none (``lmsysorg/sglang:latest``); None when nothing
    in it says."""
    tokens = tokens_of(list(tokens))
    found: tuple[str | None, str] | None = None
    for seg in _segments(tokens):
        i = _take_env(seg, 0, {})
        if i + 1 < len(seg) and seg[i] == "docker" and seg[i + 1] == "run":
            try:
                j = _skip_docker(seg, i, {})
            except BadInput:
                continue
            found = _image_release(seg[j - 1], package)
            i = _take_env(seg, j, {})
        if i + 1 < len(seg) and seg[i] in ("uv", "uvx"):
            for k in range(i + 1, len(seg)):
                t = seg[k]
                val = t.split("=", 1)[1] if t.startswith(("--with=", "--from=")) else (
                    seg[k + 1] if t in ("--with", "--from") and k + 1 < len(seg) else None)
                v = _pin_in(val, package) if val else None
                if v:
                    found = (v, f"the pasted uv command's {t if '=' in t else t + ' ' + val}")
                    break
        words = seg[i:]
        if "install" in words[:3] and any(w in ("pip", "pip3") or w.endswith("/pip") for w in words[:2]):
            for w in words:
                v = _pin_in(w, package)
                if v:
                    found = (v, f"the pasted pip install {w}")
    return found


def split_paste_form(tokens: list[str]) -> tuple[str | None, list[str], dict[str, str]]:
    """A pasted launch command -> (model path, the other SGLang flags, env assignments)."""
    return parse_paste(tokens)[:3]


def parse_paste(tokens: list[str]) -> tuple[str | None, list[str], dict[str, str], str | None]:
    """A pasted launch command -> (model path, the other SGLang flags, env assignments, the launcher as the
    user typed it, which names the command in errors: None when the paste is only flags)."""
    tokens = _launch_segment(tokens_of(list(tokens)))
    env: dict[str, str] = {}
    i = _take_env(tokens, 0, env)
    if i + 1 < len(tokens) and tokens[i] == "docker" and tokens[i + 1] == "run":
        i = _take_env(tokens, _skip_docker(tokens, i, env), env)
    if i + 1 < len(tokens) and tokens[i] == "uv" and tokens[i + 1] == "run":
        i = _skip_uv(tokens, i)
    i, launcher = _skip_launcher(tokens, i)
    rest = tokens[i:]
    if rest and not rest[0].startswith("-"):
        raise BadInput(f"after '--': unexpected '{rest[0][:60]}'; " + HELP)
    return (*_pull_model(rest), env, launcher)


def _pull_model(rest: list[str]) -> tuple[str | None, list[str]]:
    model, flags, skip = None, [], False
    for j, t in enumerate(rest):
        if skip:
            skip = False
            continue
        if t in ("--model-path", "--model"):
            if j + 1 >= len(rest):
                raise BadInput(f"{t}: expected a value")
            model, skip = rest[j + 1], True
            continue
        if t.startswith(("--model-path=", "--model=")):
            model = t.split("=", 1)[1]
            continue
        flags.append(t)
    return model, flags


# ---- vLLM's launch commands (issue #26): the engine a paste names, for planner.engines.registry.detect_paste ----

_VLLM_MODULES = ("vllm.entrypoints.openai.api_server",)
VLLM_HELP = ("expected 'vllm serve MODEL [flags]', 'python -m vllm.entrypoints.openai.api_server --model M ...' or "
             "'docker run ... vllm/vllm-openai:vX ...'")


def _vllm_launcher(tokens: list[str], i: int, image: str | None) -> tuple[int, str, bool] | None:
    """(where the flags start, the launcher as typed, whether a positional model may follow) when ``tokens[i:]``
    is a vLLM launch; None when it is not (``image``: the docker image the command runs, if any)."""
    if i + 1 < len(tokens) and tokens[i] == "vllm" and tokens[i + 1] == "serve":
        return i + 2, "vllm serve", True
    if i < len(tokens) and _PY_RE.match(tokens[i]):
        j = i + 1
        while j < len(tokens) and tokens[j] in ("-u", "-O", "-B"):
            j += 1
        if j + 1 < len(tokens) and tokens[j] == "-m" and tokens[j + 1] in _VLLM_MODULES:
            return j + 2, " ".join([tokens[i].rsplit("/", 1)[-1], *tokens[i + 1:j + 2]]), False
        return None
    if image is not None and "vllm" in _image_name_tag(image)[0].lower().rsplit("/", 1)[-1]:
        # the vllm/vllm-openai image's entrypoint is the server: its arguments follow the image
        return i, f"the vLLM image {image}", True
    return None


def parse_vllm_paste(tokens: list[str]) -> tuple[str | None, list[str], dict[str, str], str] | None:
    """A pasted vLLM launch command -> (model, the other ``vllm serve`` flags, env assignments, the launcher as
    typed); None when the command is not a vLLM launch (then it is another engine's, or bad input there)."""
    tokens = _launch_segment(tokens_of(list(tokens)))
    env: dict[str, str] = {}
    i = _take_env(tokens, 0, env)
    image = None
    if i + 1 < len(tokens) and tokens[i] == "docker" and tokens[i + 1] == "run":
        try:
            j = _skip_docker(tokens, i, env)
        except BadInput:
            return None
        image, i = tokens[j - 1], _take_env(tokens, j, env)
    if i + 1 < len(tokens) and tokens[i] == "uv" and tokens[i + 1] == "run":
        i = _skip_uv(tokens, i)
    found = _vllm_launcher(tokens, i, image)
    if found is None:
        return None
    i, launcher, positional = found
    rest = tokens[i:]
    model = None
    if positional and rest and not rest[0].startswith("-"):
        model, rest = rest[0], rest[1:]
    if rest and not rest[0].startswith("-"):
        raise BadInput(f"after '--': unexpected '{rest[0][:60]}' in the vLLM command; " + VLLM_HELP)
    flags, skip = [], False
    for j, t in enumerate(rest):
        if skip:
            skip = False
        elif t == "--model":
            if j + 1 >= len(rest):
                raise BadInput("--model: expected a value")
            model, skip = model or rest[j + 1], True
        elif t.startswith("--model="):
            model = model or t.split("=", 1)[1]
        else:
            flags.append(t)
    return model, flags, env, launcher


def engine_of_paste(tokens: list[str]) -> str:
    """The engine a pasted launch command runs: "vllm" for a vLLM launcher, else "sglang" (the paste form's
    default, which also takes bare flags)."""
    return "vllm" if parse_vllm_paste(tokens) is not None else "sglang"


def paste_for(engine: str, tokens: list[str]) -> tuple[str | None, list[str], dict[str, str]] | None:
    """An engine's reading of a paste (its front end's ``paste()``, done here for the core): (model, flags, env)
    when the command is that engine's launch, else None."""
    vllm = parse_vllm_paste(tokens)
    if engine == "vllm":
        return None if vllm is None else vllm[:3]
    if engine == "sglang":
        return None if vllm is not None else parse_paste(tokens)[:3]
    return None
