/** Event sequences shaped like the server's (docs/protocol.md, "Chat"). */

import { ChatEvent } from '../protocol';

export const A = 'Explain_the_parser_2026-11-22_10-30';
export const B = 'Refactor_ideas_2026-11-22_11-02';

/** What the server streams for one request with thinking, one tool round and a file edit. */
export function toolRound(chatId: string, requestId: string): ChatEvent[] {
  const e = (event: Record<string, unknown>) => ({ chatId, requestId, ...event }) as ChatEvent;
  return [
    e({ kind: 'thinking', text: 'The user asks about ', signature: '', redacted: false }),
    e({ kind: 'thinking', text: 'blank lines.', signature: '', redacted: false }),
    e({ kind: 'thinking', text: '', signature: 'sig-1', redacted: false }),
    e({ kind: 'text', text: 'Let me read ' }),
    e({ kind: 'text', text: '`parser.py`.' }),
    e({ kind: 'toolCall', id: 'toolu_1', name: 'read_file', arguments: { path: 'src/parser.py' } }),
    e({
      kind: 'toolResult',
      toolUseId: 'toolu_1',
      name: 'read_file',
      content: 'def parse(lines):\n    for line in lines:\n        if not line.strip():\n            continue\n',
      isError: false,
    }),
    e({ kind: 'text', text: 'It skips them because ' }),
    e({ kind: 'text', text: 'of `if not line.strip(): continue`.' }),
    e({
      kind: 'fileEdit',
      editId: 'edit-1',
      filePath: '/home/me/proj/src/parser.py',
      status: 'pending',
      statusMessage: '',
    }),
    e({
      kind: 'fileEdit',
      editId: 'edit-1',
      filePath: '/home/me/proj/src/parser.py',
      status: 'applied',
      statusMessage: 'Applied 1 change',
    }),
    e({ kind: 'usage', inputTokens: 812, outputTokens: 64, cachedTokens: 0, reasoningTokens: 12 }),
    e({ kind: 'finished', stopReason: 'end_turn' }),
  ];
}

