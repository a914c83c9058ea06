-- qodeassist: Neovim client for qodeassist-lsp (LLM completion, refactor and chat).
--
--   require('qodeassist').setup({ cmd = { 'qodeassist-lsp' }, settings = { … } })
--
-- setup() registers the server with vim.lsp, wires the custom notifications
-- (qodeassist/status, qodeassist/chat/event), turns on inline completion in every buffer the
-- server attaches to and defines the :QodeAssist* commands. See :help qodeassist.
local M = {}

local did_setup = false

--- Whether setup() ran.
function M.is_setup()
  return did_setup
end

local function on_attach(args)
  local client = vim.lsp.get_client_by_id(args.data.client_id)
  if not require('qodeassist.client').is_ours(client) then
    return
  end
  require('qodeassist.inline').attach(args.buf, require('qodeassist.config').values)
  require('qodeassist.next_edit').attach(args.buf, require('qodeassist.config').values)
  require('qodeassist.status').refresh()
  require('qodeassist.status').changed()
end

local function on_detach(args)
  local client = vim.lsp.get_client_by_id(args.data.client_id)
  if not require('qodeassist.client').is_ours(client) then
    return
  end
  require('qodeassist.inline').detach(args.buf)
  require('qodeassist.next_edit').detach(args.buf)
  -- LspDetach runs before the client is gone: look again once it is.
  vim.schedule(function()
    if not require('qodeassist.client').any() then
      require('qodeassist.chat').on_server_exit()
      require('qodeassist.status').reset()
    end
  end)
end

--- Configure and start the plugin; see :help qodeassist-setup for the options.
---@param opts? table
function M.setup(opts)
  local cfg = require('qodeassist.config').merge(opts)
  did_setup = true

  vim.api.nvim_set_hl(0, 'QodeAssistGhost', { link = 'Comment', default = true })
  vim.api.nvim_set_hl(0, 'QodeAssistNextEditDelete', { link = 'DiffDelete', default = true })
  vim.api.nvim_set_hl(0, 'QodeAssistNextEditAdd', { link = 'DiffAdd', default = true })

  -- Server -> client notifications, for any client started with our methods.
  vim.lsp.handlers['qodeassist/chat/event'] = function(_, params)
    require('qodeassist.chat').on_event(params)
  end
  vim.lsp.handlers['qodeassist/status'] = function(_, params)
    require('qodeassist.status').on_status(params)
  end

  local group = vim.api.nvim_create_augroup('qodeassist', { clear = true })
  vim.api.nvim_create_autocmd('LspAttach', { group = group, callback = on_attach })
  vim.api.nvim_create_autocmd('LspDetach', { group = group, callback = on_detach })
  vim.api.nvim_create_autocmd('LspRequest', {
    group = group,
    callback = function(args)
      require('qodeassist.status').on_request(args.data)
    end,
  })

  require('qodeassist.chat').setup(cfg)
  require('qodeassist.commands').register()
  require('qodeassist.client').setup(cfg)
end

--- Run setup() with the defaults unless it already ran (commands used before setup()).
function M.ensure_setup()
  if not did_setup then
    M.setup({})
  end
end

-- Inline completion ------------------------------------------------------------------------

--- Accept the inline suggestion of the current buffer; false when there is none.
function M.accept()
  return require('qodeassist.inline').accept(0, 'all')
end

--- Accept the next word of the suggestion.
function M.accept_word()
  return require('qodeassist.inline').accept(0, 'word')
end

--- Accept the next line of the suggestion.
function M.accept_line()
  return require('qodeassist.inline').accept(0, 'line')
end

--- Hide the suggestion; false when none was shown.
function M.dismiss()
  return require('qodeassist.inline').dismiss(0)
end

--- Ask for a suggestion now (extmark renderer).
function M.trigger()
  return require('qodeassist.inline').trigger(0)
end

--- Whether a suggestion is shown in the current buffer.
function M.visible()
  return require('qodeassist.inline').visible(0)
end

-- Next edit ------------------------------------------------------------------------------

--- Ask for the next edit at the cursor now.
function M.next_edit()
  require('qodeassist.next_edit').request(0)
end

--- Move the cursor to the shown next edit; false when none is shown.
function M.next_edit_jump()
  return require('qodeassist.next_edit').jump(0)
end

--- Apply the shown next edit; false when none is shown.
function M.next_edit_accept()
  return require('qodeassist.next_edit').accept(0)
end

--- Hide the shown next edit.
function M.next_edit_dismiss()
  require('qodeassist.next_edit').clear(0)
end

-- Chat and the rest ------------------------------------------------------------------------

--- Open the chat buffer; with ``message``, send it.
---@param message? string
function M.chat(message)
  require('qodeassist.chat').command({ args = message or '' })
end

--- Send ``message`` in the current chat.
function M.chat_send(message)
  require('qodeassist.chat').send(message)
end

--- Cancel the chat answer in flight.
function M.chat_cancel()
  require('qodeassist.chat').cancel()
end

--- Change the server settings at runtime (sent with workspace/didChangeConfiguration).
---@param settings table
function M.set_settings(settings)
  require('qodeassist.client').set_settings(settings)
end

--- Status-line component: '' without a server, 'QA …' while a request or chat runs,
--- 'QA ✗' after provider errors, 'QA ✓' otherwise.
---@return string
function M.statusline()
  return require('qodeassist.status').statusline()
end

return M
