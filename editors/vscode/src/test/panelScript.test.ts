/**
 * The panel's script (media/chat.js) in a DOM (happy-dom): it draws the patches the extension
 * builds from a replayed event stream and posts back what the user does.
 */

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, before, beforeEach, describe, test } from 'node:test';
import { ChatStore } from '../chatModel';
import { ChatPatch, ViewDiffer, renderChat } from '../chatView';
import { fillTemplate } from '../webviewHtml';
import { A, toolRound } from './fixtures';

const ROOT = path.resolve(__dirname, '..', '..');
const media = (name: string) => fs.readFileSync(path.join(ROOT, 'media', name), 'utf8');

/* eslint-disable @typescript-eslint/no-explicit-any */
interface Panel {
  window: any;
  document: any;
  posted: any[];
  send(message: unknown): void;
  patch(patch: ChatPatch): void;
}

/** happy-dom is an ES module: loaded with import() (this file compiles to CommonJS). */
let happyDom: typeof import('happy-dom', { with: { 'resolution-mode': 'import' } });

function openPanel(state: Record<string, unknown> = {}): Panel {
  const window: any = new happyDom.Window({ url: 'https://panel.invalid/' });
  const html = fillTemplate(media('chat.html'), {
    cspSource: 'https://panel.invalid',
    nonce: 'n',
    scriptUri: 'chat.js',
    styleUri: 'chat.css',
  });
  // The body without its <script> tag: the script is evaluated below, with the stub API.
  const body = /<body>([\s\S]*)<\/body>/.exec(html)?.[1] ?? '';
  window.document.body.innerHTML = body.replace(/<script[\s\S]*?<\/script>/, '');
  const posted: any[] = [];
  let saved: unknown = state;
  window.acquireVsCodeApi = () => ({
    // (A copy, as postMessage makes: the script's objects belong to the window's realm.)
    postMessage: (message: unknown) => posted.push(JSON.parse(JSON.stringify(message))),
    getState: () => saved,
    setState: (value: unknown) => (saved = value),
  });
  window.eval(media('chat.js'));
  const send = (message: unknown) =>
    window.dispatchEvent(new window.MessageEvent('message', { data: message }));
  return {
    window,
    document: window.document,
    posted,
    send,
    patch: (patch) => send({ type: 'patch', patch }),
  };
}

function baseState(overrides: Record<string, unknown> = {}) {
  return {
    type: 'state',
    serverState: 'running',
    agents: [
      { name: 'Embedded Chat', detail: 'Embedded · gemma3-270m', description: 'Offline chat' },
      { name: 'Claude Chat — Sonnet', detail: 'Claude', description: '' },
    ],
    selectedAgent: 'Claude Chat — Sonnet',
    attachments: [],
    linked: [],
    tokens: null,
    canCompress: true,
    ...overrides,
  };
}

describe('media/chat.js', () => {
  let panel: Panel;
  before(async () => {
    happyDom = await import('happy-dom');
  });
  beforeEach(() => {
    panel = openPanel();
  });
  afterEach(async () => {
    await panel.window.happyDOM.close();
  });

  test('says it is ready, then draws a replayed answer as it streams', () => {
    assert.deepEqual(panel.posted, [{ type: 'ready' }]);
    const store = new ChatStore();
    const differ = new ViewDiffer();
    const events = toolRound(A, 'req-1');
    store.addUserMessage(A, 'req-1', 'Why does <parser.py> skip blank lines?');
    const messages = () => panel.document.querySelectorAll('#messages > .message');

    // Thinking streams; the user opens it.
    for (const event of events.slice(0, 2)) {
      store.apply(event);
    }
    panel.patch(differ.diff(renderChat(store.get(A))));
    const streamingThoughts = messages()[1].querySelector('details.thinking');
    assert.match(streamingThoughts.querySelector('summary').textContent, /Thinking…/);
    assert.equal(streamingThoughts.open, false);
    streamingThoughts.open = true;

    // Streaming, up to the tool call: busy, "Stop" shown.
    for (const event of events.slice(2, 6)) {
      store.apply(event);
    }
    panel.patch(differ.diff(renderChat(store.get(A))));
    assert.equal(messages().length, 2);
    assert.equal(panel.document.getElementById('empty').hidden, true);
    assert.equal(panel.document.getElementById('stop').hidden, false);
    assert.equal(panel.document.getElementById('busy').hidden, false);
    const user = messages()[0];
    assert.equal(user.className, 'message user status-finished');
    assert.equal(user.textContent.trim(), 'Why does <parser.py> skip blank lines?');
    assert.doesNotMatch(user.innerHTML, /<parser\.py>/);

    // The thinking block was redrawn ("Thoughts" now) and stayed open.
    const thinking = messages()[1].querySelector('details.thinking');
    assert.notEqual(thinking, streamingThoughts);
    assert.match(thinking.querySelector('summary').textContent, /Thoughts/);
    assert.equal(thinking.open, true);
    // The user closes it again; the rest of the answer arrives; it stays closed.
    thinking.open = false;
    const toolBefore = messages()[1].querySelector('details.tool');
    for (const event of events.slice(6)) {
      store.apply(event);
    }
    const patch = differ.diff(renderChat(store.get(A)));
    assert.deepEqual(
      patch.changed.map((c) => c.index),
      [1],
    );
    panel.patch(patch);
    const answer = messages()[1];
    assert.equal(answer.className, 'message assistant status-finished');
    assert.equal(answer.querySelector('details.thinking').open, false);
    assert.match(answer.querySelector('details.thinking summary').textContent, /Thoughts/);
    assert.notEqual(answer.querySelector('details.tool'), toolBefore, 'the tool block was redrawn');
    assert.match(answer.querySelector('details.tool').textContent, /read_file.*done/s);
    assert.match(answer.querySelector('.message-footer').textContent, /812 in · 64 out/);
    assert.equal(panel.document.getElementById('stop').hidden, true);
    assert.equal(panel.document.getElementById('busy').hidden, true);
    assert.deepEqual(
      [...answer.querySelectorAll('.block')].map((b: any) => b.className),
      ['block block-thinking', 'block block-text', 'block block-tool', 'block block-text', 'block block-fileEdit'],
    );
  });

  test('a failed answer shows its category; a shorter patch drops messages', () => {
    const store = new ChatStore();
    const differ = new ViewDiffer();
    store.addUserMessage(A, 'r', 'hi');
    store.apply({
      chatId: A,
      requestId: 'r',
      kind: 'failed',
      error: { category: 'network', message: 'connection refused' },
    });
    panel.patch(differ.diff(renderChat(store.get(A))));
    const error = panel.document.querySelector('.message.assistant .error');
    assert.equal(error.querySelector('.error-category').textContent, 'network');
    assert.match(error.textContent, /connection refused/);

    panel.patch(differ.diff(renderChat(undefined)));
    assert.equal(panel.document.querySelectorAll('#messages > .message').length, 0);
    assert.equal(panel.document.getElementById('empty').hidden, false);
  });

  test('Enter sends and clears the input; Shift+Enter does not; Escape stops', () => {
    const input = panel.document.getElementById('input');
    input.value = 'Explain @parser.py:10-20';
    input.dispatchEvent(new panel.window.KeyboardEvent('keydown', { key: 'Enter', shiftKey: true }));
    assert.equal(panel.posted.length, 1);
    input.dispatchEvent(new panel.window.KeyboardEvent('keydown', { key: 'Enter' }));
    assert.deepEqual(panel.posted.at(-1), { type: 'send', text: 'Explain @parser.py:10-20' });
    assert.equal(input.value, '');

    panel.patch({ reset: true, chatId: A, title: 't', agent: null, busy: true, compressedFrom: null, length: 0, changed: [] });
    input.dispatchEvent(new panel.window.KeyboardEvent('keydown', { key: 'Escape' }));
    assert.deepEqual(panel.posted.at(-1), { type: 'cancel' });
    panel.document.getElementById('stop').click();
    assert.deepEqual(panel.posted.at(-1), { type: 'cancel' });

    // An empty message is not sent.
    const count = panel.posted.length;
    panel.document.getElementById('send').click();
    assert.equal(panel.posted.length, count);
  });

  test('while an answer runs, Send is disabled and Enter keeps the draft; Stop is offered', () => {
    const input = panel.document.getElementById('input');
    const sendButton = panel.document.getElementById('send');
    const busy = (value: boolean) =>
      panel.patch({ reset: true, chatId: A, title: 't', agent: null, busy: value, compressedFrom: null, length: 0, changed: [] });
    busy(true);
    assert.equal(sendButton.disabled, true);
    assert.match(sendButton.title, /Wait for the answer, or Stop it/);
    assert.equal(panel.document.getElementById('stop').hidden, false);
    input.value = 'And the tests?';
    const count = panel.posted.length;
    input.dispatchEvent(new panel.window.KeyboardEvent('keydown', { key: 'Enter' }));
    sendButton.click();
    assert.equal(panel.posted.length, count); // the server would refuse it (ChatBusy)
    assert.equal(input.value, 'And the tests?');

    busy(false);
    assert.equal(sendButton.disabled, false);
    assert.equal(panel.document.getElementById('stop').hidden, true);
    input.dispatchEvent(new panel.window.KeyboardEvent('keydown', { key: 'Enter' }));
    assert.deepEqual(panel.posted.at(-1), { type: 'send', text: 'And the tests?' });
  });

  test('/ at the start of the message completes skill names; Tab or Enter takes one', () => {
    const input = panel.document.getElementById('input');
    const menu = panel.document.getElementById('skill-menu');
    const type = (value: string) => {
      input.value = value;
      input.setSelectionRange(value.length, value.length);
      input.dispatchEvent(new panel.window.Event('input'));
    };
    const key = (name: string) =>
      input.dispatchEvent(new panel.window.KeyboardEvent('keydown', { key: name }));
    const shown = () =>
      [...menu.querySelectorAll('li')].map((li: any) => li.getAttribute('data-skill'));

    type('/');
    assert.deepEqual(panel.posted.at(-1), { type: 'skills' }); // fresh skills asked for
    assert.equal(menu.hidden, true); // none known yet
    panel.send(
      baseState({
        skills: [
          { name: 'my-skill', description: 'Mine' },
          { name: 'my-other', description: 'Other' },
          { name: 'deploy', description: 'Ship it' },
        ],
      }),
    );
    assert.deepEqual(shown(), ['my-skill', 'my-other', 'deploy']);
    type('/my');
    assert.deepEqual(shown(), ['my-skill', 'my-other']);
    assert.match(menu.querySelector('li.selected').textContent, /\/my-skill Mine/);
    key('ArrowDown');
    key('Tab');
    assert.equal(input.value, '/my-other ');
    assert.equal(menu.hidden, true);

    // Enter takes the selected skill instead of sending; Escape closes the menu.
    type('/de');
    const count = panel.posted.length;
    key('Enter');
    assert.equal(input.value, '/deploy ');
    assert.equal(panel.posted.filter((m: any) => m.type === 'send').length, 0);
    assert.ok(panel.posted.length >= count);
    type('/d');
    key('Escape');
    assert.equal(menu.hidden, true);

    // Only the first word of the message: no menu later in the text.
    type('please /de');
    assert.equal(menu.hidden, true);
  });

  test('code blocks copy and insert, links open through the extension, edits act', () => {
    const store = new ChatStore();
    store.apply({
      chatId: A,
      requestId: 'r',
      kind: 'text',
      text: 'See [parser](src/parser.py#L10):\n```python\nprint("<hi>")\n```\n',
    });
    for (const event of toolRound(A, 'r').slice(9, 10)) {
      store.apply(event); // a pending file edit
    }
    panel.patch(new ViewDiffer().diff(renderChat(store.get(A))));
    const document = panel.document;
    document.querySelector('button[data-code-action="copy"]').click();
    assert.deepEqual(panel.posted.at(-1), { type: 'copy', text: 'print("<hi>")' });
    document.querySelector('button[data-code-action="insert"]').click();
    assert.deepEqual(panel.posted.at(-1), { type: 'insert', text: 'print("<hi>")' });
    document.querySelector('.md a[data-href]').click();
    assert.deepEqual(panel.posted.at(-1), { type: 'openLink', href: 'src/parser.py#L10' });
    document.querySelector('button[data-edit-action="apply"]').click();
    assert.deepEqual(panel.posted.at(-1), { type: 'editFile', editId: 'edit-1', action: 'apply' });
    document.querySelector('button[data-edit-action="reject"]').click();
    assert.deepEqual(panel.posted.at(-1), { type: 'editFile', editId: 'edit-1', action: 'reject' });
  });

  test('state: the agent picker, attachment chips, tokens, server banner', () => {
    panel.send(
      baseState({
        attachments: ['notes.md'],
        linked: ['src/parser.py'],
        tokens: { estimate: 5120, fromUsage: true },
      }),
    );
    const document = panel.document;
    const select = document.getElementById('agent');
    assert.deepEqual(
      [...select.querySelectorAll('option')].map((o: any) => o.value),
      ['Embedded Chat', 'Claude Chat — Sonnet'],
    );
    assert.equal(select.value, 'Claude Chat — Sonnet');
    select.value = 'Embedded Chat';
    select.dispatchEvent(new panel.window.Event('change'));
    assert.deepEqual(panel.posted.at(-1), { type: 'agent', name: 'Embedded Chat' });

    const chips = [...document.querySelectorAll('#chips .chip')];
    assert.deepEqual(
      chips.map((c: any) => c.className),
      ['chip attachment', 'chip linked'],
    );
    assert.match(chips[0].textContent, /notes\.md/);
    chips[1].querySelector('button').click();
    assert.deepEqual(panel.posted.at(-1), { type: 'removeLinked', index: 0 });
    assert.equal(document.getElementById('tokens').textContent, '~5.1k tokens');
    assert.equal(document.getElementById('server').hidden, true);

    // With an attachment, an empty message may be sent.
    document.getElementById('send').click();
    assert.deepEqual(panel.posted.at(-1), { type: 'send', text: '' });

    panel.send(baseState({ serverState: 'stopped', agents: [], selectedAgent: '' }));
    assert.equal(document.getElementById('server').hidden, false);
    assert.match(document.getElementById('server').textContent, /not running/);
    assert.equal(select.disabled, true);
  });

  test('notices, a restored draft and a saved draft', async () => {
    const document = panel.document;
    panel.send({ type: 'notice', level: 'error', text: 'unknown agent "X"' });
    assert.equal(document.getElementById('notice').hidden, false);
    assert.equal(document.getElementById('notice-text').textContent, 'unknown agent "X"');
    document.getElementById('notice-close').click();
    assert.equal(document.getElementById('notice').hidden, true);

    panel.send({ type: 'restoreDraft', text: 'my question' });
    assert.equal(document.getElementById('input').value, 'my question');

    await panel.window.happyDOM.close();
    panel = openPanel({ draft: 'half-typed' });
    assert.equal(panel.document.getElementById('input').value, 'half-typed');
  });
});
