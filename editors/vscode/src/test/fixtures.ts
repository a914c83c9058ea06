/** Event sequences shaped like the server's (docs/protocol.md, "Chat"). */

import { ChatEvent } from '../protocol';

export const A = 'Explain_the_parser_2026-11-22_10-30';
export const B = 'Refactor_ideas_2026-11-22_11-02';

export const PARSER_URI = 'file:///home/me/proj/src/parser.py';
export const PARSER_DIFF =
  '--- a/src/parser.py\n+++ b/src/parser.py\n@@ -3 +3 @@\n-        if not line.strip():\n+        if not line:\n';

/** What the server streams for one request with thinking, one tool round and a file edit. */
export function toolRound(chatId: string, requestId: string): ChatEvent[] {
  const e = (event: Record<string, unknown>) => ({ chatId, requestId, ...event }) as ChatEvent;
  return [
    e({ kind: 'thinking', text: 'The user asks about ', signature: '', redacted: false }),
    e({ kind: 'thinking', text: 'blank lines.', signature: '', redacted: false }),
    e({ kind: 'thinking', text: '', signature: 'sig-1', redacted: false }),
    e({ kind: 'text', text: 'Let me read ' }),
    e({ kind: 'text', text: '`parser.py`.' }),
    e({
      kind: 'toolCall',
      toolCallId: 'toolu_1',
      id: 'toolu_1',
      name: 'read_file',
      arguments: { path: 'src/parser.py' },
      permission: 'read',
    }),
    e({
      kind: 'toolResult',
      toolCallId: 'toolu_1',
      toolUseId: 'toolu_1',
      name: 'read_file',
      ok: true,
      summary: 'def parse(lines):',
      content: 'def parse(lines):\n    for line in lines:\n        if not line.strip():\n            continue\n',
      isError: false,
    }),
    e({ kind: 'text', text: 'It skips them because ' }),
    e({ kind: 'text', text: 'of `if not line.strip(): continue`.' }),
    e({ kind: 'fileEdit', editId: 'edit-1', uri: PARSER_URI, diff: PARSER_DIFF, status: 'pending' }),
    e({ kind: 'fileEdit', editId: 'edit-1', uri: PARSER_URI, diff: PARSER_DIFF, status: 'applied' }),
    e({ kind: 'usage', inputTokens: 812, outputTokens: 64, cachedTokens: 0, reasoningTokens: 12 }),
    e({ kind: 'finished', stopReason: 'end_turn' }),
  ];
}

