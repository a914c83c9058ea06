import { strict as assert } from 'node:assert';
import { describe, test } from 'node:test';
import { InlineEdit, inlineEditParams, linesAfter, presentation, previewText, usableEdit } from '../nextEditModel';

const EDIT: InlineEdit = {
  text: 'surface(2, 3))\nprint(surface',
  textDocument: { uri: 'file:///p/geo.py', version: 2 },
  range: { start: { line: 4, character: 6 }, end: { line: 5, character: 10 } },
  command: { title: 'Accept next edit', command: 'qodeassist.nextEditAccepted', arguments: ['ne-1'] },
};

describe('next edit', () => {
  test('the request carries the version and Copilot\'s automatic trigger kind', () => {
    assert.deepEqual(inlineEditParams('file:///p/geo.py', 2, { line: 0, character: 11 }), {
      textDocument: { uri: 'file:///p/geo.py', version: 2 },
      position: { line: 0, character: 11 },
      context: { triggerKind: 2 },
    });
  });

  test('only an edit for the version VS Code has is shown', () => {
    assert.equal(usableEdit({ edits: [EDIT] }, 2), EDIT);
    assert.equal(usableEdit({ edits: [EDIT] }, 3), undefined);
    assert.equal(usableEdit({ edits: [] }, 2), undefined);
    assert.equal(usableEdit(null, 2), undefined);
  });

  test('inline on the cursor line, a decoration elsewhere', () => {
    assert.equal(presentation(EDIT, 4), 'decoration');
    const sameLine = { ...EDIT, range: { start: { line: 3, character: 6 }, end: { line: 3, character: 9 } } };
    assert.equal(presentation(sameLine, 3), 'inline');
    assert.equal(presentation(sameLine, 0), 'decoration');
  });

  test('the lines as they read after the edit', () => {
    const lines = ['print(area(2, 3))', 'print(area(4, 5))'];
    assert.deepEqual(linesAfter(lines, EDIT), ['print(surface(2, 3))', 'print(surface(4, 5))']);
    assert.equal(previewText(lines, EDIT), 'print(surface(2, 3)) ⏎ print(surface(4, 5))');
  });
});
