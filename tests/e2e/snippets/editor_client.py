"""Drive the real server the way an editor without a test harness of its own does.

`Editor` is what a snippet says (command, arguments, initialization options, the settings the
editor answers ``workspace/configuration`` from) plus that editor's real initialize
capabilities (transcribed from its source into ``capabilities/*.json``, with the file naming
the source). `editor_session` starts the server from the snippet's command over stdio with
pytest-lsp, initializes it like that editor does, and shuts it down afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest_lsp
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import LanguageClient

from tests.e2e.lsp.conftest import stop_server
from tests.e2e.snippets.conftest import CAPABILITIES, resolve_command, server_env

_CONVERTER = default_converter()


@dataclass
class Editor:
    """One editor's configuration snippet and client behaviour."""

    name: str
    capabilities_file: str
    command: list[str]
    initialization_options: Any
    configuration: Any = None
    """What ``workspace/configuration`` is answered from (section ``a.b`` looks up a → b)."""
    did_change_configuration: Any = None
    """Settings the editor pushes in ``workspace/didChangeConfiguration`` after start-up."""
    sends_completion_context: bool = True
    language_ids: dict[str, str] = field(default_factory=lambda: {".py": "python"})

    def capabilities(self) -> tuple[types.ClientCapabilities, types.ClientInfo]:
        if self.capabilities_file.startswith("pytest-lsp:"):  # one pytest-lsp ships
            spec = self.capabilities_file.removeprefix("pytest-lsp:")
            return pytest_lsp.client_capabilities(spec), types.ClientInfo(name=spec)
        data = json.loads((CAPABILITIES / self.capabilities_file).read_text())
        return (
            _CONVERTER.structure(data["capabilities"], types.ClientCapabilities),
            _CONVERTER.structure(data["clientInfo"], types.ClientInfo),
        )


def parse_jsonc(text: str) -> Any:
    """Parse JSON with ``//`` and ``/* */`` comments and trailing commas (Zed, Sublime settings).

    Comments are removed only outside strings, so ``"http://x"`` survives.
    """
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char == '"':
            end = i + 1
            while end < n and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            out.append(text[i : end + 1])
            i = end + 1
        elif text.startswith("//", i):
            i = text.find("\n", i) if "\n" in text[i:] else n
        elif text.startswith("/*", i):
            i = text.index("*/", i + 2) + 2
        else:
            out.append(char)
            i += 1
    return json.loads(re.sub(r",(\s*[}\]])", r"\1", "".join(out)))


@dataclass
class Session:
    """A running server, its client and what the server sent besides answers."""

    client: LanguageClient
    editor: Editor
    home: Path
    result: types.InitializeResult
    statuses: list[Any]
    applied: list[types.ApplyWorkspaceEditParams]
    documents: dict[str, list[str]] = field(default_factory=dict)
    versions: dict[str, int] = field(default_factory=dict)

    @property
    def encoding(self) -> str:
        return str(self.result.capabilities.position_encoding or types.PositionEncodingKind.Utf16)

    def units(self, text: str) -> int:
        """Length of ``text`` in the negotiated position encoding."""
        if self.encoding == "utf-8":
            return len(text.encode())
        if self.encoding == "utf-32":
            return len(text)
        return len(text.encode("utf-16-le")) // 2

    def open(self, name: str, text: str) -> str:
        path = self.home / "project" / name
        path.write_text(text)
        uri = path.as_uri()
        language = self.editor.language_ids.get(path.suffix, "plaintext")
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, language, 1, text))
        )
        self.documents[uri] = text.split("\n")
        self.versions[uri] = 1
        return uri

    def text(self, uri: str) -> str:
        return "\n".join(self.documents[uri])

    def apply(self, uri: str, edits: list[types.TextEdit]) -> None:
        """Apply ``edits`` locally (as the editor would) and send them as one didChange."""
        lines = self.documents[uri]
        for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character))[
            ::-1
        ]:
            start = self._offset(lines, edit.range.start)
            end = self._offset(lines, edit.range.end)
            text = "\n".join(lines)
            lines = (text[:start] + edit.new_text + text[end:]).split("\n")
        self.documents[uri] = lines
        self.versions[uri] += 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(version=self.versions[uri], uri=uri),
                [
                    types.TextDocumentContentChangePartial(range=e.range, text=e.new_text)
                    for e in sorted(
                        edits, key=lambda e: (e.range.start.line, e.range.start.character)
                    )[::-1]
                ],
            )
        )

    def _offset(self, lines: list[str], position: types.Position) -> int:
        before = sum(len(line) + 1 for line in lines[: position.line])
        line = lines[position.line]
        chars = 0
        while chars < len(line) and self.units(line[:chars]) < position.character:
            chars += 1
        return before + chars

    async def type(self, uri: str, line: int, character: int, text: str) -> None:
        """Type ``text`` one character at a time (one didChange each, 20 per second)."""
        for char in text:
            here = types.Position(line, character)
            self.apply(uri, [types.TextEdit(types.Range(here, here), char)])
            character += self.units(char)
            await asyncio.sleep(0.05)

    async def complete(
        self, uri: str, line: int, character: int, attempts: int = 5
    ) -> tuple[types.CompletionList, int]:
        """Ask for completion as the editor does (again while empty and incomplete)."""
        context = (
            types.CompletionContext(trigger_kind=types.CompletionTriggerKind.Invoked)
            if self.editor.sends_completion_context
            else None
        )
        params = types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri),
            position=types.Position(line, character),
            context=context,
        )
        for attempt in range(1, attempts + 1):
            answer = await self.client.text_document_completion_async(params)
            assert isinstance(answer, types.CompletionList), answer
            if answer.items or not answer.is_incomplete:
                return answer, attempt
            await asyncio.sleep(0.2)
        return answer, attempts

    async def code_actions(self, uri: str, selection: types.Range) -> list[types.CodeAction]:
        result = await self.client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri),
                range=selection,
                context=types.CodeActionContext(
                    diagnostics=[], trigger_kind=types.CodeActionTriggerKind.Invoked
                ),
            )
        )
        actions = list(result or [])
        assert all(isinstance(a, types.CodeAction) for a in actions), actions
        return actions  # type: ignore[return-value]

    async def status(self) -> Any:
        return await self.client.protocol.send_request_async("qodeassist/status", {})


@contextlib.asynccontextmanager
async def editor_session(editor: Editor, home: Path) -> AsyncIterator[Session]:
    """Start the server the snippet names and initialize it as ``editor`` does."""
    client = pytest_lsp.make_test_lsp_client()
    statuses: list[Any] = []
    applied: list[types.ApplyWorkspaceEditParams] = []

    @client.feature("qodeassist/status")
    def on_status(ls: LanguageClient, params: Any) -> None:
        statuses.append(params)

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def on_apply(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        applied.append(params)
        return types.ApplyWorkspaceEditResult(applied=True)

    # pytest-lsp answers workspace/configuration by dotted section lookup, like these editors.
    client.set_configuration(editor.configuration)
    asked = asyncio.Event()
    lookup = client.get_configuration

    def get_configuration(*, section: str | None = None, scope_uri: str | None = None) -> Any:
        asked.set()
        return lookup(section=section, scope_uri=scope_uri)

    client.get_configuration = get_configuration  # type: ignore[method-assign]

    program = resolve_command(editor.command[0])
    project = home / "project"
    await client.start_io(program, *editor.command[1:], env=server_env(home), cwd=str(project))
    try:
        capabilities, client_info = editor.capabilities()
        result = await client.initialize_session(
            types.InitializeParams(
                capabilities=capabilities,
                client_info=client_info,
                root_uri=project.as_uri(),
                root_path=str(project),
                workspace_folders=[types.WorkspaceFolder(project.as_uri(), project.name)],
                initialization_options=editor.initialization_options,
            )
        )
        if editor.did_change_configuration is not None:
            client.workspace_did_change_configuration(
                types.DidChangeConfigurationParams(settings=editor.did_change_configuration)
            )
        session = Session(client, editor, home, result, statuses, applied)
        # The server pulls workspace/configuration after `initialized`; a changed answer
        # reloads the configuration (~0.1 s). Let that happen before the user starts typing.
        await asyncio.wait_for(asked.wait(), 10)
        await asyncio.sleep(0.4)
        yield session
    finally:
        await stop_server(client)  # even when the test failed half-way
        with contextlib.suppress(Exception):
            await client.stop()
