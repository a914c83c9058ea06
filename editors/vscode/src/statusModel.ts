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
  const outage = status.outage ?? undefined;

  let level: StatusLevel = 'ok';
  if (errors > 0 || down.length > 0) {
    level = 'error';
  } else if (warnings > 0 || degraded.length > 0 || outage) {
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

  // A tooltip is Markdown: single newlines join lines, so every block is a paragraph or a list.
  const blocks: string[] = [];
  blocks.push(`**QodeAssist** ${escapeMarkdown(status.version ?? '')} — ${stateText(status, level, down, degraded)}`);
  if (outage) {
    const who = [outage.feature, outage.agent && `(${outage.agent})`].filter(Boolean).join(' ');
    blocks.push(
      `**${escapeMarkdown(who || 'A background request')} failed:** ${escapeMarkdown(outage.reason ?? '')}` +
        (outage.fix ? `  \nFix: ${escapeMarkdown(outage.fix)}` : ''),
    );
  }
  const summary: string[] = [`- Inline completion: ${input.inlineEnabled ? 'on' : '**off**'}`];
  if (status.agents !== undefined) {
    summary.push(`- Agents: ${status.agents}`);
  }
  if (errors || warnings) {
    summary.push(`- Configuration problems: ${errors} error(s), ${warnings} warning(s)`);
  }
  if (status.configRoot) {
    summary.push(`- Config: \`${status.configRoot.replace(/`/g, '')}\``);
  }
  blocks.push(summary.join('\n'));
  const pipelines = status.pipelines ?? {};
  const pipelineLines = Object.entries(pipelines)
    .map(([k, v]) => [k, (Array.isArray(v) ? v : [v]).filter((name) => typeof name === 'string' && name.trim())] as const)
    .filter(([, names]) => names.length > 0)
    .map(([k, names]) => `- ${k}: ${escapeMarkdown(names.join(', '))}`);
  if (pipelineLines.length) {
    blocks.push(['**Pipelines**', '', ...pipelineLines].join('\n'));
  }
  if (providers.length) {
    const lines = ['**Providers**', ''];
    for (const p of providers) {
      const latency = percentiles(p.firstEventMs);
      const requests = p.requests !== undefined ? `, ${p.requests} requests, ${p.errors ?? 0} errors` : '';
      const error = p.lastError ? ` — last error (${p.lastError.category}): ${escapeMarkdown(p.lastError.message)}` : '';
      lines.push(
        `- ${escapeMarkdown(p.name)}: ${p.state}${circuit(p, input.now ?? Date.now())}${requests}` +
          `${latency ? `, first event ${latency}` : ''}${error}`,
      );
    }
    blocks.push(lines.join('\n'));
  }
  const completion = status.completion;
  if (completion?.agents && Object.keys(completion.agents).length) {
    const lines = ['**Completion**', ''];
    for (const [name, agent] of Object.entries(completion.agents)) {
      const latency = percentiles(agent.latencyMs);
      const failed = agent.errors ? `, ${agent.errors} failed` : '';
      lines.push(
        `- ${escapeMarkdown(name)}: ${agent.health ?? '?'}, ${agent.requests ?? 0} requests${failed}, ` +
          `${agent.accepted ?? 0} accepted${latency ? `, ${latency}` : ''}`,
      );
    }
    blocks.push(lines.join('\n'));
  }
  blocks.push('Click for the QodeAssist menu.');
  return { level, text, tooltip: blocks.join('\n\n') };
}

/** The header's state: never "ready" while a provider or a background feature is failing. */
function stateText(status: ServerStatus, level: StatusLevel, down: ProviderStatus[], degraded: ProviderStatus[]): string {
  if (status.outage) {
    return '**degraded** (provider error)';
  }
  if (down.length) {
    return `**degraded** (${escapeMarkdown(down.map((p) => p.name).join(', '))} down)`;
  }
  if (degraded.length) {
    return `**degraded** (${escapeMarkdown(degraded.map((p) => p.name).join(', '))} failing)`;
  }
  if (level === 'error' || level === 'warning') {
    return `${escapeMarkdown(status.state)} (configuration problems)`;
  }
  return escapeMarkdown(status.state);
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

/** "p50 N ms, p90 N ms" of the samples there are; "" without any (failed requests have none). */
function percentiles(p: Percentiles | null | undefined): string {
  if (!p || p.samples === 0) {
    return '';
  }
  const parts: string[] = [];
  if (typeof p.p50 === 'number') {
    parts.push(`p50 ${Math.round(p.p50)} ms`);
  }
  if (typeof p.p90 === 'number') {
    parts.push(`p90 ${Math.round(p.p90)} ms`);
  }
  return parts.join(', ');
}

/** Markdown-escape text for a tooltip (no links, no HTML, no emphasis). */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>~]/g, (c) => `\\${c}`);
}
