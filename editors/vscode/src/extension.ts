/**
 * QodeAssist for VS Code: a client of the qodeassist-lsp language server.
 *
 * Inline completion and the refactor code actions come straight from the language client
 * (`textDocument/inlineCompletion`, `textDocument/codeAction`); this extension adds the chat
 * view, the refactor picker commands, the status bar item and a few server commands.
 *
 * The extension's own command ids never equal a server command (`qodeassist.accepted`,
 * `qodeassist.reloadConfiguration`, `qodeassist.refactor`, `qodeassist.doctor`): the language
 * client registers those as VS Code commands itself, and a second registration would fail.
 */

import * as vscode from 'vscode';
import { ChatPanel } from './chatPanel';
import { registerCheckpointCommand } from './checkpoints';
import { DoctorReport, doctorText, doctorVerdict, parseSettingValue, settingKeyProblem } from './doctorModel';
import { Methods, ServerCommands, ServerStatus } from './protocol';
import { registerEditorRequests } from './editorRequests';
import { NextEdits } from './nextEdit';
import { Refactor } from './refactor';
import { ASK_AND_REFACTOR, Server, inlineCompletionEnabled } from './server';
import { StatusBar, showMenu } from './statusBar';

let server: Server | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel('QodeAssist', { log: true });
  server = new Server(context, output);
  const srv = server;
  registerEditorRequests(srv);
  const chat = new ChatPanel(context, srv);
  const refactor = new Refactor(context, srv);
  const statusBar = new StatusBar(srv);
  const nextEdits = new NextEdits(srv);

  context.subscriptions.push(
    output,
    srv,
    chat,
    statusBar,
    nextEdits,
    vscode.window.registerWebviewViewProvider(ChatPanel.viewId, chat, {
      webviewOptions: { retainContextWhenHidden: true },
    }),
    vscode.commands.registerCommand('qodeassist.chat.open', () => chat.show()),
    vscode.commands.registerCommand('qodeassist.chat.new', async () => {
      await chat.show();
      chat.newChat();
    }),
    vscode.commands.registerCommand('qodeassist.chat.history', () => chat.openHistory()),
    vscode.commands.registerCommand('qodeassist.chat.compress', () => chat.compress()),
    vscode.commands.registerCommand('qodeassist.chat.cancel', () => chat.cancel()),
    registerCheckpointCommand(srv, () => chat.currentChat),
    vscode.commands.registerCommand('qodeassist.refactorSelection', () => refactor.refactorSelection()),
    vscode.commands.registerCommand('qodeassist.repeatLastRefactor', () => refactor.repeatLast()),
    vscode.commands.registerCommand(ASK_AND_REFACTOR, (kind, target) => refactor.askAndRun(kind, target)),
    vscode.commands.registerCommand('qodeassist.toggleInlineCompletion', async () => {
      const enabled = !inlineCompletionEnabled();
      await vscode.workspace
        .getConfiguration('qodeassist')
        .update('inlineCompletion.enabled', enabled, vscode.ConfigurationTarget.Global);
      vscode.window.setStatusBarMessage(
        `QodeAssist: inline completion ${enabled ? 'enabled' : 'disabled'}`,
        3000,
      );
    }),
    vscode.commands.registerCommand('qodeassist.configuration.reload', () => reloadConfiguration(srv)),
    vscode.commands.registerCommand('qodeassist.showMenu', () => showMenu(srv)),
    vscode.commands.registerCommand('qodeassist.showOutput', () => output.show(true)),
    vscode.commands.registerCommand('qodeassist.showStatus', () => showStatus(srv)),
    vscode.commands.registerCommand('qodeassist.runDoctor', () => runDoctor(srv)),
    vscode.commands.registerCommand('qodeassist.setServerSetting', () => setServerSetting(srv)),
    vscode.commands.registerCommand('qodeassist.restartServer', () => srv.restart()),
  );

  await srv.start();
}

export async function deactivate(): Promise<void> {
  await server?.stop();
  server = undefined;
}

async function reloadConfiguration(srv: Server): Promise<void> {
  try {
    const result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: 'QodeAssist: reloading the configuration' },
      () =>
        srv.executeCommand<{ agents?: number; errors?: number } | null>(
          ServerCommands.reloadConfiguration,
          [],
        ),
    );
    const errors = result?.errors ?? 0;
    const text = `QodeAssist: configuration reloaded — ${result?.agents ?? '?'} agents, ${errors} error${errors === 1 ? '' : 's'}.`;
    if (errors > 0) {
      const choice = await vscode.window.showWarningMessage(text, 'Show Output');
      if (choice) {
        srv.output.show(true);
      }
    } else {
      void vscode.window.showInformationMessage(text);
    }
  } catch (error) {
    void vscode.window.showErrorMessage(`QodeAssist: reload failed: ${(error as Error)?.message ?? error}`);
  }
  await srv.refreshStatus();
}

async function showStatus(srv: Server): Promise<void> {
  let status: ServerStatus | undefined = srv.status;
  try {
    status = await srv.request<ServerStatus>('qodeassist/status', {});
  } catch {
    // show the last one known
  }
  const content = status
    ? JSON.stringify(status, null, 2)
    : JSON.stringify({ state: srv.state, error: srv.startError ?? null }, null, 2);
  const document = await vscode.workspace.openTextDocument({ language: 'json', content });
  await vscode.window.showTextDocument(document, { preview: true });
}

async function runDoctor(srv: Server): Promise<void> {
  let report: DoctorReport;
  try {
    report = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: 'QodeAssist: probing every pipeline agent…',
        cancellable: true,
      },
      (_progress, token) => srv.executeCommand<DoctorReport>(ServerCommands.doctor, [], token),
    );
  } catch (error) {
    void vscode.window.showErrorMessage(`QodeAssist: the doctor failed: ${(error as Error)?.message ?? error}`);
    return;
  }
  const document = await vscode.workspace.openTextDocument({ language: 'plaintext', content: doctorText(report) });
  await vscode.window.showTextDocument(document, { preview: true });
  const verdict = doctorVerdict(report);
  if (verdict.ok) {
    void vscode.window.showInformationMessage(verdict.message);
  } else {
    void vscode.window.showWarningMessage(verdict.message);
  }
}

/** Write one key of the server's settings.toml (user or project), validated by the server. */
async function setServerSetting(srv: Server): Promise<void> {
  const key = await vscode.window.showInputBox({
    title: 'QodeAssist: settings.toml key',
    prompt: 'A dotted key, e.g. completion.debounceMs (docs/settings.md lists them all)',
    validateInput: (value) => settingKeyProblem(value),
  });
  if (!key) {
    return;
  }
  const value = await vscode.window.showInputBox({
    title: `QodeAssist: value of ${key}`,
    prompt: 'JSON (true, 42, "text", ["a"]); a bare word is a string; null removes the key',
  });
  if (value === undefined) {
    return;
  }
  const scope = await vscode.window.showQuickPick(
    [
      { label: 'User', description: '<config>/settings.toml', scope: 'user' },
      { label: 'Project', description: '.qodeassist/settings.toml of the workspace', scope: 'project' },
    ],
    { title: 'QodeAssist: which settings file' },
  );
  if (!scope) {
    return;
  }
  try {
    const answer = await srv.request<{ written: string }>(Methods.settingsUpdate, {
      scope: scope.scope,
      changes: { [key.trim()]: parseSettingValue(value) },
    });
    void vscode.window.showInformationMessage(`QodeAssist: wrote ${key.trim()} to ${answer.written}`);
  } catch (error) {
    void vscode.window.showErrorMessage(`QodeAssist: ${(error as Error)?.message ?? error}`);
  }
}
