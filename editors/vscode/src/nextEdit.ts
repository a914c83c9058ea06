/**
 * Next-edit suggestions in VS Code (`qodeassist.inlineCompletion.nextEdit`).
 *
 * After an edit pause in the active editor, and at once after an accepted inline completion
 * (the server's `qodeassist.accepted` command ran), the extension asks the server
 * (`textDocument/copilotInlineEdit`, the previous request cancelled). An edit on the cursor's
 * line is shown as an inline item with a range (the line as it reads after the edit, through an
 * inline completion provider); an edit elsewhere as a decoration: the replaced text
 * highlighted and the new lines in a small block to their right, one row per line (as Copilot's
 * side-by-side view; the hover has them as a code block), with **QodeAssist: Accept Next
 * Edit** (Tab while one is shown) and **Dismiss** (Escape). Accepting applies the edit and runs
 * its command, so the server counts it. The server is told what was shown
 * (`textDocument/didShowInlineEdit`) and which document is focused (`textDocument/didFocus`).
 */

import * as vscode from 'vscode';
import {
  DID_SHOW_METHOD,
  INLINE_EDIT_METHOD,
  InlineEdit,
  InlineEditResult,
  inlineEditParams,
  PREVIEW_MAX_ROWS,
  linesAfter,
  presentation,
  previewRows,
  usableEdit,
} from './nextEditModel';
import { Server } from './server';

const VISIBLE_CONTEXT = 'qodeassist.nextEditVisible';
const DEBOUNCE_MS = 500;

function enabled(): boolean {
  return vscode.workspace.getConfiguration('qodeassist').get<boolean>('inlineCompletion.nextEdit', false);
}

function toRange(edit: InlineEdit): vscode.Range {
  const { start, end } = edit.range;
  return new vscode.Range(start.line, start.character, end.line, end.character);
}

export class NextEdits implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];
  private readonly replaced = vscode.window.createTextEditorDecorationType({
    backgroundColor: new vscode.ThemeColor('diffEditor.removedTextBackground'),
  });
  // The new lines as a block right of the lines they replace: `before` lines the rows up in
  // one column, `after` is the row on the inserted-text background.
  private readonly preview = vscode.window.createTextEditorDecorationType({
    // Inside the replaced range the padding would take its highlight: keep it plain.
    before: { backgroundColor: new vscode.ThemeColor('editor.background') },
    after: {
      color: new vscode.ThemeColor('editor.foreground'),
      backgroundColor: new vscode.ThemeColor('diffEditor.insertedTextBackground'),
      border: '1px solid',
      borderColor: new vscode.ThemeColor('diffEditor.insertedLineBackground'),
    },
  });
  private timer: ReturnType<typeof setTimeout> | undefined;
  private pending: vscode.CancellationTokenSource | undefined;
  private shown: { editor: vscode.TextEditor; edit: InlineEdit } | undefined;
  private inline: { uri: string; edit: InlineEdit } | undefined;

  constructor(private readonly server: Server) {
    this.disposables.push(
      this.replaced,
      this.preview,
      vscode.workspace.onDidChangeTextDocument((event) => this.changed(event)),
      vscode.window.onDidChangeActiveTextEditor((editor) => this.focused(editor)),
      server.onDidAcceptCompletion(() => this.afterAccept()),
      vscode.languages.registerInlineCompletionItemProvider({ pattern: '**' }, {
        provideInlineCompletionItems: (document, position) => this.inlineItems(document, position),
      }),
      vscode.commands.registerCommand('qodeassist.nextEdit.accept', () => this.accept()),
      vscode.commands.registerCommand('qodeassist.nextEdit.dismiss', () => this.clear()),
      vscode.commands.registerCommand('qodeassist.nextEdit.request', () => this.request()),
    );
  }

  dispose(): void {
    this.clear();
    this.pending?.cancel();
    if (this.timer) {
      clearTimeout(this.timer);
    }
    this.disposables.forEach((d) => d.dispose());
  }

  private changed(event: vscode.TextDocumentChangeEvent): void {
    const editor = vscode.window.activeTextEditor;
    if (!enabled() || !editor || event.document !== editor.document || event.contentChanges.length === 0) {
      return;
    }
    this.clear();
    this.pending?.cancel();
    if (this.timer) {
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => void this.request(), DEBOUNCE_MS);
  }

  /** An inline completion went in: ask now, not after the edit pause. */
  private afterAccept(): void {
    if (!enabled()) {
      return;
    }
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    void this.request();
  }

  private focused(editor: vscode.TextEditor | undefined): void {
    this.clear();
    const client = this.server.languageClient;
    if (editor && client) {
      void client.sendNotification('textDocument/didFocus', {
        textDocument: { uri: editor.document.uri.toString() },
      });
    }
  }

  /** Ask the server for the next edit at the active editor's cursor. */
  async request(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!editor || !this.server.languageClient) {
      return;
    }
    this.pending?.cancel();
    const source = new vscode.CancellationTokenSource();
    this.pending = source;
    const document = editor.document;
    const version = document.version;
    const cursor = editor.selection.active;
    let result: InlineEditResult | undefined;
    try {
      result = await this.server.request<InlineEditResult>(
        INLINE_EDIT_METHOD,
        inlineEditParams(document.uri.toString(), version, { line: cursor.line, character: cursor.character }),
        source.token,
      );
    } catch {
      return; // cancelled, or the server is not running
    }
    const edit = usableEdit(result, document.version);
    if (source.token.isCancellationRequested || !edit || edit.textDocument.version !== version) {
      return;
    }
    this.show(editor, edit);
  }

  private show(editor: vscode.TextEditor, edit: InlineEdit): void {
    this.clear();
    if (presentation(edit, editor.selection.active.line) === 'inline') {
      this.inline = { uri: editor.document.uri.toString(), edit };
      void vscode.commands.executeCommand('editor.action.inlineSuggest.trigger');
    } else {
      const range = toRange(edit);
      const lines = this.linesOf(editor.document, edit);
      this.shown = { editor, edit };
      editor.setDecorations(this.replaced, range.isEmpty ? [] : [range]);
      const hover = new vscode.MarkdownString('**Next edit** (Tab accepts, Escape dismisses)\n\n').appendCodeblock(
        linesAfter(lines, edit).join('\n'),
        editor.document.languageId,
      );
      const tabSize = typeof editor.options.tabSize === 'number' ? editor.options.tabSize : 4;
      const rows = previewRows(this.linesFrom(editor.document, edit), edit, tabSize);
      editor.setDecorations(
        this.preview,
        rows.map((row) => {
          const end = editor.document.lineAt(row.line).range.end;
          return {
            range: new vscode.Range(end, end),
            renderOptions: { before: { contentText: row.pad }, after: { contentText: row.text } },
            hoverMessage: hover,
          };
        }),
      );
      void vscode.commands.executeCommand('setContext', VISIBLE_CONTEXT, true);
    }
    void this.server.languageClient?.sendNotification(DID_SHOW_METHOD, { item: edit });
  }

  private linesOf(document: vscode.TextDocument, edit: InlineEdit): string[] {
    const lines: string[] = [];
    for (let line = edit.range.start.line; line <= edit.range.end.line && line < document.lineCount; line++) {
      lines.push(document.lineAt(line).text);
    }
    return lines;
  }

  /** The lines ``edit`` replaces and those below them, as many as its preview block can use. */
  private linesFrom(document: vscode.TextDocument, edit: InlineEdit): string[] {
    const count = Math.max(edit.range.end.line - edit.range.start.line + 1, PREVIEW_MAX_ROWS);
    const lines: string[] = [];
    for (let line = edit.range.start.line; line < document.lineCount && lines.length < count; line++) {
      lines.push(document.lineAt(line).text);
    }
    return lines;
  }

  private inlineItems(document: vscode.TextDocument, position: vscode.Position): vscode.InlineCompletionItem[] {
    const inline = this.inline;
    if (!inline || inline.uri !== document.uri.toString() || inline.edit.textDocument.version !== document.version) {
      return [];
    }
    const edit = inline.edit;
    if (edit.range.start.line !== position.line) {
      return [];
    }
    // The whole line, as it reads after the edit: VS Code shows what differs after the cursor.
    const line = document.lineAt(position.line);
    const [after] = linesAfter([line.text], edit);
    const item = new vscode.InlineCompletionItem(after, line.range);
    if (edit.command) {
      item.command = { title: edit.command.title, command: edit.command.command, arguments: edit.command.arguments };
    }
    return [item];
  }

  /** Apply the shown decoration edit and run its command. */
  async accept(): Promise<void> {
    const shown = this.shown;
    this.clear();
    if (!shown || shown.editor.document.version !== shown.edit.textDocument.version) {
      return;
    }
    const applied = await shown.editor.edit((builder) => builder.replace(toRange(shown.edit), shown.edit.text));
    const command = shown.edit.command;
    if (applied && command) {
      await vscode.commands.executeCommand(command.command, ...(command.arguments ?? []));
    }
  }

  /** Hide what is shown. */
  clear(): void {
    this.inline = undefined;
    if (this.shown) {
      this.shown.editor.setDecorations(this.replaced, []);
      this.shown.editor.setDecorations(this.preview, []);
      this.shown = undefined;
      void vscode.commands.executeCommand('setContext', VISIBLE_CONTEXT, false);
    }
  }
}
