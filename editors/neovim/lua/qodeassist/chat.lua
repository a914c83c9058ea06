-- qodeassist.chat: the chat buffer. A markdown scratch buffer in a split shows one chat of the
-- server: each send adds "## You" / "## Assistant" sections, and the answer streams in from
-- `qodeassist/chat/event` notifications (text appended in place, thinking in a folded ````thinking
-- block, tool calls with their permission class, tool results as a summary line over a folded
-- ````result block, file edits as a diff block whose header says its status and keys, with a
-- warning line when the edit breaks the file: parseCheck "broken"). The edit keys (chat.keys:
-- apply/reject/undo) act on the edit block under the cursor through qodeassist/chat/editFile
-- (apply asks again first for an edit that breaks the file); later fileEdit events for the
-- same editId rewrite that block in place, also after its request ended. The winbar shows the agent and "⏳ streaming…" while a
-- request runs, then the token usage or the failure.
-- A message may start with /skill-name: the message prompt and :QodeAssistChat complete those
-- names from qodeassist/skills/list.
-- Requests used: qodeassist/chat/send, /cancel, /list, /get, /editFile, qodeassist/agents/list
-- and qodeassist/skills/list.
local api = vim.api
local client_mod = require('qodeassist.client')
local status = require('qodeassist.status')
local plan_mod = require('qodeassist.plan')

local M = {}

local THINKING_OPEN, RESULT_OPEN, FOLD_CLOSE = '````thinking', '````result', '````'
-- The edit blocks' start rows follow the buffer through extmarks in this namespace.
local EDIT_NS = api.nvim_create_namespace('qodeassist.chat.edits')
-- `input()` completion of the message prompt (vim.ui.input passes it on).
local SKILL_COMPLETION = "customlist,v:lua.require'qodeassist.chat'.complete_input"

---@class qodeassist.ChatSession
local chat = {
  buf = nil, ---@type integer?
  chat_id = nil, ---@type string?
  agent = nil, ---@type string? the chat's agent
  next_agent = nil, ---@type string? picked with :QodeAssistChatAgent, sent with the next message
  request_id = nil, ---@type string? the request whose events are shown
  awaiting = false, -- a send is on its way; its requestId is not known yet
  follow_any = false, -- a reopened busy chat: show whichever request streams
  cancel_pending = false,
  queued = {}, ---@type table[] events that arrived before the send's answer
  busy = false,
  block = nil, ---@type 'text'|'thinking'|nil the block deltas currently go to
  usage = nil, ---@type table?
  failure = nil, ---@type table? {category, message} of the last failed request
  edits = {}, ---@type table<string, {mark: integer, count: integer, ev: table}> by editId
  plan = nil, ---@type {mark: integer, count: integer}? the block of the plan's checklist
  mode = nil, ---@type 'plan'? the mode of the next send (:QodeAssistChatPlan)
}
M.session = chat

---@type qodeassist.Config
local cfg

function M.setup(config)
  cfg = config
end

-- ---------------------------------------------------------------------------- buffer writing

local function valid()
  return chat.buf ~= nil and api.nvim_buf_is_valid(chat.buf)
end

local function write(fn)
  if not valid() then
    return
  end
  local buf = assert(chat.buf)
  vim.bo[buf].modifiable = true
  local ok, err = pcall(fn, buf)
  vim.bo[buf].modifiable = false
  if not ok then
    error(err)
  end
end

--- Append ``text`` at the very end of the buffer (a delta: no line break is added).
local function append(text)
  write(function(buf)
    local last = api.nvim_buf_line_count(buf) - 1
    local line = api.nvim_buf_get_lines(buf, last, last + 1, false)[1]
    api.nvim_buf_set_text(buf, last, #line, last, #line, vim.split(text, '\n', { plain = true }))
  end)
  -- Follow the stream in windows whose cursor is on the last line.
  for _, win in ipairs(vim.fn.win_findbuf(chat.buf)) do
    local count = api.nvim_buf_line_count(chat.buf)
    if api.nvim_win_get_cursor(win)[1] >= count - #vim.split(text, '\n', { plain = true }) then
      api.nvim_win_set_cursor(win, { count, 0 })
    end
  end
end

--- Start ``lines`` on a fresh line after one blank line (or at the top of an empty buffer).
local function add_lines(lines)
  write(function(buf)
    local count = api.nvim_buf_line_count(buf)
    local last = api.nvim_buf_get_lines(buf, count - 1, count, false)[1]
    if count == 1 and last == '' then
      api.nvim_buf_set_lines(buf, 0, 1, false, lines)
      return
    end
    local prefix = last == '' and {} or { '' }
    if count > 1 and last == '' then
      local before = api.nvim_buf_get_lines(buf, count - 2, count - 1, false)[1]
      if before ~= '' then
        prefix = {}
      else
        count = count - 1 -- two blank lines already: write over the last one
      end
    end
    api.nvim_buf_set_lines(buf, count, -1, false, vim.list_extend(prefix, lines))
  end)
end

local function close_block()
  if chat.block == 'thinking' then
    write(function(buf)
      local count = api.nvim_buf_line_count(buf)
      local last = api.nvim_buf_get_lines(buf, count - 1, count, false)[1]
      local lines = last == '' and { FOLD_CLOSE, '' } or { last, FOLD_CLOSE, '' }
      api.nvim_buf_set_lines(buf, count - 1, count, false, lines)
    end)
  end
  chat.block = nil
end

--- Make ``kind`` the block that deltas go to.
local function open_block(kind)
  if chat.block == kind then
    return
  end
  close_block()
  if kind == 'thinking' then
    add_lines({ THINKING_OPEN, '' })
  else
    add_lines({ '' })
  end
  chat.block = kind
end

--- Start a "## You" / "## Assistant" section; text deltas go after its blank line.
local function section(title)
  close_block()
  add_lines({ title, '', '' })
  chat.block = 'text'
end

local function fenced(header, lang, body)
  local lines = { header, '```' .. lang }
  vim.list_extend(lines, vim.split(body, '\n', { plain = true }))
  table.insert(lines, '```')
  return lines
end

local function text_of(value)
  if type(value) == 'string' then
    return value
  end
  if type(value) == 'table' then
    -- Tool contents may be a list of {type = 'text', text = …} parts.
    local parts = {}
    for _, part in ipairs(value) do
      if type(part) == 'table' and part.text then
        table.insert(parts, part.text)
      end
    end
    if #parts > 0 then
      return table.concat(parts, '\n')
    end
    return vim.json.encode(value)
  end
  return value == nil and '' or tostring(value)
end

-- ---------------------------------------------------------------------------- status

--- The chat's state in a line (the winbar of its windows, and b:qodeassist_chat_status).
local function status_text()
  local parts = { 'QodeAssist chat' }
  local agent = chat.next_agent or chat.agent
  if agent then
    table.insert(parts, agent .. (chat.next_agent and ' (next message)' or ''))
  end
  if chat.busy then
    table.insert(parts, '⏳ streaming…')
  elseif chat.failure then
    table.insert(
      parts,
      ('✗ %s: %s'):format(chat.failure.category or 'error', chat.failure.message or '')
    )
  elseif chat.usage then
    table.insert(
      parts,
      ('%d in / %d out tokens'):format(chat.usage.inputTokens or 0, chat.usage.outputTokens or 0)
    )
  end
  return table.concat(parts, ' · ')
end

local function update_status()
  if not valid() then
    return
  end
  local text = status_text()
  vim.b[chat.buf].qodeassist_chat_status = text
  for _, win in ipairs(vim.fn.win_findbuf(chat.buf)) do
    vim.wo[win].winbar = (text:gsub('%%', '%%%%'))
  end
end

local function set_busy(busy, failure)
  chat.busy = busy
  if busy then
    chat.failure, chat.usage = nil, nil
  end
  chat.failure = failure
  status.on_chat(busy, failure and ('%s: %s'):format(failure.category, failure.message) or nil)
  update_status()
end

-- ---------------------------------------------------------------------------- events

local handlers = {}

function handlers.text(ev)
  open_block('text')
  append(ev.text or '')
end

function handlers.thinking(ev)
  open_block('thinking')
  append(ev.redacted and '(redacted)' or (ev.text or ''))
end

function handlers.toolCall(ev)
  close_block()
  local args = ev.arguments
  local body = type(args) == 'table' and vim.json.encode(args) or text_of(args)
  local id = ev.toolCallId or ev.id or ''
  local permission = (ev.permission and ev.permission ~= '') and (' · ' .. ev.permission) or ''
  add_lines(fenced(('**🔧 %s**%s `%s`'):format(ev.name or 'tool', permission, id), 'json', body))
end

--- The first non-blank line of ``text`` (the server's ``summary`` when it sent none).
local function first_line(text)
  for line in vim.gsplit(text, '\n', { plain = true }) do
    if vim.trim(line) ~= '' then
      return vim.trim(line)
    end
  end
  return ''
end

function handlers.toolResult(ev)
  close_block()
  local failed = ev.isError == true or ev.ok == false
  local content = text_of(ev.content)
  local summary = ev.summary or first_line(content)
  local header = ('**%s %s**: %s'):format(failed and '❌' or '✅', ev.name or 'tool', summary)
  local lines = { (header:gsub('\n', ' ')), RESULT_OPEN }
  vim.list_extend(lines, vim.split(content, '\n', { plain = true }))
  table.insert(lines, FOLD_CLOSE)
  add_lines(lines)
end

-- ---------------------------------------------------------------------------- file edits

--- The file of an edit event for humans: relative to the working directory when inside it.
local function edit_path(ev)
  local path = ev.filePath
  if ev.uri and ev.uri ~= '' then
    local ok, fname = pcall(vim.uri_to_fname, ev.uri)
    path = ok and fname or ev.uri
  end
  return path and vim.fn.fnamemodify(path, ':~:.') or '?'
end

--- The keys that act on an edit in ``status`` (what the header line offers).
local function edit_keys(status)
  local keys = cfg and cfg.chat.keys or {}
  local offered = {}
  local function offer(action)
    if keys[action] then
      table.insert(offered, ('%s %s'):format(keys[action], action))
    end
  end
  if status == 'pending' or status == 'failed' then
    offer('apply')
    offer('reject')
  elseif status == 'applied' then
    offer('undo')
  end
  return offered
end

--- Whether the edit of ``ev`` leaves its file unparsable (its parseCheck is "broken"): the
--- block says so and the apply key asks again.
function M.breaks_file(ev)
  return ev ~= nil and ev.parseCheck == 'broken'
end

--- The lines of an edit block: a header (file, status, message, keys), a warning when the edit
--- breaks the file, over a ```diff fence.
local function edit_lines(ev)
  local header = ('📝 **Edit** `%s` · %s'):format(edit_path(ev), ev.status or '?')
  local message = ev.message or ev.statusMessage
  if message and message ~= '' then
    header = header .. ' — ' .. message
  end
  local keys = edit_keys(ev.status)
  if #keys > 0 then
    header = header .. ' · ' .. table.concat(keys, ' · ')
  end
  local lines = { (header:gsub('\n', ' ')) }
  if M.breaks_file(ev) then
    local reason = ev.parseReason ~= nil and ev.parseReason ~= '' and ev.parseReason
      or 'it parses worse after the edit than before'
    table.insert(lines, ('> ⚠ **This edit breaks the file**: %s'):format((reason:gsub('\n', ' '))))
  end
  local diff = ev.diff or ''
  if diff ~= '' then
    table.insert(lines, '```diff')
    vim.list_extend(lines, vim.split((diff:gsub('\n$', '')), '\n', { plain = true }))
    table.insert(lines, '```')
  end
  return lines
end

--- The first row (0-based) of an edit block, or nil when its lines are gone.
local function edit_row(edit)
  local pos = api.nvim_buf_get_extmark_by_id(chat.buf, EDIT_NS, edit.mark, {})
  return pos[1]
end

--- Rewrite the block of a known edit with the fields of ``ev`` (status, diff, message).
local function update_edit(edit, ev)
  edit.ev = vim.tbl_extend('force', edit.ev, ev)
  local row = valid() and edit_row(edit)
  if not row then
    return
  end
  local lines = edit_lines(edit.ev)
  write(function(buf)
    api.nvim_buf_set_lines(buf, row, row + edit.count, false, lines)
  end)
  edit.count = #lines
  api.nvim_buf_set_extmark(chat.buf, EDIT_NS, row, 0, { id = edit.mark })
end

function handlers.fileEdit(ev)
  local id = ev.editId
  local known = id and chat.edits[id]
  if known then
    update_edit(known, ev)
    return
  end
  close_block()
  local lines = edit_lines(ev)
  add_lines(lines)
  if id and valid() then
    local first = api.nvim_buf_line_count(chat.buf) - #lines
    local mark = api.nvim_buf_set_extmark(chat.buf, EDIT_NS, first, 0, {})
    chat.edits[id] = { mark = mark, count = #lines, ev = vim.deepcopy(ev) }
  end
end

function handlers.agentChosen(ev)
  close_block()
  local reason = (ev.reason or ''):gsub('\n', ' ')
  add_lines({ ('_(agent: %s — %s)_'):format(ev.agent or '?', reason) })
end

---@param stored? boolean the plan of a reopened chat: its running step is not streaming here
function handlers.planUpdated(ev, stored)
  local lines = plan_mod.lines(ev)
  local block = chat.plan
  -- A plan the planning turn just proposed (or an invalid one) starts a new block.
  local fresh = (ev.state == 'proposed' and ev.requestId ~= '') or ev.state == 'invalid'
  local row = block and not fresh and valid() and edit_row(block)
  if row then
    write(function(buf)
      api.nvim_buf_set_lines(buf, row, row + block.count, false, lines)
    end)
    block.count = #lines
    api.nvim_buf_set_extmark(chat.buf, EDIT_NS, row, 0, { id = block.mark })
  else
    close_block()
    add_lines(lines)
    if valid() then
      local first = api.nvim_buf_line_count(chat.buf) - #lines
      local mark = api.nvim_buf_set_extmark(chat.buf, EDIT_NS, first, 0, {})
      chat.plan = { mark = mark, count = #lines }
    end
  end
  local n, step = plan_mod.running_step(ev)
  if step and not stored and step.requestId ~= chat.request_id then
    section(('## Step %d: %s'):format(n, step.title or ''))
    chat.request_id = step.requestId
    set_busy(true)
  end
end

function handlers.usage(ev)
  chat.usage = ev
  update_status()
end

function handlers.finished(ev)
  close_block()
  local reason = ev.stopReason
  if reason and reason ~= 'end_turn' and reason ~= 'stop' and reason ~= 'stop_sequence' then
    add_lines({ ('_(stopped: %s)_'):format(reason) })
  end
  chat.request_id = nil
  set_busy(false)
end

function handlers.failed(ev)
  close_block()
  local err = type(ev.error) == 'table' and ev.error
    or { category = 'provider', message = tostring(ev.error) }
  local message = (err.message or ''):gsub('\n', ' ')
  add_lines({ ('> ❌ **%s**: %s'):format(err.category or 'error', message) })
  chat.request_id = nil
  set_busy(false, err)
end

function handlers.cancelled()
  close_block()
  add_lines({ '_(cancelled)_' })
  chat.request_id = nil
  set_busy(false)
end

local function dispatch(ev)
  local handler = handlers[ev.kind]
  if handler then
    handler(ev)
  end
end

--- The `qodeassist/chat/event` notification handler.
function M.on_event(ev)
  if type(ev) ~= 'table' then
    return
  end
  if chat.awaiting and (chat.chat_id == nil or ev.chatId == chat.chat_id) then
    table.insert(chat.queued, ev)
    return
  end
  if ev.chatId ~= chat.chat_id then
    return
  end
  if ev.kind == 'fileEdit' and ev.editId and chat.edits[ev.editId] then
    -- A status change (apply, undo, …) may come after its request ended.
    handlers.fileEdit(ev)
    return
  end
  if chat.follow_any and chat.request_id == nil and chat.busy then
    chat.request_id = ev.requestId
    chat.follow_any = false
  end
  if ev.kind == 'planUpdated' then
    dispatch(ev) -- it may come from a step's request or none
    return
  end
  if chat.request_id == nil or ev.requestId ~= chat.request_id then
    return -- a request this buffer does not show (an earlier one)
  end
  dispatch(ev)
end

-- ---------------------------------------------------------------------------- window

function M.foldexpr(lnum)
  local line = vim.fn.getline(lnum)
  if line == THINKING_OPEN or line == RESULT_OPEN then
    return '>1'
  elseif line == FOLD_CLOSE then
    return '<1'
  end
  return '='
end

function M.foldtext()
  local count = vim.v.foldend - vim.v.foldstart - 1
  local what = vim.fn.getline(vim.v.foldstart) == RESULT_OPEN and '📄 result' or '💭 thinking'
  return ('%s (%d line%s)'):format(what, count, count == 1 and '' or 's')
end

local function setup_window(win)
  local wo = vim.wo[win]
  wo.wrap, wo.linebreak = true, true
  wo.number, wo.relativenumber = false, false
  wo.foldmethod = 'expr'
  wo.foldexpr = "v:lua.require'qodeassist.chat'.foldexpr(v:lnum)"
  wo.foldtext = "v:lua.require'qodeassist.chat'.foldtext()"
  wo.foldlevel = 0
  wo.foldenable = true
  update_status()
end

local function create_buffer()
  local buf = api.nvim_create_buf(false, true)
  chat.buf = buf
  api.nvim_buf_set_name(buf, 'qodeassist://chat')
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = 'markdown'
  vim.bo[buf].modifiable = false
  local function nmap(lhs, fn, desc)
    vim.keymap.set('n', lhs, fn, { buffer = buf, desc = desc, silent = true })
  end
  nmap('<CR>', function()
    local opts = { prompt = 'Ask QodeAssist: ', completion = SKILL_COMPLETION }
    vim.ui.input(opts, function(text)
      if text and vim.trim(text) ~= '' then
        M.send(text)
      end
    end)
  end, 'QodeAssist: send a message')
  nmap('<C-c>', M.cancel, 'QodeAssist: cancel the answer')
  for _, action in ipairs({ 'apply', 'reject', 'undo' }) do
    local lhs = cfg.chat.keys[action]
    if lhs then
      -- nowait: Neovim's global gr* LSP maps must not delay a buffer-local `gr`.
      vim.keymap.set('n', lhs, function()
        M.edit(action)
      end, {
        buffer = buf,
        nowait = true,
        silent = true,
        desc = ('QodeAssist: %s the file edit under the cursor'):format(action),
      })
    end
  end
  nmap('q', function()
    if #api.nvim_list_wins() > 1 then
      api.nvim_win_close(0, false)
    end
  end, 'QodeAssist: close the chat window')
  api.nvim_create_autocmd('BufWinEnter', {
    buffer = buf,
    callback = function()
      setup_window(api.nvim_get_current_win())
    end,
  })
  return buf
end

--- Show the chat buffer (create it, split as chat.split says) and return its window.
---@param focus? boolean
function M.open(focus)
  if not valid() then
    create_buffer()
  end
  local wins = vim.fn.win_findbuf(chat.buf)
  local win = wins[1]
  if not win then
    local current = api.nvim_get_current_win()
    local split, size = cfg.chat.split, cfg.chat.size
    if split == 'tab' then
      vim.cmd('tab split')
    elseif split == 'horizontal' then
      vim.cmd((size and tostring(size) or '') .. 'botright split')
    elseif split ~= 'current' then
      vim.cmd((size and tostring(size) or '') .. 'vertical botright split')
    end
    win = api.nvim_get_current_win()
    api.nvim_win_set_buf(win, chat.buf)
    setup_window(win)
    if focus == false then
      api.nvim_set_current_win(current)
    end
  elseif focus ~= false then
    api.nvim_set_current_win(win)
  end
  return win
end

--- Empty the buffer and forget the chat (the next send starts a new one).
local function reset(chat_id, agent)
  chat.chat_id, chat.agent = chat_id, agent
  chat.request_id, chat.awaiting, chat.follow_any, chat.cancel_pending = nil, false, false, false
  chat.queued, chat.block, chat.usage, chat.failure, chat.busy = {}, nil, nil, nil, false
  chat.edits, chat.plan = {}, nil
  if valid() then
    api.nvim_buf_clear_namespace(chat.buf, EDIT_NS, 0, -1)
    write(function(buf)
      api.nvim_buf_set_lines(buf, 0, -1, false, {})
    end)
    api.nvim_buf_set_name(
      chat.buf,
      chat_id and ('qodeassist://chat/' .. chat_id) or 'qodeassist://chat'
    )
  end
  status.on_chat(false)
  update_status()
end

-- ---------------------------------------------------------------------------- requests

local function need_client()
  local c = client_mod.any()
  if not c then
    vim.notify(
      'QodeAssist: the server is not running (open a file it attaches to)',
      vim.log.levels.ERROR
    )
  end
  return c
end

--- Send ``message`` in the current chat (a new one if there is none).
---@param message string
function M.send(message)
  local c = need_client()
  if not c then
    return
  end
  M.open(false)
  if chat.busy then
    -- The server refuses a message while the chat answers (it never cancels the answer).
    vim.notify(
      'QodeAssist: the chat is still answering; cancel it first (<C-c>), then send again',
      vim.log.levels.WARN
    )
    return
  end
  section('## You')
  append(message)
  section('## Assistant')
  chat.awaiting, chat.queued, chat.request_id, chat.follow_any = true, {}, nil, false
  set_busy(true)
  local params = { message = message, chatId = chat.chat_id, agent = chat.next_agent }
  params.mode, chat.mode = chat.mode, nil
  client_mod.request(c, 'qodeassist/chat/send', params, function(err, result)
    chat.awaiting = false
    local queued = chat.queued
    chat.queued = {}
    if err or type(result) ~= 'table' then
      handlers.failed({
        error = { category = 'validation', message = err and err.message or 'no answer' },
      })
      return
    end
    if chat.chat_id ~= result.chatId then
      chat.chat_id = result.chatId
      if valid() then
        pcall(api.nvim_buf_set_name, chat.buf, 'qodeassist://chat/' .. result.chatId)
      end
    end
    chat.request_id = result.requestId
    if chat.next_agent then
      chat.agent, chat.next_agent = chat.next_agent, nil
    end
    update_status()
    for _, ev in ipairs(queued) do
      M.on_event(ev)
    end
    if chat.cancel_pending then
      chat.cancel_pending = false
      M.cancel()
    end
  end)
end

--- Send ``message`` in plan mode: the model writes a plan of steps first (docs/plan.md).
---@param message string
function M.send_plan(message)
  chat.mode = 'plan'
  M.send(message)
end

--- Approve (run) or resume the current chat's plan; ``action`` 'cancel' stops it.
---@param action 'approve'|'resume'|'cancel'
function M.plan(action)
  local c = need_client()
  if not c or not chat.chat_id then
    vim.notify('QodeAssist: no chat with a plan', vim.log.levels.WARN)
    return
  end
  plan_mod.request(c, action, chat.chat_id)
end

--- Cancel the answer in flight.
function M.cancel()
  local c = need_client()
  if not c or not chat.busy then
    return
  end
  if chat.awaiting or not chat.chat_id then
    chat.cancel_pending = true
    return
  end
  client_mod.request(c, 'qodeassist/chat/cancel', { chatId = chat.chat_id }, function(err)
    if err then
      vim.notify('QodeAssist: cancel failed: ' .. err.message, vim.log.levels.WARN)
    end
  end)
end

--- The edit whose block holds the cursor of the chat window, else the last one above it.
local function edit_at_cursor()
  local win = vim.fn.win_findbuf(chat.buf)[1]
  if not win then
    return nil
  end
  local row = api.nvim_win_get_cursor(win)[1] - 1
  local best, best_row
  for id, edit in pairs(chat.edits) do
    local first = edit_row(edit)
    if first and first <= row and (best_row == nil or first > best_row) then
      best, best_row = id, first
    end
  end
  return best
end

--- Apply, reject or undo (``action``) the file edit under the cursor
--- (qodeassist/chat/editFile); ``edit_id`` names another one.
---@param action 'apply'|'reject'|'undo'
---@param edit_id? string
function M.edit(action, edit_id)
  local c = need_client()
  if not c or not valid() then
    return
  end
  edit_id = edit_id or edit_at_cursor()
  local edit = edit_id and chat.edits[edit_id]
  if not edit then
    vim.notify('QodeAssist: no file edit under the cursor', vim.log.levels.WARN)
    return
  end
  local params = { chatId = chat.chat_id, editId = edit_id, action = action }
  local function send()
    client_mod.request(c, 'qodeassist/chat/editFile', params, function(err, result)
      if err then
        vim.notify(
          ('QodeAssist: %s failed: %s'):format(action, err.message or vim.inspect(err)),
          vim.log.levels.WARN
        )
        return
      end
      if type(result) == 'table' and result.status then
        update_edit(edit, { status = result.status, message = result.message or '' })
      end
    end)
  end
  if action ~= 'apply' or not M.breaks_file(edit.ev) then
    send()
    return
  end
  -- An edit that breaks its file is applied only when the user says so a second time.
  local prompt = ('QodeAssist: this edit breaks %s. Apply it anyway?'):format(edit_path(edit.ev))
  vim.ui.select(
    { 'Cancel', 'Apply anyway' },
    { prompt = prompt, kind = 'qodeassist.confirm' },
    function(choice)
      if choice == 'Apply anyway' then
        send()
      end
    end
  )
end

--- Start a new chat in the chat buffer.
function M.new()
  M.open()
  reset(nil, nil)
end

--- Pick the agent of the next message (qodeassist/agents/list, pipeline chatAssistant);
--- ``name`` skips the picker.
---@param name? string
function M.pick_agent(name)
  if name and name ~= '' then
    chat.next_agent = name
    update_status()
    return
  end
  local c = need_client()
  if not c then
    return
  end
  client_mod.request(
    c,
    'qodeassist/agents/list',
    { pipeline = 'chatAssistant' },
    function(err, agents)
      if err or type(agents) ~= 'table' or #agents == 0 then
        vim.notify(
          'QodeAssist: no chat agents' .. (err and (': ' .. err.message) or ''),
          vim.log.levels.WARN
        )
        return
      end
      vim.ui.select(agents, {
        prompt = 'QodeAssist chat agent',
        kind = 'qodeassist.agent',
        format_item = function(agent)
          local where = table.concat(
            vim.tbl_filter(function(v)
              return type(v) == 'string' and v ~= ''
            end, { agent.provider, agent.model }),
            '/'
          )
          return agent.name .. (where ~= '' and (' — ' .. where) or '')
        end,
      }, function(agent)
        if agent then
          chat.next_agent = agent.name
          update_status()
        end
      end)
    end
  )
end

-- ---------------------------------------------------------------------------- saved chats

--- Render the saved messages of a qodeassist/chat/get answer.
local function render_messages(messages)
  for _, message in ipairs(messages or {}) do
    local blocks = message.blocks or {}
    local only_results = #blocks > 0
      and vim.iter(blocks):all(function(b)
        return b.type == 'tool_result'
      end)
    if message.role == 'user' and not only_results then
      section('## You')
    elseif message.role == 'assistant' then
      section('## Assistant')
    end
    for _, block in ipairs(blocks) do
      local kind = block.type
      if kind == 'text' then
        handlers.text({ text = block.text })
      elseif kind == 'thinking' then
        handlers.thinking({ text = block.thinking })
      elseif kind == 'redacted_thinking' then
        handlers.thinking({ redacted = true })
      elseif kind == 'tool_use' then
        handlers.toolCall({ id = block.id, name = block.name, arguments = block.input })
      elseif kind == 'tool_result' then
        handlers.toolResult({
          name = block.name or block.toolUseId,
          content = block.result,
          isError = block.isError,
        })
      elseif kind == 'file_edit' then
        handlers.fileEdit(block)
      elseif block.fileName then
        close_block()
        add_lines({ ('📎 %s'):format(block.fileName) })
      end
    end
  end
  close_block()
end

--- Show chat ``chat_id`` (qodeassist/chat/get) in the chat buffer.
---@param chat_id string
---@param done? fun()
function M.load(chat_id, done)
  local c = need_client()
  if not c then
    return
  end
  client_mod.request(c, 'qodeassist/chat/get', { chatId = chat_id }, function(err, saved)
    if err or type(saved) ~= 'table' then
      vim.notify(
        'QodeAssist: cannot open the chat: ' .. (err and err.message or '?'),
        vim.log.levels.ERROR
      )
      return
    end
    M.open()
    reset(saved.chatId or chat_id, saved.agent)
    if saved.title and saved.title ~= '' then
      local title = saved.title:gsub('\n', ' ')
      add_lines({ '# ' .. title })
    end
    render_messages(saved.messages)
    if type(saved.plan) == 'table' and saved.plan.steps then
      -- The stored plan (after a restart a step may still read `running`: approve resumes it).
      handlers.planUpdated(vim.tbl_extend('force', saved.plan, { requestId = '' }), true)
    end
    if saved.busy then
      -- A request of this chat is still running: show its events from now on.
      chat.follow_any = true
      section('## Assistant')
      set_busy(true)
    end
    update_status()
    if done then
      done()
    end
  end)
end

--- Pick a saved chat (qodeassist/chat/list) and open it.
function M.list()
  local c = need_client()
  if not c then
    return
  end
  client_mod.request(c, 'qodeassist/chat/list', vim.empty_dict(), function(err, chats)
    if err then
      vim.notify('QodeAssist: cannot list chats: ' .. err.message, vim.log.levels.ERROR)
      return
    end
    if type(chats) ~= 'table' or #chats == 0 then
      vim.notify('QodeAssist: no saved chats', vim.log.levels.INFO)
      return
    end
    vim.ui.select(chats, {
      prompt = 'QodeAssist chats',
      kind = 'qodeassist.chat',
      format_item = function(item)
        local title = (item.title and item.title ~= '') and item.title or item.chatId
        return ('%s — %s, %s'):format(
          title:gsub('\n', ' '),
          item.agent or '?',
          item.updatedAt or ''
        )
      end,
    }, function(item)
      if item then
        M.load(item.chatId)
      end
    end)
  end)
end

--- :QodeAssistChat [message]
-- ---------------------------------------------------------------------------- skill names

local skill_cache = {} ---@type table[] the last qodeassist/skills/list answer

--- The skills of the server (asked again each time, the cache answers when it is slow).
---@return table[]
function M.skills()
  local c = client_mod.any()
  if c then
    local result = client_mod.request_sync(c, 'qodeassist/skills/list', vim.empty_dict(), 1000)
    if type(result) == 'table' then
      skill_cache = result
    end
  end
  return skill_cache
end

--- `/name` completions of ``arglead`` when it is the first word of a message.
---@param arglead string the word being completed
---@param before string the text of the message before that word
---@return string[]
function M.complete_skill(arglead, before)
  if vim.trim(before) ~= '' or arglead:sub(1, 1) ~= '/' then
    return {}
  end
  local wanted = arglead:sub(2)
  local found = {}
  for _, skill in ipairs(M.skills()) do
    if type(skill.name) == 'string' and vim.startswith(skill.name, wanted) then
      table.insert(found, '/' .. skill.name)
    end
  end
  table.sort(found)
  return found
end

--- `input()` customlist completion of the message prompt.
function M.complete_input(arglead, line, _)
  return M.complete_skill(arglead, line:sub(1, #line - #arglead))
end

--- `-complete` of :QodeAssistChat and :QodeAssistChatSend: the message is the arguments.
function M.complete_command(arglead, cmdline, _)
  local args = cmdline:gsub('^%s*%S+%s*', '', 1)
  return M.complete_skill(arglead, args:sub(1, #args - #arglead))
end

function M.command(opts)
  M.open()
  if opts.args and vim.trim(opts.args) ~= '' then
    M.send(opts.args)
  end
end

--- The server stopped: whatever streamed is over.
function M.on_server_exit()
  if chat.busy then
    handlers.failed({ error = { category = 'network', message = 'the server stopped' } })
  end
end

return M
