"""The package's error tree, typed error information and secret redaction.

Every failure the editor is told about, whether an HTTP status, a provider's error envelope,
a transport exception, a stream cut short, a server that will not start or a tool loop that
will not end, becomes one `ErrorInfo` with a category the editor can act on (open the key
settings, retry, fix the agent). Redaction runs on every message and detail when it is
created, so no caller can forget it.

One base exception, defined here at the lowest layer so every layer can raise below it. The
tree (each class lives in the module named on its right; a second base in brackets is kept
so existing ``except LookupError`` and the like still hold). Where a class sits decides its
`ErrorKind` (`kind_of`: a class's own ``error_kind`` first, else ``PermissionError`` → refused,
``LookupError`` → not found, ``ValueError`` → invalid, anything else → failed), and the kind
decides every door's answer in one table, ``wire/error_table.py``: the JSON-RPC code of the LSP
and of ACP, the HTTP status and OpenAI error type::

    QodeAssistError                         every error the package raises on purpose
    ├── CategorizedError                    carries an ErrorInfo: the category on the wire
    │   ├── WireError                       a provider request failed before its stream began
    │   ├── LaunchError                     core.launcher: a [launch] server did not come up
    │   ├── ProcessConfigError              core.agent_process: an agent program cannot start
    │   ├── ToolLimitError                  core.session: a request ran out of tool rounds
    │   ├── CircuitOpenError                core.breaker: refused unsent, the circuit is open
    │   └── CompressionFailed               features.chat.compressor: no summary was made
    ├── TemplateError                       config.templating: a [body] template failed
    ├── FimTemplateError [ValueError]       config.fim_templates: no FIM layout for the model
    ├── SystemPromptError                   config.system_prompt: a prompt file failed
    │   └── PromptPathRefused               … a prompt path leads outside its roots
    ├── SecretStoreError [RuntimeError]     config.secrets: the keyring refused
    ├── SettingsWriteError [ValueError]     config.settings_writer: a change was refused
    ├── OverrideError [ValueError]          config.provider_override: an override is refused
    ├── UnknownName [LookupError]           config.problems: a typed name means none or many
    ├── FolderLockTimeout [TimeoutError]    config.folder_lock: another writer held on
    ├── PathRefused [PermissionError]       config.confinement: a path outside the allowed roots
    │   ├── OutsideAllowedRoots             … symlinks followed, it lies outside every root
    │   ├── NotARegularFile                 … a FIFO, a device, a socket or a directory
    │   └── PathIgnored                     tools.workspace: excluded by an ignore file
    ├── AgentNotAvailable [LookupError]     core.agent: no such usable agent or instance
    ├── ToolInputError [ValueError]         tools.base: a tool call's arguments cannot be used
    ├── DiagnosticsUnavailable              tools.diagnostics: the editor gave none
    ├── NoAgentMatches [LookupError]        core.router: no agent fits the request
    ├── UnknownPipeline [ValueError]        config.pipelines: not a pipeline name
    ├── EditRefused [ValueError]            tools.edits.blocks: a file change cannot be made
    ├── CheckpointNotFound [LookupError]    tools.edits.checkpoints: no such checkpoint
    ├── ChatNotFound [LookupError]          features.chat.store
    ├── ChatInputError [ValueError]         features.chat.files: an attachment is refused
    ├── ChatBusy                            features.chat.files: a message into a busy chat
    ├── HistoryFormatError [ValueError]     features.chat.history_format
    ├── FrontMatterError [ValueError]       skills.frontmatter: a SKILL.md has no usable header
    ├── UnknownSkill [LookupError]          skills.library: a message starts with /no-such-skill
    ├── RequestFailed [JsonRpcException]    lsp.errors: LSP RequestFailed (-32803)
    ├── InvalidParams [ValueError]          wire.errors: a request's params cannot be used
    ├── SessionBusy                         acp_agent.agent: a prompt into a prompting session
    ├── SetupWriteError                     core.setup.apply: a file setup must edit is unreadable
    ├── ProbeTargetError [ValueError]       core.setup.probe: a probe target is not loopback
    ├── ApiError                            http_api.errors: a request the HTTP API refuses
    ├── BodyTooLarge                        http_api.errors: a body passed the size limit
    ├── TokenFileUnsafe                     http_api.token: the token file is open to others
    ├── TokenFromEnvironment                http_api.token: the token is set by the environment
    ├── NotReady                            http_api.host: the configuration is not loaded yet
    ├── ListenFailed                        http_api.app: uvicorn could not start serving
    ├── MemoryRefused [ValueError]          core.memory: an entry is empty, too long or a secret
    ├── NoAgentMeets [LookupError]          core.agent_pool: no chat agent meets the requirements
    ├── InvalidRequirements [ValueError]    core.agent_pool: a malformed ``requires``
    ├── PoolBusy                            core.agent_pool: the queue is full or the wait ran out
    ├── PlanError [ValueError]              features.chat.plan: a plan request cannot be done now
    ├── PlanInvalid [ValueError]            features.chat.plan_parse: the answer holds no steps
    ├── FetchFailed                         cli.model_download: the model wheel was not fetched
    │   └── CorruptDownload                 … its SHA-256 is not the index's
    ├── EmbeddedError                       cli.embedded_model
    ├── GgufError                           cli.gguf_file: a model file that cannot be rewritten
    ├── CodebaseOff                         features.codebase.operations: the index is off
    ├── WorkerGone                          context.codebase.client: the indexer child ended early
    ├── OperationNotFound [LookupError]     workbench.features: no feature or operation of that name
    ├── NotAsked                            tools.permissions: a door's asker will not ask
    └── CliError                            cli.common: a command cannot go on

Private control-flow signals (``session._Stopped``) are not errors and stay outside the tree.
"""

from __future__ import annotations

import enum
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, replace

REDACTED = "***"

# Unconditional patterns: credentials in the shapes they take in headers, URLs and bodies.
_ALWAYS_REDACT: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]+"), r"\1" + REDACTED),
    (
        re.compile(r"""(?i)(x-api-key["']?\s*[:=]\s*["']?)[^\s"',;}]+"""),
        r"\1" + REDACTED,
    ),
    (
        re.compile(r"(?i)([?&](?:key|api_key|apikey|access_token)=)[^&\s\"'#]+"),
        r"\1" + REDACTED,
    ),
    (re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}"), "sk-" + REDACTED),
    (re.compile(r"\bAIza[0-9A-Za-z_-]{30,}"), "AIza" + REDACTED),
)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """Return ``text`` with each of ``secrets`` and any credential-shaped value replaced."""
    for secret in secrets:
        # Very short values would blank out ordinary words; real keys are long.
        if secret and len(secret) >= 6:
            text = text.replace(secret, REDACTED)
    for pattern, replacement in _ALWAYS_REDACT:
        text = pattern.sub(replacement, text)
    return text


class ErrorCategory(enum.StrEnum):
    """What kind of problem an error is, which decides what the user is told to do."""

    CONFIG = "config"
    AUTH = "auth"
    NETWORK = "network"
    PROVIDER = "provider"
    VALIDATION = "validation"
    TOOL = "tool"


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    """One classified failure: category, an actionable message and the provider's own words."""

    category: ErrorCategory
    message: str
    provider_detail: str = ""
    retry_after: float | None = None
    status: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "message", redact(self.message))
        object.__setattr__(self, "provider_detail", redact(self.provider_detail))

    def brief(self) -> dict[str, str]:
        """Return ``{category, message}``, the form events and status show an error in."""
        return {"category": str(self.category), "message": self.message}

    def redacted(self, secrets: Iterable[str]) -> ErrorInfo:
        """Return a copy with ``secrets`` also removed from the message and detail."""
        values = tuple(secrets)
        detail = redact(self.provider_detail, values)
        return replace(self, message=redact(self.message, values), provider_detail=detail)


class ErrorKind(enum.StrEnum):
    """What kind of refusal or failure an error is: the row of ``wire/error_table.py``."""

    INVALID = "invalid"
    NOT_FOUND = "not_found"
    REFUSED = "refused"
    BUSY = "busy"
    TOO_LARGE = "too_large"
    UNAVAILABLE = "unavailable"
    FAILED = "failed"


class QodeAssistError(Exception):
    """Base of every error qodeassist-lsp raises on purpose (the tree is drawn above)."""

    error_kind: ErrorKind | None = None
    """The kind, when the class's bases do not tell it (`kind_of`)."""
    error_code: str = ""
    """The HTTP body's ``code`` when it is not the kind's (``chat_busy``, ``pool_busy``…)."""
    retry_after_s: float | None = None
    """The ``Retry-After`` an HTTP 503 of this error sends, when not the kind's."""


def kind_of(exc: QodeAssistError) -> ErrorKind:
    """Return ``exc``'s kind: its class's own, else the one its bases tell."""
    if exc.error_kind is not None:
        return exc.error_kind
    if isinstance(exc, CategorizedError):
        return ErrorKind.FAILED
    if isinstance(exc, PermissionError):
        return ErrorKind.REFUSED
    if isinstance(exc, LookupError):
        return ErrorKind.NOT_FOUND
    if isinstance(exc, ValueError):
        return ErrorKind.INVALID
    return ErrorKind.FAILED


class InvalidParams(QodeAssistError, ValueError):
    """A request's params cannot be used (every door answers "invalid" with this message)."""


class CategorizedError(QodeAssistError):
    """An error that carries its `ErrorInfo`: the category and message the editor gets."""

    def __init__(self, info: ErrorInfo) -> None:
        super().__init__(info.message)
        self.info = info


class WireError(CategorizedError):
    """Raised when a request fails before its stream starts; carries the `ErrorInfo`."""


DEFAULT_PROVIDER = "the provider"


@dataclass(frozen=True, slots=True)
class ErrorContext:
    """Names used to make error messages actionable: the provider and its key variable."""

    provider: str = DEFAULT_PROVIDER
    api_key_env: str = ""
    secret_name: str = ""

    @property
    def subject(self) -> str:
        """The provider name to start a sentence (names are kept as written: llama.cpp)."""
        return "The provider" if self.provider == DEFAULT_PROVIDER else self.provider

    @property
    def cli_name(self) -> str:
        """The provider's name as CLI commands take it, quoted for a shell when needed."""
        if self.secret_name:
            return shlex.quote(self.secret_name)
        return "<provider>" if self.provider == DEFAULT_PROVIDER else shlex.quote(self.provider)

    @property
    def secrets_command(self) -> str:
        """The CLI command that stores a key for this provider."""
        return f"qodeassist-lsp secrets set {self.cli_name}"
