--- Plan mode in the chat: a plan's checklist lines, and the plan requests (approve, cancel).
---
--- The chat (`qodeassist.chat`) draws the lines of every `planUpdated` event in one block of the
--- transcript, rewritten in place as steps start and end, and follows the running step's
--- request so its answer streams under a `## Step N: title` heading.
local M = {}

local MARKS = { pending = '[ ]', running = '[~]', done = '[x]', failed = '[!]', skipped = '[-]' }

--- The checklist lines of a `planUpdated` event.
---@param ev table
---@return string[]
function M.lines(ev)
  local lines = { ('**Plan** · %s'):format(ev.state or '?') }
  if type(ev.error) == 'table' then
    local message = (ev.error.message or ''):gsub('\n', ' ')
    table.insert(lines, ('> ❌ **%s**: %s'):format(ev.error.category or 'error', message))
  end
  for i, step in ipairs(ev.steps or {}) do
    local line = ('%s %d. %s'):format(MARKS[step.status] or '[ ]', i, step.title or '')
    if step.error and step.error ~= '' then
      line = line .. ' — ' .. step.error:gsub('\n', ' ')
    end
    table.insert(lines, line)
  end
  if ev.state == 'proposed' or ev.state == 'cancelled' or ev.state == 'failed' then
    table.insert(lines, '_:QodeAssistPlanApprove runs it · :QodeAssistPlanCancel stops it_')
  end
  return lines
end

--- The running step of ``ev`` with its number, if any.
---@param ev table
---@return integer?, table?
function M.running_step(ev)
  for i, step in ipairs(ev.steps or {}) do
    if step.status == 'running' and step.requestId then
      return i, step
    end
  end
end

--- Send a plan request (``approve``, ``resume``, ``cancel``) for ``chat_id``.
---@param client table
---@param action 'approve'|'resume'|'cancel'
---@param chat_id string
function M.request(client, action, chat_id)
  local method = 'qodeassist/chat/plan/' .. action
  require('qodeassist.client').request(client, method, { chatId = chat_id }, function(err)
    if err then
      vim.notify('QodeAssist: plan ' .. action .. ': ' .. err.message, vim.log.levels.WARN)
    end
  end)
end

return M
