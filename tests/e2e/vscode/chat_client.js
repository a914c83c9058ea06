// Drives the real qodeassist-lsp over stdio the way the VS Code extension does, with the
// extension's own compiled modules: the chat events feed its ChatStore, `chat/get` histories are
// loaded into a second store, and both are printed so the Python test can compare them.
//
// Usage: node chat_client.js PARAMS.json
//   PARAMS: {extension: <dir with node_modules and out>, cmd: [argv], cwd, env: {},
//            sends: [{key, message, chat?: <key of an earlier send>}], deadlineMs}
// Prints one JSON report on stdout.
'use strict';

const { spawn } = require('child_process');
const fs = require('fs');
const path = require('path');

const params = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const ext = params.extension;
const rpc = require(require.resolve('vscode-jsonrpc/node', { paths: [ext] }));
const { ChatStore, isBusy } = require(path.join(ext, 'out', 'chatModel.js'));
const { renderChat } = require(path.join(ext, 'out', 'chatView.js'));
const { serverSettings } = require(path.join(ext, 'out', 'settings.js'));

const started = Date.now();
const report = { events: [], configurationRequests: [], sends: {}, errors: [], timings: {} };
const mark = (name) => (report.timings[name] = Date.now() - started);
const deadline = Date.now() + (params.deadlineMs || 30000);

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function until(what, predicate) {
  while (!predicate()) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await sleep(20);
  }
}

async function run() {
  const server = spawn(params.cmd[0], params.cmd.slice(1), {
    cwd: params.cwd,
    env: { ...process.env, ...params.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  server.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise((resolve) => server.on('exit', (code) => resolve(code)));
  const connection = rpc.createMessageConnection(
    new rpc.StreamMessageReader(server.stdout),
    new rpc.StreamMessageWriter(server.stdin),
  );
  const settings = serverSettings(['qodeassist.completion.debounceMs'], () => ({ globalValue: 300 }));
  const store = new ChatStore();
  connection.onRequest('workspace/configuration', (p) => {
    report.configurationRequests.push(p.items.map((i) => i.section ?? null));
    return p.items.map((i) => (i.section === 'qodeassist' ? settings : null));
  });
  connection.onRequest('client/registerCapability', () => null);
  connection.onRequest('window/workDoneProgress/create', () => null);
  connection.onNotification('qodeassist/chat/event', (event) => {
    report.events.push(event);
    store.apply(event);
  });
  connection.listen();

  try {
    const init = await connection.sendRequest('initialize', {
      processId: process.pid,
      clientInfo: { name: 'Visual Studio Code', version: '1.99.0' },
      rootUri: params.rootUri,
      workspaceFolders: [{ uri: params.rootUri, name: 'project' }],
      capabilities: {
        workspace: { configuration: true, didChangeConfiguration: { dynamicRegistration: true } },
        window: { workDoneProgress: true },
        textDocument: { inlineCompletion: { dynamicRegistration: true } },
      },
      initializationOptions: { qodeassist: settings },
    });
    report.inlineCompletionProvider = !!init.capabilities.inlineCompletionProvider;
    report.commands = (init.capabilities.executeCommandProvider || {}).commands || [];
    mark('initialized');
    connection.sendNotification('initialized', {});

    let status = await connection.sendRequest('qodeassist/status', {});
    while (status.state !== 'ready') {
      if (Date.now() > deadline) {
        throw new Error(`status stayed ${status.state}`);
      }
      await sleep(50);
      status = await connection.sendRequest('qodeassist/status', {});
    }
    mark('ready');
    report.status = { state: status.state, agents: status.agents, pipelines: status.pipelines };
    report.agents = (await connection.sendRequest('qodeassist/agents/list', { pipeline: 'chatAssistant' })).map(
      (a) => a.name,
    );

    // The sends run concurrently, so the answers of different chats interleave.
    const chatOf = {};
    await Promise.all(
      params.sends.map(async (send, index) => {
        await sleep(index * 30);
        if (send.chat) {
          await until(`chat of ${send.chat}`, () => chatOf[send.chat] && !isBusy(store.get(chatOf[send.chat])));
        }
        const request = { message: send.message };
        if (send.chat) {
          request.chatId = chatOf[send.chat];
        }
        const result = await connection.sendRequest('qodeassist/chat/send', request);
        chatOf[send.key] = result.chatId;
        report.sends[send.key] = result;
        store.addUserMessage(result.chatId, result.requestId, send.message);
        await until(`the answer to ${send.key}`, () => !isBusy(store.get(result.chatId)));
      }),
    );

    mark('answered');
    const streamed = {};
    const loaded = {};
    const fresh = new ChatStore();
    for (const chatId of new Set(Object.values(chatOf))) {
      streamed[chatId] = store.get(chatId);
      loaded[chatId] = fresh.load(await connection.sendRequest('qodeassist/chat/get', { chatId }));
    }
    report.streamed = streamed;
    report.loaded = loaded;
    report.rendered = Object.fromEntries(Object.keys(streamed).map((id) => [id, renderChat(streamed[id])]));
    report.list = await connection.sendRequest('qodeassist/chat/list', {});
    report.tokens = await connection
      .sendRequest('qodeassist/chat/tokens', { chatId: Object.keys(streamed)[0], draft: 'and now?' })
      .catch((error) => ({ error: String(error.message || error) }));
    try {
      await connection.sendRequest('qodeassist/chat/send', { message: '', chatId: 'no-such-chat' });
      report.invalidSend = null;
    } catch (error) {
      report.invalidSend = { code: error.code, message: error.message };
    }
    mark('checked');
    await connection.sendRequest('shutdown');
    connection.sendNotification('exit');
    report.exitCode = await Promise.race([
      exited,
      new Promise((resolve) => setTimeout(resolve, 10000, 'timeout').unref()),
    ]);
    mark('exited');
  } catch (error) {
    report.errors.push(String((error && error.stack) || error));
    server.kill('SIGKILL');
  }
  report.stderr = stderr.slice(-8000);
  connection.dispose();
  process.stdout.write(JSON.stringify(report));
}

run().catch((error) => {
  report.errors.push(String((error && error.stack) || error));
  process.stdout.write(JSON.stringify(report));
});
