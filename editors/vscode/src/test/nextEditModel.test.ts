import { strict as assert } from 'node:assert';
import { describe, test } from 'node:test';
import {
  InlineEdit,
  displayWidth,
  inlineEditParams,
  linesAfter,
  presentation,
  previewRows,
  previewText,
  usableEdit,
} from '../nextEditModel';

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

  test('a multi-line edit is a block of rows, one per new line, in one column (issue 47)', () => {
    const lines = ['print(area(2, 3))', 'print(area(4, 5))', 'x = 1'];
    const rows = previewRows(lines, EDIT);
    const plain = (text: string) => text.replace(/\u00a0/g, ' ');
    assert.deepEqual(
      rows.map((r) => r.line),
      [4, 5],
    );
    assert.deepEqual(
      rows.map((r) => plain(r.text).trim()),
      ['print(surface(2, 3))', 'print(surface(4, 5))'],
    );
    // Both rows start in the same column and are equally wide (a box, not a ragged edge).
    const starts = rows.map((r, i) => lines[i].length + r.pad.length);
    assert.equal(starts[0], starts[1]);
    assert.ok(starts[0] >= Math.max(lines[0].length, lines[1].length) + 1);
    assert.equal(rows[0].text.length, rows[1].text.length);
    assert.doesNotMatch(rows.map((r) => r.text).join(''), /⏎| /); // no joined lines, no plain spaces
    assert.ok(rows[0].pad.endsWith('→\u00a0') && !rows[1].pad.includes('→'));
  });

  test('a longer replacement runs on below; a very long one is cut with a count', () => {
    const insert: InlineEdit = {
      ...EDIT,
      text: 'def f():\n    a = 1\n    b = 2\n    return a + b',
      range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
    };
    const doc = ['', 'print(f())', '', 'end'];
    const rows = previewRows(doc, insert);
    assert.deepEqual(rows.map((r) => r.line), [0, 1, 2, 3]);
    assert.equal(rows[3].text.replace(/\u00a0/g, ' ').trim(), 'return a + b');

    const long: InlineEdit = { ...insert, text: Array.from({ length: 15 }, (_, i) => `line ${i}`).join('\n') };
    const many = previewRows(Array.from({ length: 30 }, () => ''), long);
    assert.equal(many.length, 10);
    assert.equal(many[9].text.replace(/\u00a0/g, ' ').trim(), '… 6 more lines');
    // Past the end of the document the rest is joined into the last row.
    const short = previewRows(['', 'x'], insert);
    assert.equal(short.length, 2);
    assert.match(short[1].text.replace(/\u00a0/g, ' '), /a = 1 ⏎ {5}b = 2 ⏎ {5}return a \+ b/);
  });

  test('removed lines get an empty cell; tabs count to the next stop', () => {
    const removal: InlineEdit = {
      ...EDIT,
      text: '',
      range: { start: { line: 2, character: 0 }, end: { line: 3, character: 3 } },
    };
    const rows = previewRows(['abc', 'def'], removal);
    assert.deepEqual(rows.map((r) => r.line), [2, 3]);
    assert.equal(rows[1].text.replace(/\u00a0/g, ' ').trim(), '');
    assert.equal(displayWidth('\tab', 4), 6);
    assert.equal(displayWidth('ab\tc', 4), 5);
  });
});
