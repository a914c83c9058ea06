import { strict as assert } from 'node:assert';
import { describe, test } from 'node:test';
import { CUSTOM_LABEL, askingAction, instructionPicks, parseChoice, refactorArgument } from '../refactorModel';

const RANGE = { start: { line: 1, character: 0 }, end: { line: 4, character: 12 } };

describe('refactor', () => {
  test('picks: the default first, the library in order, "Custom instruction…" last', () => {
    const picks = instructionPicks([
      { id: 'docs', name: 'Add docstrings', body: 'Add docstrings\nto every function.', default: false, agent: null },
      { id: 'improve', name: 'Improve', body: 'Improve the selected code: …', default: true, agent: null },
      { id: 'types', name: 'Add type hints', body: '', agent: 'Claude Refactor' },
    ]);
    assert.deepEqual(
      picks.map((p) => [p.label, p.instructionId, p.description]),
      [
        ['Improve', 'improve', 'default'],
        ['Add docstrings', 'docs', undefined],
        ['Add type hints', 'types', 'agent: Claude Refactor'],
        [CUSTOM_LABEL, undefined, 'type what to do'],
      ],
    );
    assert.equal(picks[1].detail, 'Add docstrings to every function.');
    assert.equal(picks[3].custom, true);
    assert.equal(instructionPicks([]).length, 1);
  });

  test('the qodeassist.refactor argument: instructionId or instruction, with the version', () => {
    const target = { uri: 'file:///p/total.py', range: RANGE, version: 3 };
    assert.deepEqual(refactorArgument(target, { instructionId: 'improve', label: 'Improve' }), {
      uri: 'file:///p/total.py',
      range: RANGE,
      version: 3,
      instructionId: 'improve',
    });
    assert.deepEqual(refactorArgument({ uri: 'file:///p/a.py', range: RANGE }, { instruction: 'Add hints', label: 'x' }), {
      uri: 'file:///p/a.py',
      range: RANGE,
      instruction: 'Add hints',
    });
  });

  test('the last refactor restored from workspace state', () => {
    assert.deepEqual(parseChoice({ instructionId: 'improve', label: 'Improve' }), {
      instructionId: 'improve',
      label: 'Improve',
    });
    assert.deepEqual(parseChoice({ instruction: 'Add type hints' }), {
      instruction: 'Add type hints',
      label: 'Add type hints',
    });
    assert.equal(parseChoice({ instruction: '  ' }), undefined);
    assert.equal(parseChoice(undefined), undefined);
    assert.equal(parseChoice('improve'), undefined);
  });

  test('the actions without an instruction of their own ask for one (refactor or insert)', () => {
    const uri = 'file:///p/a.py';
    assert.equal(askingAction({ uri, range: RANGE, version: 3, title: 'QodeAssist: Refactor with instruction…' }), 'refactor');
    const here = { start: { line: 2, character: 4 }, end: { line: 2, character: 4 } };
    assert.equal(askingAction({ uri, range: here, title: 'QodeAssist: Generate code here…' }), 'insert');
    assert.equal(askingAction({ uri, range: RANGE, instructionId: 'improve' }), undefined);
    assert.equal(askingAction({ uri, range: RANGE, instruction: 'Repeat this', instructionId: null }), undefined);
    assert.equal(askingAction(undefined), undefined);
    assert.equal(askingAction({ range: RANGE }), undefined);
  });
});
