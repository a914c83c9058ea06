import { strict as assert } from 'node:assert';
import { describe, test } from 'node:test';
import { DoctorReport, doctorText, doctorVerdict, parseSettingValue, settingKeyProblem } from '../doctorModel';

const AGENT = {
  pipelines: ['code_completion'],
  provider: 'Ollama (Native)',
  model: 'qwen2.5-coder:7b',
  checks: {},
  firstTokenMs: null,
  tokensPerSecond: null,
  circuit: 'unknown',
  notes: [],
};

const REPORT: DoctorReport = {
  ok: false,
  pipelines: [
    { pipeline: 'code_completion', agents: ['Ollama FIM'], working: false },
    { pipeline: 'chat_assistant', agents: ['Claude'], working: true },
    { pipeline: 'quick_refactor', agents: [], working: false },
  ],
  agents: [
    {
      ...AGENT,
      name: 'Ollama FIM',
      working: false,
      problems: [{ check: 'model', message: 'not pulled', fix: 'run `ollama pull qwen2.5-coder:7b`' }],
    },
    { ...AGENT, name: 'Claude', working: true, problems: [] },
  ],
};

describe('doctor report', () => {
  test('the verdict names the pipelines without a working agent, not the ones switched off', () => {
    assert.deepEqual(doctorVerdict(REPORT), {
      ok: false,
      message: 'QodeAssist doctor: no working agent for code_completion.',
    });
    const covered = { ...REPORT, pipelines: REPORT.pipelines.slice(1) };
    assert.equal(doctorVerdict(covered).ok, true);
    assert.match(doctorVerdict(covered).message, /1 agent failing/);
  });

  test("the server's text wins; without it the problems and fixes are listed", () => {
    assert.equal(doctorText({ ...REPORT, text: 'from the server\n' }), 'from the server\n');
    const text = doctorText(REPORT);
    assert.match(text, /code_completion: NO WORKING AGENT/);
    assert.match(text, /quick_refactor: off/);
    assert.match(text, /    fix: run `ollama pull qwen2.5-coder:7b`/);
  });
});

describe('settings input', () => {
  test('values are JSON when they parse, else strings', () => {
    assert.equal(parseSettingValue('true'), true);
    assert.equal(parseSettingValue(' 42 '), 42);
    assert.deepEqual(parseSettingValue('["a"]'), ['a']);
    assert.equal(parseSettingValue('null'), null);
    assert.equal(parseSettingValue('manual'), 'manual');
  });

  test('keys must be dotted', () => {
    assert.equal(settingKeyProblem('completion.debounceMs'), undefined);
    assert.ok(settingKeyProblem('debounce'));
    assert.ok(settingKeyProblem('completion.'));
  });
});
