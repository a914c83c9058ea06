/**
 * What the extension answers when the server asks the editor something, as pure functions
 * (no `vscode` import, unit-tested with `node --test`); editorRequests.ts wires them up.
 *
 * - `window/showMessageRequest`: tool permissions ("Allow once" / "Allow for this chat" /
 *   "Deny") and the refactor guard ("Discard" / "Apply anyway") are asked in a modal dialog,
 *   so they cannot vanish into the notification centre; its Cancel answers null (= deny). The
 *   first action is the dialog's default (Enter): the server sends the safe one first where
 *   it matters (Discard).
 * - `qodeassist/diagnostics`: the diagnostics tool gets the editor's diagnostics of a file
 *   (`{uri}` → `{items: [{uri, diagnostics}]}`), or of every file that has some (`{uri: null}`).
 */

export interface MessageActionItem {
  title: string;
}

export interface ShowMessageRequestParams {
  /** LSP MessageType: 1 error, 2 warning, 3 info, 4 log. */
  type: number;
  message: string;
  actions?: MessageActionItem[];
}

export interface Prompt {
  severity: 'error' | 'warning' | 'info';
  /** The dialog's title line. */
  message: string;
  /** The rest of the server's message (a reason, a diff), shown under the title. */
  detail: string;
  titles: string[];
}

/**
 * How to show a question: its first line as the title (prefixed "QodeAssist:" unless it names
 * QodeAssist already, in any case), the rest as detail with its indentation kept.
 */
export function promptFor(params: ShowMessageRequestParams): Prompt {
  const text = String(params.message ?? '');
  const cut = text.indexOf('\n');
  const first = cut < 0 ? text : text.slice(0, cut);
  return {
    severity: params.type === 1 ? 'error' : params.type === 2 ? 'warning' : 'info',
    message: /^qodeassist\b/i.test(first) ? first : `QodeAssist: ${first}`,
    detail: cut < 0 ? '' : keepIndentation(text.slice(cut + 1).replace(/^\n+/, '')),
    titles: (params.actions ?? []).map((action) => action.title),
  };
}

/**
 * ``text`` with leading spaces, runs of spaces and tabs as no-break spaces: a dialog drawn in
 * HTML (code-server, VS Code for the web) collapses them, so `-    for x in xs:` showed as
 * `- for x in xs:`; a native dialog shows a no-break space as a space.
 */
export function keepIndentation(text: string): string {
  return text
    .replace(/\t/g, '    ')
    .replace(/^ +| {2,}/gm, (spaces) => '\u00a0'.repeat(spaces.length));
}

/** The answer for the picked title: the server's own action item, or null (dismissed). */
export function answerFor(
  params: ShowMessageRequestParams,
  picked: string | undefined,
): MessageActionItem | null {
  return (params.actions ?? []).find((action) => action.title === picked) ?? null;
}

export interface Position {
  line: number;
  character: number;
}

/** The part of a `vscode.Diagnostic` the answer needs (severity 0 error … 3 hint). */
export interface EditorDiagnostic {
  range: { start: Position; end: Position };
  severity: number;
  message: string;
  source?: string;
  code?: string | number | { value: string | number };
}

export interface LspDiagnostic {
  range: { start: Position; end: Position };
  /** 1 error, 2 warning, 3 information, 4 hint. */
  severity: number;
  message: string;
  source?: string;
  code?: string | number;
}

export function toLspDiagnostic(d: EditorDiagnostic): LspDiagnostic {
  const out: LspDiagnostic = {
    range: {
      start: { line: d.range.start.line, character: d.range.start.character },
      end: { line: d.range.end.line, character: d.range.end.character },
    },
    severity: d.severity + 1,
    message: d.message,
  };
  if (d.source) {
    out.source = d.source;
  }
  if (d.code !== undefined) {
    out.code = typeof d.code === 'object' ? d.code.value : d.code;
  }
  return out;
}

export interface FileDiagnostics {
  uri: string;
  diagnostics: LspDiagnostic[];
}

/** The answer to `qodeassist/diagnostics` from what the editor has per file. */
export function diagnosticsAnswer(
  params: { uri?: unknown } | null | undefined,
  ofFile: (uri: string) => EditorDiagnostic[],
  all: () => [string, EditorDiagnostic[]][],
): { items: FileDiagnostics[] } {
  if (params && typeof params.uri === 'string') {
    return { items: [{ uri: params.uri, diagnostics: ofFile(params.uri).map(toLspDiagnostic) }] };
  }
  return {
    items: all()
      .filter(([, found]) => found.length > 0)
      .map(([uri, found]) => ({ uri, diagnostics: found.map(toLspDiagnostic) })),
  };
}
