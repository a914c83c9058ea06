/**
 * Chats as the panel shows them: `qodeassist/chat/event` notifications and `qodeassist/chat/get`
 * histories folded into one model per chat.
 *
 * Pure (no `vscode` import): unit-tested with `node --test`.
 *
 * One assistant message per request: tool rounds (assistant → tool results → assistant …) are
 * one message whose tool blocks carry their results, both when streamed and when loaded from a
 * history (where the results sit in a user message between two assistant messages of the same
 * id).
 */

import {
  ChatError,
  ChatEvent,
  ChatGetResult,
  FileEditStatus,
  HistoryBlock,
  ParseCheck,
  Plan,
  TERMINAL_KINDS,
  Usage,
} from './protocol';

export type BlockModel =
  | { kind: 'text'; text: string }
  | { kind: 'thinking'; text: string; redacted: boolean; done: boolean }
  | {
      kind: 'tool';
      id: string;
      name: string;
      arguments: unknown;
      /** `read`, `write` or `execute` ('' when the server did not say). */
      permission: string;
      result?: ToolResult;
    }
  /** A tool result whose call is not in the chat (kept so nothing is lost). */
  | ({ kind: 'toolResult'; toolUseId: string; name: string } & ToolResult)
  | {
      kind: 'fileEdit';
      editId: string;
      /** The file as the server named it (a URI, or a path from older servers). */
      uri: string;
      /** The file for people: a path, relative to the workspace when the panel knows it. */
      filePath: string;
      /** The unified diff of the change ('' when the server sent none). */
      diff: string;
      status: FileEditStatus;
      statusMessage: string;
      /** `broken`: the file would parse worse after the edit than before (see `parseReason`). */
      parseCheck?: ParseCheck;
      parseReason?: string;
    }
  | { kind: 'attachment'; fileName: string; image: boolean };

/** `streaming` until the terminal event; `saved` for messages loaded from a history. */
export type FileEditBlock = Extract<BlockModel, { kind: 'fileEdit' }>;

export interface ToolResult {
  content: string;
  isError: boolean;
  /** The first line of the result (the server's `summary`, else taken from `content`). */
  summary: string;
}

export type MessageStatus = 'streaming' | 'finished' | 'failed' | 'cancelled' | 'saved';

export interface MessageModel {
  role: 'user' | 'assistant';
  /** The request that produced (assistant) or started (user) this message. */
  requestId?: string;
  blocks: BlockModel[];
  status: MessageStatus;
  stopReason?: string;
  error?: ChatError;
  usage?: Usage;
}

export interface ChatModel {
  chatId: string;
  title: string;
  agent: string | null;
  compressedFrom: string | null;
  linkedFiles: string[];
  messages: MessageModel[];
  /** The request in flight (a chat has at most one); undefined when idle. */
  activeRequestId?: string;
  lastUsage?: Usage;
  /** The plan of a plan-mode chat (the latest `planUpdated`, or the history's). */
  plan?: Plan;
  /** Bumped on every change, so views can tell what to redraw. */
  version: number;
}

export function emptyChat(chatId: string): ChatModel {
  return {
    chatId,
    title: '',
    agent: null,
    compressedFrom: null,
    linkedFiles: [],
    messages: [],
    version: 0,
  };
}

export function isBusy(chat: ChatModel | undefined): boolean {
  return chat !== undefined && chat.activeRequestId !== undefined;
}

/** Every chat the panel knows, fed by events (of any chat, interleaved) and histories. */
export class ChatStore {
  private readonly chats = new Map<string, ChatModel>();
  /** Requests that ended: late events for them are dropped. */
  private readonly ended = new Set<string>();

  get(chatId: string): ChatModel | undefined {
    return this.chats.get(chatId);
  }

  ids(): string[] {
    return [...this.chats.keys()];
  }

  delete(chatId: string): void {
    this.chats.delete(chatId);
  }

  private ensure(chatId: string): ChatModel {
    let chat = this.chats.get(chatId);
    if (chat === undefined) {
      chat = emptyChat(chatId);
      this.chats.set(chatId, chat);
    }
    return chat;
  }

  /** Apply one `qodeassist/chat/event`; returns the chat it changed (undefined if dropped). */
  apply(event: ChatEvent): ChatModel | undefined {
    if (!event || typeof event.chatId !== 'string' || typeof event.requestId !== 'string') {
      return undefined;
    }
    if (event.kind === 'planUpdated') {
      return this.applyPlan(event);
    }
    if (event.kind === 'fileEdit' && this.updateKnownEdit(event)) {
      // A status change (apply, undo, …) may come after its request ended.
      return this.chats.get(event.chatId);
    }
    if (this.ended.has(event.requestId)) {
      return undefined;
    }
    const chat = this.ensure(event.chatId);
    const known = this.findAssistant(chat, event.requestId);
    if (known === undefined && !TERMINAL_KINDS.has(event.kind)) {
      // The first event of a new request: the newest request is the active one (a cancelled
      // request's last events may still be on their way; the server refuses a second message
      // into a busy chat with ChatBusy, so the panel does not send one).
      chat.activeRequestId = event.requestId;
    }
    const message = known ?? this.newAssistant(chat, event.requestId);
    switch (event.kind) {
      case 'text':
        closeThinking(message);
        appendText(message, event.text ?? '');
        break;
      case 'thinking': {
        const last = message.blocks[message.blocks.length - 1];
        const redacted = event.redacted === true;
        if (last?.kind === 'thinking' && !last.done && last.redacted === redacted) {
          last.text += event.text ?? '';
        } else {
          message.blocks.push({ kind: 'thinking', text: event.text ?? '', redacted, done: false });
        }
        if (event.signature) {
          closeThinking(message);
        }
        break;
      }
      case 'toolCall':
        closeThinking(message);
        message.blocks.push({
          kind: 'tool',
          id: event.toolCallId ?? event.id,
          name: event.name,
          arguments: event.arguments ?? {},
          permission: event.permission ?? '',
        });
        break;
      case 'toolResult': {
        closeThinking(message);
        const content = event.content ?? '';
        attachToolResult(chat, message, {
          toolUseId: event.toolCallId ?? event.toolUseId,
          name: event.name ?? '',
          content,
          isError: event.isError === true || event.ok === false,
          summary: event.summary ?? summarize(content),
        });
        break;
      }
      case 'fileEdit': {
        const uri = event.uri ?? event.filePath ?? '';
        upsertFileEdit(chat, message, {
          kind: 'fileEdit',
          editId: event.editId,
          uri,
          filePath: event.filePath ?? displayPath(uri),
          diff: event.diff ?? '',
          status: event.status,
          statusMessage: event.statusMessage ?? '',
          ...parseOf(event),
        });
        break;
      }
      case 'usage': {
        const usage: Usage = {
          inputTokens: event.inputTokens ?? 0,
          outputTokens: event.outputTokens ?? 0,
          cachedTokens: event.cachedTokens ?? 0,
          reasoningTokens: event.reasoningTokens ?? 0,
        };
        message.usage = usage;
        chat.lastUsage = usage;
        break;
      }
      case 'finished':
      case 'failed':
      case 'cancelled':
        closeThinking(message);
        message.status = event.kind;
        if (event.kind === 'finished') {
          message.stopReason = event.stopReason;
        } else if (event.kind === 'failed') {
          message.error = event.error ?? { category: 'provider', message: 'unknown error' };
        }
        if (chat.activeRequestId === event.requestId) {
          chat.activeRequestId = undefined;
        }
        this.ended.add(event.requestId);
        break;
      default:
        return undefined; // an unknown kind from a newer server: ignore it
    }
    chat.version++;
    return chat;
  }

  /** Keep a chat's plan; a step that starts gets a user message naming it. */
  private applyPlan(event: Extract<ChatEvent, { kind: 'planUpdated' }>): ChatModel {
    const chat = this.ensure(event.chatId);
    const steps = Array.isArray(event.steps) ? event.steps : [];
    chat.plan = { state: event.state, steps, error: event.error };
    steps.forEach((step, index) => {
      const id = step.requestId;
      if (step.status === 'running' && id && !chat.messages.some((m) => m.requestId === id)) {
        this.addUserMessage(chat.chatId, id, `Step ${index + 1}: ${step.title}`);
      }
    });
    chat.version++;
    return chat;
  }

  /** The user's message of a request, placed before its answer (events may come first). */
  addUserMessage(
    chatId: string,
    requestId: string,
    text: string,
    attachments: string[] = [],
  ): ChatModel {
    const chat = this.ensure(chatId);
    const message: MessageModel = {
      role: 'user',
      requestId,
      status: 'finished',
      blocks: [
        ...(text ? [{ kind: 'text' as const, text }] : []),
        ...attachments.map((name) => ({
          kind: 'attachment' as const,
          fileName: name,
          image: isImageName(name),
        })),
      ],
    };
    const answer = chat.messages.findIndex(
      (m) => m.role === 'assistant' && m.requestId === requestId,
    );
    if (answer >= 0) {
      chat.messages.splice(answer, 0, message);
    } else {
      chat.messages.push(message);
    }
    if (!this.ended.has(requestId)) {
      chat.activeRequestId = requestId;
    }
    if (!chat.title && text) {
      chat.title = firstLine(text);
    }
    chat.version++;
    return chat;
  }

  /**
   * Load a `qodeassist/chat/get` result. A chat with a request streaming here is kept as it is
   * (its events are more recent than any history), except for its metadata.
   */
  load(result: ChatGetResult): ChatModel {
    const current = this.chats.get(result.chatId);
    const chat = current ?? emptyChat(result.chatId);
    chat.title = result.title ?? chat.title;
    chat.agent = result.agent ?? null;
    chat.compressedFrom = result.compressedFrom ?? null;
    chat.linkedFiles = Array.isArray(result.linkedFiles) ? [...result.linkedFiles] : [];
    chat.plan = result.plan ?? chat.plan;
    if (!isBusy(current)) {
      chat.messages = fromHistory(result.messages ?? []);
      chat.activeRequestId = undefined;
      if (result.busy) {
        // Streaming started elsewhere (before a restart of this window): the rest arrives as
        // events of the last assistant message's request.
        const last = chat.messages[chat.messages.length - 1];
        if (last?.role === 'assistant' && last.requestId) {
          last.status = 'streaming';
          chat.activeRequestId = last.requestId;
        }
      }
    }
    this.chats.set(chat.chatId, chat);
    chat.version++;
    return chat;
  }

  /** Update a file edit's status after `qodeassist/chat/editFile`. */
  setFileEditStatus(chatId: string, editId: string, status: string, message = ''): boolean {
    const chat = this.chats.get(chatId);
    if (!chat) {
      return false;
    }
    for (const m of chat.messages) {
      for (const b of m.blocks) {
        if (b.kind === 'fileEdit' && b.editId === editId) {
          b.status = status;
          b.statusMessage = message;
          chat.version++;
          return true;
        }
      }
    }
    return false;
  }

  /**
   * The server went away: every request in flight ends as failed (no terminal event will come).
   * Returns the ids of the chats that changed.
   */
  abortAll(message: string): string[] {
    const changed: string[] = [];
    for (const chat of this.chats.values()) {
      const requestId = chat.activeRequestId;
      if (requestId === undefined) {
        continue;
      }
      this.apply({
        chatId: chat.chatId,
        requestId,
        kind: 'failed',
        error: { category: 'network', message },
      });
      changed.push(chat.chatId);
    }
    return changed;
  }

  /** Apply a fileEdit event to the block of the same editId; false when there is none. */
  private updateKnownEdit(event: Extract<ChatEvent, { kind: 'fileEdit' }>): boolean {
    const chat = this.chats.get(event.chatId);
    const block = chat?.messages
      .flatMap((m) => m.blocks)
      .find((b): b is FileEditBlock => b.kind === 'fileEdit' && b.editId === event.editId);
    if (!chat || !block) {
      return false;
    }
    const uri = event.uri ?? event.filePath ?? '';
    block.uri = uri || block.uri;
    block.filePath = event.filePath ?? (uri ? displayPath(uri) : block.filePath);
    block.diff = event.diff || block.diff;
    block.status = event.status;
    block.statusMessage = event.statusMessage ?? '';
    Object.assign(block, parseOf(event));
    chat.version++;
    return true;
  }

  /** The file edit ``editId`` of ``chatId``, if the chat shows it. */
  fileEdit(chatId: string, editId: string): FileEditBlock | undefined {
    return this.chats
      .get(chatId)
      ?.messages.flatMap((m) => m.blocks)
      .find((b): b is FileEditBlock => b.kind === 'fileEdit' && b.editId === editId);
  }

  private findAssistant(chat: ChatModel, requestId: string): MessageModel | undefined {
    for (let i = chat.messages.length - 1; i >= 0; i--) {
      const m = chat.messages[i];
      if (m.role === 'assistant' && m.requestId === requestId) {
        return m;
      }
    }
    return undefined;
  }

  private newAssistant(chat: ChatModel, requestId: string): MessageModel {
    const message: MessageModel = { role: 'assistant', requestId, blocks: [], status: 'streaming' };
    chat.messages.push(message);
    return message;
  }
}

function appendText(message: MessageModel, text: string): void {
  const last = message.blocks[message.blocks.length - 1];
  if (last?.kind === 'text') {
    last.text += text;
  } else if (text) {
    message.blocks.push({ kind: 'text', text });
  }
}

function closeThinking(message: MessageModel): void {
  for (const block of message.blocks) {
    if (block.kind === 'thinking') {
      block.done = true;
    }
  }
}

function attachToolResult(
  chat: ChatModel,
  message: MessageModel,
  result: { toolUseId: string; name: string } & ToolResult,
): void {
  for (let i = chat.messages.length - 1; i >= 0; i--) {
    for (const block of chat.messages[i].blocks) {
      if (block.kind === 'tool' && block.id === result.toolUseId) {
        block.result = { content: result.content, isError: result.isError, summary: result.summary };
        return;
      }
    }
  }
  message.blocks.push({ kind: 'toolResult', ...result });
}

function upsertFileEdit(
  chat: ChatModel,
  message: MessageModel,
  edit: Extract<BlockModel, { kind: 'fileEdit' }>,
): void {
  for (const m of chat.messages) {
    for (const block of m.blocks) {
      if (block.kind === 'fileEdit' && block.editId === edit.editId) {
        block.uri = edit.uri || block.uri;
        block.filePath = edit.filePath || block.filePath;
        block.diff = edit.diff || block.diff;
        block.status = edit.status;
        block.statusMessage = edit.statusMessage;
        Object.assign(block, parseOf(edit));
        return;
      }
    }
  }
  message.blocks.push(edit);
}

/** The parse check fields of an event or stored block (none when it has no check). */
function parseOf(from: { parseCheck?: unknown; parseReason?: unknown }): {
  parseCheck?: ParseCheck;
  parseReason?: string;
} {
  if (typeof from.parseCheck !== 'string' || !from.parseCheck) {
    return {};
  }
  return { parseCheck: from.parseCheck, parseReason: String(from.parseReason ?? '') };
}

/** Whether applying ``edit`` would leave its file unparsable (the card warns, Apply asks). */
export function breaksFile(edit: FileEditBlock): boolean {
  return edit.parseCheck === 'broken';
}

export interface ApplyQuestion {
  message: string;
  detail: string;
  /** The one button that applies; anything else (Cancel, Escape) keeps the edit pending. */
  confirm: string;
}

/** What to ask before applying ``edit``, or undefined when it may be applied at once. */
export function applyQuestion(edit: FileEditBlock): ApplyQuestion | undefined {
  if (!breaksFile(edit)) {
    return undefined;
  }
  const reason = edit.parseReason || 'the file parses worse after the edit than before';
  return {
    message: `QodeAssist: this edit breaks ${edit.filePath || edit.uri}. Apply it anyway?`,
    detail: `${reason}\n\nThe model was told; it may propose a fixed edit.`,
    confirm: 'Apply anyway',
  };
}

/** Turn history messages into the panel's messages (tool rounds merged per request). */
export function fromHistory(history: ChatGetResult['messages']): MessageModel[] {
  const messages: MessageModel[] = [];
  for (const item of history) {
    const blocks = Array.isArray(item.blocks) ? item.blocks : [];
    if (item.role === 'assistant') {
      const converted = blocks.flatMap(assistantBlock);
      const previous = messages[messages.length - 1];
      if (previous?.role === 'assistant' && item.id && previous.requestId === item.id) {
        previous.blocks.push(...converted);
      } else {
        messages.push({ role: 'assistant', requestId: item.id, blocks: converted, status: 'saved' });
      }
      continue;
    }
    const user: BlockModel[] = [];
    for (const block of blocks) {
      if (block.type === 'tool_result') {
        const b = block as Extract<HistoryBlock, { type: 'tool_result' }>;
        const content = String(b.result ?? '');
        const result = {
          toolUseId: String(b.toolUseId ?? ''),
          name: String(b.name ?? ''),
          content,
          isError: b.isError === true,
          summary: summarize(content),
        };
        const owner = [...messages].reverse().find((m) => m.role === 'assistant');
        const call = owner?.blocks.find(
          (x): x is Extract<BlockModel, { kind: 'tool' }> =>
            x.kind === 'tool' && x.id === result.toolUseId,
        );
        if (call) {
          call.result = { content: result.content, isError: result.isError, summary: result.summary };
        } else if (owner) {
          owner.blocks.push({ kind: 'toolResult', ...result });
        } else {
          user.push({ kind: 'toolResult', ...result });
        }
        continue;
      }
      user.push(...userBlock(block));
    }
    if (user.length > 0) {
      messages.push({ role: 'user', blocks: user, status: 'saved' });
    }
  }
  return messages;
}

function assistantBlock(block: HistoryBlock): BlockModel[] {
  const b = block as Record<string, unknown>;
  switch (block.type) {
    case 'text':
      return [{ kind: 'text', text: String(b.text ?? '') }];
    case 'thinking':
      return [{ kind: 'thinking', text: String(b.thinking ?? ''), redacted: false, done: true }];
    case 'redacted_thinking':
      return [{ kind: 'thinking', text: '', redacted: true, done: true }];
    case 'tool_use':
      return [
        {
          kind: 'tool',
          id: String(b.id ?? ''),
          name: String(b.name ?? ''),
          arguments: b.input ?? {},
          permission: String(b.permission ?? ''),
        },
      ];
    case 'file_edit': {
      const uri = String(b.uri ?? b.filePath ?? '');
      return [
        {
          kind: 'fileEdit',
          editId: String(b.editId ?? ''),
          uri,
          filePath: b.filePath ? String(b.filePath) : displayPath(uri),
          diff: String(b.diff ?? ''),
          status: String(b.status ?? 'pending'),
          statusMessage: String(b.statusMessage ?? ''),
          ...parseOf(b),
        },
      ];
    }
    default:
      return userBlock(block);
  }
}

function userBlock(block: HistoryBlock): BlockModel[] {
  const b = block as Record<string, unknown>;
  switch (block.type) {
    case 'text':
      return [{ kind: 'text', text: String(b.text ?? '') }];
    case 'stored_attachment':
      return [{ kind: 'attachment', fileName: String(b.fileName ?? ''), image: false }];
    case 'stored_image':
      return [{ kind: 'attachment', fileName: String(b.fileName ?? 'image'), image: true }];
    case 'image':
      return [{ kind: 'attachment', fileName: String(b.mediaType ?? 'image'), image: true }];
    default:
      return []; // the server skips unknown block types too
  }
}

const IMAGE_EXTENSIONS = /\.(png|jpe?g|gif|webp|bmp|svg)$/i;

export function isImageName(name: string): boolean {
  return IMAGE_EXTENSIONS.test(name);
}

export function firstLine(text: string, max = 80): string {
  const line = text.trim().split(/\r?\n/, 1)[0] ?? '';
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** The first non-blank line of a tool result, cut to 160 characters (as the server does). */
export function summarize(content: string, max = 160): string {
  const line = content.split(/\r?\n/).find((l) => l.trim() !== '')?.trim() ?? '';
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** A file URI as a path (decoded, `file://` dropped); anything else as it is. */
export function displayPath(uri: string): string {
  const match = /^file:\/\/[^/]*(\/.*)$/.exec(uri);
  if (!match) {
    return uri;
  }
  let path: string;
  try {
    path = decodeURIComponent(match[1]);
  } catch {
    path = match[1];
  }
  // file:///c%3A/x → c:/x on Windows
  return /^\/[a-zA-Z]:/.test(path) ? path.slice(1) : path;
}
