"""The ``[completion]`` section of ``settings.toml`` and its custom-language entries.

Declared beside the feature that reads it; the host registers it (``lsp/sections.py``).
"""

from __future__ import annotations

from typing import Annotated, Final

from pydantic import BeforeValidator, Field

from qodeassist_lsp.config.settings_types import (
    CompletionMode,
    ConnectTimeout,
    FirstByteTimeout,
    MultiLinePolicy,
    OutputHandler,
    RequestTimeout,
    Section,
    SettingsSection,
)


class CustomLanguage(Section):
    """One extra language for the completion output handler (fence tags and comment prefix)."""

    name: str = Field(min_length=1, description="Language name.")
    comment_prefix: str = Field(
        min_length=1, description="Line comment prefix used for prose outside code fences."
    )
    model_names: list[str] = Field(
        default_factory=list, description="Fence tags models use for the language."
    )
    extensions: list[str] = Field(
        default_factory=list,
        description="File extensions (without dot) or exact file names of the language.",
    )


def _parse_custom_language(value: object) -> object:
    """Accept the original plugin's ``"name,prefix,model names,extensions"`` strings as well."""
    if not isinstance(value, str):
        return value
    parts = [part.strip() for part in value.split(",")]
    if len(parts) != 4:
        raise ValueError(
            f"{value!r} is not 'name,comment_prefix,model names,extensions' "
            "(4 comma-separated fields; lists inside a field are space-separated)"
        )
    name, prefix, models, extensions = parts
    return {
        "name": name,
        "comment_prefix": prefix,
        "model_names": models.split(),
        "extensions": extensions.split(),
    }


CustomLanguageEntry = Annotated[CustomLanguage, BeforeValidator(_parse_custom_language)]
"""A ``custom_languages`` item: a table, or the original's one-line string form."""

DEFAULT_CUSTOM_LANGUAGES: Final = (
    CustomLanguage(
        name="cmake", comment_prefix="#", model_names=["cmake"], extensions=["CMakeLists.txt"]
    ),
    CustomLanguage(
        name="qmake", comment_prefix="#", model_names=["qmake"], extensions=["pro", "pri"]
    ),
)
"""Languages the original plugin adds on top of its built-in table."""


class CompletionSettings(Section):
    """``[completion]``: when inline completions are requested and what context they carry."""

    auto_completion: bool = Field(
        default=True,
        description='Offer completions while typing. `false` behaves like `mode = "manual"`.',
    )
    mode: CompletionMode = Field(
        default="automatic",
        description="`automatic`: complete while typing; `manual`: only when the editor "
        "explicitly asks (invoked trigger, e.g. a hotkey) — avoids paid-API costs.",
    )
    debounce_ms: int = Field(
        default=350,
        ge=0,
        le=10000,
        description="Quiet time after the last keystroke before an automatic request is sent; "
        "the upper bound of the delay when `adaptive_debounce` is on.",
    )
    adaptive_debounce: bool = Field(
        default=True,
        description="Adapt the delay to your typing rhythm: about three times your typical "
        "(median) gap between the keys of a burst (pauses over 0.6 s and the key after a shown "
        "suggestion start a new burst; so fast typists wait less; one and a half times on a "
        "fresh line or after an opener), minus the time already passed, clamped between "
        "`debounce_min_ms` and `debounce_ms`.",
    )
    debounce_min_ms: int = Field(
        default=100,
        ge=0,
        le=10000,
        description="Lower bound of the adaptive delay (never above `debounce_ms`).",
    )
    local_debounce_ms: int = Field(
        default=0,
        ge=0,
        le=10000,
        description="The delay instead, when the completion model runs on this machine (the "
        "provider instance's `local`: the embedded model, a `[launch]`ed server, llama.cpp, "
        "Ollama or LM Studio at a loopback URL; never above `debounce_ms`): a request costs "
        "it nothing, the next key reuses a running request that agrees with it, and one that "
        "does not is closed within a token.",
    )
    char_threshold: int = Field(
        default=1,
        ge=0,
        le=10,
        description="Characters to type within `typing_interval_ms` before an automatic request "
        "(smart triggers may fire earlier).",
    )
    ignore_whitespace_in_char_count: bool = Field(
        default=True, description="Do not count whitespace towards `char_threshold`."
    )
    typing_interval_ms: int = Field(
        default=1200,
        ge=500,
        le=5000,
        description="Window in which typed characters are counted for `char_threshold`.",
    )
    smart_context_trigger: bool = Field(
        default=True,
        description="Skip requests inside an identifier or right after `.`/`->`/`::`, and "
        "request at once on a fresh indented line or after `{ ( , = [ ; : >`.",
    )
    multi_line: MultiLinePolicy = Field(
        default="smart",
        description="`always`: allow multi-line suggestions; `never`: stop at the first line "
        "break; `smart`: single line when the cursor is mid-line, ends a started line or is "
        "mid-block (code at the cursor's indentation right below), multi-line on a blank line "
        "or after an opener (`{ ( , = [ ; : >`).",
    )
    lines_before: int = Field(
        default=50, ge=0, le=100000, description="Lines before the cursor sent as prefix."
    )
    lines_after: int = Field(
        default=30, ge=0, le=100000, description="Lines after the cursor sent as suffix."
    )
    local_cold_lines_before: int = Field(
        default=16,
        ge=0,
        le=100000,
        description="When the completion model runs on this machine: in a file the model has "
        "not read yet (just opened, or the caret jumped), the prefix starts this many lines "
        "above the cursor, or higher at the first line of the top-level statement (a `def`, "
        "`class` or function at column 0) that line is in, or at the function or class defined "
        "right above it when the cursor's statement uses its name, within `lines_before`; "
        "that first line stays put while the user works down the "
        "file, until the usual `lines_before` window passes it. The prompt is then short to "
        "read (about 5 ms a token for the embedded model) and grows only at its end, which the "
        "model's prompt cache reuses. 0: always `lines_before`.",
    )
    read_full_file: bool = Field(
        default=False,
        description="Send the whole file as prefix/suffix (ignores the line/token limits).",
    )
    max_context_tokens: int = Field(
        default=0,
        ge=0,
        le=2_000_000,
        description="Token budget alternative to `lines_before`/`lines_after`: when > 0, "
        "prefix and suffix lines are added around the cursor until this many estimated tokens.",
    )
    prefix_ratio: float = Field(
        default=0.75,
        ge=0.0,
        le=1.0,
        description="Share of `max_context_tokens` given to the prefix (the rest goes to the "
        "suffix).",
    )
    skip_license_header: bool = Field(
        default=True,
        description="Leave a leading copyright/licence comment block out of the prefix.",
    )
    use_recent_changes: bool = Field(
        default=True,
        description="Add recently changed lines of other open documents to the context.",
    )
    max_changes_cache_size: int = Field(
        default=10,
        ge=1,
        le=1000,
        description="Distinct recently changed lines remembered per document.",
    )
    use_open_files_context: bool = Field(
        default=False,
        description="Add the content of every other open, non-ignored document to the context "
        "(large prompts; slower and costlier).",
    )
    extra_context_chunks: int = Field(
        default=16,
        ge=0,
        le=256,
        description="Chunks of recently opened and edited files kept for the start of the "
        "prompt (oldest first, so the model server's prompt cache is reused); 0 turns the "
        "extra context off. Agents use it through `ctx.files_metadata` (llama.cpp `/infill`, "
        "`fim_prompt(ctx)`).",
    )
    extra_context_chunk_lines: int = Field(
        default=32, ge=4, le=512, description="Lines per extra-context chunk."
    )
    extra_context_tokens: int = Field(
        default=1024,
        ge=0,
        le=200_000,
        description="Most estimated tokens (about four characters each) of all extra-context "
        "chunks together; the oldest chunks go first.",
    )
    codebase_context: bool = Field(
        default=True,
        description="Add the definitions of the names near the cursor that are defined in "
        "other files of the workspace (the call or attribute chain being typed, names used on "
        "the lines around, names imported at the top) from the codebase index: a function's "
        "signature and first lines, a class's members' signatures. For agents that send the "
        "extra context (`ctx.files_metadata`); see `codebase_context_in_prefix` for the others. "
        "Nothing is added while the index is off or not built.",
    )
    codebase_context_in_prefix: bool = Field(
        default=True,
        description="For agents whose prompt is the prefix alone (the Embedded Completion "
        "agent, chat-style agents): put a file block in front of the prefix, the definitions "
        "of the names the file imports from other files of the workspace (the most used in "
        "the file first), as signatures under `# file: <path>` lines, then "
        "`# file: <this file>`. It stays the same for every request in the file (made again "
        "when its imports change), so the model server's prompt cache keeps it. On the "
        "embedded Gemma 3 270M its effect on httpx lines that name another module's symbol "
        "depends on the lines sampled: from +10 exact / +9 similarity points to -5 / -1.5 on "
        "40-line samples, at no extra latency when the editor tells the caret: "
        "docs/performance.md.",
    )
    codebase_context_tokens: int = Field(
        default=96,
        ge=0,
        le=8192,
        description="Most estimated tokens of those definitions (of the file block, for "
        "prefix-only agents). For agents that send the "
        "extra context they come out of `extra_context_tokens` (the newest chunks make room). "
        "0 adds none.",
    )
    warm_idle_ms: int = Field(
        default=300,
        ge=0,
        le=600_000,
        description="After this long without an edit or a completion request (50 ms after "
        "a document opens), send what the next request will need, so that the model server's "
        "prompt cache holds it: the extra context, for agents that use `ctx.files_metadata` "
        "(a model server on this machine only); 0 turns warming off.",
    )
    warm_cursor_window: bool = Field(
        default=True,
        description="Warm agents that do not use the extra context too (the Embedded "
        "Completion agent): the whole request at the likely cursor (the last completion "
        "request's place, the caret a client tells with `qodeassist/didMoveCursor` or a "
        "code-action request, or the end of a file just opened). Not in `manual` mode.",
    )
    heal_words: bool = Field(
        default=True,
        description="For agents whose model continues the prompt and whose body sends "
        "`ctx.healed_word` (the bundled llama.cpp ones): a half-typed word before the cursor "
        "(`re` of `return`) is cut off the prompt and the model, held to it by a grammar, "
        "writes it again; the word then comes off the answer.",
    )
    output_handler: OutputHandler = Field(
        default="auto",
        description="Post-processing of model output: `auto` processes it only when a line "
        "starts with a code fence, `force` always processes it, `raw` uses the text as is. "
        "Processing keeps fenced code and turns prose into comments (see `drop_prose`).",
    )
    drop_prose: bool = Field(
        default=False,
        description="When processing, drop prose outside code fences instead of turning it "
        "into comments.",
    )
    connect_timeout_s: ConnectTimeout = 5.0
    first_byte_timeout_s: FirstByteTimeout = 10.0
    request_timeout_s: RequestTimeout = 30.0
    time_budget_ms: int = Field(
        default=5000,
        ge=0,
        le=600000,
        description="Hard wall-clock budget for an automatic completion request; on expiry the "
        "complete lines streamed so far are returned. Invoked (manual) requests are bounded by "
        "the timeouts only. 0 = no budget.",
    )
    max_items_invoked: int = Field(
        default=3,
        ge=1,
        le=10,
        description="Suggestions to offer when completion is explicitly invoked (automatic "
        "triggers always get one).",
    )
    typed_ahead_cache: bool = Field(
        default=True,
        description="Reuse a suggestion while you type its first characters instead of "
        "sending a new request.",
    )
    prefetch_after_accept: bool = Field(
        default=True,
        description="When a suggestion is shown, ask the model at once for the one line after "
        "accepting it, so that accepting and going on shows the next suggestion without "
        "waiting (a model server on this machine only; needs `typed_ahead_cache`). Typing "
        "anything but the accept cancels it within a token.",
    )
    custom_languages: list[CustomLanguageEntry] = Field(
        default_factory=lambda: list(DEFAULT_CUSTOM_LANGUAGES),
        description="Extra languages for the output handler: tables with `name`, "
        "`comment_prefix`, `model_names`, `extensions`, or the original's "
        '`"name,prefix,models,extensions"` strings. Replaces the default list.',
    )


COMPLETION_SETTINGS: Final = SettingsSection("completion", CompletionSettings)
"""The ``[completion]`` section, read as ``settings.section(COMPLETION_SETTINGS)``."""
