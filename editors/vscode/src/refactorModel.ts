/**
 * The refactor command's choices and the `qodeassist.refactor` argument.
 *
 * Pure (no `vscode` import): unit-tested with `node --test`.
 */

import { Instruction, RefactorCommandArgument } from './protocol';

/** What the user picked: an instruction of the library or their own text. */
export type RefactorChoice =
  | { instructionId: string; label: string }
  | { instruction: string; label: string };

export interface InstructionPick {
  label: string;
  description?: string;
  detail?: string;
  /** Undefined for the "Custom instruction…" entry. */
  instructionId?: string;
  custom?: boolean;
}

export const CUSTOM_LABEL = 'Custom instruction…';

/** QuickPick entries: the default instruction first, the library, then "Custom instruction…". */
export function instructionPicks(instructions: Instruction[]): InstructionPick[] {
  const ordered = [...instructions].sort((a, b) => Number(b.default === true) - Number(a.default === true));
  const picks: InstructionPick[] = ordered.map((instruction) => ({
    label: instruction.name || instruction.id,
    description: [instruction.default ? 'default' : '', instruction.agent ? `agent: ${instruction.agent}` : '']
      .filter(Boolean)
      .join(' · ') || undefined,
    detail: instruction.body ? oneLine(instruction.body) : undefined,
    instructionId: instruction.id,
  }));
  picks.push({ label: CUSTOM_LABEL, description: 'type what to do', custom: true });
  return picks;
}

export function refactorArgument(
  target: Pick<RefactorCommandArgument, 'uri' | 'range' | 'version'>,
  choice: RefactorChoice,
): RefactorCommandArgument {
  const argument: RefactorCommandArgument = { uri: target.uri, range: target.range };
  if (target.version !== undefined) {
    argument.version = target.version;
  }
  if ('instructionId' in choice) {
    argument.instructionId = choice.instructionId;
  } else {
    argument.instruction = choice.instruction;
  }
  return argument;
}

/** The restored "last refactor" (from workspace state), or undefined when unusable. */
export function parseChoice(value: unknown): RefactorChoice | undefined {
  if (!value || typeof value !== 'object') {
    return undefined;
  }
  const v = value as Record<string, unknown>;
  const label = typeof v.label === 'string' ? v.label : '';
  if (typeof v.instructionId === 'string' && v.instructionId) {
    return { instructionId: v.instructionId, label: label || v.instructionId };
  }
  if (typeof v.instruction === 'string' && v.instruction.trim()) {
    return { instruction: v.instruction, label: label || oneLine(v.instruction) };
  }
  return undefined;
}

function oneLine(text: string, max = 100): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** The server's code actions that run the default instruction when picked in a plain menu. */
export type AskingAction = 'refactor' | 'insert';

/**
 * Whether a server code action's `data` is "Refactor with instruction…" (a selection) or
 * "Generate code here…" (an empty range): a refactor target with no instruction of its own.
 * VS Code can ask for the text, so the extension asks instead of running the default.
 */
export function askingAction(data: unknown): AskingAction | undefined {
  if (!data || typeof data !== 'object') {
    return undefined;
  }
  const d = data as Partial<RefactorCommandArgument>;
  if (typeof d.uri !== 'string' || !d.range?.start || !d.range.end) {
    return undefined;
  }
  if (d.instruction !== undefined || d.instructionId !== undefined) {
    return undefined;
  }
  const { start, end } = d.range;
  return start.line === end.line && start.character === end.character ? 'insert' : 'refactor';
}
