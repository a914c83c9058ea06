import { strict as assert } from 'node:assert';
import { describe, test } from 'node:test';
import { ChatStore } from '../chatModel';
import { ViewDiffer, renderChat, renderPlan } from '../chatView';
import { ChatEvent } from '../protocol';
import { A } from './fixtures';

function planEvent(requestId: string, state: string, statuses: string[], ids: string[] = []): ChatEvent {
  const titles = ['Read <parser>', 'Fix it'];
  return {
    chatId: A,
    requestId,
    kind: 'planUpdated',
    state,
    steps: statuses.map((status, i) => ({
      id: `s${i}`,
      title: titles[i],
      status,
      ...(ids[i] ? { requestId: ids[i] } : {}),
    })),
  };
}

describe('plan mode', () => {
  test('planUpdated keeps the plan; a running step gets a user message naming it', () => {
    const store = new ChatStore();
    store.apply(planEvent('plan-req', 'proposed', ['pending', 'pending']));
    assert.equal(store.get(A)?.plan?.state, 'proposed');
    store.apply(planEvent('', 'running', ['running', 'pending'], ['step-1']));
    store.apply({ chatId: A, requestId: 'step-1', kind: 'text', text: 'Reading.' });
    const chat = store.get(A);
    assert.ok(chat);
    assert.deepEqual(
      chat.messages.map((m) => [m.role, m.requestId]),
      [
        ['user', 'step-1'],
        ['assistant', 'step-1'],
      ],
    );
    assert.deepEqual(chat.messages[0].blocks, [{ kind: 'text', text: 'Step 1: Read <parser>' }]);
  });

  test('the plan is an escaped checklist with Approve while proposed, Resume after a failure', () => {
    const store = new ChatStore();
    store.apply(planEvent('plan-req', 'proposed', ['pending', 'pending']));
    const html = renderChat(store.get(A)).plan;
    assert.match(html, /Plan · proposed/);
    assert.match(html, /☐<\/span> Read &lt;parser&gt;/);
    assert.match(html, /data-plan-action="approve">Approve</);
    assert.match(html, /data-plan-action="cancel"/);
    const failed = renderPlan({
      state: 'failed',
      steps: [{ id: 'a', title: 'Fix it', status: 'failed', error: 'network down' }],
    });
    assert.match(failed, /✗<\/span> Fix it <span class="plan-error">— network down/);
    assert.match(failed, />Resume</);
    assert.equal(renderPlan({ state: 'done', steps: [] }).includes('data-plan-action'), false);
    assert.equal(renderPlan(undefined), '');
  });

  test('the patch carries the plan', () => {
    const store = new ChatStore();
    store.apply(planEvent('plan-req', 'proposed', ['pending']));
    const patch = new ViewDiffer().diff(renderChat(store.get(A)));
    assert.match(patch.plan ?? '', /Plan · proposed/);
  });
});
