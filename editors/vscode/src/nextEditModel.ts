/**
 * Next-edit suggestions (`textDocument/copilotInlineEdit`): the request, and how an answer is
 * shown — as an inline item with a range when it is on the cursor's line, else as a
 * decoration with an accept command.
 *
 * Pure (no `vscode` import): unit-tested with `node --test`.
 */

export interface Position {
  line: number;
  character: number;
}

export interface Range {
  start: Position;
  end: Position;
}

/** One edit of a `textDocument/copilotInlineEdit` answer (Copilot's shape). */
export interface InlineEdit {
  text: string;
  textDocument: { uri: string; version: number };
  range: Range;
  command?: { title: string; command: string; arguments?: unknown[] };
}

export interface InlineEditResult {
  edits: InlineEdit[];
}

export const INLINE_EDIT_METHOD = 'textDocument/copilotInlineEdit';
export const DID_SHOW_METHOD = 'textDocument/didShowInlineEdit';

/** The request params for a cursor (UTF-16 positions, the document version VS Code has). */
export function inlineEditParams(uri: string, version: number, cursor: Position): Record<string, unknown> {
  return { textDocument: { uri, version }, position: cursor, context: { triggerKind: 2 } };
}

/** The edit to show: the first of the answer when it is for ``version``, else undefined. */
export function usableEdit(result: InlineEditResult | null | undefined, version: number): InlineEdit | undefined {
  const edit = result?.edits?.[0];
  if (!edit || edit.textDocument?.version !== version) {
    return undefined;
  }
  return edit;
}

/** 'inline' when the edit lies on the cursor's line (VS Code shows it as ghost text). */
export function presentation(edit: InlineEdit, cursorLine: number): 'inline' | 'decoration' {
  const { start, end } = edit.range;
  return start.line === cursorLine && end.line === cursorLine ? 'inline' : 'decoration';
}

/**
 * The lines ``range.start.line``..``range.end.line`` as they read after the edit, given those
 * lines now (``lines[0]`` is the start line).
 */
export function linesAfter(lines: string[], edit: InlineEdit): string[] {
  const first = lines[0] ?? '';
  const last = lines[lines.length - 1] ?? '';
  const joined = first.slice(0, edit.range.start.character) + edit.text + last.slice(edit.range.end.character);
  return joined.split('\n');
}

/** The decoration's hover/after text: the lines after the edit, one line each. */
export function previewText(lines: string[], edit: InlineEdit): string {
  return linesAfter(lines, edit).join(' ⏎ ');
}
