import { strict as assert } from 'node:assert';
import { describe, test } from 'node:test';
import { ChatStore } from '../chatModel';
import { ViewDiffer, brief, editActions, renderBlock, renderChat, usageText } from '../chatView';
import { A, B, toolRound } from './fixtures';

function replayed(until?: number) {
  const store = new ChatStore();
  store.addUserMessage(A, 'req-1', 'Why does <parser.py> skip blank lines?');
  for (const event of toolRound(A, 'req-1').slice(0, until)) {
    store.apply(event);
  }
  return store;
}

describe('renderChat', () => {
  test('a finished answer: thinking collapsed, tool call with its result, usage', () => {
    const view = renderChat(replayed().get(A));
    assert.equal(view.chatId, A);
    assert.equal(view.busy, false);
    assert.equal(view.messages.length, 2);

    const [user, answer] = view.messages;
    assert.equal(user.role, 'user');
    assert.equal(user.footer, '');
    assert.match(user.blocks[0].html, /Why does &lt;parser\.py&gt; skip blank lines\?/);
    assert.doesNotMatch(user.blocks[0].html, /<parser\.py>/);

    assert.deepEqual(
      answer.blocks.map((b) => b.kind),
      ['thinking', 'text', 'tool', 'text', 'fileEdit'],
    );
    const [thinking, , tool, text, edit] = answer.blocks;
    assert.match(thinking.html, /^<details class="thinking"><summary>Thoughts<\/summary>/);
    assert.doesNotMatch(thinking.html, /<details[^>]* open/); // collapsed
    assert.match(thinking.html, /The user asks about blank lines\./);
    assert.match(tool.html, /<code>read_file<\/code><span class="tool-permission permission-read">read<\/span>/);
    assert.match(tool.html, /<div class="tool-summary">def parse\(lines\):<\/div><\/summary>/);
    assert.match(tool.html, /src\/parser\.py/);
    assert.match(tool.html, /tool-state ok">done/);
    assert.match(tool.html, /<div class="label">Result<\/div><pre class="tool-output">def parse\(lines\):/);
    assert.match(text.html, /<code>if not line\.strip\(\): continue<\/code>/);
    assert.match(edit.html, /data-edit-action="undo"/);
    assert.doesNotMatch(edit.html, /data-edit-action="apply"/);
    assert.match(edit.html, /<a data-href="file:\/\/\/home\/me\/proj\/src\/parser\.py" href="#">\/home\/me\/proj\/src\/parser\.py<\/a>/);
    assert.match(edit.html, /<span class="diff-del">-        if not line\.strip\(\):<\/span>/);
    assert.match(edit.html, /<span class="diff-add">\+        if not line:<\/span>/);
    assert.match(edit.html, /<span class="diff-hunk">@@ -3 \+3 @@<\/span>/);
    assert.match(answer.footer, /812 in · 64 out · 12 reasoning tokens/);
    assert.doesNotMatch(answer.footer, /Answering/);
  });

  test('while streaming: busy, thinking open-ended, tool running', () => {
    // Up to the tool call (the result has not come yet).
    const view = renderChat(replayed(6).get(A));
    assert.equal(view.busy, true);
    const answer = view.messages[1];
    assert.equal(answer.status, 'streaming');
    assert.match(answer.footer, /class="spinner"/);
    assert.match(answer.footer, /Answering…/);
    assert.match(answer.blocks[2].html, /running/);

    const thinkingOnly = renderChat(replayed(2).get(A));
    assert.match(thinkingOnly.messages[1].blocks[0].html, /Thinking…/);
  });

  test('failed: the error with its category; cancelled and max_tokens are said', () => {
    const store = new ChatStore();
    store.addUserMessage(B, 'r1', 'hi');
    store.apply({
      chatId: B,
      requestId: 'r1',
      kind: 'failed',
      error: {
        category: 'auth',
        message: 'HTTP 401 from Claude: <invalid> x-api-key',
        providerDetail: '{"type":"authentication_error"}',
        retryAfter: 30,
      },
    });
    store.addUserMessage(B, 'r2', 'again');
    store.apply({ chatId: B, requestId: 'r2', kind: 'text', text: 'Half' });
    store.apply({ chatId: B, requestId: 'r2', kind: 'cancelled' });
    store.addUserMessage(B, 'r3', 'long');
    store.apply({ chatId: B, requestId: 'r3', kind: 'text', text: 'Very long' });
    store.apply({ chatId: B, requestId: 'r3', kind: 'finished', stopReason: 'max_tokens' });

    const view = renderChat(store.get(B));
    const failed = view.messages[1].footer;
    assert.match(failed, /<div class="error category-auth"><span class="error-category">auth<\/span>/);
    assert.match(failed, /Authentication failed/);
    assert.match(failed, /HTTP 401 from Claude: &lt;invalid&gt; x-api-key/);
    assert.match(failed, /Retry after 30 s\./);
    assert.match(failed, /Provider detail/);
    assert.match(view.messages[3].footer, /Cancelled/);
    assert.match(view.messages[5].footer, /Stopped: the answer reached the token limit/);
  });

  test('no chat: an empty view', () => {
    assert.deepEqual(renderChat(undefined), {
      title: '',
      agent: null,
      busy: false,
      compressedFrom: null,
      messages: [],
      plan: '',
    });
  });

  test('blocks escape everything they show', () => {
    const hostile = '<img src=x onerror=alert(1)>';
    for (const html of [
      renderBlock({ kind: 'text', text: hostile }).html,
      renderBlock({ kind: 'thinking', text: hostile, redacted: false, done: true }).html,
      renderBlock({ kind: 'tool', id: hostile, name: hostile, arguments: { q: hostile }, permission: hostile, result: { content: hostile, isError: true, summary: hostile } }).html,
      renderBlock({ kind: 'toolResult', toolUseId: 'x', name: hostile, content: hostile, isError: false, summary: hostile }).html,
      renderBlock({ kind: 'fileEdit', editId: '"x', uri: hostile, filePath: hostile, diff: `+${hostile}\n-${hostile}`, status: hostile, statusMessage: hostile }).html,
      renderBlock({ kind: 'attachment', fileName: hostile, image: false }).html,
    ]) {
      assert.doesNotMatch(html, /<img/);
      assert.doesNotMatch(html, /onerror=alert\(1\)>/);
    }
  });

  test('an edit offers the actions its status allows', () => {
    const edit = (status: string) =>
      renderBlock({ kind: 'fileEdit', editId: 'e1', uri: 'file:///a.py', filePath: '/a.py', diff: '', status, statusMessage: '' }).html;
    const actions = (html: string) => [...html.matchAll(/data-edit-action="(\w+)">(\w+)</g)].map((m) => `${m[1]}:${m[2]}`);
    assert.deepEqual(actions(edit('pending')), ['apply:Apply', 'reject:Reject']);
    assert.deepEqual(actions(edit('failed')), ['apply:Apply', 'reject:Reject']);
    assert.deepEqual(actions(edit('applied')), ['undo:Undo']);
    assert.deepEqual(actions(edit('undone')), []);
    assert.deepEqual(actions(edit('rejected')), []);
    assert.doesNotMatch(edit('pending'), /edit-diff/); // no diff, no empty box
    assert.deepEqual(editActions('applied'), ['undo']);
  });

  test('an edit that breaks its file says so on its card and Apply asks', () => {
    const card = (parseCheck: string | undefined, status = 'pending') =>
      renderBlock({ kind: 'fileEdit', editId: 'e1', uri: 'file:///a.py', filePath: '/a.py', diff: '', status, statusMessage: '', parseCheck, parseReason: 'IndentationError <line 3>' }).html;
    const actions = (html: string) => [...html.matchAll(/data-edit-action="(\w+)">([^<]+)</g)].map((m) => `${m[1]}:${m[2]}`);
    assert.match(card('broken'), /class="edit-warning" role="alert">⚠ This edit breaks the file: IndentationError &lt;line 3&gt;</);
    assert.match(card('broken'), /parse-broken/);
    assert.deepEqual(actions(card('broken')), ['apply:Apply anyway…', 'reject:Reject']);
    assert.deepEqual(actions(card('ok')), ['apply:Apply', 'reject:Reject']);
    assert.doesNotMatch(card('ok'), /edit-warning/);
    assert.doesNotMatch(card(undefined), /edit-warning/);
  });

  test('helpers', () => {
    assert.equal(brief({ path: 'src/a.py', limit: 3 }), 'src/a.py');
    assert.equal(brief({ n: 3 }), '');
    assert.equal(
      usageText({ inputTokens: 10, outputTokens: 2, cachedTokens: 5, reasoningTokens: 0 }),
      '10 in · 2 out · 5 cached tokens',
    );
  });
});

describe('ViewDiffer', () => {
  test('sends only the messages that changed, and everything after a chat switch', () => {
    const store = replayed(4);
    const differ = new ViewDiffer();
    const first = differ.diff(renderChat(store.get(A)));
    assert.equal(first.reset, true);
    assert.deepEqual(
      first.changed.map((c) => c.index),
      [0, 1],
    );
    assert.equal(first.length, 2);

    const unchanged = differ.diff(renderChat(store.get(A)));
    assert.equal(unchanged.reset, false);
    assert.deepEqual(unchanged.changed, []);

    store.apply(toolRound(A, 'req-1')[4]);
    const delta = differ.diff(renderChat(store.get(A)));
    assert.deepEqual(
      delta.changed.map((c) => c.index),
      [1],
    );
    assert.match(delta.changed[0].message.blocks[1].html, /Let me read <code>parser\.py<\/code>\./);

    store.addUserMessage(B, 'rb', 'other chat');
    const switched = differ.diff(renderChat(store.get(B)));
    assert.equal(switched.reset, true);
    assert.equal(switched.chatId, B);
    assert.equal(switched.length, 1);
    assert.equal(switched.busy, true);

    const none = differ.diff(renderChat(undefined));
    assert.equal(none.reset, true);
    assert.equal(none.length, 0);
  });
});
