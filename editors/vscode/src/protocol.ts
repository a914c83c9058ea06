/**
 * The custom part of the qodeassist-lsp protocol (docs/protocol.md), as TypeScript types.
 *
 * Pure: no `vscode` import, so the modules built on it run under `node --test`.
 */

export const Methods = {
  status: 'qodeassist/status',
  agentsList: 'qodeassist/agents/list',
  refactorInstructions: 'qodeassist/refactor/instructions',
  chatSend: 'qodeassist/chat/send',
  chatEvent: 'qodeassist/chat/event',
  chatCancel: 'qodeassist/chat/cancel',
  chatList: 'qodeassist/chat/list',
  chatGet: 'qodeassist/chat/get',
  chatDelete: 'qodeassist/chat/delete',
  chatCompress: 'qodeassist/chat/compress',
  chatTokens: 'qodeassist/chat/tokens',
  chatEditFile: 'qodeassist/chat/editFile',
  chatPlanApprove: 'qodeassist/chat/plan/approve',
  chatPlanCancel: 'qodeassist/chat/plan/cancel',
  checkpointsList: 'qodeassist/checkpoints/list',
  checkpointsRestore: 'qodeassist/checkpoints/restore',
  /** Server → client: the diagnostics tool asks for the editor's diagnostics of a file. */
  diagnostics: 'qodeassist/diagnostics',
  settingsGet: 'qodeassist/settings/get',
  settingsUpdate: 'qodeassist/settings/update',
  skillsList: 'qodeassist/skills/list',
} as const;

/** Commands the server advertises (`workspace/executeCommand`). The client registers them as
 * VS Code commands itself, so the extension's own command ids must never be one of these. */
export const ServerCommands = {
  accepted: 'qodeassist.accepted',
  reloadConfiguration: 'qodeassist.reloadConfiguration',
  refactor: 'qodeassist.refactor',
  doctor: 'qodeassist.doctor',
} as const;

/** The settings section the server reads (`workspace/configuration`, `didChangeConfiguration`). */
export const CONFIG_SECTION = 'qodeassist';

/** One entry of `qodeassist/skills/list`: a skill a chat message may start with `/name`. */
export interface SkillInfo {
  name: string;
  description: string;
  source: string;
  alwaysOn: boolean;
}

export type ErrorCategory = 'config' | 'auth' | 'network' | 'provider' | 'validation' | 'tool';

export interface ChatError {
  category: ErrorCategory | string;
  message: string;
  providerDetail?: string;
  retryAfter?: number;
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  reasoningTokens: number;
}

interface EventBase {
  chatId: string;
  requestId: string;
}

export type ChatEvent = EventBase &
  (
    | { kind: 'text'; text: string }
    | { kind: 'thinking'; text: string; signature?: string; redacted?: boolean }
    | {
        kind: 'toolCall';
        /** SPEC's name for the call id; `id` carries the same value. */
        toolCallId?: string;
        id: string;
        name: string;
        arguments?: unknown;
        /** The tool's permission class: `read`, `write` or `execute` ('' when unknown). */
        permission?: string;
      }
    | {
        kind: 'toolResult';
        toolCallId?: string;
        toolUseId: string;
        name?: string;
        ok?: boolean;
        /** The first line of the result, cut short. */
        summary?: string;
        content?: string;
        isError?: boolean;
      }
    | {
        kind: 'fileEdit';
        editId: string;
        /** The edited file; older servers sent `filePath` instead. */
        uri?: string;
        filePath?: string;
        /** A unified diff of the change. */
        diff?: string;
        status: FileEditStatus;
        statusMessage?: string;
        /** Whether the file parses after the edit as well as before (`broken`: it does not). */
        parseCheck?: ParseCheck;
        /** Why `parseCheck` is `broken`. */
        parseReason?: string;
      }
    | ({ kind: 'usage' } & Partial<Usage>)
    | ({ kind: 'planUpdated' } & Plan)
    | { kind: 'finished'; stopReason?: string }
    | { kind: 'failed'; error: ChatError }
    | { kind: 'cancelled' }
  );

export type ParseCheck = 'ok' | 'broken' | 'unchecked' | string;

export type FileEditStatus =
  | 'pending'
  | 'applied'
  | 'rejected'
  | 'undone'
  | 'failed'
  | 'archived'
  | string;

export const TERMINAL_KINDS: ReadonlySet<string> = new Set(['finished', 'failed', 'cancelled']);

export interface ChatSendParams {
  chatId?: string;
  agent?: string;
  message: string;
  attachments?: string[];
  linkedFiles?: string[];
  /** `plan`: the model writes a plan of steps first (docs/plan.md). */
  mode?: 'chat' | 'plan';
}

/** One step of a plan-mode chat's plan. */
export interface PlanStep {
  id: string;
  title: string;
  status: 'pending' | 'running' | 'done' | 'failed' | 'skipped' | string;
  requestId?: string;
  checkpointId?: string;
  error?: string;
}

/** A plan: `proposed`, `running`, `cancelled`, `failed`, `done` (or `invalid`: no steps). */
export interface Plan {
  state: string;
  steps: PlanStep[];
  error?: ChatError;
}

export interface ChatSendResult {
  chatId: string;
  requestId: string;
}

export interface ChatSummary {
  chatId: string;
  title: string;
  agent: string | null;
  updatedAt: string;
  compressedFrom?: string | null;
}

/** A block of the history file format (docs/protocol.md, "History files"). */
export type HistoryBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature?: string }
  | { type: 'redacted_thinking'; signature?: string }
  | { type: 'image'; data?: string; mediaType?: string; sourceType?: string }
  | { type: 'tool_use'; id: string; name: string; input?: unknown }
  | { type: 'tool_result'; toolUseId: string; result?: string; name?: string; isError?: boolean }
  | { type: 'stored_image'; fileName: string; storedPath?: string; mediaType?: string }
  | { type: 'stored_attachment'; fileName: string; storedPath?: string }
  | {
      type: 'file_edit';
      editId: string;
      filePath: string;
      oldContent?: string;
      newContent?: string;
      status?: FileEditStatus;
      statusMessage?: string;
    }
  | { type: string; [key: string]: unknown };

export interface HistoryMessage {
  role: 'user' | 'assistant' | string;
  id?: string;
  blocks: HistoryBlock[];
}

export interface ChatGetResult {
  chatId: string;
  title?: string;
  agent?: string | null;
  busy?: boolean;
  compressedFrom?: string | null;
  linkedFiles?: string[];
  messages: HistoryMessage[];
  plan?: Plan | null;
}

export interface ChatTokensResult {
  estimate: number;
  fromUsage: boolean;
}

export interface ChatEditFileResult {
  status: string;
  message?: string;
}

export type EditFileAction = 'apply' | 'reject' | 'undo';

export interface AgentInfo {
  name: string;
  description?: string;
  provider?: string;
  model?: string;
  pipelines?: string[];
  tools?: boolean;
  thinking?: boolean;
}

export interface Instruction {
  id: string;
  name: string;
  body?: string;
  default?: boolean;
  agent?: string | null;
}

/** Latency percentiles; `null` (or `samples: 0`) when no request finished. */
export interface Percentiles {
  p50?: number | null;
  p90?: number | null;
  p99?: number | null;
  max?: number | null;
  samples?: number;
}

export interface ProviderStatus {
  name: string;
  state: 'unknown' | 'ok' | 'degraded' | 'down' | string;
  requests?: number;
  errors?: number;
  firstEventMs?: Percentiles;
  lastError?: ChatError | null;
  /** The provider's circuit breaker; `since`/`nextProbe` in seconds since the epoch. */
  circuit?: { state: 'closed' | 'open' | 'half_open' | string; since?: number | null; nextProbe?: number | null; failures?: number };
}

export interface CompletionAgentStatus {
  requests?: number;
  errors?: number;
  timeouts?: number;
  accepted?: number;
  health?: string;
  latencyMs?: Percentiles;
  timeoutRate?: number;
  lastError?: ChatError | null;
}

export interface ServerStatus {
  state: 'loading' | 'ready' | string;
  version?: string;
  configRoot?: string;
  agents?: number;
  providers?: ProviderStatus[];
  problems?: { errors?: number; warnings?: number };
  completion?: {
    outcomes?: Record<string, number>;
    accepted?: number;
    agents?: Record<string, CompletionAgentStatus>;
    inFlight?: number;
    cachedSuggestions?: number;
    typingIntervalMs?: number | null;
  };
  pipelines?: Record<string, string | string[] | null>;
  /** While background requests (inline completion, next edit) fail: `state` is `degraded`. */
  outage?: StatusOutage | null;
}

/** The failure of a background feature the status reports (told once per outage). */
export interface StatusOutage {
  feature?: string;
  agent?: string;
  category?: string;
  reason?: string;
  fix?: string;
}

export interface RefactorCommandArgument {
  uri: string;
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  version?: number;
  instruction?: string;
  instructionId?: string;
}

export interface RefactorCommandResult {
  applied: boolean;
  message?: string;
}
