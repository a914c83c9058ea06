-- Plugin chat buffer, tool and edit blocks (no server): chat events of a request that called
-- tools are fed to the plugin's `qodeassist/chat/event` handler as the server sends them. The
-- chat buffer must show the tool call with its permission class, the result's summary over a
-- closed fold, and the edit's diff under a header with its keys; a later fileEdit event for the
-- same editId (after the request ended) rewrites that block in place. Then the plugin's
-- `qodeassist/diagnostics` handler answers from vim.diagnostic for a file that is not loaded.
local here = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2))
local H = dofile(vim.fs.joinpath(here, 'harness.lua'))

local function event(ev)
  ev.chatId, ev.requestId = ev.chatId or 'chat-1', ev.requestId or 'req-1'
  vim.lsp.handlers['qodeassist/chat/event'](nil, ev, {})
end

local function closed_folds(buf)
  local win = vim.fn.win_findbuf(buf)[1]
  return vim.api.nvim_win_call(win, function()
    local folds = {}
    local lnum = 1
    while lnum <= vim.fn.line('$') do
      local fold_end = vim.fn.foldclosedend(lnum)
      if fold_end ~= -1 then
        table.insert(folds, { lnum, fold_end, vim.fn.foldtextresult(lnum) })
        lnum = fold_end
      end
      lnum = lnum + 1
    end
    return folds
  end)
end

H.run(function()
  vim.opt.runtimepath:prepend(H.params.plugin_dir)
  -- No server: the scenario plays the server's part.
  require('qodeassist').setup({ cmd = { 'false' }, filetypes = { 'none' } })
  local chat = require('qodeassist.chat')
  chat.open()
  local session = chat.session
  session.chat_id, session.request_id, session.busy = 'chat-1', 'req-1', true
  local uri = vim.uri_from_fname(H.params.file)

  event({
    kind = 'toolCall',
    toolCallId = 'call_1',
    id = 'call_1',
    name = 'read_file',
    arguments = { path = 'add.py' },
    permission = 'read',
  })
  event({
    kind = 'toolResult',
    toolCallId = 'call_1',
    toolUseId = 'call_1',
    name = 'read_file',
    ok = true,
    summary = 'def add(a, b):',
    content = 'def add(a, b):\n    return \n',
    isError = false,
  })
  event({
    kind = 'fileEdit',
    editId = 'edit-1',
    uri = uri,
    diff = '--- a/add.py\n+++ b/add.py\n@@ -2 +2 @@\n-    return \n+    return a + b\n',
    status = 'pending',
  })
  event({ kind = 'text', text = 'I changed add.' })
  event({ kind = 'finished', stopReason = 'end_turn' })
  H.report.snapshots.rendered = {
    chat_lines = H.lines(session.buf),
    folds = closed_folds(session.buf),
    maps = vim.tbl_map(function(map)
      return map.lhs
    end, vim.api.nvim_buf_get_keymap(session.buf, 'n')),
  }
  -- The edit was applied (by another editor, say): its block changes, the rest stays.
  event({
    kind = 'fileEdit',
    requestId = 'req-0',
    editId = 'edit-1',
    uri = uri,
    diff = '--- a/add.py\n+++ b/add.py\n@@ -2 +2 @@\n-    return \n+    return a + b\n',
    status = 'applied',
  })
  H.report.snapshots.applied = { chat_lines = H.lines(session.buf) }

  -- qodeassist/diagnostics for a file Neovim has not loaded yet.
  local other = vim.fs.joinpath(H.params.root, 'other.py')
  local file = assert(io.open(other, 'w'))
  file:write('x = (\n')
  file:close()
  local bufnr = vim.fn.bufadd(other)
  local ns = vim.api.nvim_create_namespace('test.diagnostics')
  vim.fn.bufload(bufnr)
  vim.diagnostic.set(ns, bufnr, {
    { lnum = 0, col = 4, end_lnum = 0, end_col = 5, message = "'(' was never closed",
      severity = vim.diagnostic.severity.ERROR, source = 'pyright', code = 'syntax' },
  })
  vim.api.nvim_buf_delete(bufnr, { unload = true })
  local handler = vim.lsp.config.qodeassist.handlers['qodeassist/diagnostics']
  H.report.diagnostics = handler(nil, { uri = vim.uri_from_fname(other) }, {})
  H.report.all_diagnostics = handler(nil, { uri = vim.NIL }, {})
end)
