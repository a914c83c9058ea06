/**
 * "QodeAssist: Restore a Checkpoint of the Chat's Files…": lists the checkpoints the server
 * took before a chat changed files (`qodeassist/checkpoints/list`, the chat in the panel, or
 * every chat when none is shown), and restores the picked one
 * (`qodeassist/checkpoints/restore`: the exact old bytes come back; open editors change
 * through `workspace/applyEdit`).
 */

import * as vscode from 'vscode';
import { displayPath } from './chatModel';
import { Methods } from './protocol';
import { Server } from './server';

interface Checkpoint {
  checkpointId: string;
  chatId: string;
  createdAt: string;
  files: string[];
}

export function registerCheckpointCommand(
  server: Server,
  currentChat: () => string | undefined,
): vscode.Disposable {
  return vscode.commands.registerCommand('qodeassist.checkpoints.restore', async () => {
    try {
      const chatId = currentChat();
      const list = await server.request<Checkpoint[]>(
        Methods.checkpointsList,
        chatId ? { chatId } : {},
      );
      if (!Array.isArray(list) || list.length === 0) {
        void vscode.window.showInformationMessage('QodeAssist: no checkpoints.');
        return;
      }
      const picked = await vscode.window.showQuickPick(
        list.map((item) => ({
          label: item.createdAt,
          description: `${item.files.length} file${item.files.length === 1 ? '' : 's'}`,
          detail: item.files.map((f) => vscode.workspace.asRelativePath(displayPath(f))).join(', '),
          item,
        })),
        { title: 'QodeAssist: restore which checkpoint?' },
      );
      if (!picked) {
        return;
      }
      const result = await server.request<{ restored: string[] }>(Methods.checkpointsRestore, {
        checkpointId: picked.item.checkpointId,
      });
      const names = (result?.restored ?? []).map((f) => vscode.workspace.asRelativePath(displayPath(f)));
      void vscode.window.showInformationMessage(`QodeAssist: restored ${names.join(', ')}`);
    } catch (error) {
      void vscode.window.showErrorMessage(
        `QodeAssist: checkpoints: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  });
}
