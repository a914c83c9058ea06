/** The QodeAssist status bar item and its quick menu. */

import * as vscode from 'vscode';
import { Server, inlineCompletionEnabled } from './server';
import { describeStatus } from './statusModel';

export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem(
    'qodeassist.status',
    vscode.StatusBarAlignment.Right,
    100,
  );
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly server: Server) {
    this.item.name = 'QodeAssist';
    this.item.command = 'qodeassist.showMenu';
    this.disposables.push(
      this.item,
      server.onDidChange(() => this.update()),
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration('qodeassist.inlineCompletion')) {
          this.update();
        }
      }),
    );
    this.update();
    this.item.show();
  }

  update(): void {
    const presentation = describeStatus({
      client: this.server.state,
      status: this.server.status,
      inlineEnabled: inlineCompletionEnabled(),
      startError: this.server.startError,
    });
    this.item.text = presentation.text;
    const tooltip = new vscode.MarkdownString(presentation.tooltip, true);
    tooltip.isTrusted = false;
    this.item.tooltip = tooltip;
    this.item.backgroundColor =
      presentation.level === 'error'
        ? new vscode.ThemeColor('statusBarItem.errorBackground')
        : presentation.level === 'warning'
          ? new vscode.ThemeColor('statusBarItem.warningBackground')
          : undefined;
  }

  dispose(): void {
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}

/** The menu behind the status bar item (`qodeassist.showMenu`). */
export async function showMenu(server: Server): Promise<void> {
  const enabled = inlineCompletionEnabled();
  const items: (vscode.QuickPickItem & { command?: string; args?: unknown[] })[] = [
    {
      label: enabled ? '$(circle-slash) Disable inline completion' : '$(sparkle) Enable inline completion',
      command: 'qodeassist.toggleInlineCompletion',
    },
    { label: '$(comment-discussion) Open chat', command: 'qodeassist.chat.open' },
    { label: '$(wand) Refactor selection…', command: 'qodeassist.refactorSelection' },
    { label: '', kind: vscode.QuickPickItemKind.Separator },
    { label: '$(refresh) Reload configuration', command: 'qodeassist.configuration.reload' },
    { label: '$(pulse) Show server status', command: 'qodeassist.showStatus' },
    { label: '$(heart) Doctor: probe every pipeline agent', command: 'qodeassist.runDoctor' },
    { label: '$(output) Show server output', command: 'qodeassist.showOutput' },
    { label: '$(debug-restart) Restart server', command: 'qodeassist.restartServer' },
    {
      label: '$(gear) Settings',
      command: 'workbench.action.openSettings',
      args: ['@ext:qodeassist.qodeassist-lsp'],
    },
  ];
  const picked = await vscode.window.showQuickPick(items, {
    title: `QodeAssist — server ${server.state}${server.status?.version ? ` (${server.status.version})` : ''}`,
  });
  if (picked?.command) {
    await vscode.commands.executeCommand(picked.command, ...(picked.args ?? []));
  }
}
