/**
 * The chat view (a webview view in the QodeAssist side bar container).
 *
 * The extension keeps the chats (chatModel.ts, fed by `qodeassist/chat/event`), renders them to
 * HTML blocks (chatView.ts) and posts the panel only the messages that changed; the panel's
 * script (media/chat.js) draws them and posts back what the user did.
 */

import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import {
  ChatStore,
  MessageModel,
  applyQuestion,
  firstLine,
  isBusy,
  isImageName,
} from './chatModel';
import { ChatView, ViewDiffer, renderChat, renderMessage } from './chatView';
import {
  AgentInfo,
  ChatEditFileResult,
  ChatEvent,
  ChatGetResult,
  ChatSendParams,
  ChatSendResult,
  ChatSummary,
  ChatTokensResult,
  Methods,
  SkillInfo,
} from './protocol';
import { NotRunningError, Server } from './server';
import { fillTemplate, makeNonce } from './webviewHtml';

/** Messages the panel's script posts. */
type FromPanel =
  | { type: 'ready' }
  | { type: 'send'; text: string; mode?: string }
  | { type: 'plan'; action: string }
  | { type: 'cancel' }
  | { type: 'newChat' }
  | { type: 'history' }
  | { type: 'compress' }
  | { type: 'agent'; name: string }
  | { type: 'openLink'; href: string }
  | { type: 'copy'; text: string }
  | { type: 'insert'; text: string }
  | { type: 'editFile'; editId: string; action: string }
  | { type: 'attach' }
  | { type: 'linkActive' }
  | { type: 'removeAttachment'; index: number }
  | { type: 'removeLinked'; index: number }
  | { type: 'draft'; text: string }
  | { type: 'skills' };

const FLUSH_MS = 40;
const METHOD_NOT_FOUND = -32601;

export class ChatPanel implements vscode.WebviewViewProvider, vscode.Disposable {
  static readonly viewId = 'qodeassist.chat';

  /** The chat the panel shows (undefined: a new chat, not sent yet). */
  get currentChat(): string | undefined {
    return this.currentChatId;
  }

  private view: vscode.WebviewView | undefined;
  private readonly store = new ChatStore();
  private readonly differ = new ViewDiffer();
  private currentChatId: string | undefined;
  /** The user's message while its send awaits the server's answer. */
  private pending: { text: string; attachments: string[] } | undefined;
  private agents: AgentInfo[] = [];
  /** The skills a message may start with (`/name`), for the panel's completion. */
  private skills: SkillInfo[] = [];
  /** The agent picked in the panel ('' = the chat's own, or the default for a new chat). */
  private selectedAgent = '';
  private attachments: vscode.Uri[] = [];
  /** Linked files to send with the next message; undefined = leave the chat's as they are. */
  private linked: vscode.Uri[] | undefined;
  private tokens: ChatTokensResult | undefined;
  private tokensSupported = true;
  private tokensTimer: NodeJS.Timeout | undefined;
  private draft = '';
  private flushTimer: NodeJS.Timeout | undefined;
  /** Chats to reload from the server once their request ends (auto-compressed sends). */
  private readonly reloadAfter = new Set<string>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly server: Server,
  ) {
    server.onClient((client) => {
      client.onNotification(Methods.chatEvent, (event: ChatEvent) => this.onEvent(event));
    });
    this.disposables.push(
      server.onDidStart(() => void this.refreshAgents()),
      server.onDidChangeStatus(() => void this.refreshAgents()),
      server.onDidChange(() => {
        if (server.state === 'stopped') {
          for (const chatId of this.store.abortAll('The QodeAssist server stopped.')) {
            if (chatId === this.currentChatId) {
              this.scheduleFlush();
            }
          }
        }
        this.postState();
      }),
    );
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const media = vscode.Uri.joinPath(this.context.extensionUri, 'media');
    view.webview.options = { enableScripts: true, localResourceRoots: [media] };
    const template = fs.readFileSync(path.join(media.fsPath, 'chat.html'), 'utf8');
    view.webview.html = fillTemplate(template, {
      cspSource: view.webview.cspSource,
      nonce: makeNonce(),
      scriptUri: view.webview.asWebviewUri(vscode.Uri.joinPath(media, 'chat.js')).toString(),
      styleUri: view.webview.asWebviewUri(vscode.Uri.joinPath(media, 'chat.css')).toString(),
    });
    this.differ.reset();
    view.webview.onDidReceiveMessage(
      (message: FromPanel) => void this.onMessage(message),
      undefined,
      this.disposables,
    );
    view.onDidDispose(() => {
      if (this.view === view) {
        this.view = undefined;
      }
    });
  }

  // -- commands --------------------------------------------------------------------------

  async show(): Promise<void> {
    await vscode.commands.executeCommand(`${ChatPanel.viewId}.focus`);
  }

  newChat(): void {
    this.currentChatId = undefined;
    this.pending = undefined;
    this.selectedAgent = '';
    this.attachments = [];
    this.linked = undefined;
    this.tokens = undefined;
    this.flush();
    this.post({ type: 'focusInput' });
  }

  async openHistory(): Promise<void> {
    let chats: ChatSummary[];
    try {
      chats = await this.server.request<ChatSummary[]>(Methods.chatList, {});
    } catch (error) {
      this.report(error);
      return;
    }
    const deleteButton: vscode.QuickInputButton = {
      iconPath: new vscode.ThemeIcon('trash'),
      tooltip: 'Delete this chat',
    };
    type Item = vscode.QuickPickItem & { chatId: string };
    const toItems = (list: ChatSummary[]): Item[] =>
      list.map((chat) => ({
        label: chat.title || chat.chatId,
        description: chat.agent ?? '',
        detail: [
          formatDate(chat.updatedAt),
          chat.compressedFrom ? `compressed from ${chat.compressedFrom}` : '',
          chat.chatId === this.currentChatId ? 'open' : '',
        ]
          .filter(Boolean)
          .join(' · '),
        chatId: chat.chatId,
        buttons: [deleteButton],
      }));
    const quickPick = vscode.window.createQuickPick<Item>();
    quickPick.title = 'QodeAssist: chats';
    quickPick.placeholder = chats.length ? 'Open a chat' : 'No saved chats yet';
    quickPick.matchOnDescription = true;
    quickPick.matchOnDetail = true;
    quickPick.items = toItems(chats);
    quickPick.onDidTriggerItemButton(async ({ item }) => {
      const answer = await vscode.window.showWarningMessage(
        `Delete the chat "${item.label}"?`,
        { modal: true },
        'Delete',
      );
      if (answer !== 'Delete') {
        return;
      }
      try {
        await this.server.request(Methods.chatDelete, { chatId: item.chatId });
      } catch (error) {
        this.report(error);
        return;
      }
      this.store.delete(item.chatId);
      if (item.chatId === this.currentChatId) {
        this.newChat();
      }
      chats = chats.filter((c) => c.chatId !== item.chatId);
      quickPick.items = toItems(chats);
    });
    quickPick.onDidAccept(() => {
      const picked = quickPick.selectedItems[0];
      quickPick.hide();
      if (picked) {
        void this.openChat(picked.chatId);
      }
    });
    quickPick.onDidHide(() => quickPick.dispose());
    quickPick.show();
  }

  async openChat(chatId: string): Promise<void> {
    let result: ChatGetResult;
    try {
      result = await this.server.request<ChatGetResult>(Methods.chatGet, { chatId });
    } catch (error) {
      this.report(error);
      return;
    }
    const chat = this.store.load(result);
    this.currentChatId = chatId;
    this.pending = undefined;
    this.selectedAgent = chat.agent ?? '';
    this.attachments = [];
    this.linked = undefined;
    await this.show();
    this.flush();
    void this.refreshTokens();
  }

  async compress(): Promise<void> {
    const chatId = this.currentChatId;
    if (!chatId) {
      void vscode.window.showInformationMessage('QodeAssist: open a chat to compress first.');
      return;
    }
    let result: { chatId: string };
    try {
      result = await vscode.window.withProgress(
        { location: { viewId: ChatPanel.viewId }, title: 'Compressing the chat…' },
        () => this.server.request<{ chatId: string }>(Methods.chatCompress, { chatId }),
      );
    } catch (error) {
      this.report(error);
      return;
    }
    await this.openChat(result.chatId);
    this.notice('info', 'Compressed into this new chat; the original is kept in the history.');
  }

  async cancel(): Promise<void> {
    const chatId = this.currentChatId;
    if (!chatId || !isBusy(this.store.get(chatId))) {
      return;
    }
    try {
      await this.server.request(Methods.chatCancel, { chatId });
    } catch (error) {
      this.report(error);
    }
  }

  // -- events and sends -----------------------------------------------------------------

  private onEvent(event: ChatEvent): void {
    const chat = this.store.apply(event);
    if (!chat) {
      return;
    }
    const terminal = event.kind === 'finished' || event.kind === 'failed' || event.kind === 'cancelled';
    if (terminal && this.reloadAfter.delete(chat.chatId)) {
      void this.reload(chat.chatId);
    }
    if (chat.chatId === this.currentChatId) {
      this.scheduleFlush();
      if (terminal) {
        void this.refreshTokens();
        if (event.kind === 'failed') {
          this.restoreDraftIfUnsaved(chat.messages, event.requestId);
        }
      }
    }
  }

  private async reload(chatId: string): Promise<void> {
    try {
      this.store.load(await this.server.request<ChatGetResult>(Methods.chatGet, { chatId }));
    } catch {
      return;
    }
    if (chatId === this.currentChatId) {
      this.scheduleFlush();
    }
  }

  private async send(text: string, mode?: string): Promise<void> {
    if (!text.trim() && this.attachments.length === 0) {
      return;
    }
    const client = this.server.languageClient;
    if (!client) {
      this.report(new NotRunningError());
      this.post({ type: 'restoreDraft', text });
      return;
    }
    const chatId = this.currentChatId;
    const chat = chatId ? this.store.get(chatId) : undefined;
    if (this.pending !== undefined || isBusy(chat)) {
      // The server would refuse it (ChatBusy): keep the text for when the answer ends.
      this.post({ type: 'restoreDraft', text });
      return;
    }
    const params: ChatSendParams = { message: text };
    if (mode === 'plan') {
      params.mode = 'plan';
    }
    if (chatId) {
      params.chatId = chatId;
    }
    const chatAgent = chat?.agent ?? '';
    if (this.selectedAgent && this.selectedAgent !== chatAgent) {
      params.agent = this.selectedAgent;
    }
    if (this.attachments.length) {
      params.attachments = this.attachments.map((u) => client.code2ProtocolConverter.asUri(u));
    }
    if (this.linked !== undefined) {
      params.linkedFiles = this.linked.map((u) => client.code2ProtocolConverter.asUri(u));
    }
    const names = this.attachments.map((u) => path.basename(u.fsPath));
    this.pending = { text, attachments: names };
    this.flush();
    let result: ChatSendResult;
    try {
      result = await this.server.request<ChatSendResult>(Methods.chatSend, params);
    } catch (error) {
      this.pending = undefined;
      this.flush();
      this.report(error);
      this.post({ type: 'restoreDraft', text });
      return;
    }
    this.pending = undefined;
    this.attachments = [];
    this.linked = undefined;
    const sentTo = this.store.addUserMessage(result.chatId, result.requestId, text, names);
    if (params.agent) {
      sentTo.agent = params.agent;
    } else if (!chatId && !sentTo.agent) {
      sentTo.agent = this.agents[0]?.name ?? null; // a new chat takes the first chat agent
    }
    if (chatId && result.chatId !== chatId) {
      // [chat] auto_compress: the chat was summarised into a new one before this send.
      this.reloadAfter.add(result.chatId);
      this.notice('info', 'The chat was long: it was compressed into a new chat before sending.');
    }
    if (this.currentChatId === chatId) {
      this.currentChatId = result.chatId;
      this.selectedAgent = sentTo.agent ?? '';
    }
    this.flush();
  }

  /** A send that failed before anything was saved: give the text back to the input box. */
  private restoreDraftIfUnsaved(messages: MessageModel[], requestId: string): void {
    const answer = messages.find((m) => m.role === 'assistant' && m.requestId === requestId);
    const user = messages.find((m) => m.role === 'user' && m.requestId === requestId);
    if (answer && answer.blocks.length === 0 && user && !this.draft.trim()) {
      const text = user.blocks.map((b) => (b.kind === 'text' ? b.text : '')).join('');
      this.post({ type: 'restoreDraft', text });
    }
  }

  // -- panel messages --------------------------------------------------------------------

  private async onMessage(message: FromPanel): Promise<void> {
    switch (message.type) {
      case 'ready':
        this.differ.reset();
        this.flush();
        this.postState();
        void this.refreshAgents();
        void this.refreshSkills();
        break;
      case 'send':
        this.draft = '';
        await this.send(String(message.text ?? ''), message.mode);
        break;
      case 'cancel':
        await this.cancel();
        break;
      case 'newChat':
        this.newChat();
        break;
      case 'history':
        await this.openHistory();
        break;
      case 'compress':
        await this.compress();
        break;
      case 'agent':
        this.selectedAgent = String(message.name ?? '');
        this.postState();
        break;
      case 'openLink':
        await openLink(String(message.href ?? ''));
        break;
      case 'copy':
        await vscode.env.clipboard.writeText(String(message.text ?? ''));
        vscode.window.setStatusBarMessage('QodeAssist: copied', 2000);
        break;
      case 'insert':
        await insertIntoEditor(String(message.text ?? ''));
        break;
      case 'plan':
        await this.plan(String(message.action ?? ''));
        break;
      case 'editFile':
        await this.editFile(String(message.editId ?? ''), String(message.action ?? ''));
        break;
      case 'attach': {
        const picked = await vscode.window.showOpenDialog({
          canSelectMany: true,
          openLabel: 'Attach',
          title: 'Attach files to the next message',
        });
        if (picked?.length) {
          this.attachments.push(...picked);
          this.postState();
        }
        break;
      }
      case 'linkActive': {
        const uri = vscode.window.activeTextEditor?.document.uri;
        if (!uri || uri.scheme !== 'file') {
          void vscode.window.showInformationMessage('QodeAssist: open a file in an editor to link it.');
          break;
        }
        const linked = this.linked ?? this.chatLinkedFiles();
        if (!linked.some((u) => u.toString() === uri.toString())) {
          linked.push(uri);
        }
        this.linked = linked;
        this.postState();
        break;
      }
      case 'removeAttachment':
        this.attachments.splice(Number(message.index), 1);
        this.postState();
        break;
      case 'removeLinked': {
        const linked = this.linked ?? this.chatLinkedFiles();
        linked.splice(Number(message.index), 1);
        this.linked = linked;
        this.postState();
        break;
      }
      case 'draft':
        this.draft = String(message.text ?? '');
        this.scheduleTokens();
        break;
      case 'skills': // the user typed '/' at the start: skills may have changed on disk
        void this.refreshSkills();
        break;
    }
  }

  private chatLinkedFiles(): vscode.Uri[] {
    const chat = this.currentChatId ? this.store.get(this.currentChatId) : undefined;
    return (chat?.linkedFiles ?? []).map((file) =>
      /^[a-z][\w+.-]*:/i.test(file) && !/^[a-z]:[\\/]/i.test(file) ? vscode.Uri.parse(file) : vscode.Uri.file(file),
    );
  }

  /** Approve (run, resume) or cancel the current chat's plan; the plan comes back as events. */
  private async plan(action: string): Promise<void> {
    const chatId = this.currentChatId;
    if (!chatId) {
      return;
    }
    const method = action === 'cancel' ? Methods.chatPlanCancel : Methods.chatPlanApprove;
    try {
      await this.server.request<unknown>(method, { chatId });
    } catch (error) {
      this.report(error);
    }
  }

  private async editFile(editId: string, action: string): Promise<void> {
    const chatId = this.currentChatId;
    if (!chatId || !editId) {
      return;
    }
    const edit = this.store.fileEdit(chatId, editId);
    const question = action === 'apply' && edit ? applyQuestion(edit) : undefined;
    if (question) {
      // An edit that breaks its file is applied only when the user says so a second time; the
      // dialog's default (its first item, Enter) keeps the file.
      const keep: vscode.MessageItem = { title: "Don't apply" };
      const confirm: vscode.MessageItem = { title: question.confirm };
      const picked = await vscode.window.showWarningMessage(
        question.message,
        { modal: true, detail: question.detail },
        keep,
        confirm,
      );
      if (picked !== confirm) {
        return;
      }
    }
    try {
      const result = await this.server.request<ChatEditFileResult>(Methods.chatEditFile, {
        chatId,
        editId,
        action,
      });
      if (result?.status) {
        this.store.setFileEditStatus(chatId, editId, result.status, result.message ?? '');
        this.flush();
      }
    } catch (error) {
      this.report(error);
    }
  }

  // -- drawing ---------------------------------------------------------------------------

  private scheduleFlush(): void {
    if (this.flushTimer === undefined) {
      this.flushTimer = setTimeout(() => {
        this.flushTimer = undefined;
        this.flush();
      }, FLUSH_MS);
    }
  }

  private flush(): void {
    if (this.flushTimer !== undefined) {
      clearTimeout(this.flushTimer);
      this.flushTimer = undefined;
    }
    const chat = this.currentChatId ? this.store.get(this.currentChatId) : undefined;
    const view: ChatView = renderChat(chat);
    if (this.pending) {
      const user: MessageModel = {
        role: 'user',
        status: 'streaming',
        blocks: [
          ...(this.pending.text ? [{ kind: 'text' as const, text: this.pending.text }] : []),
          ...this.pending.attachments.map((name) => ({
            kind: 'attachment' as const,
            fileName: name,
            image: isImageName(name),
          })),
        ],
      };
      view.messages.push(renderMessage(user));
      view.busy = true;
      if (!view.title) {
        view.title = firstLine(this.pending.text);
      }
    }
    void vscode.commands.executeCommand('setContext', 'qodeassist.chatBusy', view.busy);
    if (this.view) {
      this.post({ type: 'patch', patch: this.differ.diff(view) });
    }
    this.postState();
  }

  private postState(): void {
    const chat = this.currentChatId ? this.store.get(this.currentChatId) : undefined;
    const linked = this.linked ?? this.chatLinkedFiles();
    this.post({
      type: 'state',
      serverState: this.server.state,
      agents: this.agents.map((a) => ({
        name: a.name,
        detail: [a.provider, a.model].filter(Boolean).join(' · '),
        description: a.description ?? '',
      })),
      selectedAgent: this.selectedAgent || chat?.agent || this.agents[0]?.name || '',
      skills: this.skills.map((s) => ({ name: s.name, description: s.description ?? '' })),
      attachments: this.attachments.map((u) => path.basename(u.fsPath)),
      linked: linked.map((u) => vscode.workspace.asRelativePath(u, false)),
      tokens: this.tokens ?? null,
      canCompress: chat !== undefined && !isBusy(chat),
    });
  }

  private notice(level: 'info' | 'error', text: string): void {
    this.post({ type: 'notice', level, text });
  }

  private post(message: unknown): void {
    void this.view?.webview.postMessage(message);
  }

  private report(error: unknown): void {
    const text = errorText(error);
    if (this.view?.visible) {
      this.notice('error', text);
    } else {
      void vscode.window.showErrorMessage(`QodeAssist: ${text}`);
    }
  }

  private async refreshAgents(): Promise<void> {
    try {
      const agents = await this.server.request<AgentInfo[]>(Methods.agentsList, {
        pipeline: 'chatAssistant',
      });
      this.agents = Array.isArray(agents) ? agents : [];
    } catch {
      return;
    }
    this.postState();
  }

  private async refreshSkills(): Promise<void> {
    try {
      const skills = await this.server.request<SkillInfo[]>(Methods.skillsList, {});
      this.skills = Array.isArray(skills) ? skills : [];
    } catch {
      return; // a server without skills: no completion
    }
    this.postState();
  }

  private scheduleTokens(): void {
    if (this.tokensTimer) {
      clearTimeout(this.tokensTimer);
    }
    this.tokensTimer = setTimeout(() => void this.refreshTokens(), 400);
  }

  private async refreshTokens(): Promise<void> {
    if (!this.tokensSupported || !this.server.languageClient) {
      return;
    }
    const params: { chatId?: string; draft?: string } = {};
    if (this.currentChatId) {
      params.chatId = this.currentChatId;
    }
    if (this.draft) {
      params.draft = this.draft;
    }
    try {
      this.tokens = await this.server.request<ChatTokensResult>(Methods.chatTokens, params);
    } catch (error) {
      if ((error as { code?: number })?.code === METHOD_NOT_FOUND) {
        this.tokensSupported = false;
      }
      this.tokens = undefined;
    }
    this.postState();
  }

  dispose(): void {
    if (this.flushTimer) {
      clearTimeout(this.flushTimer);
    }
    if (this.tokensTimer) {
      clearTimeout(this.tokensTimer);
    }
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}

function errorText(error: unknown): string {
  if (error instanceof Error) {
    return error.message;
  }
  return String(error);
}

function formatDate(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

/** Open a link of the panel: web links outside, files (with `#L10`) in an editor. */
async function openLink(href: string): Promise<void> {
  if (!href) {
    return;
  }
  if (/^(https?|mailto):/i.test(href)) {
    await vscode.env.openExternal(vscode.Uri.parse(href));
    return;
  }
  let target = href;
  let line: number | undefined;
  const anchor = /#L(\d+)(?:-L?\d+)?$/.exec(target);
  if (anchor) {
    line = Number(anchor[1]) - 1;
    target = target.slice(0, anchor.index);
  }
  let uri: vscode.Uri;
  if (/^file:/i.test(target)) {
    uri = vscode.Uri.parse(target);
  } else if (path.isAbsolute(target)) {
    uri = vscode.Uri.file(target);
  } else {
    const folder = vscode.workspace.workspaceFolders?.[0];
    if (!folder) {
      return;
    }
    let relative = target;
    try {
      relative = decodeURIComponent(target);
    } catch {
      // not %-encoded: use it as it is
    }
    uri = vscode.Uri.joinPath(folder.uri, relative);
  }
  try {
    const editor = await vscode.window.showTextDocument(uri, { preview: true });
    if (line !== undefined) {
      const position = new vscode.Position(line, 0);
      editor.selection = new vscode.Selection(position, position);
      editor.revealRange(new vscode.Range(position, position), vscode.TextEditorRevealType.InCenter);
    }
  } catch (error) {
    void vscode.window.showWarningMessage(`QodeAssist: cannot open ${href}: ${errorText(error)}`);
  }
}

async function insertIntoEditor(text: string): Promise<void> {
  const editor = vscode.window.activeTextEditor ?? vscode.window.visibleTextEditors[0];
  if (!editor) {
    void vscode.window.showInformationMessage('QodeAssist: open an editor to insert the code into.');
    return;
  }
  await editor.edit((edit) => {
    for (const selection of editor.selections) {
      edit.replace(selection, text);
    }
  });
}
