import { strict as assert } from 'node:assert';
import { describe, test } from 'node:test';
import {
  ChatStore,
  applyQuestion,
  displayPath,
  fromHistory,
  isBusy,
  summarize,
} from '../chatModel';
import { ChatEvent } from '../protocol';
import { A, B, PARSER_DIFF, PARSER_URI, toolRound } from './fixtures';

describe('ChatStore: one request replayed', () => {
  test('text deltas, thinking, a tool round, a file edit, usage and finished', () => {
    const store = new ChatStore();
    const events = toolRound(A, 'req-1');
    // The send's answer ({chatId, requestId}) arrives after the first events.
    store.apply(events[0]);
    store.addUserMessage(A, 'req-1', 'Why does @parser.py:10-20 skip blank lines?', ['notes.md']);
    assert.equal(isBusy(store.get(A)), true);
    for (const event of events.slice(1, -1)) {
      assert.ok(store.apply(event), `applied ${event.kind}`);
      assert.equal(isBusy(store.get(A)), true);
    }
    store.apply(events[events.length - 1]);

    const chat = store.get(A);
    assert.ok(chat);
    assert.equal(isBusy(chat), false);
    assert.equal(chat.title, 'Why does @parser.py:10-20 skip blank lines?');
    assert.deepEqual(chat.lastUsage, {
      inputTokens: 812,
      outputTokens: 64,
      cachedTokens: 0,
      reasoningTokens: 12,
    });
    assert.deepEqual(chat.messages, [
      {
        role: 'user',
        requestId: 'req-1',
        status: 'finished',
        blocks: [
          { kind: 'text', text: 'Why does @parser.py:10-20 skip blank lines?' },
          { kind: 'attachment', fileName: 'notes.md', image: false },
        ],
      },
      {
        role: 'assistant',
        requestId: 'req-1',
        status: 'finished',
        stopReason: 'end_turn',
        usage: { inputTokens: 812, outputTokens: 64, cachedTokens: 0, reasoningTokens: 12 },
        blocks: [
          { kind: 'thinking', text: 'The user asks about blank lines.', redacted: false, done: true },
          { kind: 'text', text: 'Let me read `parser.py`.' },
          {
            kind: 'tool',
            id: 'toolu_1',
            name: 'read_file',
            arguments: { path: 'src/parser.py' },
            permission: 'read',
            result: {
              content:
                'def parse(lines):\n    for line in lines:\n        if not line.strip():\n            continue\n',
              isError: false,
              summary: 'def parse(lines):',
            },
          },
          { kind: 'text', text: 'It skips them because of `if not line.strip(): continue`.' },
          {
            kind: 'fileEdit',
            editId: 'edit-1',
            uri: PARSER_URI,
            filePath: '/home/me/proj/src/parser.py',
            diff: PARSER_DIFF,
            status: 'applied',
            statusMessage: '',
          },
        ],
      },
    ]);
  });

  test('thinking stays open until another block starts', () => {
    const store = new ChatStore();
    store.apply({ chatId: A, requestId: 'r', kind: 'thinking', text: 'Hmm' });
    const block = store.get(A)?.messages[0].blocks[0];
    assert.deepEqual(block, { kind: 'thinking', text: 'Hmm', redacted: false, done: false });
    store.apply({ chatId: A, requestId: 'r', kind: 'text', text: 'Answer' });
    assert.deepEqual(store.get(A)?.messages[0].blocks[0], {
      kind: 'thinking',
      text: 'Hmm',
      redacted: false,
      done: true,
    });
  });

  test('a failed request carries the error with its category and ends the request', () => {
    const store = new ChatStore();
    store.addUserMessage(A, 'req-2', 'hello');
    const error = {
      category: 'auth',
      message: 'HTTP 401 from Claude: invalid x-api-key; check the key with `qodeassist-lsp secrets status`',
    };
    store.apply({ chatId: A, requestId: 'req-2', kind: 'failed', error });
    const chat = store.get(A);
    assert.equal(isBusy(chat), false);
    assert.deepEqual(chat?.messages[1], {
      role: 'assistant',
      requestId: 'req-2',
      status: 'failed',
      blocks: [],
      error,
    });
    // Late events of an ended request are dropped.
    assert.equal(store.apply({ chatId: A, requestId: 'req-2', kind: 'text', text: 'late' }), undefined);
    assert.equal(chat?.messages.length, 2);
  });

  test('a failure after a partial answer keeps what streamed', () => {
    const store = new ChatStore();
    store.addUserMessage(A, 'r', 'q');
    store.apply({ chatId: A, requestId: 'r', kind: 'text', text: 'Partial' });
    store.apply({
      chatId: A,
      requestId: 'r',
      kind: 'failed',
      error: { category: 'network', message: 'connection reset', retryAfter: 5 },
    });
    const answer = store.get(A)?.messages[1];
    assert.equal(answer?.status, 'failed');
    assert.deepEqual(answer?.blocks, [{ kind: 'text', text: 'Partial' }]);
    assert.equal(answer?.error?.retryAfter, 5);
  });

  test('cancelled ends the request; the answer so far stays', () => {
    const store = new ChatStore();
    store.addUserMessage(A, 'r', 'q');
    store.apply({ chatId: A, requestId: 'r', kind: 'text', text: 'Half an ans' });
    store.apply({ chatId: A, requestId: 'r', kind: 'cancelled' });
    const chat = store.get(A);
    assert.equal(isBusy(chat), false);
    assert.equal(chat?.messages[1].status, 'cancelled');
    assert.deepEqual(chat?.messages[1].blocks, [{ kind: 'text', text: 'Half an ans' }]);
  });

  test('a tool result whose call is unknown is kept as its own block', () => {
    const store = new ChatStore();
    store.apply({
      chatId: A,
      requestId: 'r',
      kind: 'toolResult',
      toolUseId: 'nope',
      name: 'search_project',
      content: 'boom',
      isError: true,
    });
    assert.deepEqual(store.get(A)?.messages[0].blocks, [
      {
        kind: 'toolResult',
        toolUseId: 'nope',
        name: 'search_project',
        content: 'boom',
        isError: true,
        summary: 'boom',
      },
    ]);
  });

  test('an unknown event kind is ignored', () => {
    const store = new ChatStore();
    const unknown = { chatId: A, requestId: 'r', kind: 'somethingNew' } as unknown as ChatEvent;
    assert.equal(store.apply(unknown), undefined);
  });
});

describe('ChatStore: interleaved chats and requests', () => {
  test('events of two chats interleaved land in their own chats', () => {
    const store = new ChatStore();
    const a = toolRound(A, 'req-a');
    const b: ChatEvent[] = [
      { chatId: B, requestId: 'req-b', kind: 'text', text: 'Extract ' },
      { chatId: B, requestId: 'req-b', kind: 'text', text: 'a helper.' },
      { chatId: B, requestId: 'req-b', kind: 'usage', inputTokens: 100, outputTokens: 5 },
      {
        chatId: B,
        requestId: 'req-b',
        kind: 'failed',
        error: { category: 'provider', message: 'HTTP 529 overloaded' },
      },
    ];
    store.addUserMessage(A, 'req-a', 'Why?');
    store.addUserMessage(B, 'req-b', 'Ideas?');
    const merged: ChatEvent[] = [];
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      if (i < a.length) {
        merged.push(a[i]);
      }
      if (i < b.length) {
        merged.push(b[i]);
      }
    }
    let aBusyWhenBFailed: boolean | undefined;
    for (const event of merged) {
      store.apply(event);
      if (event.chatId === B && event.kind === 'failed') {
        aBusyWhenBFailed = isBusy(store.get(A));
      }
    }
    assert.equal(aBusyWhenBFailed, true, 'chat A still streams when chat B fails');

    const chatA = store.get(A);
    const chatB = store.get(B);
    assert.equal(chatA?.messages.length, 2);
    assert.equal(chatA?.messages[1].status, 'finished');
    assert.deepEqual(
      chatA?.messages[1].blocks.map((block) => block.kind),
      ['thinking', 'text', 'tool', 'text', 'fileEdit'],
    );
    assert.deepEqual(chatB?.messages[1], {
      role: 'assistant',
      requestId: 'req-b',
      status: 'failed',
      blocks: [{ kind: 'text', text: 'Extract a helper.' }],
      usage: { inputTokens: 100, outputTokens: 5, cachedTokens: 0, reasoningTokens: 0 },
      error: { category: 'provider', message: 'HTTP 529 overloaded' },
    });
    assert.equal(isBusy(chatA), false);
    assert.equal(isBusy(chatB), false);
    assert.deepEqual(store.ids().sort(), [A, B].sort());
  });

  test('sending again: the new request is active, the old one ends cancelled', () => {
    const store = new ChatStore();
    store.addUserMessage(A, 'old', 'first');
    store.apply({ chatId: A, requestId: 'old', kind: 'text', text: 'One' });
    store.addUserMessage(A, 'new', 'second');
    store.apply({ chatId: A, requestId: 'new', kind: 'text', text: 'Two' });
    // The old request's last delta and its terminal event arrive after the new one started.
    store.apply({ chatId: A, requestId: 'old', kind: 'text', text: ' more' });
    assert.equal(store.get(A)?.activeRequestId, 'new');
    store.apply({ chatId: A, requestId: 'old', kind: 'cancelled' });
    assert.equal(store.get(A)?.activeRequestId, 'new');
    store.apply({ chatId: A, requestId: 'new', kind: 'finished', stopReason: 'max_tokens' });
    const chat = store.get(A);
    assert.equal(isBusy(chat), false);
    assert.deepEqual(
      chat?.messages.map((m) => [m.role, m.requestId, m.status]),
      [
        ['user', 'old', 'finished'],
        ['assistant', 'old', 'cancelled'],
        ['user', 'new', 'finished'],
        ['assistant', 'new', 'finished'],
      ],
    );
    assert.equal(chat?.messages[3].stopReason, 'max_tokens');
  });

  test('abortAll fails every request in flight', () => {
    const store = new ChatStore();
    store.addUserMessage(A, 'ra', 'a');
    store.addUserMessage(B, 'rb', 'b');
    store.apply({ chatId: B, requestId: 'rb', kind: 'finished', stopReason: 'end_turn' });
    assert.deepEqual(store.abortAll('The server stopped.'), [A]);
    assert.equal(isBusy(store.get(A)), false);
    assert.deepEqual(store.get(A)?.messages[1].error, {
      category: 'network',
      message: 'The server stopped.',
    });
  });
});

describe('ChatStore: histories', () => {
  const history = {
    chatId: A,
    title: 'Why does @parser.py:10-20 skip blank lines?',
    agent: 'Embedded Chat',
    busy: false,
    compressedFrom: null,
    linkedFiles: ['/home/me/proj/src/parser.py'],
    messages: [
      {
        role: 'user',
        blocks: [
          { type: 'text', text: 'Why does @parser.py:10-20 skip blank lines?' },
          { type: 'stored_attachment', fileName: 'notes.md', storedPath: 'notes_1a2b3c4d.md' },
          { type: 'stored_image', fileName: 'shot.png', storedPath: 'shot_1.png', mediaType: 'image/png' },
        ],
      },
      {
        role: 'assistant',
        id: 'req-1',
        blocks: [
          { type: 'thinking', thinking: 'Read it first.', signature: 'sig' },
          { type: 'text', text: 'Let me read it.' },
          { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'src/parser.py' } },
        ],
      },
      {
        role: 'user',
        blocks: [{ type: 'tool_result', toolUseId: 'toolu_1', result: 'def parse…', name: 'read_file' }],
      },
      {
        role: 'assistant',
        id: 'req-1',
        blocks: [
          { type: 'text', text: 'It skips them.' },
          { type: 'redacted_thinking', signature: 'x' },
          { type: 'future_block', whatever: 1 },
        ],
      },
    ],
  };

  test('a tool round of one request is one message; results join their calls', () => {
    assert.deepEqual(fromHistory(history.messages), [
      {
        role: 'user',
        status: 'saved',
        blocks: [
          { kind: 'text', text: 'Why does @parser.py:10-20 skip blank lines?' },
          { kind: 'attachment', fileName: 'notes.md', image: false },
          { kind: 'attachment', fileName: 'shot.png', image: true },
        ],
      },
      {
        role: 'assistant',
        requestId: 'req-1',
        status: 'saved',
        blocks: [
          { kind: 'thinking', text: 'Read it first.', redacted: false, done: true },
          { kind: 'text', text: 'Let me read it.' },
          {
            kind: 'tool',
            id: 'toolu_1',
            name: 'read_file',
            arguments: { path: 'src/parser.py' },
            permission: '',
            result: { content: 'def parse…', isError: false, summary: 'def parse…' },
          },
          { kind: 'text', text: 'It skips them.' },
          { kind: 'thinking', text: '', redacted: true, done: true },
        ],
      },
    ]);
  });

  test('load() takes the metadata; a chat streaming here keeps its messages', () => {
    const store = new ChatStore();
    const chat = store.load(history);
    assert.equal(chat.agent, 'Embedded Chat');
    assert.deepEqual(chat.linkedFiles, ['/home/me/proj/src/parser.py']);
    assert.equal(chat.messages.length, 2);
    assert.equal(isBusy(chat), false);

    store.addUserMessage(B, 'live', 'streaming question');
    store.apply({ chatId: B, requestId: 'live', kind: 'text', text: 'so far' });
    const loaded = store.load({ ...history, chatId: B, busy: true, title: 'Renamed' });
    assert.equal(loaded.title, 'Renamed');
    assert.equal(loaded.activeRequestId, 'live');
    assert.deepEqual(
      loaded.messages.map((m) => m.role),
      ['user', 'assistant'],
    );
    assert.equal(loaded.messages[1].blocks[0].kind, 'text');
  });

  test('a busy chat loaded from a history continues with its last request', () => {
    const store = new ChatStore();
    const chat = store.load({ ...history, busy: true });
    assert.equal(chat.activeRequestId, 'req-1');
    store.apply({ chatId: A, requestId: 'req-1', kind: 'text', text: ' More.' });
    store.apply({ chatId: A, requestId: 'req-1', kind: 'finished', stopReason: 'end_turn' });
    const last = store.get(A)?.messages[1];
    assert.equal(last?.status, 'finished');
    assert.equal(isBusy(store.get(A)), false);
  });

  test('setFileEditStatus updates the block after chat/editFile', () => {
    const store = new ChatStore();
    for (const event of toolRound(A, 'r')) {
      store.apply(event);
    }
    assert.equal(store.setFileEditStatus(A, 'edit-1', 'pending', 'Undone'), true);
    assert.equal(store.setFileEditStatus(A, 'missing', 'applied'), false);
    const block = store.get(A)?.messages[0].blocks.find((b) => b.kind === 'fileEdit');
    assert.deepEqual(block, {
      kind: 'fileEdit',
      editId: 'edit-1',
      uri: PARSER_URI,
      filePath: '/home/me/proj/src/parser.py',
      diff: PARSER_DIFF,
      status: 'pending',
      statusMessage: 'Undone',
    });
  });

  test('a fileEdit event after its request ended still updates the edit block', () => {
    const store = new ChatStore();
    for (const event of toolRound(A, 'r')) {
      store.apply(event);
    }
    // The user pressed Undo: the server reports the new status under the old request id.
    const undone = store.apply({
      chatId: A,
      requestId: 'r',
      kind: 'fileEdit',
      editId: 'edit-1',
      uri: PARSER_URI,
      diff: PARSER_DIFF,
      status: 'undone',
    });
    assert.equal(undone, store.get(A));
    const blocks = store.get(A)?.messages[0].blocks.filter((b) => b.kind === 'fileEdit');
    assert.equal(blocks?.length, 1);
    assert.equal(blocks?.[0].kind === 'fileEdit' && blocks[0].status, 'undone');
    // An edit nobody knows, from an ended request, is still dropped.
    const stray = { chatId: A, requestId: 'r', kind: 'fileEdit', editId: 'x', status: 'applied' };
    assert.equal(store.apply(stray as ChatEvent), undefined);
  });

  test('an edit that breaks its file keeps the parse check and asks before Apply', () => {
    // Issue 47: no client read parseCheck; a broken edit looked like any other.
    const store = new ChatStore();
    const reason = 'the file compiled before and not after: IndentationError (line 3)';
    const broken = {
      chatId: A,
      requestId: 'r',
      kind: 'fileEdit',
      editId: 'edit-9',
      uri: PARSER_URI,
      diff: PARSER_DIFF,
      status: 'pending',
      parseCheck: 'broken',
      parseReason: reason,
    } as ChatEvent;
    store.apply(broken);
    const edit = store.fileEdit(A, 'edit-9');
    assert.equal(edit?.parseCheck, 'broken');
    assert.equal(edit?.parseReason, reason);
    assert.deepEqual(edit && applyQuestion(edit), {
      message: 'QodeAssist: this edit breaks /home/me/proj/src/parser.py. Apply it anyway?',
      detail: `${reason}\n\nThe model was told; it may propose a fixed edit.`,
      confirm: 'Apply anyway',
    });
    // A status change keeps the check; an edit that parses is applied without a question.
    store.apply({ ...broken, status: 'failed', parseReason: undefined } as ChatEvent);
    assert.equal(store.fileEdit(A, 'edit-9')?.parseCheck, 'broken');
    store.apply({ ...broken, editId: 'edit-10', parseCheck: 'ok', parseReason: undefined } as ChatEvent);
    const fine = store.fileEdit(A, 'edit-10');
    assert.ok(fine && applyQuestion(fine) === undefined);
    assert.equal(store.fileEdit(A, 'nope'), undefined);
    // Loaded from a history.
    const [loaded] = fromHistory([
      {
        role: 'assistant',
        id: 'r',
        blocks: [{ type: 'file_edit', editId: 'e', filePath: 'a.py', status: 'pending', parseCheck: 'broken' }],
      },
    ] as never);
    const block = loaded.blocks[0];
    assert.ok(block.kind === 'fileEdit' && applyQuestion(block)?.detail.startsWith('the file parses worse'));
  });

  test('a failed tool result is an error even without isError, and gets a summary', () => {
    const store = new ChatStore();
    store.apply({ chatId: A, requestId: 'r', kind: 'toolCall', id: 't', name: 'terminal' });
    store.apply({
      chatId: A,
      requestId: 'r',
      kind: 'toolResult',
      toolCallId: 't',
      toolUseId: 't',
      ok: false,
      content: '\n  Error: permission denied by the user\nmore',
    });
    const [tool] = store.get(A)?.messages[0].blocks ?? [];
    assert.deepEqual(tool, {
      kind: 'tool',
      id: 't',
      name: 'terminal',
      arguments: {},
      permission: '',
      result: {
        content: '\n  Error: permission denied by the user\nmore',
        isError: true,
        summary: 'Error: permission denied by the user',
      },
    });
  });

  test('displayPath turns file URIs into paths', () => {
    assert.equal(displayPath('file:///home/me/a%20b.py'), '/home/me/a b.py');
    assert.equal(displayPath('file:///c%3A/src/x.ts'), 'c:/src/x.ts');
    assert.equal(displayPath('untitled:Untitled-1'), 'untitled:Untitled-1');
    assert.equal(summarize('x'.repeat(200)).length, 160);
  });
});
