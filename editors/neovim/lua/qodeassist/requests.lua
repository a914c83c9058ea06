-- qodeassist.requests: what the plugin answers when the server asks the editor something.
-- The handlers go into the client's own `handlers` (client.lua), so other servers keep
-- Neovim's defaults:
--   window/showMessageRequest  tool permissions ("Allow once" / "Allow for this chat" / "Deny")
--                              and the refactor guard ("Discard" / "Apply anyway"), asked with
--                              vim.ui.select (kind 'qodeassist.permission'): the question's
--                              first line is the prompt, the rest (a diff, a command line) is
--                              shown in a floating window, indentation kept, until the answer;
--                              dismissing it answers null, which the server takes as "Deny".
--   qodeassist/diagnostics     the diagnostics tool: vim.diagnostic.get() of the buffer of
--                              `uri` (loaded if needed; every loaded buffer when it is
--                              null) as {items: [{uri, diagnostics: [LSP Diagnostic]}]}.
local api = vim.api

local M = {}

M.DIAGNOSTICS = 'qodeassist/diagnostics'

--- Ask the user to pick one of ``params.actions`` (window/showMessageRequest).
---
--- Neovim runs server requests in a coroutine: the handler yields until vim.ui.select answers,
--- so an asynchronous picker (telescope, fzf-lua, snacks) works too.
---@param params lsp.ShowMessageRequestParams
function M.show_message_request(err, params, ctx)
  local actions = params and params.actions or {}
  local co, is_main = coroutine.running()
  if #actions == 0 or not co or is_main then
    return vim.lsp.handlers['window/showMessageRequest'](err, params, ctx)
  end
  local lines = vim.split(params.message or '', '\r?\n')
  local message = table.remove(lines, 1)
  if not message:lower():find('^qodeassist') then
    message = 'QodeAssist: ' .. message
  end
  local detail = M.show_detail(lines)
  vim.ui.select(actions, {
    prompt = message,
    kind = 'qodeassist.permission',
    format_item = function(action)
      return (action.title:gsub('\r?\n', ' '))
    end,
  }, function(choice)
    -- vim.ui.select may answer before the yield below: resume from the main loop.
    vim.schedule(function()
      if detail and api.nvim_win_is_valid(detail) then
        api.nvim_win_close(detail, true)
      end
      coroutine.resume(co, choice or vim.NIL)
    end)
  end)
  return coroutine.yield()
end

--- Show the rest of a question (a diff, a command line) in a floating window at the top of the
--- editor, as it is (pickers show one prompt line); return the window, nil when ``lines`` is
--- empty. Diff lines get the diff filetype's colours.
---@param lines string[]
---@return integer?
function M.show_detail(lines)
  while #lines > 0 and lines[#lines] == '' do
    table.remove(lines)
  end
  if #lines == 0 then
    return nil
  end
  local buf = api.nvim_create_buf(false, true)
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].modifiable = false
  for _, line in ipairs(lines) do
    if line:find('^[-+]') or line:find('^@@') then
      vim.bo[buf].filetype = 'diff'
      break
    end
  end
  local width = 20
  for _, line in ipairs(lines) do
    width = math.max(width, vim.fn.strdisplaywidth(line))
  end
  width = math.min(width, math.max(vim.o.columns - 4, 1))
  local height = math.min(#lines, math.max(vim.o.lines - 8, 1))
  local win = api.nvim_open_win(buf, false, {
    relative = 'editor',
    row = 1,
    col = math.max(math.floor((vim.o.columns - width) / 2) - 1, 0),
    width = width,
    height = height,
    style = 'minimal',
    border = 'rounded',
    title = ' QodeAssist asks ',
    focusable = false,
    noautocmd = true,
  })
  -- The default picker (inputlist()) blocks before the next redraw: draw the window first.
  vim.cmd.redraw()
  return win
end

local SEVERITY = {
  [vim.diagnostic.severity.ERROR] = 1,
  [vim.diagnostic.severity.WARN] = 2,
  [vim.diagnostic.severity.INFO] = 3,
  [vim.diagnostic.severity.HINT] = 4,
}

--- One vim.diagnostic item as an LSP Diagnostic (0-based lines, byte columns as Neovim has
--- them; the tool shows them to a model, where a column off by a few is harmless).
local function as_lsp(d)
  local lsp = {
    range = {
      start = { line = d.lnum, character = d.col },
      ['end'] = { line = d.end_lnum or d.lnum, character = d.end_col or d.col },
    },
    severity = SEVERITY[d.severity] or 1,
    message = d.message,
  }
  if d.source then
    lsp.source = d.source
  end
  if d.code ~= nil then
    lsp.code = d.code
  end
  return lsp
end

--- The diagnostics Neovim has for the file at ``uri`` (its buffer is loaded if it is not).
---@param uri string
---@return table[]
function M.diagnostics_of(uri)
  local bufnr = vim.uri_to_bufnr(uri)
  if not vim.api.nvim_buf_is_loaded(bufnr) then
    vim.fn.bufload(bufnr)
  end
  return vim.tbl_map(as_lsp, vim.diagnostic.get(bufnr))
end

--- qodeassist/diagnostics ``{uri}`` → ``{items: [{uri, diagnostics}]}``; with a null uri,
--- every loaded file buffer that has diagnostics.
function M.diagnostics(_, params)
  if type(params) == 'table' and type(params.uri) == 'string' then
    return { items = { { uri = params.uri, diagnostics = M.diagnostics_of(params.uri) } } }
  end
  local items = {}
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) and vim.bo[bufnr].buftype == '' then
      local found = vim.diagnostic.get(bufnr)
      if #found > 0 then
        table.insert(items, {
          uri = vim.uri_from_bufnr(bufnr),
          diagnostics = vim.tbl_map(as_lsp, found),
        })
      end
    end
  end
  return { items = items }
end

--- The handlers for our client's configuration.
function M.handlers()
  return {
    ['window/showMessageRequest'] = M.show_message_request,
    [M.DIAGNOSTICS] = M.diagnostics,
  }
end

return M
