/**
 * The language client: starts `qodeassist-lsp` on stdio, keeps its settings in sync and tells
 * the rest of the extension when it starts, stops or reports its status.
 */

import * as os from 'os';
import * as vscode from 'vscode';
import {
  CancellationToken,
  DidChangeConfigurationNotification,
  Executable,
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  State,
} from 'vscode-languageclient/node';
import { Methods, ServerStatus } from './protocol';
import { TraceChannel, serverStdio } from './serverOutput';
import { askingAction } from './refactorModel';

/** The extension's command behind "Refactor with instruction…" / "Generate code here…". */
export const ASK_AND_REFACTOR = 'qodeassist.refactorWithInstruction';
/** The server's command on every inline completion item: the user accepted it. */
const ACCEPTED_COMMAND = 'qodeassist.accepted';
import {
  SECTION,
  contributedProperties,
  serverKeys,
  serverSettings,
  stableJson,
} from './settings';

const STATUS_REFRESH_MS = 1000;

export type ClientState = 'starting' | 'running' | 'stopped';

export class NotRunningError extends Error {
  constructor() {
    super('The QodeAssist server is not running.');
  }
}

export class Server implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private clientState: ClientState = 'stopped';
  private lastStatus: ServerStatus | undefined;
  private lastStartError: string | undefined;
  private lastSentSettings = '';
  private readonly keys: string[];
  private readonly setups: ((client: LanguageClient) => void)[] = [];
  private readonly changed = new vscode.EventEmitter<void>();
  private readonly statusChanged = new vscode.EventEmitter<ServerStatus>();
  private readonly started = new vscode.EventEmitter<void>();
  private readonly acceptedCompletion = new vscode.EventEmitter<void>();
  private readonly disposables: vscode.Disposable[] = [];
  private starting: Promise<void> | undefined;
  private readonly trace: TraceChannel;
  private statusTimer: NodeJS.Timeout | undefined;

  /** The client started, stopped or got a new status. */
  readonly onDidChange = this.changed.event;
  readonly onDidChangeStatus = this.statusChanged.event;
  /** The server is up (after every start or restart). */
  readonly onDidStart = this.started.event;
  /** The user accepted an inline completion (its `qodeassist.accepted` command ran). */
  readonly onDidAcceptCompletion = this.acceptedCompletion.event;

  constructor(
    context: vscode.ExtensionContext,
    readonly output: vscode.LogOutputChannel,
  ) {
    this.keys = serverKeys(contributedProperties(context.extension.packageJSON));
    this.trace = new TraceChannel(output, SECTION);
    this.disposables.push(
      this.trace,
      this.changed,
      this.statusChanged,
      this.started,
      this.acceptedCompletion,
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration(`${SECTION}.server`)) {
          void this.restart();
        }
      }),
      vscode.workspace.onDidGrantWorkspaceTrust(() => void this.sendSettings()),
    );
  }

  get state(): ClientState {
    return this.clientState;
  }

  get status(): ServerStatus | undefined {
    return this.lastStatus;
  }

  get startError(): string | undefined {
    return this.lastStartError;
  }

  get languageClient(): LanguageClient | undefined {
    return this.clientState === 'running' ? this.client : undefined;
  }

  /** Register handlers on every client this controller creates (now and after restarts). */
  onClient(setup: (client: LanguageClient) => void): void {
    this.setups.push(setup);
    if (this.client) {
      setup(this.client);
    }
  }

  /** The `qodeassist` settings object for the server: only what the user set. */
  settings(scope?: vscode.Uri): Record<string, unknown> {
    const config = vscode.workspace.getConfiguration(undefined, scope);
    return serverSettings(this.keys, (key) => config.inspect(key), vscode.workspace.isTrusted);
  }

  async start(): Promise<void> {
    if (this.starting) {
      return this.starting;
    }
    this.starting = this.doStart().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async doStart(): Promise<void> {
    const config = vscode.workspace.getConfiguration(SECTION);
    const command = expandHome(config.get<string>('server.path') || 'qodeassist-lsp');
    const args = config.get<string[]>('server.args') ?? ['serve'];
    const extraEnv = config.get<Record<string, string>>('server.env') ?? {};
    const folder = vscode.workspace.workspaceFolders?.[0];
    const executable: Executable = {
      command,
      args,
      // No `transport`: the client would append `--stdio`; stdio is the server's default.
      options: {
        cwd: folder?.uri.scheme === 'file' ? folder.uri.fsPath : undefined,
        env: { ...process.env, ...extraEnv },
      },
    };
    const initial = this.settings();
    this.lastSentSettings = stableJson(initial);
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
      synchronize: { configurationSection: SECTION },
      initializationOptions: { [SECTION]: initial },
      outputChannel: this.output,
      traceOutputChannel: this.trace.channel,
      stdioOptions: serverStdio(),
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      middleware: {
        provideInlineCompletionItems: async (document, position, context, token, next) => {
          if (!inlineCompletionEnabled()) {
            return undefined;
          }
          try {
            return await next(document, position, context, token);
          } finally {
            // The server announces reloads, not provider failures: ask for the status after
            // a burst of completions so the status bar shows a provider that went down.
            this.refreshStatusSoon();
          }
        },
        // The server's textDocument/completion is the fallback for editors without inline
        // completion. VS Code has it: a second copy of the suggestion in the suggest widget
        // would only cost a request and, while the widget is open, suppress the ghost text.
        provideCompletionItem: () => undefined,
        // VS Code runs an accepted inline item's command: the next edit follows it at once.
        executeCommand: async (command, args, next) => {
          const result = await next(command, args);
          if (command === ACCEPTED_COMMAND) {
            this.acceptedCompletion.fire();
          }
          return result;
        },
        // "Refactor with instruction…" and "Generate code here…" run the default instruction
        // in menus that cannot ask; VS Code can, so those two ask for the text first.
        provideCodeActions: async (document, range, context, token, next) => {
          const actions = await next(document, range, context, token);
          return actions?.map((action) => askingCodeAction(action) ?? action);
        },
        resolveCodeAction: (item, token, next) =>
          item.command?.command === ASK_AND_REFACTOR ? item : next(item, token),
        workspace: {
          configuration: async (params, token, next) => {
            const answer = await next(params, token);
            if (!Array.isArray(answer)) {
              return answer;
            }
            return params.items.map((item, index) => {
              const section = item.section ?? '';
              if (section !== SECTION && !section.startsWith(`${SECTION}.`)) {
                return answer[index];
              }
              const scope = item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined;
              return pick(this.settings(scope), section.split('.').slice(1));
            });
          },
          didChangeConfiguration: async () => {
            await this.sendSettings();
          },
        },
      },
      initializationFailedHandler: (error) => {
        this.lastStartError = error instanceof Error ? error.message : String(error);
        return false;
      },
    };
    const client = new LanguageClient('qodeassist', 'QodeAssist', executable, clientOptions);
    this.client = client;
    this.lastStatus = undefined;
    this.lastStartError = undefined;
    client.onNotification(Methods.status, (status: ServerStatus) => this.setStatus(status));
    client.onDidChangeState((event) => {
      if (this.client !== client) {
        return;
      }
      this.clientState =
        event.newState === State.Running
          ? 'running'
          : event.newState === State.Starting
            ? 'starting'
            : 'stopped';
      this.changed.fire();
    });
    for (const setup of this.setups) {
      setup(client);
    }
    this.clientState = 'starting';
    this.changed.fire();
    try {
      await client.start();
    } catch (error) {
      if (this.client !== client) {
        return;
      }
      this.clientState = 'stopped';
      this.lastStartError = describeStartError(error, command);
      this.output.error(this.lastStartError);
      this.changed.fire();
      // (The client already shows "couldn't create connection to server" with "Go to output".)
      return;
    }
    this.clientState = 'running';
    this.changed.fire();
    this.started.fire();
    try {
      this.setStatus(await client.sendRequest<ServerStatus>(Methods.status, {}));
    } catch (error) {
      this.output.warn(`qodeassist/status failed: ${String(error)}`);
    }
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.clientState = 'stopped';
    this.lastStatus = undefined;
    this.changed.fire();
    if (client) {
      try {
        await client.stop(5000);
      } catch (error) {
        this.output.warn(`stopping the server: ${String(error)}`);
      }
      await client.dispose().catch(() => undefined);
    }
  }

  async restart(): Promise<void> {
    await this.starting?.catch(() => undefined);
    await this.stop();
    await this.start();
  }

  /** Send a request; throws NotRunningError when the server is not up. */
  async request<R>(method: string, params: unknown, token?: CancellationToken): Promise<R> {
    const client = this.languageClient;
    if (!client) {
      throw new NotRunningError();
    }
    return token
      ? client.sendRequest<R>(method, params, token)
      : client.sendRequest<R>(method, params);
  }

  async executeCommand<R>(command: string, args: unknown[], token?: CancellationToken): Promise<R> {
    return this.request<R>('workspace/executeCommand', { command, arguments: args }, token);
  }

  async refreshStatus(): Promise<void> {
    try {
      this.setStatus(await this.request<ServerStatus>(Methods.status, {}));
    } catch {
      // not running: the state change already told the listeners
    }
  }

  /** `refreshStatus` once things are quiet for a second (debounced). */
  refreshStatusSoon(): void {
    clearTimeout(this.statusTimer);
    this.statusTimer = setTimeout(() => void this.refreshStatus(), STATUS_REFRESH_MS);
  }

  private setStatus(status: ServerStatus): void {
    if (!status || typeof status !== 'object') {
      return;
    }
    this.lastStatus = status;
    this.statusChanged.fire(status);
    this.changed.fire();
  }

  /** `workspace/didChangeConfiguration` with the settings, unless the server has them. */
  private async sendSettings(): Promise<void> {
    const client = this.languageClient;
    if (!client) {
      return;
    }
    const settings = this.settings();
    const json = stableJson(settings);
    if (json === this.lastSentSettings) {
      return; // e.g. only qodeassist.inlineCompletion.enabled changed
    }
    this.lastSentSettings = json;
    await client.sendNotification(DidChangeConfigurationNotification.type, {
      settings: { [SECTION]: settings },
    });
  }

  dispose(): void {
    clearTimeout(this.statusTimer);
    void this.stop();
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}

export function inlineCompletionEnabled(): boolean {
  return vscode.workspace.getConfiguration(SECTION).get<boolean>('inlineCompletion.enabled', true);
}

function askingCodeAction(action: vscode.Command | vscode.CodeAction): vscode.CodeAction | undefined {
  const data = (action as { data?: unknown }).data;
  const kind = askingAction(data);
  if (!kind || !(action instanceof vscode.CodeAction)) {
    return undefined;
  }
  const asking = new vscode.CodeAction(action.title, action.kind);
  asking.command = { title: action.title, command: ASK_AND_REFACTOR, arguments: [kind, data] };
  return asking;
}

function pick(settings: Record<string, unknown>, path: string[]): unknown {
  let node: unknown = settings;
  for (const part of path) {
    node = node && typeof node === 'object' ? (node as Record<string, unknown>)[part] : undefined;
  }
  return node ?? null;
}

function expandHome(path: string): string {
  return path === '~' || path.startsWith('~/') ? os.homedir() + path.slice(1) : path;
}

function describeStartError(error: unknown, command: string): string {
  const text = error instanceof Error ? error.message : String(error);
  if (/ENOENT/.test(text)) {
    return (
      `QodeAssist: cannot start '${command}': not found. Install the server ` +
      "(pipx install 'qodeassist-lsp[local]') or set qodeassist.server.path."
    );
  }
  return `QodeAssist: the server did not start (${command}): ${text}`;
}
