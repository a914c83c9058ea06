import { strict as assert } from 'node:assert';
import { describe, test } from 'node:test';
import {
  EditorDiagnostic,
  answerFor,
  diagnosticsAnswer,
  keepIndentation,
  promptFor,
  toLspDiagnostic,
} from '../editorRequestsModel';

const PERMISSION = {
  type: 2,
  message: 'terminal wants to run a command (execute)\n\npytest -q',
  actions: [{ title: 'Allow once' }, { title: 'Allow for this chat' }, { title: 'Deny' }],
};

describe('server questions', () => {
  test('a permission question is a modal prompt with the three actions', () => {
    assert.deepEqual(promptFor(PERMISSION), {
      severity: 'warning',
      message: 'QodeAssist: terminal wants to run a command (execute)',
      detail: 'pytest -q',
      titles: ['Allow once', 'Allow for this chat', 'Deny'],
    });
    assert.equal(promptFor({ type: 1, message: 'x' }).severity, 'error');
    // The tool kit's questions name QodeAssist already: not twice.
    const asked = 'QodeAssist: the model wants to run a program with the tool terminal. Allow it?';
    const terminal = promptFor({ type: 2, message: `${asked}\n$ ls  -la` });
    assert.equal(terminal.message, asked);
    assert.equal(terminal.detail, '$ ls\u00a0\u00a0-la');
    assert.equal(promptFor({ type: 3, message: 'one line' }).detail, '');
  });

  test('the refactor guard: Discard first (the default), one prefix, the diff indented', () => {
    // Issue 47: "QodeAssist: qodeassist refactor: …" and "- for x in items:" in code-server.
    const refused = {
      type: 2,
      message:
        'QodeAssist refactor: the answer of Coder was not applied: it repeats itself.\n' +
        '--- selection\n+++ result\n@@ -1,2 +1,1 @@\n-    for x in items:\n-\t\ttotal  += x\n+    pass',
      actions: [{ title: 'Discard' }, { title: 'Apply anyway' }],
    };
    const prompt = promptFor(refused);
    assert.equal(
      prompt.message,
      'QodeAssist refactor: the answer of Coder was not applied: it repeats itself.',
    );
    assert.deepEqual(prompt.titles, ['Discard', 'Apply anyway']);
    const nbsp = '\u00a0';
    assert.deepEqual(prompt.detail.split('\n').slice(3), [
      `-${nbsp.repeat(4)}for x in items:`,
      `-${nbsp.repeat(8)}total${nbsp.repeat(2)}+= x`,
      `+${nbsp.repeat(4)}pass`,
    ]);
    assert.equal(promptFor({ type: 2, message: 'qodeassist refactor: x' }).message, 'qodeassist refactor: x');
    assert.equal(keepIndentation('a b\n  c'), `a b\n${nbsp}${nbsp}c`); // single spaces stay
  });

  test("the answer is the server's own action item; dismissing answers null", () => {
    assert.equal(answerFor(PERMISSION, 'Allow for this chat'), PERMISSION.actions[1]);
    assert.equal(answerFor(PERMISSION, undefined), null);
    assert.equal(answerFor(PERMISSION, 'Cancel'), null);
  });
});

describe('qodeassist/diagnostics', () => {
  const error: EditorDiagnostic = {
    range: { start: { line: 0, character: 4 }, end: { line: 0, character: 5 } },
    severity: 0,
    message: "'(' was never closed",
    source: 'Pylance',
    code: { value: 'reportSyntax' },
  };
  const hint: EditorDiagnostic = {
    range: { start: { line: 2, character: 0 }, end: { line: 2, character: 3 } },
    severity: 3,
    message: 'unused',
  };

  test('editor severities (0 error … 3 hint) become LSP ones (1 … 4); codes keep their value', () => {
    assert.deepEqual(toLspDiagnostic(error), {
      range: { start: { line: 0, character: 4 }, end: { line: 0, character: 5 } },
      severity: 1,
      message: "'(' was never closed",
      source: 'Pylance',
      code: 'reportSyntax',
    });
    assert.deepEqual(toLspDiagnostic(hint).severity, 4);
    assert.equal('code' in toLspDiagnostic(hint), false);
  });

  test('one file by uri, or every file that has diagnostics', () => {
    const files: Record<string, EditorDiagnostic[]> = {
      'file:///p/a.py': [error],
      'file:///p/b.py': [],
      'file:///p/c.py': [hint],
    };
    const ofFile = (uri: string) => files[uri] ?? [];
    const all = () => Object.entries(files);
    assert.deepEqual(diagnosticsAnswer({ uri: 'file:///p/a.py' }, ofFile, all), {
      items: [{ uri: 'file:///p/a.py', diagnostics: [toLspDiagnostic(error)] }],
    });
    assert.deepEqual(diagnosticsAnswer({ uri: 'file:///p/none.py' }, ofFile, all), {
      items: [{ uri: 'file:///p/none.py', diagnostics: [] }],
    });
    assert.deepEqual(diagnosticsAnswer({ uri: null }, ofFile, all), {
      items: [
        { uri: 'file:///p/a.py', diagnostics: [toLspDiagnostic(error)] },
        { uri: 'file:///p/c.py', diagnostics: [toLspDiagnostic(hint)] },
      ],
    });
    assert.deepEqual(diagnosticsAnswer(null, ofFile, all), diagnosticsAnswer({}, ofFile, all));
  });
});
