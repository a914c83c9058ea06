import { strict as assert } from 'node:assert';
import { describe, test } from 'node:test';
import { ServerStatus } from '../protocol';
import { describeStatus, escapeMarkdown } from '../statusModel';

/** The example of docs/protocol.md. */
const READY: ServerStatus = {
  state: 'ready',
  version: '0.1.0.dev0',
  configRoot: '/home/me/.config/qodeassist',
  agents: 62,
  providers: [
    { name: 'Embedded', state: 'ok', requests: 41, errors: 0, firstEventMs: { p50: 38.2, p90: 61.0, max: 1240.5 } },
  ],
  problems: { errors: 0, warnings: 0 },
  completion: {
    outcomes: { model: 12, typed_ahead: 29 },
    accepted: 7,
    agents: {
      'Embedded Completion': {
        requests: 12,
        errors: 0,
        timeouts: 0,
        accepted: 7,
        health: 'healthy',
        latencyMs: { p50: 212.0, p90: 300.1, p99: 1240.5, samples: 12 },
        timeoutRate: 0.0,
        lastError: null,
      },
    },
    inFlight: 0,
    cachedSuggestions: 3,
    typingIntervalMs: 118.0,
  },
  pipelines: {
    codeCompletion: ['Embedded Completion'],
    chatAssistant: ['Embedded Chat'],
    chatCompression: 'Embedded Compression',
    quickRefactor: 'Embedded Quick Refactor',
  },
};

describe('describeStatus', () => {
  test('starting and loading spin', () => {
    assert.equal(describeStatus({ client: 'starting', inlineEnabled: true }).level, 'loading');
    const loading = describeStatus({
      client: 'running',
      status: { state: 'loading', version: '0.1.0' },
      inlineEnabled: true,
    });
    assert.equal(loading.level, 'loading');
    assert.equal(loading.text, '$(loading~spin) QodeAssist');
  });

  test('ready: providers, pipelines and completion latency in the tooltip', () => {
    const ready = describeStatus({ client: 'running', status: READY, inlineEnabled: true });
    assert.equal(ready.level, 'ok');
    assert.equal(ready.text, '$(sparkle) QodeAssist');
    assert.match(ready.tooltip, /Agents: 62/);
    assert.match(ready.tooltip, /- Embedded: ok, 41 requests, 0 errors, first event p50 38 ms, p90 61 ms/);
    assert.match(ready.tooltip, /- chatAssistant: Embedded Chat/);
    assert.match(ready.tooltip, /- Embedded Completion: healthy, 12 requests, 7 accepted, p50 212 ms, p90 300 ms/);
  });

  test('inline completion off shows in the icon', () => {
    const off = describeStatus({ client: 'running', status: READY, inlineEnabled: false });
    assert.equal(off.level, 'off');
    assert.equal(off.text, '$(circle-slash) QodeAssist');
    assert.match(off.tooltip, /Inline completion: \*\*off\*\*/);
  });

  test('configuration errors and a provider down are errors; degraded is a warning', () => {
    const broken = describeStatus({
      client: 'running',
      status: {
        ...READY,
        problems: { errors: 2, warnings: 1 },
        providers: [
          { name: 'Claude', state: 'down', lastError: { category: 'auth', message: 'HTTP 401' } },
        ],
      },
      inlineEnabled: true,
    });
    assert.equal(broken.level, 'error');
    assert.equal(broken.text, '$(error) QodeAssist 2 errors, 1 down');
    assert.match(broken.tooltip, /Claude: down — last error \(auth\): HTTP 401/);

    const degraded = describeStatus({
      client: 'running',
      status: { ...READY, providers: [{ name: 'Ollama', state: 'degraded' }] },
      inlineEnabled: false,
    });
    assert.equal(degraded.level, 'warning');
    assert.equal(degraded.text, '$(warning) QodeAssist');
  });

  test('a stopped server says why', () => {
    const stopped = describeStatus({
      client: 'stopped',
      inlineEnabled: true,
      startError: "cannot start 'qodeassist-lsp': not found",
    });
    assert.equal(stopped.level, 'error');
    assert.match(stopped.tooltip, /not running/);
    assert.match(stopped.tooltip, /cannot start 'qodeassist\\-lsp': not found/);
  });

  test('escapeMarkdown', () => {
    assert.equal(escapeMarkdown('[x](javascript:1) *b*'), '\\[x\\]\\(javascript:1\\) \\*b\\*');
  });

  test('an open circuit counts as down and says when it is probed again', () => {
    const status: ServerStatus = {
      ...READY,
      providers: [
        { name: 'Ollama', state: 'degraded', circuit: { state: 'open', since: 1000, nextProbe: 1042, failures: 3 } },
        { name: 'Embedded', state: 'ok', circuit: { state: 'closed', since: null, nextProbe: null, failures: 0 } },
      ],
    };
    const shown = describeStatus({ client: 'running', status, inlineEnabled: true, now: 1_000_000 });
    assert.equal(shown.level, 'error');
    assert.equal(shown.text, '$(error) QodeAssist 1 down');
    assert.match(shown.tooltip, /- Ollama: degraded, circuit open \(next probe in 42 s\)/);
    assert.match(shown.tooltip, /- Embedded: ok(\n|$)/);
  });

  test('the tooltip is readable Markdown: one line per fact, no run-together lines', () => {
    const { tooltip } = describeStatus({ client: 'running', status: READY, inlineEnabled: true });
    // Markdown joins lines that are neither list items nor separated by a blank line.
    const blocks = tooltip.split('\n\n');
    for (const block of blocks) {
      const lines = block.split('\n');
      const plain = lines.filter((line) => line && !line.startsWith('- ') && !line.endsWith('  '));
      assert.ok(plain.length <= 1, `lines that Markdown runs together: ${JSON.stringify(block)}`);
    }
    assert.match(tooltip, /\n- Inline completion: on\n- Agents: 62\n/);
    assert.match(tooltip, /^\*\*QodeAssist\*\* 0\\\.1\\\.0\\\.dev0 — ready\n\n/);
  });

  test('a background outage: degraded with the reason and the fix, not "ready"', () => {
    const status: ServerStatus = {
      ...READY,
      state: 'degraded',
      outage: {
        feature: 'completion',
        agent: 'Embedded Completion',
        category: 'provider',
        reason: 'Embedded is unavailable (HTTP 503)',
        fix: 'run `qodeassist-lsp doctor` to probe the provider',
      },
      providers: [{ name: 'Embedded', state: 'degraded', requests: 3, errors: 3, firstEventMs: { p50: null, p90: null, samples: 0 } }],
      completion: {
        agents: {
          'Embedded Completion': {
            requests: 3,
            errors: 3,
            accepted: 0,
            health: 'unknown',
            latencyMs: { p50: null, p90: null, p99: null, samples: 0 },
          },
        },
      },
    };
    const shown = describeStatus({ client: 'running', status, inlineEnabled: true });
    assert.equal(shown.level, 'warning');
    assert.doesNotMatch(shown.tooltip, /— ready/);
    assert.match(shown.tooltip, /— \*\*degraded\*\* \(provider error\)/);
    assert.ok(
      shown.tooltip.includes(
        '**completion \\(Embedded Completion\\) failed:** Embedded is unavailable \\(HTTP 503\\)  \n' +
          'Fix: run \\`qodeassist\\-lsp doctor\\` to probe the provider\n\n',
      ),
      shown.tooltip,
    );
    assert.doesNotMatch(shown.tooltip, /p50 0 ms|first event/);
    assert.match(shown.tooltip, /- Embedded Completion: unknown, 3 requests, 3 failed, 0 accepted\n/);
  });

  test('a failing provider alone also keeps the header from saying ready', () => {
    const status: ServerStatus = { ...READY, providers: [{ name: 'Ollama', state: 'degraded' }] };
    const shown = describeStatus({ client: 'running', status, inlineEnabled: true });
    assert.match(shown.tooltip, /— \*\*degraded\*\* \(Ollama failing\)/);
  });

  test('pipelines without an agent are left out', () => {
    const status: ServerStatus = {
      ...READY,
      pipelines: { codeCompletion: ['Embedded Completion'], chatRouter: '', nextEdit: [], chatCompression: null },
    };
    const { tooltip } = describeStatus({ client: 'running', status, inlineEnabled: true });
    assert.match(tooltip, /- codeCompletion: Embedded Completion/);
    assert.doesNotMatch(tooltip, /chatRouter|nextEdit|chatCompression/);
  });
});
