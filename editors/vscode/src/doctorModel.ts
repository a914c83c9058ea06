/**
 * The doctor report (`qodeassist.doctor`) and the settings writes (`qodeassist/settings/update`)
 * as the extension shows and sends them.
 *
 * Pure (no `vscode` import): unit-tested with `node --test`.
 */

/** One problem of an agent, with its one-line fix. */
export interface DoctorProblem {
  check: string;
  message: string;
  fix: string;
}

/** One probed agent (see docs/cli.md, `doctor --json`). */
export interface DoctorAgent {
  name: string;
  pipelines: string[];
  provider: string;
  model: string;
  working: boolean;
  checks: Record<string, string>;
  firstTokenMs: number | null;
  tokensPerSecond: number | null;
  circuit: string;
  problems: DoctorProblem[];
  notes: string[];
}

/** The result of the `qodeassist.doctor` command. */
export interface DoctorReport {
  ok: boolean;
  pipelines: { pipeline: string; agents: string[]; working: boolean }[];
  agents: DoctorAgent[];
  /** The same report as plain text lines (the server formats it). */
  text?: string;
}

/** The one-line verdict shown in a notification. */
export function doctorVerdict(report: DoctorReport): { ok: boolean; message: string } {
  const failing = report.pipelines.filter((p) => p.agents.length > 0 && !p.working);
  const broken = report.agents.filter((a) => !a.working).length;
  if (failing.length === 0) {
    const note = broken ? ` (${broken} agent${broken === 1 ? '' : 's'} failing; another one covers)` : '';
    return { ok: true, message: `QodeAssist doctor: every pipeline has a working agent${note}.` };
  }
  const names = failing.map((p) => p.pipeline).join(', ');
  return { ok: false, message: `QodeAssist doctor: no working agent for ${names}.` };
}

/** The text of the report document: the server's own text, else one built from the JSON. */
export function doctorText(report: DoctorReport): string {
  if (report.text) {
    return report.text;
  }
  const lines: string[] = [];
  for (const pipeline of report.pipelines) {
    const state = pipeline.agents.length === 0 ? 'off' : pipeline.working ? 'working' : 'NO WORKING AGENT';
    lines.push(`${pipeline.pipeline}: ${state}`);
  }
  for (const agent of report.agents) {
    lines.push('', `${agent.working ? '✓' : '✗'} ${agent.name} — ${agent.provider} / ${agent.model}`);
    for (const problem of agent.problems) {
      lines.push(`  ${problem.check}: ${problem.message}`, `    fix: ${problem.fix}`);
    }
  }
  return lines.join('\n') + '\n';
}

/** A value typed in the input box: JSON (`true`, `42`, `"x"`, `["a"]`, `null`), else a string. */
export function parseSettingValue(text: string): unknown {
  const trimmed = text.trim();
  try {
    return JSON.parse(trimmed);
  } catch {
    return trimmed;
  }
}

/** Why a settings key cannot be sent, or undefined when it looks like `section.key`. */
export function settingKeyProblem(key: string): string | undefined {
  return /^[A-Za-z_]+(\.[A-Za-z_]+)+$/.test(key.trim())
    ? undefined
    : 'a dotted key such as completion.debounceMs';
}
