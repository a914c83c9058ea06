/**
 * The status bar item's text and tooltip from `qodeassist/status` and the client's state.
 *
 * Pure (no `vscode` import): unit-tested with `node --test`.
 */

import { Percentiles, ProviderStatus, ServerStatus } from './protocol';

export type StatusLevel = 'ok' | 'loading' | 'warning' | 'error' | 'off';

export interface StatusInput {
  /** The client: starting, running, stopped (or failed to start). */
  client: 'starting' | 'running' | 'stopped';
  status?: ServerStatus;
  inlineEnabled: boolean;
  /** Why the client stopped or failed to start. */
  startError?: string;
  /** Milliseconds since the epoch (injectable for tests); default `Date.now()`. */
  now?: number;
}

export interface StatusPresentation {
  level: StatusLevel;
  /** Status bar text with codicons (`$(name)`). */
  text: string;
  /** Markdown tooltip. */
  tooltip: string;
}

export function describeStatus(input: StatusInput): StatusPresentation {
  const status = input.status;
  const lines: string[] = [];
  if (input.client === 'stopped') {
    return {
      level: 'error',
      text: '$(error) QodeAssist',
      tooltip:
        '**QodeAssist: the server is not running.**' +
        (input.startError ? `\n\n${escapeMarkdown(input.startError)}` : '') +
        '\n\nClick for the menu (restart, output, settings).',
    };
  }
  if (input.client === 'starting' || !status || status.state === 'loading') {
    return {
      level: 'loading',
      text: '$(loading~spin) QodeAssist',
      tooltip:
        input.client === 'starting'
          ? 'QodeAssist: starting the server…'
          : 'QodeAssist: loading the configuration…',
    };
  }
  const errors = status.problems?.errors ?? 0;
  const warnings = status.problems?.warnings ?? 0;
  const providers = status.providers ?? [];
  const down = providers.filter((p) => p.state === 'down' || p.circuit?.state === 'open');
  const degraded = providers.filter((p) => p.state === 'degraded');

  let level: StatusLevel = 'ok';
  if (errors > 0 || down.length > 0) {
    level = 'error';
  } else if (warnings > 0 || degraded.length > 0) {
    level = 'warning';
  }
  if (!input.inlineEnabled && level === 'ok') {
    level = 'off';
  }
  const icon = {
    ok: '$(sparkle)',
    off: '$(circle-slash)',
    warning: '$(warning)',
    error: '$(error)',
    loading: '$(loading~spin)',
  }[level];
  const badges: string[] = [];
  if (errors > 0) {
    badges.push(`${errors} error${errors === 1 ? '' : 's'}`);
  }
  if (down.length > 0) {
    badges.push(`${down.length} down`);
  }
  const text = `${icon} QodeAssist${badges.length ? ` ${badges.join(', ')}` : ''}`;

  lines.push(`**QodeAssist** ${escapeMarkdown(status.version ?? '')} — ${status.state}`);
  lines.push('');
  lines.push(`Inline completion: ${input.inlineEnabled ? 'on' : '**off**'}`);
  if (status.agents !== undefined) {
    lines.push(`Agents: ${status.agents}`);
  }
  if (errors || warnings) {
    lines.push(`Configuration problems: ${errors} error(s), ${warnings} warning(s)`);
  }
  if (status.configRoot) {
    lines.push(`Config: \`${status.configRoot.replace(/`/g, '')}\``);
  }
  const pipelines = status.pipelines ?? {};
  const pipelineLines = Object.entries(pipelines)
    .filter(([, v]) => v !== null && v !== undefined && (!Array.isArray(v) || v.length > 0))
    .map(([k, v]) => `- ${k}: ${escapeMarkdown(Array.isArray(v) ? v.join(', ') : String(v))}`);
  if (pipelineLines.length) {
    lines.push('', '**Pipelines**', ...pipelineLines);
  }
  if (providers.length) {
    lines.push('', '**Providers**');
    for (const p of providers) {
      const latency = p.firstEventMs ? `, first event ${percentiles(p.firstEventMs)}` : '';
      const requests = p.requests !== undefined ? `, ${p.requests} requests, ${p.errors ?? 0} errors` : '';
      const error = p.lastError ? ` — last error (${p.lastError.category}): ${escapeMarkdown(p.lastError.message)}` : '';
      lines.push(`- ${escapeMarkdown(p.name)}: ${p.state}${circuit(p, input.now ?? Date.now())}${requests}${latency}${error}`);
    }
  }
  const completion = status.completion;
  if (completion?.agents && Object.keys(completion.agents).length) {
    lines.push('', '**Completion**');
    for (const [name, agent] of Object.entries(completion.agents)) {
      const latency = agent.latencyMs ? `, ${percentiles(agent.latencyMs)}` : '';
      lines.push(
        `- ${escapeMarkdown(name)}: ${agent.health ?? '?'}, ${agent.requests ?? 0} requests, ` +
          `${agent.accepted ?? 0} accepted${latency}`,
      );
    }
  }
  lines.push('', 'Click for the QodeAssist menu.');
  return { level, text, tooltip: lines.join('\n') };
}

/** ", circuit open (next probe in N s)" for a provider whose circuit is not closed. */
function circuit(p: ProviderStatus, now: number): string {
  const state = p.circuit?.state;
  if (!state || state === 'closed') {
    return '';
  }
  const probe = p.circuit?.nextProbe;
  const wait = state === 'open' && probe ? ` (next probe in ${Math.max(0, Math.round(probe - now / 1000))} s)` : '';
  return `, circuit ${state.replace('_', '-')}${wait}`;
}

function percentiles(p: Percentiles): string {
  const parts: string[] = [];
  if (p.p50 !== undefined) {
    parts.push(`p50 ${Math.round(p.p50)} ms`);
  }
  if (p.p90 !== undefined) {
    parts.push(`p90 ${Math.round(p.p90)} ms`);
  }
  return parts.join(', ');
}

/** Markdown-escape text for a tooltip (no links, no HTML, no emphasis). */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>~]/g, (c) => `\\${c}`);
}
