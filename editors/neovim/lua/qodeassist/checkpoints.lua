-- qodeassist.checkpoints: :QodeAssistCheckpoints lists the checkpoints the server took before a
-- chat changed files (qodeassist/checkpoints/list, for the chat shown in the chat buffer, or
-- every chat with !), and restores the picked one (qodeassist/checkpoints/restore: the exact
-- old bytes come back; open buffers change through workspace/applyEdit).
local client_mod = require('qodeassist.client')

local M = {}

local function names(files)
  local shown = {}
  for _, uri in ipairs(files or {}) do
    local ok, fname = pcall(vim.uri_to_fname, uri)
    table.insert(shown, vim.fn.fnamemodify(ok and fname or uri, ':~:.'))
  end
  return shown
end

--- One checkpoint as vim.ui.select shows it.
function M.format(item)
  local files = names(item.files)
  return ('%s — %d file%s: %s'):format(
    item.createdAt or '?',
    #files,
    #files == 1 and '' or 's',
    table.concat(files, ', ')
  )
end

local function restore(c, item)
  local params = { checkpointId = item.checkpointId }
  client_mod.request(c, 'qodeassist/checkpoints/restore', params, function(err, result)
    if err then
      vim.notify('QodeAssist: restore failed: ' .. err.message, vim.log.levels.ERROR)
      return
    end
    local restored = names(type(result) == 'table' and result.restored or {})
    vim.notify(('QodeAssist: restored %s'):format(table.concat(restored, ', ')))
  end)
end

--- :QodeAssistCheckpoints[!]
function M.command(opts)
  local c = client_mod.any()
  if not c then
    vim.notify('QodeAssist: the server is not running', vim.log.levels.ERROR)
    return
  end
  local chat_id = require('qodeassist.chat').session.chat_id
  local params = (opts and opts.bang or not chat_id) and vim.empty_dict() or { chatId = chat_id }
  client_mod.request(c, 'qodeassist/checkpoints/list', params, function(err, list)
    if err then
      vim.notify('QodeAssist: cannot list checkpoints: ' .. err.message, vim.log.levels.ERROR)
      return
    end
    if type(list) ~= 'table' or #list == 0 then
      vim.notify('QodeAssist: no checkpoints', vim.log.levels.INFO)
      return
    end
    vim.ui.select(list, {
      prompt = 'QodeAssist: restore which checkpoint?',
      kind = 'qodeassist.checkpoint',
      format_item = M.format,
    }, function(item)
      if item then
        restore(c, item)
      end
    end)
  end)
end

return M
