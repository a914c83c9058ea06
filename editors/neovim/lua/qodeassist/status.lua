-- qodeassist.status: what the status-line component shows. It follows the server's
-- `qodeassist/status` (notification after each configuration reload, and a request after a
-- finished completion or chat), the requests in flight (LspRequest events of our client) and
-- the chat's busy state; every change fires `User QodeAssistStatus` and redraws status lines.
local client = require('qodeassist.client')

local M = {}

---@class qodeassist.StatusState
local state = {
  ---@type table? the last qodeassist/status payload
  server = nil,
  ---@type table<integer, string> request id -> method, for our client's requests in flight
  inflight = {},
  chat_busy = false,
  ---@type string? the last chat failure ("category: message") until a chat succeeds
  chat_error = nil,
}
M.state = state

-- Requests that are bookkeeping, not work the user waits for.
local QUIET = {
  ['qodeassist/status'] = true,
  ['qodeassist/chat/send'] = true,
  ['qodeassist/chat/cancel'] = true,
  ['qodeassist/chat/list'] = true,
  ['qodeassist/chat/get'] = true,
  ['qodeassist/agents/list'] = true,
  ['qodeassist/refactor/instructions'] = true,
}

local redraw_pending = false

--- Tell status lines (and `User QodeAssistStatus` listeners) that the status changed.
function M.changed()
  if redraw_pending then
    return
  end
  redraw_pending = true
  vim.schedule(function()
    redraw_pending = false
    vim.api.nvim_exec_autocmds('User', { pattern = 'QodeAssistStatus', modeline = false })
    pcall(vim.cmd.redrawstatus, { bang = true })
  end)
end

--- The failing providers of a status payload ("name: state", "name: circuit open"), empty
--- when all are fine.
---@param status table?
---@return string[]
function M.provider_problems(status)
  local out = {}
  for _, provider in ipairs(status and status.providers or {}) do
    local circuit = type(provider.circuit) == 'table' and provider.circuit.state or 'closed'
    if circuit == 'open' or circuit == 'half_open' then
      table.insert(out, ('%s: circuit %s'):format(provider.name, (circuit:gsub('_', '-'))))
    elseif provider.state == 'down' or provider.state == 'degraded' then
      table.insert(out, ('%s: %s'):format(provider.name, provider.state))
    end
  end
  return out
end

--- Store a `qodeassist/status` payload (notification or answer).
function M.on_status(payload)
  if type(payload) == 'table' then
    state.server = payload
    M.changed()
  end
end

local refresh_timer ---@type uv.uv_timer_t?
local refreshing = false

--- Ask the server for its status soon (coalesces bursts into one request).
function M.refresh()
  if refresh_timer then
    refresh_timer:stop()
  else
    refresh_timer = assert(vim.uv.new_timer())
  end
  refresh_timer:start(
    300,
    0,
    vim.schedule_wrap(function()
      local c = client.any()
      if not c or refreshing then
        return
      end
      refreshing = true
      local id = client.request(c, 'qodeassist/status', vim.empty_dict(), function(err, result)
        refreshing = false
        if not err then
          M.on_status(result)
        end
      end)
      if not id then
        refreshing = false
      end
    end)
  )
end

--- Follow our client's requests (LspRequest autocmd data).
function M.on_request(data)
  local c = vim.lsp.get_client_by_id(data.client_id)
  if not client.is_ours(c) or QUIET[data.request.method] then
    return
  end
  local before = next(state.inflight) ~= nil
  if data.request.type == 'pending' then
    state.inflight[data.request_id] = data.request.method
  else
    state.inflight[data.request_id] = nil
    if data.request.type == 'complete' then
      M.refresh()
    end
  end
  if before ~= (next(state.inflight) ~= nil) then
    M.changed()
  end
end

--- The chat started or stopped streaming; ``failure`` is set on a failed request.
---@param busy boolean
---@param failure? string
function M.on_chat(busy, failure)
  state.chat_busy = busy
  if not busy then
    state.chat_error = failure
    M.refresh()
  end
  M.changed()
end

--- Forget everything (the server stopped).
function M.reset()
  state.server, state.inflight, state.chat_busy, state.chat_error = nil, {}, false, nil
  M.changed()
end

--- The status-line text: '' without a server, 'QA …' while working, 'QA ✗' on provider
--- errors, 'QA ✓' otherwise.
---@return string
function M.statusline()
  if not client.any() then
    return ''
  end
  if
    next(state.inflight)
    or state.chat_busy
    or (state.server and state.server.state == 'loading')
  then
    return 'QA …'
  end
  if state.chat_error or #M.provider_problems(state.server) > 0 then
    return 'QA ✗'
  end
  return 'QA ✓'
end

return M
