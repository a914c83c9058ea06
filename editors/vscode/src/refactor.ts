/**
 * "QodeAssist: Refactor Selection…" and "QodeAssist: Repeat Last Refactor".
 *
 * The server's own code actions (the light bulb, `refactor.rewrite`) need nothing here: the
 * language client shows and resolves them. These commands add a picker over the instruction
 * library and run `qodeassist.refactor`, which applies the edit through `workspace/applyEdit`.
 */

import * as vscode from 'vscode';
import {
  Instruction,
  Methods,
  RefactorCommandArgument,
  RefactorCommandResult,
  ServerCommands,
} from './protocol';
import {
  AskingAction,
  CUSTOM_LABEL,
  InstructionPick,
  RefactorChoice,
  instructionPicks,
  parseChoice,
  refactorArgument,
} from './refactorModel';
import { Server } from './server';

const LAST_REFACTOR = 'qodeassist.lastRefactor';
const LAST_CUSTOM = 'qodeassist.lastCustomInstruction';

export class Refactor {
  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly server: Server,
  ) {}

  async refactorSelection(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!editor) {
      void vscode.window.showInformationMessage('QodeAssist: open an editor and select code first.');
      return;
    }
    const choice = await this.pick();
    if (choice) {
      await this.run(editor, choice);
    }
  }

  async repeatLast(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!editor) {
      void vscode.window.showInformationMessage('QodeAssist: open an editor and select code first.');
      return;
    }
    const last = parseChoice(this.context.workspaceState.get(LAST_REFACTOR));
    const choice = last ?? (await this.pick());
    if (choice) {
      await this.run(editor, choice);
    }
  }

  private async pick(): Promise<RefactorChoice | undefined> {
    let instructions: Instruction[] = [];
    try {
      instructions = await this.server.request<Instruction[]>(Methods.refactorInstructions, {});
    } catch (error) {
      this.server.output.warn(`${Methods.refactorInstructions} failed: ${String(error)}`);
      if (!this.server.languageClient) {
        void vscode.window.showErrorMessage('QodeAssist: the server is not running.');
        return undefined;
      }
    }
    const last = parseChoice(this.context.workspaceState.get(LAST_REFACTOR));
    const picks = instructionPicks(Array.isArray(instructions) ? instructions : []);
    if (last) {
      const label = `Repeat: ${last.label}`;
      picks.unshift({ label, description: 'last refactor', ...lastPick(last) });
    }
    const picked = await vscode.window.showQuickPick(picks, {
      title: 'QodeAssist: refactor the selection',
      placeHolder: 'Pick an instruction, or type to filter',
      matchOnDescription: true,
      matchOnDetail: true,
    });
    if (!picked) {
      return undefined;
    }
    if ((picked as PickWithChoice).choice) {
      return (picked as PickWithChoice).choice;
    }
    if (picked.custom || picked.label === CUSTOM_LABEL) {
      return this.askInstruction('refactor');
    }
    return picked.instructionId ? { instructionId: picked.instructionId, label: picked.label } : undefined;
  }

  /** Ask for the user's own instruction (remembered as the next default text). */
  private async askInstruction(kind: AskingAction): Promise<RefactorChoice | undefined> {
    const text = await vscode.window.showInputBox({
      title: kind === 'insert' ? 'QodeAssist: generate code here' : 'QodeAssist: refactor with an instruction',
      prompt: kind === 'insert' ? 'What code should be written at the cursor?' : 'What should be done to the selected code?',
      placeHolder: kind === 'insert' ? 'e.g. A function that parses the date' : 'e.g. Add type hints and a docstring',
      value: this.context.workspaceState.get<string>(LAST_CUSTOM) ?? '',
      ignoreFocusOut: true,
      validateInput: (value) => (value.trim() ? undefined : 'Type an instruction'),
    });
    if (!text?.trim()) {
      return undefined;
    }
    await this.context.workspaceState.update(LAST_CUSTOM, text);
    return { instruction: text, label: text.length > 60 ? `${text.slice(0, 59)}…` : text };
  }

  /**
   * The light bulb's "Refactor with instruction…" / "Generate code here…" (the server's action
   * `data`, see `askingAction`): ask for the instruction, then run it on that range.
   */
  async askAndRun(kind: AskingAction, target: RefactorCommandArgument): Promise<void> {
    const choice = await this.askInstruction(kind);
    if (choice) {
      const { uri, range, version } = target;
      await this.execute(refactorArgument({ uri, range, version }, choice), choice);
    }
  }

  private async run(editor: vscode.TextEditor, choice: RefactorChoice): Promise<void> {
    const client = this.server.languageClient;
    if (!client) {
      void vscode.window.showErrorMessage('QodeAssist: the server is not running.');
      return;
    }
    const document = editor.document;
    const argument = refactorArgument(
      {
        uri: client.code2ProtocolConverter.asUri(document.uri),
        range: client.code2ProtocolConverter.asRange(editor.selection),
        version: document.version,
      },
      choice,
    );
    await this.execute(argument, choice);
  }

  private async execute(argument: RefactorCommandArgument, choice: RefactorChoice): Promise<void> {
    await this.context.workspaceState.update(LAST_REFACTOR, choice);
    let result: RefactorCommandResult | null | undefined;
    try {
      result = await vscode.window.withProgress(
        {
          location: vscode.ProgressLocation.Notification,
          title: `QodeAssist: ${choice.label}`,
          cancellable: true,
        },
        (_progress, token) =>
          this.server.executeCommand<RefactorCommandResult>(ServerCommands.refactor, [argument], token),
      );
    } catch (error) {
      if (error instanceof vscode.CancellationError || isCancelled(error)) {
        return; // the user cancelled the progress: the server stopped the generation
      }
      void vscode.window.showErrorMessage(`QodeAssist: refactor failed: ${String((error as Error)?.message ?? error)}`);
      return;
    }
    if (result && !result.applied && result.message) {
      // The server also explains refused edits with window/showMessage; keep this one quiet.
      vscode.window.setStatusBarMessage(`QodeAssist: ${result.message}`, 8000);
    }
  }
}

/** LSP `RequestCancelled` (the answer to `$/cancelRequest`). */
function isCancelled(error: unknown): boolean {
  return (error as { code?: number } | undefined)?.code === -32800;
}

type PickWithChoice = InstructionPick & { choice?: RefactorChoice };

function lastPick(choice: RefactorChoice): Partial<PickWithChoice> {
  return { choice, detail: 'instruction' in choice ? choice.instruction : undefined };
}
