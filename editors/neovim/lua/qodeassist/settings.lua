-- qodeassist.settings: :QodeAssistConfig — read and write the server's settings.toml through
-- qodeassist/settings/get and qodeassist/settings/update. The server edits the file with its
-- comments and order kept, validates every change like the file and reloads; a refused change
-- is reported with the server's message and writes nothing.
local M = {}

local function server()
  local client = require('qodeassist.client').any()
  if not client then
    vim.notify('QodeAssist: the server is not running', vim.log.levels.WARN)
  end
  return client
end

--- `debounceMs` and `debounce_ms` both name [completion] debounce_ms.
local function snake(key)
  return (key:gsub('(%l)(%u)', '%1_%2'):lower())
end

--- A value typed on the command line: JSON (true, 42, "x", ["a"], null), else a plain string.
function M.parse_value(text)
  local ok, value = pcall(vim.json.decode, text)
  if ok then
    return value
  end
  return text
end

local function show_value(value)
  if type(value) == 'string' then
    return value
  end
  return vim.json.encode(value)
end

--- The lines of the settings buffer: every effective setting, those set in the file marked.
function M.lines(answer)
  local lines = {
    ('# %s settings: %s%s'):format(
      answer.scope,
      answer.path,
      answer.exists and '' or ' (does not exist yet)'
    ),
    '# effective values; "# set here" marks what the file sets.',
    '# :QodeAssistConfig KEY VALUE writes one (VALUE is JSON; null removes the key).',
  }
  for section, keys in vim.spairs(answer.effective or {}) do
    table.insert(lines, '')
    table.insert(lines, ('[%s]'):format(section))
    local own = type(answer.values) == 'table' and answer.values[section] or nil
    for key, value in vim.spairs(keys) do
      local mark = type(own) == 'table' and own[key] ~= nil and '  # set here' or ''
      table.insert(lines, ('%s = %s%s'):format(key, vim.json.encode(value), mark))
    end
  end
  return lines
end

local function open_buffer(lines)
  vim.cmd('botright new')
  local buf = vim.api.nvim_get_current_buf()
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].swapfile = false
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = 'toml'
  pcall(vim.api.nvim_buf_set_name, buf, 'qodeassist://settings')
  return buf
end

local function get(client, scope, handler)
  local method, params = 'qodeassist/settings/get', { scope = scope }
  require('qodeassist.client').request(client, method, params, function(err, answer)
    vim.schedule(function()
      if err then
        vim.notify('QodeAssist: reading the settings failed: ' .. err.message, vim.log.levels.ERROR)
      else
        handler(answer)
      end
    end)
  end)
end

--- Write ``changes`` (``{['section.key'] = value}``, vim.NIL removes) to the ``scope`` file.
function M.update(scope, changes, on_done)
  local client = server()
  if not client then
    return
  end
  local params = { scope = scope, changes = changes }
  local method = 'qodeassist/settings/update'
  require('qodeassist.client').request(client, method, params, function(err, answer)
    vim.schedule(function()
      if err then
        vim.notify('QodeAssist: ' .. err.message, vim.log.levels.ERROR)
      else
        vim.notify('QodeAssist: wrote ' .. answer.written, vim.log.levels.INFO)
      end
      if on_done then
        on_done(err, answer)
      end
    end)
  end)
end

--- :QodeAssistConfig[!] [KEY [VALUE]] — no argument: show the settings; KEY: its effective
--- value; KEY VALUE: write it (VALUE is JSON, else a string; `null` removes the key). With !
--- the project's .qodeassist/settings.toml is used instead of the user's.
function M.command(opts)
  local client = server()
  if not client then
    return
  end
  local scope = opts.bang and 'project' or 'user'
  local key, value = (opts.args or ''):match('^%s*(%S+)%s*(.-)%s*$')
  if not key then
    get(client, scope, function(answer)
      M.buf = open_buffer(M.lines(answer))
    end)
  elseif value == '' then
    get(client, scope, function(answer)
      local current = answer.effective
      for part in key:gmatch('[^.]+') do
        current = type(current) == 'table' and current[snake(part)] or nil
      end
      if current == nil then
        vim.notify(('QodeAssist: no setting %s'):format(key), vim.log.levels.WARN)
      else
        vim.notify(('%s = %s'):format(key, show_value(current)), vim.log.levels.INFO)
      end
    end)
  else
    M.update(scope, { [key] = M.parse_value(value) })
  end
end

return M
