-- qodeassist.client: starts qodeassist-lsp through vim.lsp (vim.lsp.config/enable on 0.11+,
-- vim.lsp.start from a FileType autocmd on 0.10), finds its client, and wraps the client
-- methods whose calling convention changed in 0.11 (client.request vs client:request).
local M = {}

local has_011 = vim.fn.has('nvim-0.11') == 1

---@type qodeassist.Config
local cfg

--- Our running client attached to ``bufnr`` (0: the current buffer).
---@param bufnr integer
---@return vim.lsp.Client?
function M.get(bufnr)
  if not cfg then
    return nil
  end
  bufnr = bufnr == 0 and vim.api.nvim_get_current_buf() or bufnr
  return vim.lsp.get_clients({ name = cfg.name, bufnr = bufnr })[1]
end

--- Our client for requests that are not about a buffer: the one attached to the current
--- buffer, else any running one.
---@return vim.lsp.Client?
function M.any()
  if not cfg then
    return nil
  end
  return M.get(0) or vim.lsp.get_clients({ name = cfg.name })[1]
end

--- Whether ``client`` is one of ours.
---@param client? vim.lsp.Client
function M.is_ours(client)
  return client ~= nil and cfg ~= nil and client.name == cfg.name
end

--- Send a request; returns the request id (nil when it could not be sent).
---@param client vim.lsp.Client
---@param method string
---@param params table?
---@param handler fun(err: lsp.ResponseError?, result: any, ctx: lsp.HandlerContext)
---@param bufnr? integer
---@return integer?
function M.request(client, method, params, handler, bufnr)
  local ok, id
  if has_011 then
    ok, id = client:request(method, params, handler, bufnr)
  else
    ok, id = client.request(method, params, handler, bufnr)
  end
  return ok and id or nil
end

--- Send a request and wait for its answer (at most ``timeout_ms``).
---@return any result, string? error
function M.request_sync(client, method, params, timeout_ms, bufnr)
  local answer, err
  if has_011 then
    answer, err = client:request_sync(method, params, timeout_ms, bufnr)
  else
    answer, err = client.request_sync(method, params, timeout_ms, bufnr)
  end
  if not answer then
    return nil, err or 'no answer'
  end
  if answer.err then
    return nil, answer.err.message or vim.inspect(answer.err)
  end
  return answer.result
end

--- Send ``$/cancelRequest`` for request ``id``.
---@param client vim.lsp.Client
---@param id integer
function M.cancel(client, id)
  if has_011 then
    client:cancel_request(id)
  else
    client.cancel_request(id)
  end
end

---@param client vim.lsp.Client
function M.notify(client, method, params)
  if has_011 then
    return client:notify(method, params)
  end
  return client.notify(method, params)
end

--- Run a server command (workspace/executeCommand) and hand its answer to ``handler``.
---@param client vim.lsp.Client
---@param command lsp.Command
---@param bufnr? integer
---@param handler? fun(err: lsp.ResponseError?, result: any)
function M.execute(client, command, bufnr, handler)
  return M.request(client, 'workspace/executeCommand', {
    command = command.command,
    arguments = command.arguments,
  }, function(err, result)
    if handler then
      handler(err, result)
    elseif err then
      vim.notify(
        ('QodeAssist: %s failed: %s'):format(command.command, err.message),
        vim.log.levels.WARN
      )
    end
  end, bufnr)
end

--- Settings for JSON: an empty table must be an object, not an array.
local function as_object(settings)
  if next(settings) == nil then
    return vim.empty_dict()
  end
  return settings
end

--- Whether the server should attach to ``bufnr``: a file buffer (not help, terminal, scratch
--- or the chat buffer) of one of the configured filetypes.
local function wanted(bufnr)
  if vim.bo[bufnr].buftype ~= '' or vim.api.nvim_buf_get_name(bufnr) == '' then
    return false
  end
  return not cfg.filetypes or vim.tbl_contains(cfg.filetypes, vim.bo[bufnr].filetype)
end

--- The client configuration handed to vim.lsp.
---@return vim.lsp.ClientConfig
local function lsp_config()
  local settings = as_object(vim.deepcopy(cfg.settings))
  return {
    name = cfg.name,
    cmd = cfg.cmd,
    cmd_env = cfg.cmd_env,
    filetypes = cfg.filetypes,
    root_markers = cfg.root_markers,
    -- vim.lsp.enable (0.11+) calls this before starting: only file buffers get the server
    -- (0.12 would attach a filetype-less config to help buffers too).
    root_dir = function(bufnr, on_dir)
      if wanted(bufnr) then
        on_dir(vim.fs.root(bufnr, cfg.root_markers))
      end
    end,
    init_options = { qodeassist = settings },
    settings = { qodeassist = settings },
    -- Permission prompts and the diagnostics tool; other servers keep Neovim's handlers.
    handlers = require('qodeassist.requests').handlers(),
    exit_timeout = cfg.exit_timeout,
  }
end

--- Start (or reuse) the server for ``bufnr`` with vim.lsp.start (Neovim 0.10).
local function start_legacy(bufnr)
  if not wanted(bufnr) then
    return
  end
  local config = lsp_config()
  config.root_dir = vim.fs.root(bufnr, cfg.root_markers)
  config.filetypes, config.root_markers = nil, nil
  vim.lsp.start(config, { bufnr = bufnr })
end

local augroup = vim.api.nvim_create_augroup('qodeassist.client', { clear = true })

--- Register the server with vim.lsp so it starts on matching buffers.
---@param config qodeassist.Config
function M.setup(config)
  cfg = config
  vim.api.nvim_clear_autocmds({ group = augroup })
  if vim.lsp.config and vim.lsp.enable then
    vim.lsp.config(cfg.name, lsp_config())
    vim.lsp.enable(cfg.name)
  else
    vim.api.nvim_create_autocmd('FileType', {
      group = augroup,
      callback = function(args)
        start_legacy(args.buf)
      end,
    })
    if vim.v.vim_did_enter == 1 then
      for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
        if vim.api.nvim_buf_is_loaded(bufnr) and vim.bo[bufnr].filetype ~= '' then
          start_legacy(bufnr)
        end
      end
    end
  end
end

--- Change the server settings at runtime (workspace/didChangeConfiguration).
---@param settings table
function M.set_settings(settings)
  cfg.settings = settings
  local object = as_object(vim.deepcopy(settings))
  if vim.lsp.config then
    vim.lsp.config(cfg.name, { settings = { qodeassist = object } })
  end
  for _, client in ipairs(vim.lsp.get_clients({ name = cfg.name })) do
    client.settings = { qodeassist = object }
    M.notify(client, 'workspace/didChangeConfiguration', { settings = { qodeassist = object } })
  end
end

return M
