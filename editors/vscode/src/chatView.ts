/**
 * The chat model turned into what the panel's script draws: per message, blocks of ready HTML
 * (built only from escaped text, see markdown.ts), plus patches that carry only the messages
 * that changed since the last one the panel got.
 *
 * Pure (no `vscode` import): unit-tested with `node --test`.
 */

import { BlockModel, ChatModel, MessageModel, breaksFile, isBusy } from './chatModel';
import { escapeHtml, renderMarkdown } from './markdown';
import { ChatError, EditFileAction, Plan, Usage } from './protocol';

export interface BlockView {
  /** `text`, `thinking`, `tool`, `toolResult`, `fileEdit`, `attachment`. */
  kind: string;
  html: string;
}

export interface MessageView {
  role: 'user' | 'assistant';
  status: string;
  blocks: BlockView[];
  /** Usage, stop reason, cancellation, error, busy indicator (HTML). */
  footer: string;
}

export interface ChatView {
  chatId?: string;
  title: string;
  agent: string | null;
  busy: boolean;
  compressedFrom: string | null;
  messages: MessageView[];
  /** The plan as a checklist with its buttons (HTML), '' without one. */
  plan: string;
}

/** The longest tool argument/result text shown (the rest is summarised). */
export const MAX_TOOL_TEXT = 20000;

export const CATEGORY_HINTS: Record<string, string> = {
  config: 'Configuration problem',
  auth: 'Authentication failed',
  network: 'Network problem',
  provider: 'Provider error',
  validation: 'Invalid request',
  tool: 'Tool failed',
};

export function renderChat(chat: ChatModel | undefined): ChatView {
  if (chat === undefined) {
    return { title: '', agent: null, busy: false, compressedFrom: null, messages: [], plan: '' };
  }
  return {
    chatId: chat.chatId,
    title: chat.title,
    agent: chat.agent,
    busy: isBusy(chat),
    compressedFrom: chat.compressedFrom,
    messages: chat.messages.map(renderMessage),
    plan: renderPlan(chat.plan),
  };
}

const PLAN_MARKS: Record<string, string> = {
  pending: '☐',
  running: '⏳',
  done: '☑',
  failed: '✗',
  skipped: '⤼',
};

/** A plan as a checklist; Approve (or Resume) and Cancel buttons where they apply. */
export function renderPlan(plan: Plan | undefined): string {
  if (plan === undefined || plan === null) {
    return '';
  }
  const items = plan.steps
    .map((step) => {
      const mark = PLAN_MARKS[step.status] ?? '☐';
      const error = step.error ? ` <span class="plan-error">— ${escapeHtml(step.error)}</span>` : '';
      return `<li class="plan-step step-${escapeHtml(step.status)}"><span class="plan-mark">${mark}</span> ${escapeHtml(step.title)}${error}</li>`;
    })
    .join('');
  const error = plan.error ? errorHtml(plan.error) : '';
  const buttons: string[] = [];
  if (['proposed', 'cancelled', 'failed'].includes(plan.state) && plan.steps.length) {
    const label = plan.state === 'proposed' ? 'Approve' : 'Resume';
    buttons.push(`<button class="primary" data-plan-action="approve">${label}</button>`);
  }
  if (plan.state === 'running' || plan.state === 'proposed') {
    buttons.push(`<button class="secondary" data-plan-action="cancel">Cancel plan</button>`);
  }
  const actions = buttons.length ? `<div class="plan-actions">${buttons.join('')}</div>` : '';
  return `<div class="plan-title">Plan · ${escapeHtml(plan.state)}</div>${error}<ol class="plan-steps">${items}</ol>${actions}`;
}

export function renderMessage(message: MessageModel): MessageView {
  const live = message.status === 'streaming';
  return {
    role: message.role,
    status: message.status,
    blocks: message.blocks.map((block) => renderBlock(block, live)),
    footer: message.role === 'assistant' ? footer(message) : '',
  };
}

export function renderBlock(block: BlockModel, live = false): BlockView {
  switch (block.kind) {
    case 'text':
      return { kind: 'text', html: `<div class="md">${renderMarkdown(block.text)}</div>` };
    case 'thinking': {
      const summary = block.redacted
        ? 'Thinking (redacted by the provider)'
        : block.done || !live
          ? 'Thoughts'
          : 'Thinking…';
      const body = block.redacted ? '' : `<div class="md">${renderMarkdown(block.text)}</div>`;
      const spinner = !block.done && live ? '<span class="spinner"></span>' : '';
      return {
        kind: 'thinking',
        html: `<details class="thinking"><summary>${spinner}${summary}</summary>${body}</details>`,
      };
    }
    case 'tool': {
      const state = block.result
        ? block.result.isError
          ? '<span class="tool-state error">failed</span>'
          : '<span class="tool-state ok">done</span>'
        : live
          ? '<span class="tool-state running"><span class="spinner"></span>running</span>'
          : '<span class="tool-state">no result</span>';
      const permission = block.permission
        ? `<span class="tool-permission permission-${escapeHtml(block.permission)}">${escapeHtml(block.permission)}</span>`
        : '';
      const args = toolArguments(block.arguments);
      const summary = block.result?.summary
        ? `<div class="tool-summary">${escapeHtml(block.result.summary)}</div>`
        : '';
      const result = block.result
        ? `<div class="label">Result</div><pre class="tool-output${block.result.isError ? ' error' : ''}">${clip(block.result.content)}</pre>`
        : '';
      return {
        kind: 'tool',
        html:
          `<details class="tool${block.result?.isError ? ' error' : ''}"><summary>` +
          `<span class="tool-icon">⚙</span> <code>${escapeHtml(block.name)}</code>${permission}` +
          `<span class="tool-brief">${escapeHtml(brief(block.arguments))}</span>${state}${summary}</summary>` +
          `<div class="label">Arguments</div><pre class="tool-args">${clip(args)}</pre>${result}</details>`,
      };
    }
    case 'toolResult':
      return {
        kind: 'toolResult',
        html:
          `<details class="tool${block.isError ? ' error' : ''}"><summary><span class="tool-icon">⚙</span> ` +
          `<code>${escapeHtml(block.name || block.toolUseId)}</code> result` +
          (block.summary ? `<div class="tool-summary">${escapeHtml(block.summary)}</div>` : '') +
          `</summary><pre class="tool-output${block.isError ? ' error' : ''}">${clip(block.content)}</pre></details>`,
      };
    case 'fileEdit': {
      const id = escapeHtml(block.editId);
      const button = (action: string, label: string): string =>
        `<button class="edit-action" data-edit-id="${id}" data-edit-action="${action}">${label}</button>`;
      const broken = breaksFile(block);
      const buttons = editActions(block.status)
        .map((action) =>
          button(action, broken && action === 'apply' ? 'Apply anyway…' : EDIT_ACTION_LABELS[action]),
        )
        .join('');
      const message = block.statusMessage
        ? `<span class="edit-message">${escapeHtml(block.statusMessage)}</span>`
        : '';
      // Issue 47: an edit that leaves the file unparsable says so on its card (Apply asks).
      const warning = broken
        ? `<div class="edit-warning" role="alert">⚠ This edit breaks the file: ${escapeHtml(block.parseReason || 'it parses worse after the edit than before')}</div>`
        : '';
      const target = block.uri || block.filePath;
      return {
        kind: 'fileEdit',
        html:
          `<div class="file-edit status-${escapeHtml(block.status)}${broken ? ' parse-broken' : ''}">` +
          `<div class="edit-header"><span class="edit-title">Edit <a data-href="${escapeHtml(target)}" href="#">${escapeHtml(block.filePath)}</a></span>` +
          `<span class="edit-status">${escapeHtml(block.status)}</span>${message}` +
          `<span class="edit-actions">${buttons}</span></div>${warning}${diffHtml(block.diff)}</div>`,
      };
    }
    case 'attachment':
      return {
        kind: 'attachment',
        html: `<div class="attachment">${block.image ? '🖼' : '📎'} ${escapeHtml(block.fileName)}</div>`,
      };
  }
}

export const EDIT_ACTION_LABELS: Record<EditFileAction, string> = {
  apply: 'Apply',
  reject: 'Reject',
  undo: 'Undo',
};

/** The actions a file edit in ``status`` offers (the server refuses the others anyway). */
export function editActions(status: string): EditFileAction[] {
  switch (status) {
    case 'pending':
    case 'failed':
      return ['apply', 'reject'];
    case 'applied':
      return ['undo'];
    default:
      return [];
  }
}

/** A unified diff as lines coloured by their first character ('' for no diff). */
export function diffHtml(diff: string): string {
  if (!diff) {
    return '';
  }
  const lines = clip(diff.replace(/\n$/, '')).split('\n');
  const html = lines.map((line) => {
    const kind = line.startsWith('+++') || line.startsWith('---')
      ? 'file'
      : line.startsWith('@@')
        ? 'hunk'
        : line.startsWith('+')
          ? 'add'
          : line.startsWith('-')
            ? 'del'
            : 'ctx';
    return `<span class="diff-${kind}">${line}</span>`;
  });
  return `<pre class="edit-diff">${html.join('\n')}</pre>`;
}

function footer(message: MessageModel): string {
  const parts: string[] = [];
  if (message.status === 'streaming') {
    parts.push('<span class="busy"><span class="spinner"></span>Answering…</span>');
  }
  if (message.status === 'cancelled') {
    parts.push('<span class="cancelled">Cancelled</span>');
  }
  if (message.status === 'finished' && message.stopReason && message.stopReason !== 'end_turn') {
    parts.push(
      `<span class="stop-reason">Stopped: ${escapeHtml(stopReasonText(message.stopReason))}</span>`,
    );
  }
  if (message.status === 'finished' && message.blocks.length === 0) {
    parts.push('<span class="empty">(empty answer)</span>');
  }
  if (message.usage) {
    parts.push(`<span class="usage">${escapeHtml(usageText(message.usage))}</span>`);
  }
  const error = message.status === 'failed' && message.error ? errorHtml(message.error) : '';
  return (parts.length ? `<div class="meta">${parts.join('')}</div>` : '') + error;
}

export function stopReasonText(reason: string): string {
  switch (reason) {
    case 'max_tokens':
      return 'the answer reached the token limit';
    case 'stop_sequence':
      return 'a stop sequence';
    case 'tool_use':
      return 'waiting for a tool';
    default:
      return reason;
  }
}

export function usageText(usage: Usage): string {
  const parts = [`${usage.inputTokens} in`, `${usage.outputTokens} out`];
  if (usage.cachedTokens) {
    parts.push(`${usage.cachedTokens} cached`);
  }
  if (usage.reasoningTokens) {
    parts.push(`${usage.reasoningTokens} reasoning`);
  }
  return `${parts.join(' · ')} tokens`;
}

export function errorHtml(error: ChatError): string {
  const category = String(error.category || 'provider');
  const hint = CATEGORY_HINTS[category] ?? 'Error';
  const detail = error.providerDetail
    ? `<details class="error-detail"><summary>Provider detail</summary><pre>${clip(error.providerDetail)}</pre></details>`
    : '';
  const retry =
    typeof error.retryAfter === 'number'
      ? `<div class="retry">Retry after ${escapeHtml(String(error.retryAfter))} s.</div>`
      : '';
  return (
    `<div class="error category-${escapeHtml(category)}">` +
    `<span class="error-category">${escapeHtml(category)}</span> <strong>${escapeHtml(hint)}</strong>` +
    `<div class="error-message">${escapeHtml(error.message ?? '')}</div>${retry}${detail}</div>`
  );
}

function toolArguments(args: unknown): string {
  if (typeof args === 'string') {
    return args;
  }
  try {
    return JSON.stringify(args ?? {}, null, 2);
  } catch {
    return String(args);
  }
}

/** A one-line hint of what a tool call is about (its first string argument). */
export function brief(args: unknown): string {
  if (args && typeof args === 'object' && !Array.isArray(args)) {
    for (const value of Object.values(args as Record<string, unknown>)) {
      if (typeof value === 'string' && value.trim()) {
        const line = value.trim().split('\n', 1)[0];
        return line.length > 60 ? `${line.slice(0, 59)}…` : line;
      }
    }
  }
  return '';
}

function clip(text: string): string {
  if (text.length <= MAX_TOOL_TEXT) {
    return escapeHtml(text);
  }
  const rest = text.length - MAX_TOOL_TEXT;
  return `${escapeHtml(text.slice(0, MAX_TOOL_TEXT))}\n… (${rest} more characters)`;
}

/** What the panel gets: the header and only the messages that changed. */
export interface ChatPatch {
  /** The panel drops every message it has first (another chat, or a fresh panel). */
  reset: boolean;
  chatId?: string;
  title: string;
  agent: string | null;
  busy: boolean;
  compressedFrom: string | null;
  /** The number of messages after the patch (the panel drops any beyond it). */
  length: number;
  changed: { index: number; message: MessageView }[];
  /** The plan's HTML ('' or absent without a plan). */
  plan?: string;
}

/** Remembers what the panel shows, so each update sends only the messages that changed. */
export class ViewDiffer {
  private chatId: string | undefined | null = null; // null: nothing sent yet
  private sent: string[] = [];

  reset(): void {
    this.chatId = null;
    this.sent = [];
  }

  diff(view: ChatView): ChatPatch {
    const reset = this.chatId === null || this.chatId !== view.chatId;
    if (reset) {
      this.sent = [];
    }
    const changed: ChatPatch['changed'] = [];
    const next: string[] = [];
    view.messages.forEach((message, index) => {
      const key = JSON.stringify(message);
      next.push(key);
      if (this.sent[index] !== key) {
        changed.push({ index, message });
      }
    });
    this.chatId = view.chatId;
    this.sent = next;
    return {
      reset,
      chatId: view.chatId,
      title: view.title,
      agent: view.agent,
      busy: view.busy,
      compressedFrom: view.compressedFrom,
      length: view.messages.length,
      changed,
      plan: view.plan,
    };
  }
}
