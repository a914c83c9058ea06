// The QodeAssist chat panel: draws the patches the extension posts (see src/chatView.ts) and
// posts back what the user does. Every HTML string it inserts was built by the extension from
// escaped text (src/markdown.ts); this script never turns message text into HTML itself.
// @ts-check
(function () {
  // eslint-disable-next-line no-undef
  const vscode = acquireVsCodeApi();
  /** @param {string} id */
  const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));

  const messagesEl = $('messages');
  const input = /** @type {HTMLTextAreaElement} */ ($('input'));
  const agentSelect = /** @type {HTMLSelectElement} */ ($('agent'));
  const sendButton = /** @type {HTMLButtonElement} */ ($('send'));
  const stopButton = /** @type {HTMLButtonElement} */ ($('stop'));

  /** @type {{root: HTMLElement, body: HTMLElement, footer: HTMLElement, blocks: HTMLElement[], footerHtml: string}[]} */
  let entries = [];
  let chatId = '';
  let busy = false;
  /** Details elements the user opened or closed, by chat, message, block and position. */
  const openState = new Map();
  let agentsKey = '';
  let noticeTimer = 0;
  let draftTimer = 0;
  /** @type {{name: string, description: string}[]} the skills of the last state */
  let skills = [];
  /** @type {{name: string, description: string}[]} the skills the open menu shows */
  let menuItems = [];
  let menuIndex = 0;
  const skillMenu = $('skill-menu');

  // The composer is fixed at the bottom and grows when its row of buttons wraps (a narrow
  // sidebar): keep the last message above it.
  const composer = $('composer');
  new ResizeObserver(() => {
    document.body.style.paddingBottom = `${composer.offsetHeight + 8}px`;
  }).observe(composer);

  const saved = vscode.getState() || {};
  if (typeof saved.draft === 'string') {
    input.value = saved.draft;
  }

  function post(message) {
    vscode.postMessage(message);
  }

  function nearBottom() {
    const el = document.scrollingElement || document.documentElement;
    return el.scrollHeight - el.scrollTop - el.clientHeight < 80;
  }

  function scrollToBottom() {
    const el = document.scrollingElement || document.documentElement;
    el.scrollTop = el.scrollHeight;
  }

  // -- drawing ------------------------------------------------------------------------------

  function applyPatch(patch) {
    const stick = nearBottom();
    if (patch.reset) {
      messagesEl.textContent = '';
      entries = [];
    }
    chatId = patch.chatId || '';
    const title = $('title');
    title.textContent = patch.title || '';
    title.hidden = !patch.title;
    if (patch.compressedFrom) {
      title.textContent += ' (compressed)';
      title.title = `Summary of ${patch.compressedFrom}`;
    }
    for (const { index, message } of patch.changed) {
      drawMessage(index, message);
    }
    while (entries.length > patch.length) {
      const entry = entries.pop();
      if (entry) {
        entry.root.remove();
      }
    }
    setBusy(patch.busy);
    const plan = $('plan');
    const planHtml = patch.plan || '';
    if (plan.dataset.html !== planHtml) {
      plan.innerHTML = planHtml;
      plan.dataset.html = planHtml;
    }
    plan.hidden = !planHtml;
    $('empty').hidden = patch.length > 0 || !!patch.plan;
    if (stick || patch.reset) {
      scrollToBottom();
    }
  }

  function drawMessage(index, message) {
    let entry = entries[index];
    if (!entry) {
      const root = document.createElement('div');
      const body = document.createElement('div');
      body.className = 'message-body';
      const footer = document.createElement('div');
      footer.className = 'message-footer';
      root.append(body, footer);
      messagesEl.appendChild(root);
      entry = { root, body, footer, blocks: [], footerHtml: '' };
      entries[index] = entry;
    }
    entry.root.className = `message ${message.role} status-${message.status}`;
    message.blocks.forEach((block, b) => {
      let el = entry.blocks[b];
      if (!el) {
        el = document.createElement('div');
        entry.body.appendChild(el);
        entry.blocks[b] = el;
      }
      el.className = `block block-${block.kind}`;
      if (el.dataset.html !== block.html) {
        el.innerHTML = block.html;
        el.dataset.html = block.html;
        restoreDetails(el, `${chatId}:${index}.${b}`);
      }
    });
    while (entry.blocks.length > message.blocks.length) {
      const el = entry.blocks.pop();
      if (el) {
        el.remove();
      }
    }
    if (entry.footerHtml !== message.footer) {
      entry.footer.innerHTML = message.footer;
      entry.footerHtml = message.footer;
    }
  }

  /** Keep the user's open/closed choice of each <details> across redraws of its block. */
  function restoreDetails(el, key) {
    el.querySelectorAll('details').forEach((details, k) => {
      const id = `${key}.${k}`;
      details.dataset.key = id;
      if (openState.has(id)) {
        details.open = openState.get(id);
      }
    });
  }

  messagesEl.addEventListener(
    'toggle',
    (event) => {
      const details = /** @type {HTMLDetailsElement} */ (event.target);
      if (details.dataset && details.dataset.key) {
        openState.set(details.dataset.key, details.open);
      }
    },
    true,
  );

  // The server refuses a second message into a busy chat (ChatBusy): while an answer runs,
  // Send (and Enter) wait; Stop (and Escape) end the answer. The draft stays in the input.
  function setBusy(value) {
    busy = !!value;
    $('busy').hidden = !busy;
    stopButton.hidden = !busy;
    sendButton.disabled = busy;
    sendButton.title = busy ? 'Wait for the answer, or Stop it (Escape)' : 'Send (Enter)';
  }

  function drawState(state) {
    const key = JSON.stringify(state.agents);
    if (key !== agentsKey) {
      agentsKey = key;
      agentSelect.textContent = '';
      for (const agent of state.agents) {
        const option = document.createElement('option');
        option.value = agent.name;
        option.textContent = agent.name;
        option.title = [agent.detail, agent.description].filter(Boolean).join('\n');
        agentSelect.appendChild(option);
      }
    }
    if (state.selectedAgent && !state.agents.some((a) => a.name === state.selectedAgent)) {
      const option = document.createElement('option');
      option.value = state.selectedAgent;
      option.textContent = `${state.selectedAgent} (not loaded)`;
      agentSelect.appendChild(option);
      agentsKey = '';
    }
    skills = Array.isArray(state.skills) ? state.skills : [];
    updateSkillMenu();
    agentSelect.value = state.selectedAgent || '';
    agentSelect.disabled = state.agents.length === 0;

    const chips = $('chips');
    chips.textContent = '';
    state.attachments.forEach((name, index) =>
      chips.appendChild(chip('attachment', '📎', name, 'Attached to the next message', { type: 'removeAttachment', index })),
    );
    state.linked.forEach((name, index) =>
      chips.appendChild(chip('linked', '🔗', name, 'Linked: re-sent with every message', { type: 'removeLinked', index })),
    );

    const tokens = $('tokens');
    if (state.tokens && typeof state.tokens.estimate === 'number') {
      const n = state.tokens.estimate;
      tokens.textContent = `~${n >= 1000 ? `${(n / 1000).toFixed(1)}k` : n} tokens`;
      tokens.title = state.tokens.fromUsage
        ? 'Input tokens of the next request (from the provider\'s last usage)'
        : 'Estimated input tokens of the next request';
    } else {
      tokens.textContent = '';
    }

    const server = $('server');
    if (state.serverState === 'running') {
      server.hidden = true;
    } else {
      server.hidden = false;
      server.textContent =
        state.serverState === 'starting'
          ? 'Starting the QodeAssist server…'
          : 'The QodeAssist server is not running (see the status bar menu).';
      server.className = `banner ${state.serverState === 'starting' ? 'info' : 'error'}`;
    }
  }

  function chip(kind, icon, name, title, removeMessage) {
    const el = document.createElement('span');
    el.className = `chip ${kind}`;
    el.title = title;
    el.textContent = `${icon} ${name}`;
    const remove = document.createElement('button');
    remove.className = 'icon-button';
    remove.textContent = '✕';
    remove.title = 'Remove';
    remove.addEventListener('click', () => post(removeMessage));
    el.appendChild(remove);
    return el;
  }

  function showNotice(level, text) {
    const notice = $('notice');
    $('notice-text').textContent = text;
    notice.className = `banner ${level}`;
    notice.hidden = false;
    window.clearTimeout(noticeTimer);
    if (level === 'info') {
      noticeTimer = window.setTimeout(() => (notice.hidden = true), 8000);
    }
  }

  // -- input --------------------------------------------------------------------------------

  /** The `/name` being typed at the very start of the message (caret inside it), or null. */
  function slashWord() {
    const before = input.value.slice(0, input.selectionEnd ?? input.value.length);
    const match = /^\/([a-z0-9-]*)$/i.exec(before);
    return match ? match[1].toLowerCase() : null;
  }

  function updateSkillMenu() {
    const word = slashWord();
    menuItems = word === null ? [] : skills.filter((s) => s.name.startsWith(word));
    menuIndex = Math.min(menuIndex, Math.max(menuItems.length - 1, 0));
    skillMenu.textContent = '';
    menuItems.forEach((skill, index) => {
      const item = document.createElement('li');
      item.setAttribute('role', 'option');
      item.setAttribute('data-skill', skill.name);
      item.className = index === menuIndex ? 'selected' : '';
      item.setAttribute('aria-selected', String(index === menuIndex));
      const name = document.createElement('strong');
      name.textContent = `/${skill.name}`;
      const description = document.createElement('span');
      description.textContent = skill.description;
      item.append(name, ' ', description);
      skillMenu.appendChild(item);
    });
    skillMenu.hidden = menuItems.length === 0;
  }

  /** Replace the `/word` at the start of the message with the skill's full `/name `. */
  function acceptSkill(name) {
    const rest = input.value.replace(/^\/[a-z0-9-]*/i, '').replace(/^ /, '');
    input.value = `/${name} ${rest}`;
    const caret = name.length + 2;
    input.setSelectionRange(caret, caret);
    vscode.setState({ draft: input.value });
    menuItems = [];
    skillMenu.hidden = true;
    input.focus();
  }

  skillMenu.addEventListener('mousedown', (event) => {
    const item = /** @type {HTMLElement} */ (event.target).closest('li[data-skill]');
    if (item) {
      event.preventDefault();
      acceptSkill(item.getAttribute('data-skill') || '');
    }
  });

  function send() {
    const text = input.value;
    if (busy || (!text.trim() && $('chips').querySelectorAll('.chip.attachment').length === 0)) {
      return;
    }
    const planMode = /** @type {HTMLInputElement} */ ($('plan-mode'));
    post(planMode.checked ? { type: 'send', text, mode: 'plan' } : { type: 'send', text });
    planMode.checked = false;
    input.value = '';
    vscode.setState({ draft: '' });
    $('notice').hidden = true;
  }

  sendButton.addEventListener('click', send);
  stopButton.addEventListener('click', () => post({ type: 'cancel' }));
  $('attach').addEventListener('click', () => post({ type: 'attach' }));
  $('link').addEventListener('click', () => post({ type: 'linkActive' }));
  $('empty-history').addEventListener('click', () => post({ type: 'history' }));
  $('plan').addEventListener('click', (event) => {
    const button = /** @type {HTMLElement} */ (event.target).closest('button[data-plan-action]');
    if (button) {
      post({ type: 'plan', action: button.getAttribute('data-plan-action') });
    }
  });
  $('notice-close').addEventListener('click', () => ($('notice').hidden = true));
  agentSelect.addEventListener('change', () => post({ type: 'agent', name: agentSelect.value }));

  input.addEventListener('keydown', (event) => {
    if (!skillMenu.hidden && menuItems.length > 0) {
      if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
        event.preventDefault();
        const step = event.key === 'ArrowDown' ? 1 : -1;
        menuIndex = (menuIndex + step + menuItems.length) % menuItems.length;
        updateSkillMenu();
        return;
      }
      if ((event.key === 'Tab' || event.key === 'Enter') && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        acceptSkill(menuItems[menuIndex].name);
        return;
      }
      if (event.key === 'Escape') {
        event.preventDefault();
        menuItems = [];
        skillMenu.hidden = true;
        return;
      }
    }
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      send();
    } else if (event.key === 'Escape' && busy) {
      event.preventDefault();
      post({ type: 'cancel' });
    }
  });

  input.addEventListener('input', () => {
    if (input.value === '/') {
      menuIndex = 0;
      post({ type: 'skills' }); // the extension answers with a state carrying fresh skills
    }
    updateSkillMenu();
    vscode.setState({ draft: input.value });
    window.clearTimeout(draftTimer);
    draftTimer = window.setTimeout(() => post({ type: 'draft', text: input.value }), 300);
  });

  messagesEl.addEventListener('click', (event) => {
    const target = /** @type {HTMLElement} */ (event.target);
    const link = target.closest('a[data-href]');
    if (link) {
      event.preventDefault();
      post({ type: 'openLink', href: link.getAttribute('data-href') });
      return;
    }
    const codeAction = target.closest('button[data-code-action]');
    if (codeAction) {
      const code = codeAction.closest('.code-block')?.querySelector('code');
      const action = codeAction.getAttribute('data-code-action');
      post({ type: action === 'insert' ? 'insert' : 'copy', text: code ? code.textContent : '' });
      return;
    }
    const editAction = target.closest('button[data-edit-action]');
    if (editAction) {
      post({
        type: 'editFile',
        editId: editAction.getAttribute('data-edit-id'),
        action: editAction.getAttribute('data-edit-action'),
      });
    }
  });

  window.addEventListener('message', (event) => {
    const message = event.data;
    switch (message && message.type) {
      case 'patch':
        applyPatch(message.patch);
        break;
      case 'state':
        drawState(message);
        break;
      case 'notice':
        showNotice(message.level, message.text);
        break;
      case 'restoreDraft':
        if (!input.value.trim()) {
          input.value = message.text || '';
          vscode.setState({ draft: input.value });
        }
        break;
      case 'focusInput':
        input.focus();
        break;
    }
  });

  post({ type: 'ready' });
})();
