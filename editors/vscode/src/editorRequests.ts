/**
 * Answers the server's requests to the editor (see editorRequestsModel.ts): questions in a
 * modal dialog, diagnostics from `vscode.languages.getDiagnostics`. Registered on every
 * language client the Server creates; the client's own showMessageRequest handler (a
 * notification toast that is easy to miss) is replaced for this server only.
 */

import * as vscode from 'vscode';
import { LanguageClient } from 'vscode-languageclient/node';
import {
  EditorDiagnostic,
  MessageActionItem,
  ShowMessageRequestParams,
  answerFor,
  diagnosticsAnswer,
  promptFor,
} from './editorRequestsModel';
import { Methods } from './protocol';
import { Server } from './server';

/** How long a diagnostics request waits for the language servers of a file it had to open. */
const OPEN_WAIT_MS = 1500;

export function registerEditorRequests(server: Server): void {
  server.onClient((client: LanguageClient) => {
    client.onRequest('window/showMessageRequest', (params: ShowMessageRequestParams) =>
      ask(params),
    );
    client.onRequest(Methods.diagnostics, async (params: { uri?: unknown } | null) => {
      if (params && typeof params.uri === 'string') {
        await openForDiagnostics(vscode.Uri.parse(params.uri));
      }
      return diagnosticsAnswer(
        params,
        (uri) => vscode.languages.getDiagnostics(vscode.Uri.parse(uri)) as EditorDiagnostic[],
        () =>
          vscode.languages
            .getDiagnostics()
            .map(([uri, found]) => [uri.toString(), found as EditorDiagnostic[]]),
      );
    });
  });
}

async function ask(params: ShowMessageRequestParams): Promise<MessageActionItem | null> {
  const prompt = promptFor(params);
  const show =
    prompt.severity === 'error'
      ? vscode.window.showErrorMessage
      : prompt.severity === 'warning'
        ? vscode.window.showWarningMessage
        : vscode.window.showInformationMessage;
  if (prompt.titles.length === 0) {
    void show(prompt.message + (prompt.detail ? `\n${prompt.detail}` : ''));
    return null;
  }
  const picked = await show(
    prompt.message,
    { modal: true, detail: prompt.detail || undefined },
    ...prompt.titles,
  );
  return answerFor(params, picked);
}

/** A file no editor has open has no diagnostics yet: open it and give its servers a moment. */
async function openForDiagnostics(uri: vscode.Uri): Promise<void> {
  const open = vscode.workspace.textDocuments.some((d) => d.uri.toString() === uri.toString());
  if (open || vscode.languages.getDiagnostics(uri).length > 0) {
    return;
  }
  await new Promise<void>((resolve) => {
    const timer = setTimeout(done, OPEN_WAIT_MS);
    const listener = vscode.languages.onDidChangeDiagnostics((event) => {
      if (event.uris.some((u) => u.toString() === uri.toString())) {
        done();
      }
    });
    function done(): void {
      clearTimeout(timer);
      listener.dispose();
      resolve();
    }
    vscode.workspace.openTextDocument(uri).then(undefined, done);
  });
}
