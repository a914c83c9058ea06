-- qodeassist.next_edit: next-edit suggestions (the related change after an edit).
--
-- After an edit pause (TextChanged/TextChangedI, debounced) the plugin asks the server with
-- textDocument/copilotInlineEdit, cancelling the previous request; typing again clears what is
-- shown. The first edit of the answer is shown when it is for the buffer's current version: the
-- replaced range highlighted (QodeAssistNextEditDelete) and the lines as they would read after
-- the edit as virtual lines below it (QodeAssistNextEditAdd), and the server is told with
-- textDocument/didShowInlineEdit. jump() moves the cursor to the edit, accept() applies it (one
-- undo step) and runs its command (the server counts the acceptance), dismiss() hides it.
-- after_accept() (called by qodeassist.inline once a whole inline completion went in) asks at
-- once, without the edit-pause debounce: the accepted text is the edit the next one follows.
-- BufEnter sends textDocument/didFocus (the server's "recently viewed" files).
local api = vim.api
local client_mod = require('qodeassist.client')

local M = {}

M.ns = api.nvim_create_namespace('qodeassist.next_edit')
local METHOD = 'textDocument/copilotInlineEdit'

---@class qodeassist.NextEdit
---@field client_id integer
---@field edit table           the LSP item: {text, textDocument, range, command}
---@field row integer          0-based start row of the replaced range
---@field col integer          0-based start byte column
---@field end_row integer
---@field end_col integer

---@type table<integer, {timer?: uv.uv_timer_t, request?: {client_id: integer, id: integer}, shown?: qodeassist.NextEdit, augroup: integer, asked_tick?: integer}>
local buffers = {}

local cfg ---@type table

local to_pos = require('qodeassist.positions').to_pos

local function version_of(bufnr)
  return vim.lsp.util.buf_versions[bufnr] or 0
end

--- Hide the shown next edit of ``bufnr`` (if any).
function M.clear(bufnr)
  bufnr = bufnr == 0 and api.nvim_get_current_buf() or bufnr
  local state = buffers[bufnr]
  if state then
    state.shown = nil
  end
  if api.nvim_buf_is_valid(bufnr) then
    api.nvim_buf_clear_namespace(bufnr, M.ns, 0, -1)
  end
end

local function cancel(state)
  if state.request then
    local client = vim.lsp.get_client_by_id(state.request.client_id)
    if client then
      client_mod.cancel(client, state.request.id)
    end
    state.request = nil
  end
end

--- The buffer's lines ``row``..``end_row`` as they read after ``text`` replaces the range.
local function after_lines(bufnr, s)
  local lines = api.nvim_buf_get_lines(bufnr, s.row, s.end_row + 1, false)
  local first, last = lines[1] or '', lines[#lines] or ''
  local joined = first:sub(1, s.col) .. s.edit.text .. last:sub(s.end_col + 1)
  return vim.split(joined, '\n', { plain = true })
end

local function show(bufnr, client, edit)
  local state = buffers[bufnr]
  if not state or not api.nvim_buf_is_valid(bufnr) then
    return
  end
  if edit.textDocument and edit.textDocument.version ~= version_of(bufnr) then
    return -- computed on another version of the buffer: never shown
  end
  M.clear(bufnr)
  local encoding = client.offset_encoding or 'utf-16'
  local row, col = to_pos(bufnr, edit.range.start, encoding)
  local end_row, end_col = to_pos(bufnr, edit.range['end'], encoding)
  local shown = {
    client_id = client.id,
    edit = edit,
    row = row,
    col = col,
    end_row = end_row,
    end_col = end_col,
  }
  if row ~= end_row or col ~= end_col then
    api.nvim_buf_set_extmark(bufnr, M.ns, row, col, {
      end_row = end_row,
      end_col = end_col,
      hl_group = cfg.next_edit.delete_hl_group,
    })
  end
  local virt_lines = {}
  for _, line in ipairs(after_lines(bufnr, shown)) do
    table.insert(virt_lines, { { line, cfg.next_edit.add_hl_group } })
  end
  api.nvim_buf_set_extmark(bufnr, M.ns, end_row, 0, { virt_lines = virt_lines })
  state.shown = shown
  client_mod.notify(client, 'textDocument/didShowInlineEdit', { item = edit })
end

--- Ask the server for the next edit at the cursor of ``bufnr`` now.
function M.request(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and api.nvim_get_current_buf() or bufnr
  local state = buffers[bufnr]
  local client = client_mod.get(bufnr)
  if not state or not client then
    return
  end
  cancel(state)
  local win = vim.fn.bufwinid(bufnr)
  if win == -1 then
    return
  end
  local params = vim.lsp.util.make_position_params(win, client.offset_encoding or 'utf-16')
  local asked = version_of(bufnr)
  params.textDocument.version = asked
  state.asked_tick = api.nvim_buf_get_changedtick(bufnr)
  params.context = { triggerKind = 2 }
  local id
  id = client_mod.request(client, METHOD, params, function(err, result)
    if state.request and state.request.id == id then
      state.request = nil
    end
    if err or not result or not result.edits or not result.edits[1] then
      return
    end
    if version_of(bufnr) ~= asked then
      return
    end
    show(bufnr, client, result.edits[1])
  end, bufnr)
  if id then
    state.request = { client_id = client.id, id = id }
  end
end

local function on_change(bufnr)
  local state = buffers[bufnr]
  if not state or state.asked_tick == api.nvim_buf_get_changedtick(bufnr) then
    return -- no change since the last request (after_accept asked before TextChangedI came)
  end
  M.clear(bufnr)
  cancel(state)
  if state.timer then
    state.timer:stop()
  else
    state.timer = vim.uv.new_timer()
  end
  state.timer:start(
    cfg.next_edit.debounce_ms,
    0,
    vim.schedule_wrap(function()
      if buffers[bufnr] then
        M.request(bufnr)
      end
    end)
  )
end

--- ``bufnr`` (0 or nil: the current buffer) and its shown next edit (nil when none).
---@return integer bufnr, qodeassist.NextEdit? shown
local function shown_in(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and api.nvim_get_current_buf() or bufnr
  local state = buffers[bufnr]
  return bufnr, state and state.shown
end

--- Whether a next edit is shown in ``bufnr``.
function M.visible(bufnr)
  local _, shown = shown_in(bufnr)
  return shown ~= nil
end

--- Move the cursor to the start of the shown next edit; false when there is none.
function M.jump(bufnr)
  local _, shown = shown_in(bufnr)
  if not shown then
    return false
  end
  api.nvim_win_set_cursor(0, { shown.row + 1, shown.col })
  return true
end

--- Apply the shown next edit and run its command; false when there is none.
function M.accept(bufnr)
  local shown
  bufnr, shown = shown_in(bufnr)
  if not shown then
    return false
  end
  local client = vim.lsp.get_client_by_id(shown.client_id)
  M.clear(bufnr)
  if not client or shown.edit.textDocument.version ~= version_of(bufnr) then
    return false
  end
  local edit = shown.edit
  vim.lsp.util.apply_text_edits(
    { { range = edit.range, newText = edit.text } },
    bufnr,
    client.offset_encoding or 'utf-16'
  )
  -- The cursor goes to the end of the inserted text.
  local lines = vim.split(edit.text, '\n', { plain = true })
  local end_row = shown.row + #lines - 1
  local end_col = (#lines == 1 and shown.col or 0) + #lines[#lines]
  pcall(api.nvim_win_set_cursor, 0, { end_row + 1, end_col })
  if edit.command then
    client_mod.execute(client, edit.command, bufnr)
  end
  return true
end

--- Jump to the shown edit, or accept it when the cursor is already on it (copilot-lsp's Tab).
function M.jump_or_accept(bufnr)
  local shown
  bufnr, shown = shown_in(bufnr)
  if not shown then
    return false
  end
  if api.nvim_win_get_cursor(0)[1] - 1 ~= shown.row then
    return M.jump(bufnr)
  end
  return M.accept(bufnr)
end

--- An inline completion was just accepted whole in ``bufnr``: ask for the next edit now.
function M.after_accept(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and api.nvim_get_current_buf() or bufnr
  local state = buffers[bufnr]
  if not state then
    return -- next edits are off (or the buffer is not followed)
  end
  if state.timer then
    state.timer:stop()
  end
  M.clear(bufnr)
  M.request(bufnr)
end

local function map(bufnr, lhs, fn, desc)
  if not lhs then
    return
  end
  -- Not an <expr> mapping: accepting changes the buffer, which expr mappings may not.
  local keys = api.nvim_replace_termcodes(lhs, true, false, true)
  vim.keymap.set('n', lhs, function()
    if not fn(bufnr) then
      api.nvim_feedkeys(keys, 'n', false)
    end
  end, { buffer = bufnr, desc = desc })
end

--- Follow ``bufnr``'s edits and map the next-edit keys (``opts`` is the plugin config).
function M.attach(bufnr, opts)
  cfg = opts
  if not cfg.next_edit.enabled or buffers[bufnr] then
    return
  end
  local group = api.nvim_create_augroup('qodeassist.next_edit.' .. bufnr, { clear = true })
  buffers[bufnr] = { augroup = group }
  api.nvim_create_autocmd({ 'TextChanged', 'TextChangedI' }, {
    group = group,
    buffer = bufnr,
    callback = function()
      on_change(bufnr)
    end,
  })
  api.nvim_create_autocmd('BufEnter', {
    group = group,
    buffer = bufnr,
    callback = function()
      local client = client_mod.get(bufnr)
      if client then
        local document = { uri = vim.uri_from_bufnr(bufnr) }
        client_mod.notify(client, 'textDocument/didFocus', { textDocument = document })
      end
    end,
  })
  local keys = cfg.next_edit.keymaps
  map(bufnr, keys.jump_or_accept, M.jump_or_accept, 'QodeAssist: jump to / accept the next edit')
  map(bufnr, keys.dismiss, function(b)
    local had = M.visible(b)
    M.clear(b)
    return had
  end, 'QodeAssist: dismiss the next edit')
end

--- Stop following ``bufnr``.
function M.detach(bufnr)
  local state = buffers[bufnr]
  if not state then
    return
  end
  cancel(state)
  if state.timer then
    state.timer:stop()
    state.timer:close()
  end
  pcall(api.nvim_del_augroup_by_id, state.augroup)
  M.clear(bufnr)
  buffers[bufnr] = nil
end

return M
