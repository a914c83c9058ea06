-- qodeassist.ghost: the plugin's own inline-completion renderer (Neovim 0.10/0.11, or forced
-- with inline.mode = 'extmark'). It sends textDocument/inlineCompletion itself, debounced on
-- InsertEnter/TextChangedI/CursorMovedI, cancelling the previous request ($/cancelRequest);
-- shows the first suggestion as ghost text (a `virt_text` overlay at the cursor for the first
-- line, `virt_lines` for the rest) in the `qodeassist.ghost` namespace; narrows it while the
-- user types its next characters (no new request); accepts it whole, by word or by line
-- (replacing the item's `range`, then running its `command` once the whole text is in); and
-- dismisses it on <Esc>/InsertLeave or on request.
local api = vim.api
local client_mod = require('qodeassist.client')
local positions = require('qodeassist.positions')

local M = {}

M.ns = api.nvim_create_namespace('qodeassist.ghost')
-- Invisible marks that follow the suggestion's anchor through edits.
local track_ns = api.nvim_create_namespace('qodeassist.ghost.anchor')

local TRIGGER_INVOKED, TRIGGER_AUTOMATIC = 1, 2

---@class qodeassist.Suggestion
---@field client_id integer
---@field anchor integer     extmark id (track_ns) where the suggestion starts
---@field text string        what to insert at the anchor
---@field overlap string     text right of the anchor that the item's range replaces
---@field command? lsp.Command

---@class qodeassist.GhostBuffer
---@field timer? uv.uv_timer_t
---@field request? {client_id: integer, id: integer}
---@field suggestion? qodeassist.Suggestion
---@field augroup integer

---@type table<integer, qodeassist.GhostBuffer>
local buffers = {}

---@type qodeassist.Config
local cfg

local to_pos = positions.to_pos

local function before(r1, c1, r2, c2)
  return r1 < r2 or (r1 == r2 and c1 < c2)
end

--- Text of ``bufnr`` between two positions ('' if the end is not after the start).
local function text_between(bufnr, r1, c1, r2, c2)
  if not before(r1, c1, r2, c2) then
    return ''
  end
  local ok, lines = pcall(api.nvim_buf_get_text, bufnr, r1, c1, r2, c2, {})
  return ok and table.concat(lines, '\n') or nil
end

--- The window showing ``bufnr`` (the current one if it does).
local function window_of(bufnr)
  local win = api.nvim_get_current_win()
  if api.nvim_win_get_buf(win) == bufnr then
    return win
  end
  local other = vim.fn.bufwinid(bufnr)
  return other ~= -1 and other or nil
end

local function cursor_of(bufnr)
  local win = window_of(bufnr)
  if not win then
    return nil
  end
  local pos = api.nvim_win_get_cursor(win)
  return pos[1] - 1, pos[2], win
end

local function in_insert_mode()
  return api.nvim_get_mode().mode:sub(1, 1) == 'i'
end

local function expand_tabs(text)
  if not text:find('\t', 1, true) then
    return text
  end
  return (text:gsub('\t', string.rep(' ', vim.bo.tabstop)))
end

-- ---------------------------------------------------------------------------- state & display

--- The suggestion's state at the cursor: what is left to insert there and the cursor, or nil
--- when the buffer no longer continues it (the user typed something else or moved away).
---@return string? remaining, integer row, integer col, integer? win
local function current(bufnr)
  local st = buffers[bufnr]
  local s = st and st.suggestion
  if not s then
    return nil, 0, 0
  end
  local mark = api.nvim_buf_get_extmark_by_id(bufnr, track_ns, s.anchor, {})
  local row, col, win = cursor_of(bufnr)
  if not mark[1] or not row then
    return nil, 0, 0
  end
  local typed = text_between(bufnr, mark[1], mark[2], row, col)
  if row < mark[1] or (row == mark[1] and col < mark[2]) or not typed then
    return nil, row, col
  end
  if s.text:sub(1, #typed) ~= typed then
    return nil, row, col
  end
  local rest_of_line = api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1]:sub(col + 1)
  if rest_of_line:sub(1, #s.overlap) ~= s.overlap then
    return nil, row, col
  end
  return s.text:sub(#typed + 1), row, col, win
end

local function hide(bufnr)
  api.nvim_buf_clear_namespace(bufnr, M.ns, 0, -1)
end

--- Forget the suggestion of ``bufnr`` and hide it.
local function clear(bufnr)
  local st = buffers[bufnr]
  if st and st.suggestion then
    pcall(api.nvim_buf_del_extmark, bufnr, track_ns, st.suggestion.anchor)
    st.suggestion = nil
  end
  hide(bufnr)
end

--- Draw ``remaining`` at the cursor: the first line over the text right of the cursor (which
--- is repeated behind it when it stays on this line), the other lines below.
local function render(bufnr, remaining, row, col)
  hide(bufnr)
  local s = buffers[bufnr].suggestion
  local hl = cfg.inline.hl_group
  local lines = vim.split(remaining, '\n', { plain = true })
  local rest_of_line = api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1]:sub(col + 1)
  local after = rest_of_line:sub(#s.overlap + 1)
  local first = { { expand_tabs(lines[1]), hl } }
  local virt_lines = {}
  for i = 2, #lines do
    table.insert(virt_lines, { { expand_tabs(lines[i]), hl } })
  end
  local tail = #virt_lines > 0 and virt_lines[#virt_lines] or first
  if after ~= '' then
    table.insert(tail, { expand_tabs(after), 'Normal' })
  end
  -- The overlay must hide what it moves or replaces on this line.
  local shown = 0
  for _, chunk in ipairs(first) do
    shown = shown + vim.fn.strdisplaywidth(chunk[1])
  end
  local covered = vim.fn.strdisplaywidth(expand_tabs(rest_of_line))
  if covered > shown then
    table.insert(first, { string.rep(' ', covered - shown), 'Normal' })
  end
  api.nvim_buf_set_extmark(bufnr, M.ns, row, col, {
    virt_text = first,
    virt_text_pos = 'overlay',
    virt_lines = #virt_lines > 0 and virt_lines or nil,
    hl_mode = 'combine',
    priority = 200,
  })
end

-- ---------------------------------------------------------------------------- requests

local function stop_timer(st)
  if st.timer then
    st.timer:stop()
  end
end

--- Cancel the request in flight for ``bufnr`` and the pending debounce.
local function cancel(bufnr)
  local st = buffers[bufnr]
  if not st then
    return
  end
  stop_timer(st)
  local req = st.request
  st.request = nil
  if req then
    local c = vim.lsp.get_client_by_id(req.client_id)
    if c then
      client_mod.cancel(c, req.id)
    end
  end
end

--- Turn the first item of an answer into the buffer's suggestion, anchored at the cursor.
local function accept_answer(bufnr, c, item)
  local row, col = cursor_of(bufnr)
  if not row then
    return
  end
  local text = item.insertText
  if type(text) == 'table' then -- a StringValue snippet: show its plain text
    text = text.value or ''
  end
  if type(text) ~= 'string' or text == '' then
    return
  end
  local overlap = ''
  if item.range then
    local sr, sc = to_pos(bufnr, item.range.start, c.offset_encoding)
    local er, ec = to_pos(bufnr, item.range['end'], c.offset_encoding)
    -- The item may start before the cursor (text the user already typed): skip that part.
    local typed = text_between(bufnr, sr, sc, row, col)
    if not typed or text:sub(1, #typed) ~= typed then
      return
    end
    text = text:sub(#typed + 1)
    if er == row and ec > col then
      overlap = text_between(bufnr, row, col, er, ec) or ''
    end
  end
  local st = buffers[bufnr]
  clear(bufnr)
  st.suggestion = {
    client_id = c.id,
    anchor = api.nvim_buf_set_extmark(bufnr, track_ns, row, col, { right_gravity = false }),
    text = text,
    overlap = overlap,
    command = item.command,
  }
  local remaining, r, cl = current(bufnr)
  if remaining and remaining ~= '' then
    render(bufnr, remaining, r, cl)
  end
end

--- Ask the server for suggestions at the cursor now.
---@param bufnr integer
---@param kind integer triggerKind
function M.request(bufnr, kind)
  local st = buffers[bufnr]
  local c = client_mod.get(bufnr)
  local row, col, win = cursor_of(bufnr)
  if not st or not c or not row then
    return
  end
  cancel(bufnr)
  local tick = api.nvim_buf_get_changedtick(bufnr)
  local params = {
    textDocument = vim.lsp.util.make_text_document_params(bufnr),
    position = vim.lsp.util.make_position_params(win, c.offset_encoding).position,
    context = { triggerKind = kind },
  }
  local id
  id = client_mod.request(c, 'textDocument/inlineCompletion', params, function(err, result)
    if not st.request or st.request.id ~= id then
      return -- cancelled or superseded
    end
    st.request = nil
    if err or type(result) ~= 'table' or not in_insert_mode() then
      return
    end
    local r, cl = cursor_of(bufnr)
    if api.nvim_buf_get_changedtick(bufnr) ~= tick or r ~= row or cl ~= col then
      return
    end
    local items = result.items or result
    if items[1] then
      accept_answer(bufnr, c, items[1])
    end
  end, bufnr)
  if id then
    st.request = { client_id = c.id, id = id }
  end
end

--- Ask again after ``inline.debounce_ms`` unless something else happens first.
local function schedule(bufnr)
  local st = buffers[bufnr]
  st.timer = st.timer or assert(vim.uv.new_timer())
  st.timer:stop()
  st.timer:start(
    cfg.inline.debounce_ms,
    0,
    vim.schedule_wrap(function()
      if buffers[bufnr] == st and in_insert_mode() and api.nvim_get_current_buf() == bufnr then
        M.request(bufnr, TRIGGER_AUTOMATIC)
      end
    end)
  )
end

--- TextChangedI/CursorMovedI/InsertEnter: keep (narrowed) or drop the suggestion, and ask
--- again when there is none.
local function on_change(bufnr)
  local st = buffers[bufnr]
  if not st then
    return
  end
  if vim.fn.pumvisible() == 1 then
    cancel(bufnr)
    clear(bufnr)
    return
  end
  local remaining, row, col = current(bufnr)
  if remaining and remaining ~= '' then
    render(bufnr, remaining, row, col)
    return
  end
  clear(bufnr)
  cancel(bufnr)
  schedule(bufnr)
end

-- ---------------------------------------------------------------------------- accepting

--- The part of ``text`` a partial accept takes. 'word': leading blanks plus a run of word
--- characters or of punctuation (at a line break: the break and the next line's indentation);
--- 'line': the rest of the line including its line break; anything else: all of it.
---@param text string
---@param how? 'all'|'word'|'line'
---@return string
function M.piece(text, how)
  if how == 'word' then
    return text:match('^\n[ \t]*')
      or text:match('^[ \t]*[%w_]+')
      or text:match('^[ \t]*[^%w_%s]+')
      or text
  elseif how == 'line' then
    return text:match('^[^\n]*\n') or text
  end
  return text
end

--- Accept the suggestion of ``bufnr``: ``how`` is 'all', 'word' or 'line'. Returns false when
--- there is nothing to accept.
---@param bufnr integer
---@param how? 'all'|'word'|'line'
---@return boolean
function M.accept(bufnr, how)
  local st = buffers[bufnr]
  local remaining, row, col, win = current(bufnr)
  if not st or not remaining or remaining == '' or not win then
    return false
  end
  local s = assert(st.suggestion)
  local piece = M.piece(remaining, how)
  local whole = piece == remaining
  cancel(bufnr)
  local lines = vim.split(piece, '\n', { plain = true })
  -- The replaced range goes only with the last piece: a partial accept inserts.
  local end_col = whole and col + #s.overlap or col
  api.nvim_buf_set_text(bufnr, row, col, row, end_col, lines)
  api.nvim_win_set_cursor(win, { row + #lines, (#lines == 1 and col or 0) + #lines[#lines] })
  if whole then
    clear(bufnr)
    local c = vim.lsp.get_client_by_id(s.client_id)
    if c and s.command then
      client_mod.execute(c, s.command, bufnr)
    end
  else
    local rest, r, cl = current(bufnr)
    if rest and rest ~= '' then
      render(bufnr, rest, r, cl)
    end
  end
  return true
end

--- Hide the suggestion and cancel what is pending; false when nothing was shown.
function M.dismiss(bufnr)
  local shown = buffers[bufnr] and buffers[bufnr].suggestion ~= nil
  cancel(bufnr)
  clear(bufnr)
  return shown
end

--- Whether a suggestion is shown in ``bufnr``.
function M.visible(bufnr)
  local remaining = current(bufnr)
  return remaining ~= nil and remaining ~= ''
end

--- Ask for suggestions now (triggerKind Invoked).
function M.trigger(bufnr)
  M.request(bufnr, TRIGGER_INVOKED)
end

-- ---------------------------------------------------------------------------- attaching

---@param bufnr integer
---@param config qodeassist.Config
function M.attach(bufnr, config)
  cfg = config
  if buffers[bufnr] then
    return
  end
  local group = api.nvim_create_augroup('qodeassist.ghost.' .. bufnr, { clear = true })
  buffers[bufnr] = { augroup = group }
  api.nvim_create_autocmd({ 'InsertEnter', 'TextChangedI', 'CursorMovedI' }, {
    group = group,
    buffer = bufnr,
    callback = function()
      on_change(bufnr)
    end,
  })
  api.nvim_create_autocmd({ 'InsertLeave', 'BufLeave' }, {
    group = group,
    buffer = bufnr,
    callback = function()
      M.dismiss(bufnr)
    end,
  })
  api.nvim_create_autocmd({ 'BufUnload', 'BufWipeout' }, {
    group = group,
    buffer = bufnr,
    callback = function()
      M.detach(bufnr)
    end,
  })
end

function M.detach(bufnr)
  local st = buffers[bufnr]
  if not st then
    return
  end
  cancel(bufnr)
  if api.nvim_buf_is_valid(bufnr) then
    clear(bufnr)
  end
  if st.timer and not st.timer:is_closing() then
    st.timer:close()
  end
  pcall(api.nvim_del_augroup_by_id, st.augroup)
  buffers[bufnr] = nil
end

function M.attached(bufnr)
  return buffers[bufnr] ~= nil
end

return M
