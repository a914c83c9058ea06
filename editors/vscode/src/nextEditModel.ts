/**
 * Next-edit suggestions (`textDocument/copilotInlineEdit`): the request, and how an answer is
 * shown — as an inline item with a range when it is on the cursor's line, else as a
 * decoration with an accept command: the replaced text highlighted and the new lines in a small
 * block to the right of the lines they replace, one row per line.
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

/** One row of the preview block: shown after the end of document line ``line``. */
export interface PreviewRow {
  line: number;
  /** Non-breaking spaces that line the block up in one column (no background); `→` on row 0. */
  pad: string;
  /** The new line, padded to the block's width (drawn on the inserted-text background). */
  text: string;
}

export const PREVIEW_MAX_ROWS = 10;
const NBSP = '\u00a0';

/** Columns a line takes on screen (tabs to the next stop). */
export function displayWidth(text: string, tabSize: number): number {
  let width = 0;
  for (const char of text) {
    width = char === '\t' ? width + tabSize - (width % tabSize) : width + 1;
  }
  return width;
}

/**
 * The new lines of a multi-line edit as a block to the right of the lines it replaces, one row
 * per line (as Copilot's side-by-side view): row i is drawn after document line
 * ``range.start.line + i``, so a longer replacement runs on past the replaced lines. All rows
 * start in one column, right of the longest line they sit on, and have one width.
 *
 * ``documentLines`` are the document's lines from ``range.start.line`` on (at least the replaced
 * ones; the rows need the lines below for a longer replacement). More than ``maxRows`` new lines
 * end in a "… N more lines" row; rows past the end of the document are joined into the last one.
 */
export function previewRows(
  documentLines: string[],
  edit: InlineEdit,
  tabSize = 4,
  maxRows = PREVIEW_MAX_ROWS,
): PreviewRow[] {
  const replacedCount = edit.range.end.line - edit.range.start.line + 1;
  const after = linesAfter(documentLines.slice(0, replacedCount), edit);
  let cells = after.map((line) => line.replace(/\t/g, ' '.repeat(tabSize)));
  // Replaced lines without a counterpart (the edit removes lines) get an empty cell.
  while (cells.length < replacedCount) {
    cells.push('');
  }
  if (cells.length > maxRows) {
    const hidden = cells.length - (maxRows - 1);
    cells = [...cells.slice(0, maxRows - 1), `… ${hidden} more lines`];
  }
  const anchors = Math.max(1, Math.min(cells.length, documentLines.length));
  if (cells.length > anchors) {
    cells = [...cells.slice(0, anchors - 1), cells.slice(anchors - 1).join(' ⏎ ')];
  }
  const widths = cells.map((_, i) => displayWidth(documentLines[i] ?? '', tabSize));
  const column = Math.max(...widths) + 2;
  const boxWidth = Math.max(...cells.map((cell) => cell.length)) + 1;
  return cells.map((cell, i) => ({
    line: edit.range.start.line + i,
    // An arrow on the first row points from the replaced text to the block.
    pad: i === 0 ? `${NBSP.repeat(column - widths[i] - 2)}→${NBSP}` : NBSP.repeat(column - widths[i]),
    text: (NBSP + cell).padEnd(boxWidth + 1, NBSP).replace(/ /g, NBSP),
  }));
}
