-- qodeassist.inline: inline completion for the buffers the server attaches to. On Neovim 0.12+
-- it enables the native vim.lsp.inline_completion (accept = get(); next word/line through
-- get{on_accept}); before 0.12, or with inline.mode = 'extmark', it uses qodeassist.ghost.
-- Sets the buffer-local insert-mode keymaps of inline.keymaps. Accepting a whole suggestion asks
-- for the next edit at once (qodeassist.next_edit.after_accept). Tells the server where the caret
-- rests (qodeassist/didMoveCursor), so that it can warm the model's prompt cache there.
local api = vim.api
local ghost = require('qodeassist.ghost')

local M = {}

---@type qodeassist.Config
local cfg

local NATIVE_NS = 'nvim.lsp.inline_completion'

---@type table<integer, 'native'|'extmark'>
local attached = {}

--- Which renderer the configuration asks for on this Neovim: 'native', 'extmark' or 'off'.
---@param config? qodeassist.Config
---@return 'native'|'extmark'|'off'
function M.mode(config)
  config = config or cfg or require('qodeassist.config').values
  if not config.inline.enabled then
    return 'off'
  end
  local native = vim.lsp.inline_completion ~= nil and vim.lsp.inline_completion.enable ~= nil
  if config.inline.mode == 'extmark' or not native then
    return 'extmark'
  end
  return 'native'
end

local function resolve(bufnr)
  return (bufnr == nil or bufnr == 0) and api.nvim_get_current_buf() or bufnr
end

-- ---------------------------------------------------------------------------- native helpers

local function text_between(bufnr, r1, c1, r2, c2)
  if r2 < r1 or (r2 == r1 and c2 <= c1) then
    return ''
  end
  return table.concat(api.nvim_buf_get_text(bufnr, r1, c1, r2, c2, {}), '\n')
end

local function before(r1, c1, r2, c2)
  return r1 < r2 or (r1 == r2 and c1 < c2)
end

--- Accept all of the native suggestion, or insert its next word/line at the cursor (the native
--- client then asks again and the server continues from what was typed). Neovim keeps showing
--- an item after the buffer moved on (its range then lies behind the cursor): an item the text
--- typed since no longer continues is not accepted (false: the key acts as typed), and the
--- rest of one it still continues goes in at the cursor, never back at the item's old range.
local function native_accept(bufnr, how)
  local stale = false
  local accepted = vim.lsp.inline_completion.get({
    bufnr = bufnr,
    on_accept = function(item)
      local text = item.insert_text
      local win = vim.fn.bufwinid(bufnr)
      if type(text) ~= 'string' or win == -1 then
        return type(text) ~= 'string' and item or nil
      end
      local cursor = api.nvim_win_get_cursor(win)
      local row, col = cursor[1] - 1, cursor[2]
      local typed, reaches_cursor = '', true
      if item.range then
        local sr, sc, er, ec = item.range:to_extmark()
        typed = text_between(bufnr, sr, sc, row, col)
        reaches_cursor = not before(er, ec, row, col)
      end
      if text:sub(1, #typed) ~= typed then
        stale = true
        return nil
      end
      text = text:sub(#typed + 1)
      local piece = ghost.piece(text, how)
      if piece == text and reaches_cursor then
        return item -- where it was answered: Neovim applies its range and runs its command
      end
      local lines = vim.split(piece, '\n', { plain = true })
      api.nvim_buf_set_text(bufnr, row, col, row, col, lines)
      api.nvim_win_set_cursor(win, { row + #lines, (#lines == 1 and col or 0) + #lines[#lines] })
      local client = vim.lsp.get_client_by_id(item.client_id)
      if piece == text and item.command and client then
        client:exec_cmd(item.command, { bufnr = bufnr })
      end
      return nil
    end,
  })
  if accepted then
    -- get() applies the item later, in a vim.schedule() callback. Keys typed after this one
    -- (already waiting as typeahead on a busy machine) would go in first, and the item would
    -- then land where the cursor was and pull the cursor back there: an <Enter> typed right
    -- after <Tab> seemed lost. Run that callback now, before the next key is read (vim.wait
    -- runs scheduled callbacks, not typeahead; callbacks run in order).
    local applied = false
    vim.schedule(function()
      applied = true
    end)
    vim.wait(1000, function()
      return applied
    end, 1)
  end
  return accepted and not stale
end

-- ---------------------------------------------------------------------------- public actions

--- Whether a suggestion is displayed in ``bufnr``.
function M.visible(bufnr)
  bufnr = resolve(bufnr)
  if attached[bufnr] == 'native' then
    local ns = api.nvim_get_namespaces()[NATIVE_NS]
    return ns ~= nil and #api.nvim_buf_get_extmarks(bufnr, ns, 0, -1, { limit = 1 }) > 0
  end
  return attached[bufnr] == 'extmark' and ghost.visible(bufnr)
end

--- Accept the suggestion: ``how`` is 'all' (default), 'word' or 'line'. False when none.
---@param bufnr? integer
---@param how? 'all'|'word'|'line'
---@return boolean
function M.accept(bufnr, how)
  bufnr = resolve(bufnr)
  how = how or 'all'
  local accepted
  if attached[bufnr] == 'native' then
    accepted = native_accept(bufnr, how)
  else
    accepted = attached[bufnr] == 'extmark' and ghost.accept(bufnr, how)
  end
  if accepted and how == 'all' then
    require('qodeassist.next_edit').after_accept(bufnr) -- the edit that follows, at once
  end
  return accepted
end

--- Hide the suggestion; false when none was shown.
function M.dismiss(bufnr)
  bufnr = resolve(bufnr)
  if attached[bufnr] == 'native' then
    local shown = M.visible(bufnr)
    -- The native client has no "hide": re-enabling drops its current item and ghost text.
    vim.lsp.inline_completion.enable(false, { bufnr = bufnr })
    vim.lsp.inline_completion.enable(true, { bufnr = bufnr })
    return shown
  end
  return attached[bufnr] == 'extmark' and ghost.dismiss(bufnr)
end

--- Ask for suggestions now (extmark renderer; the native client asks on its own).
function M.trigger(bufnr)
  bufnr = resolve(bufnr)
  if attached[bufnr] == 'extmark' then
    ghost.trigger(bufnr)
    return true
  end
  return false
end

-- ---------------------------------------------------------------------------- attaching

local function map(bufnr, lhs, action, desc)
  if not lhs or lhs == '' then
    return
  end
  vim.keymap.set('i', lhs, function()
    if not action() then
      -- Nothing to do: behave as if the key were not mapped. 'i' puts the key in front of the
      -- typeahead: appended, it would come after keys typed later (a fast typist's tab after
      -- the word that followed it).
      api.nvim_feedkeys(vim.keycode(lhs), 'in', false)
    end
  end, { buffer = bufnr, desc = desc, silent = true })
end

-- Where the caret rests (qodeassist/didMoveCursor, on BufEnter and CursorHold): the server reads
-- the model's prompt there ahead of the first key, so the first suggestion in a file does not
-- wait for a cold prompt (seconds on a small local model).
local function tell_cursor(bufnr)
  if api.nvim_get_current_buf() ~= bufnr then
    return
  end
  local client_mod = require('qodeassist.client')
  local client = client_mod.get(bufnr)
  if client then
    local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
    client_mod.notify(client, 'qodeassist/didMoveCursor', params)
  end
end

local function follow_cursor(bufnr)
  local group = api.nvim_create_augroup('qodeassist.inline.' .. bufnr, { clear = true })
  api.nvim_create_autocmd({ 'BufEnter', 'CursorHold' }, {
    group = group,
    buffer = bufnr,
    callback = function()
      tell_cursor(bufnr)
    end,
  })
  vim.schedule(function() -- the buffer just attached is usually the one shown
    tell_cursor(bufnr)
  end)
end

local function set_keymaps(bufnr)
  local keys = cfg.inline.keymaps or {}
  map(bufnr, keys.accept, function()
    return M.accept(bufnr, 'all')
  end, 'QodeAssist: accept the suggestion')
  map(bufnr, keys.accept_word, function()
    return M.accept(bufnr, 'word')
  end, 'QodeAssist: accept the next word of the suggestion')
  map(bufnr, keys.accept_line, function()
    return M.accept(bufnr, 'line')
  end, 'QodeAssist: accept the next line of the suggestion')
  map(bufnr, keys.dismiss, function()
    return M.dismiss(bufnr)
  end, 'QodeAssist: dismiss the suggestion')
  if attached[bufnr] == 'extmark' then
    map(bufnr, keys.trigger, function()
      return M.trigger(bufnr)
    end, 'QodeAssist: ask for a suggestion')
  end
end

--- Start inline completion in ``bufnr`` (the server just attached to it).
---@param bufnr integer
---@param config qodeassist.Config
function M.attach(bufnr, config)
  cfg = config
  local mode = M.mode(config)
  if mode == 'off' or attached[bufnr] then
    return
  end
  attached[bufnr] = mode
  if mode == 'native' then
    vim.lsp.inline_completion.enable(true, { bufnr = bufnr })
  else
    ghost.attach(bufnr, config)
  end
  set_keymaps(bufnr)
  follow_cursor(bufnr)
end

--- Stop inline completion in ``bufnr`` (the server detached).
function M.detach(bufnr)
  local mode = attached[bufnr]
  if not mode then
    return
  end
  attached[bufnr] = nil
  pcall(api.nvim_del_augroup_by_name, 'qodeassist.inline.' .. bufnr)
  if mode == 'extmark' then
    ghost.detach(bufnr)
  elseif api.nvim_buf_is_valid(bufnr) then
    vim.lsp.inline_completion.enable(false, { bufnr = bufnr })
  end
  if api.nvim_buf_is_valid(bufnr) then
    for _, lhs in pairs(cfg.inline.keymaps or {}) do
      if lhs then
        pcall(vim.keymap.del, 'i', lhs, { buffer = bufnr })
      end
    end
  end
end

--- The renderer used in ``bufnr`` (nil when inline completion is not active there).
function M.attached(bufnr)
  return attached[resolve(bufnr)]
end

return M
