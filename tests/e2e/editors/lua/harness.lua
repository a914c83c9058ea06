-- Shared driver for the headless Neovim tests (loaded by the scenario init files).
--
-- The test (test_neovim_inline.py) writes a JSON parameter file and names it in
-- $QODEASSIST_NVIM_PARAMS: the server command, the project root, the file to edit, the result
-- path and a deadline. A scenario runs as a coroutine that is resumed from timers, so Neovim's
-- main loop keeps processing typeahead (nvim_input) and LSP messages between steps. Whatever
-- happens, a JSON report is written to the result path: the verdict, the failure with a
-- traceback, snapshots and the final buffer, the ghost-text extmarks, every LSP request the
-- client sent with its answer, notifications, :messages and the LSP log path.

local api = vim.api
local uv = vim.uv

local H = {}

local params_path = assert(os.getenv('QODEASSIST_NVIM_PARAMS'), '$QODEASSIST_NVIM_PARAMS unset')
local P = vim.json.decode(assert(io.open(params_path)):read('*a'))
H.params = P

local report = {
  ok = false,
  step = 'init',
  snapshots = {},
  requests = {},
  notifications = {},
  lsp_log = vim.lsp.log.get_filename(),
  nvim_version = tostring(vim.version()),
}
H.report = report

local co ---@type thread?
local finished = false
H.buf = nil ---@type integer?
H.client = nil ---@type vim.lsp.Client?

-- Keep everything the editor would have shown.
vim.notify = function(msg, level)
  table.insert(report.notifications, { msg = tostring(msg), level = level })
end

local function now_ms()
  return uv.hrtime() / 1e6
end

local started_ms = now_ms()

-- The namespace of the ghost-text extmarks: Neovim's own, or the plugin's extmark renderer.
H.ghost_ns = 'nvim.lsp.inline_completion'

--- The ghost-text extmarks of the buffer: row/col (0-based) and the text they display.
function H.ghosts()
  local ns = api.nvim_get_namespaces()[H.ghost_ns]
  if not ns or not H.buf then
    return {}
  end
  local out = {}
  for _, mark in ipairs(api.nvim_buf_get_extmarks(H.buf, ns, 0, -1, { details = true })) do
    local details = mark[4]
    local text = {}
    for _, chunk in ipairs(details.virt_text or {}) do
      table.insert(text, chunk[1])
    end
    local lines = {}
    for _, line in ipairs(details.virt_lines or {}) do
      local parts = {}
      for _, chunk in ipairs(line) do
        table.insert(parts, chunk[1])
      end
      table.insert(lines, table.concat(parts))
    end
    table.insert(out, {
      row = mark[2],
      col = mark[3],
      text = table.concat(text),
      virt_lines = lines,
      pos = details.virt_text_pos,
    })
  end
  return out
end

--- The editor state: buffer lines, cursor (1-based row, 0-based byte column), mode, ghosts.
function H.state()
  local state =
    { mode = api.nvim_get_mode().mode, ghosts = H.ghosts(), t_ms = now_ms() - started_ms }
  if H.buf and api.nvim_buf_is_valid(H.buf) then
    state.lines = api.nvim_buf_get_lines(H.buf, 0, -1, false)
    state.cursor = api.nvim_win_get_cursor(0)
    state.changedtick = api.nvim_buf_get_changedtick(H.buf)
  end
  if package.loaded['qodeassist'] then
    state.statusline = require('qodeassist').statusline()
  end
  return state
end

function H.snapshot(name)
  report.snapshots[name] = H.state()
end

function H.line(row)
  return api.nvim_buf_get_lines(H.buf, row - 1, row, false)[1]
end

local function write_report()
  report.final = H.state()
  report.elapsed_ms = now_ms() - started_ms
  local ok, messages = pcall(api.nvim_exec2, 'messages', { output = true })
  report.messages = ok and messages.output or tostring(messages)
  local encoded = vim.json.encode(report)
  local file = assert(io.open(P.result, 'w'))
  file:write(encoded)
  file:close()
end

--- Stop the server, write the report and quit (exit code 0 on PASS, 1 on FAIL).
local function finish(failure)
  if finished then
    return
  end
  finished = true
  if failure then
    report.ok = false
    report.failure = type(failure) == 'string' and failure or vim.inspect(failure)
  else
    report.ok = true
  end
  local client = H.client
  if client and not client:is_stopped() then
    client:stop()
    vim.wait(5000, function()
      return client:is_stopped()
    end, 20)
    if not client:is_stopped() then
      report.server_stop = 'the server did not exit within 5 s of shutdown; killed'
      client:stop(true)
      vim.wait(2000, function()
        return client:is_stopped()
      end, 20)
    end
  end
  report.server_stopped = client == nil or client:is_stopped()
  local ok, err = pcall(write_report)
  if not ok then
    io.stderr:write('could not write the report: ' .. tostring(err) .. '\n')
  end
  vim.cmd(report.ok and 'qall!' or 'cquit!')
end

local function resume(...)
  if finished or not co or coroutine.status(co) ~= 'suspended' then
    return
  end
  local ok, err = coroutine.resume(co, ...)
  if not ok then
    finish('scenario crashed: ' .. tostring(err))
  end
end

--- Sleep ``ms`` while Neovim's main loop keeps running.
function H.sleep(ms)
  vim.defer_fn(function()
    resume()
  end, ms)
  coroutine.yield()
end

--- Poll ``pred`` until it returns a truthy value (returned) or ``timeout_ms`` passes (error).
function H.wait(what, pred, timeout_ms)
  report.step = 'waiting for ' .. what
  local deadline = now_ms() + (timeout_ms or P.step_timeout_ms)
  while true do
    local ok, value = pcall(pred)
    if ok and value then
      return value
    end
    if H.client and H.client:is_stopped() then
      error(
        ('the server exited while waiting for %s (see its stderr in the LSP log)'):format(what),
        0
      )
    end
    if now_ms() > deadline then
      error(
        ('timed out after %d ms waiting for %s%s'):format(
          timeout_ms or P.step_timeout_ms,
          what,
          ok and '' or (' (last check raised: ' .. tostring(value) .. ')')
        ),
        0
      )
    end
    H.sleep(20)
  end
end

--- Feed keys as typed by the user (processed by the main loop, mappings apply).
function H.input(keys)
  report.step = 'typing ' .. keys
  api.nvim_input(keys)
end

--- Record every request the client sends (the inline completion ones come from Neovim's own
--- vim.lsp.inline_completion) together with its answer.
local function record_requests(client)
  local request = client.request
  client.request = function(self, method, req_params, handler, bufnr)
    handler = handler or self.handlers[method] or vim.lsp.handlers[method]
    local rec = { method = method, params = req_params, sent_ms = now_ms() - started_ms }
    table.insert(report.requests, rec)
    local ok, id = request(self, method, req_params, function(err, result, ctx)
      rec.err = err
      rec.result = result
      rec.answered_ms = now_ms() - started_ms
      if handler then
        handler(err, result, ctx)
      end
      rec.done = true
    end, bufnr)
    rec.id = id
    return ok, id
  end
end

--- Record every $/cancelRequest the client sends (``cancelled_ms`` on the request's record)
--- and when each request ended for the client (``settled_ms``: answered, or its cancellation
--- acknowledged; Neovim calls no handler for a RequestCancelled answer).
local function record_cancels(client)
  api.nvim_create_autocmd('LspRequest', {
    callback = function(args)
      if args.data.client_id == client.id and args.data.request.type == 'complete' then
        for _, rec in ipairs(report.requests) do
          if rec.id == args.data.request_id then
            rec.settled_ms = now_ms() - started_ms
          end
        end
      end
    end,
  })
  local cancel_request = client.cancel_request
  client.cancel_request = function(self, id)
    for _, rec in ipairs(report.requests) do
      if rec.id == id then
        rec.cancelled_ms = now_ms() - started_ms
      end
    end
    return cancel_request(self, id)
  end
end

--- The recorded requests of ``method``.
function H.requests(method)
  return vim.tbl_filter(function(rec)
    return rec.method == method
  end, report.requests)
end

--- Send ``method`` to the server and wait for the answer.
function H.request(method, req_params)
  local answer
  H.client:request(method, req_params or vim.empty_dict(), function(err, result)
    answer = { err = err, result = result }
  end, H.buf)
  H.wait('the answer to ' .. method, function()
    return answer
  end)
  if answer.err then
    error(method .. ' failed: ' .. vim.inspect(answer.err), 0)
  end
  return answer.result
end

--- Open the file, start the real server on it, wait for LspAttach, enable native inline
--- completion for the buffer and map <Tab> to accept (the documented get() mapping).
function H.start()
  report.step = 'starting'
  vim.cmd.edit(vim.fn.fnameescape(P.file))
  H.buf = api.nvim_get_current_buf()
  vim.bo[H.buf].filetype = 'python'
  local attached = false
  api.nvim_create_autocmd('LspAttach', {
    buffer = H.buf,
    callback = function(args)
      if args.data.client_id == H.client_id then
        attached = true
      end
    end,
  })
  H.client_id = vim.lsp.start({
    name = 'qodeassist',
    cmd = P.cmd,
    root_dir = P.root,
    exit_timeout = 5000,
  }, { bufnr = H.buf })
  H.client = assert(vim.lsp.get_client_by_id(assert(H.client_id, 'vim.lsp.start returned nil')))
  record_requests(H.client)
  H.wait('LspAttach', function()
    return attached
  end)
  report.server_capabilities = H.client.server_capabilities
  report.offset_encoding = H.client.offset_encoding
  vim.lsp.inline_completion.enable(true, { bufnr = H.buf })
  if not vim.lsp.inline_completion.is_enabled({ bufnr = H.buf }) then
    error('vim.lsp.inline_completion.enable() did not enable the buffer', 0)
  end
  vim.keymap.set('i', '<Tab>', function()
    if not vim.lsp.inline_completion.get() then
      return '<Tab>'
    end
  end, { expr = true, buffer = H.buf, desc = 'Accept the current inline completion' })
end

--- Load the plugin (``params.plugin_dir``) and set it up with ``params.setup`` over the server
--- command; open the file and wait until the plugin's client attached to it. The ghost-text
--- namespace follows the renderer the plugin chose.
function H.start_plugin()
  report.step = 'setting up the plugin'
  vim.opt.runtimepath:prepend(P.plugin_dir)
  local qodeassist = require('qodeassist')
  qodeassist.setup(
    vim.tbl_deep_extend('force', { cmd = P.cmd, exit_timeout = 5000 }, P.setup or {})
  )
  report.chat_events = {}
  local on_event = vim.lsp.handlers['qodeassist/chat/event']
  vim.lsp.handlers['qodeassist/chat/event'] = function(err, params, ctx)
    table.insert(report.chat_events, params)
    return on_event(err, params, ctx)
  end
  local attached
  api.nvim_create_autocmd('LspAttach', {
    callback = function(args)
      local client = vim.lsp.get_client_by_id(args.data.client_id)
      if client and client.name == 'qodeassist' then
        attached = client
      end
    end,
  })
  report.step = 'opening the file'
  vim.cmd.edit(vim.fn.fnameescape(P.file))
  H.buf = api.nvim_get_current_buf()
  if vim.bo[H.buf].filetype ~= 'python' then
    vim.bo[H.buf].filetype = 'python'
  end
  H.wait('the plugin to start the server and attach', function()
    return attached
  end)
  H.client = attached
  H.client_id = attached.id
  record_requests(H.client)
  record_cancels(H.client)
  report.server_capabilities = H.client.server_capabilities
  report.offset_encoding = H.client.offset_encoding
  report.init_options = H.client.config.init_options
  report.inline_mode = require('qodeassist.inline').attached(H.buf)
  H.ghost_ns = report.inline_mode == 'extmark' and 'qodeassist.ghost'
    or 'nvim.lsp.inline_completion'
end

--- Replace vim.ui.select/vim.ui.input with scripted answers: ``answers.select`` is a list of
--- item texts (as format_item shows them; a prefix is enough) picked in turn,
--- ``answers.input`` a list of strings typed in turn. Every call lands in report.ui.
function H.fake_ui(answers)
  report.ui = {}
  local selects, inputs = answers.select or {}, answers.input or {}
  vim.ui.select = function(items, opts, on_choice)
    local format = opts.format_item or tostring
    local shown = vim.tbl_map(format, items)
    local wanted = table.remove(selects, 1)
    local index
    for i, text in ipairs(shown) do
      if wanted and vim.startswith(text, wanted) then
        index = i
        break
      end
    end
    -- What floating windows show meanwhile (a question's detail, see qodeassist.requests).
    local floats = {}
    for _, win in ipairs(api.nvim_list_wins()) do
      if api.nvim_win_get_config(win).relative ~= '' then
        table.insert(floats, api.nvim_buf_get_lines(api.nvim_win_get_buf(win), 0, -1, false))
      end
    end
    table.insert(report.ui, {
      kind = 'select',
      prompt = opts.prompt,
      items = shown,
      picked = index,
      ui_kind = opts.kind,
      floats = floats,
    })
    vim.schedule(function()
      on_choice(index and items[index] or nil, index)
    end)
  end
  vim.ui.input = function(opts, on_confirm)
    local text = table.remove(inputs, 1)
    table.insert(report.ui, { kind = 'input', prompt = opts.prompt, typed = text })
    vim.schedule(function()
      on_confirm(text)
    end)
  end
end

--- The lines of buffer ``buf``.
--- Wait until the server has loaded its configuration (`qodeassist/status` says ready).
function H.wait_ready()
  H.report.step = 'waiting for the server to be ready'
  while H.request('qodeassist/status').state ~= 'ready' do
    H.sleep(50)
  end
end

function H.lines(buf)
  return api.nvim_buf_get_lines(buf, 0, -1, false)
end

--- Wait until a ghost text is displayed; return the first extmark.
function H.wait_ghost(what)
  return H.wait(what or 'ghost text', function()
    local ghosts = H.ghosts()
    return ghosts[1] and ghosts[1].text ~= '' and ghosts[1]
  end)
end

--- Wait for the answer to Neovim's inline completion request at ``column`` of line 2.
function H.wait_answer(column)
  local what = ('the answer to the inline completion request at line 2, column %d'):format(column)
  return H.wait(what, function()
    for _, rec in ipairs(H.requests('textDocument/inlineCompletion')) do
      local at = rec.params.position
      if at.line == 1 and at.character == column and rec.done then
        return rec
      end
    end
  end)
end

--- Enter insert mode at the end of line 2 (``    return ``) and type ``params.typed``; wait
--- for the suggestion Neovim requests on its own and for its ghost text.
---
--- With ``params.pause_after_insert`` the text is typed once the request sent on InsertEnter
--- was answered (a user who enters insert mode and then types), otherwise at once.
-- After an accept: wait until the item's `qodeassist.accepted` command was answered, snapshot
-- the buffer, record the server's status (it counts acceptances) and leave insert mode.
function H.finish_acceptance()
  H.wait('workspace/executeCommand to be answered', function()
    local sent = H.requests('workspace/executeCommand')
    return sent[1] and sent[1].done
  end)
  H.snapshot('accepted')
  H.report.status = H.request('qodeassist/status')
  H.input('<Esc>')
  H.wait('normal mode', function()
    return vim.api.nvim_get_mode().mode == 'n'
  end)
end

function H.type_and_wait_for_suggestion()
  vim.api.nvim_win_set_cursor(0, { 2, 0 })
  if H.params.pause_after_insert then
    H.input('A')
    H.wait_answer(#H.line(2))
    H.snapshot('insert')
    H.input(H.params.typed)
  else
    H.input('A' .. H.params.typed)
  end
  local answer = H.wait_answer(#'    return ' + #H.params.typed)
  local items = answer.result and answer.result.items or answer.result
  if not items or #items == 0 then
    error(
      ('the server answered the automatic request after typing %q with no suggestion: %s'):format(
        H.params.typed,
        vim.inspect(answer.err or answer.result)
      ),
      0
    )
  end
  H.wait_ghost('the suggestion as ghost text')
  H.snapshot('shown')
end

--- Type, wait for the suggestion's ghost text, accept it with <Tab> and wait until it is in.
function H.accept_suggestion_with_tab()
  H.type_and_wait_for_suggestion()
  local typed_line = H.line(2)
  H.input('<Tab>')
  H.wait('the suggestion to be inserted', function()
    return H.line(2) ~= typed_line
  end)
end

--- The next-edit extmarks of the buffer: highlighted ranges and virtual lines (their text).
function H.next_edit_marks()
  local ns = api.nvim_get_namespaces()['qodeassist.next_edit']
  local out = {}
  for _, mark in ipairs(ns and api.nvim_buf_get_extmarks(H.buf, ns, 0, -1, { details = true }) or {}) do
    local details = mark[4]
    local lines = {}
    for _, line in ipairs(details.virt_lines or {}) do
      table.insert(lines, line[1][1])
    end
    table.insert(out, {
      row = mark[2],
      col = mark[3],
      end_row = details.end_row,
      end_col = details.end_col,
      hl_group = details.hl_group,
      virt_lines = lines,
    })
  end
  return out
end

--- Run ``scenario`` (a function) as the test; every outcome ends Neovim.
function H.run(scenario)
  -- Editor defaults must not rewrite what is typed.
  vim.cmd('filetype plugin indent off')
  vim.cmd('syntax off')
  vim.o.swapfile = false
  vim.o.shada = ''
  vim.defer_fn(function()
    finish(('the whole scenario exceeded %d ms (%s)'):format(P.deadline_ms, report.step))
  end, P.deadline_ms)
  co = coroutine.create(function()
    local ok, err = xpcall(scenario, debug.traceback, H)
    finish(not ok and err or nil)
  end)
  -- Start once the editor finished starting up (init files run before the main loop).
  vim.schedule(resume)
end

return H
