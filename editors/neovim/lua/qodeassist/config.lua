-- qodeassist.config: the plugin's options, their defaults and the merged values setup() uses.
local M = {}

---@class qodeassist.Keymaps
---@field accept string|false        accept the whole suggestion
---@field accept_word string|false   accept the next word of it
---@field accept_line string|false   accept the next line of it
---@field dismiss string|false       hide it
---@field trigger string|false       ask for suggestions now (triggerKind Invoked)

---@class qodeassist.Config
M.defaults = {
  -- Name of the LSP client (and of the vim.lsp.config entry on Neovim 0.11+).
  name = 'qodeassist',
  -- How to start the server, e.g. { '/path/to/.venv/bin/qodeassist-lsp' }.
  cmd = { 'qodeassist-lsp' },
  -- Extra environment variables for the server process.
  cmd_env = nil,
  -- Filetypes to attach to; nil attaches to every file buffer.
  filetypes = nil,
  -- Files or folders that mark the project root.
  root_markers = { '.qodeassist', '.git' },
  -- Server settings (the sections of settings.toml), sent as
  -- initializationOptions.qodeassist and answered on workspace/configuration.
  settings = {},
  -- Milliseconds Neovim waits for the server to exit after shutdown.
  exit_timeout = 2000,

  inline = {
    enabled = true,
    -- 'auto': native vim.lsp.inline_completion on 0.12+, the plugin's extmark renderer before;
    -- 'native' or 'extmark' force one.
    mode = 'auto',
    -- Extmark renderer only: wait this long after the last keystroke before asking.
    debounce_ms = 75,
    -- Extmark renderer only: highlight group of the ghost text.
    hl_group = 'QodeAssistGhost',
    ---@type qodeassist.Keymaps
    keymaps = {
      accept = '<Tab>',
      accept_word = '<M-Right>',
      accept_line = '<M-Down>',
      dismiss = '<C-]>',
      trigger = '<M-\\>',
    },
  },

  next_edit = {
    -- Ask for the next edit (textDocument/copilotInlineEdit) after an edit pause. Off by
    -- default: each pause costs a model request (see docs/next-edit.md for a model to use).
    enabled = false,
    -- Milliseconds after the last change before asking.
    debounce_ms = 500,
    -- Highlight of the text the edit replaces, and of the lines as they read after it.
    delete_hl_group = 'QodeAssistNextEditDelete',
    add_hl_group = 'QodeAssistNextEditAdd',
    -- Normal-mode keys while a next edit is shown (false disables one): the first press jumps
    -- to the edit, the second (on its line) applies it.
    keymaps = {
      jump_or_accept = '<Tab>',
      dismiss = '<Esc>',
    },
  },

  chat = {
    -- Where :QodeAssistChat opens its buffer: 'vertical', 'horizontal', 'tab' or 'current'.
    split = 'vertical',
    -- Width (vertical) or height (horizontal) of the split; nil lets Neovim decide.
    size = nil,
    -- Normal-mode keys of the chat buffer for the file edit under the cursor; false disables
    -- one. Each edit block's header shows the keys its status allows.
    keys = {
      apply = 'ga',
      reject = 'gr',
      undo = 'gu',
    },
  },
}

--- Raise a readable error unless ``value`` has one of the ``types``.
local function check(name, value, ...)
  local kind = type(value)
  for _, wanted in ipairs({ ... }) do
    if kind == wanted then
      return
    end
  end
  error(
    ('qodeassist: option %s must be a %s, not a %s'):format(
      name,
      table.concat({ ... }, ' or '),
      kind
    ),
    3
  )
end

---@type qodeassist.Config
M.values = vim.deepcopy(M.defaults)

--- Merge ``opts`` over the defaults (lists such as ``cmd`` are replaced, not merged).
---@param opts? table
---@return qodeassist.Config
function M.merge(opts)
  opts = opts or {}
  check('opts', opts, 'table')
  local merged = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts)
  -- tbl_deep_extend merges list-like tables index by index; a user's list replaces ours.
  for _, key in ipairs({ 'cmd', 'filetypes', 'root_markers' }) do
    if opts[key] ~= nil then
      merged[key] = opts[key]
    end
  end
  if type(merged.cmd) == 'string' then
    merged.cmd = { merged.cmd }
  end
  check('cmd', merged.cmd, 'table', 'function')
  check('filetypes', merged.filetypes, 'table', 'nil')
  check('settings', merged.settings, 'table')
  local mode = merged.inline.mode
  if not vim.tbl_contains({ 'auto', 'native', 'extmark' }, mode) then
    error(("qodeassist: inline.mode must be 'auto', 'native' or 'extmark', not %q"):format(mode))
  end
  M.values = merged
  return merged
end

return M
