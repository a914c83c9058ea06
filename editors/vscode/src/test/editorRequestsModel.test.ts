import { strict as assert } from 'node:assert';
import { describe, test } from 'node:test';
import {
  EditorDiagnostic,
  answerFor,
  diagnosticsAnswer,
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
    const asked = 'QodeAssist: the model wants to run the tool terminal {"command": "ls"}. Allow it?';
    assert.equal(promptFor({ type: 2, message: asked }).message, asked);
    assert.equal(promptFor({ type: 3, message: 'one line' }).detail, '');
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
