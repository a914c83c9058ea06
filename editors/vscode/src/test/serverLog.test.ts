import { strict as assert } from 'node:assert';
import { describe, test } from 'node:test';
import { LineLevel, parseServerLine, serverLineWriter } from '../serverLog';

describe('server stderr lines', () => {
  test('each logging level maps to the channel method of the same severity', () => {
    const cases: [string, LineLevel][] = [
      ['DEBUG', 'debug'],
      ['INFO', 'info'],
      ['WARNING', 'warn'],
      ['ERROR', 'error'],
      ['CRITICAL', 'error'],
    ];
    for (const [name, level] of cases) {
      assert.deepEqual(parseServerLine(`2026-11-28 00:59:01,123 ${name} qodeassist.server: hello`), {
        level,
        text: 'qodeassist.server: hello',
      });
    }
  });

  test('a line without a level (a traceback) keeps the level of the line before', () => {
    const written: [LineLevel, string][] = [];
    const channel = Object.fromEntries(
      (['trace', 'debug', 'info', 'warn', 'error'] as LineLevel[]).map((level) => [
        level,
        (text: string) => void written.push([level, text]),
      ]),
    ) as unknown as Record<LineLevel, (text: string) => void>;
    const write = serverLineWriter(channel);
    write('plain start-up text');
    write('2026-11-28 00:59:01,123 ERROR qodeassist.chat: boom');
    write('Traceback (most recent call last):');
    write('2026-11-28 00:59:02,000 INFO qodeassist.server: ready');
    assert.deepEqual(written, [
      ['info', 'plain start-up text'],
      ['error', 'qodeassist.chat: boom'],
      ['error', 'Traceback (most recent call last):'],
      ['info', 'qodeassist.server: ready'],
    ]);
  });
});
