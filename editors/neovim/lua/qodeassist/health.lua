-- qodeassist.health: `:checkhealth qodeassist`. Reports the Neovim version, the server
-- executable, whether setup() ran and the server runs and is attached to the current buffer,
-- the server's own status (qodeassist/status: configuration, agents, providers, problems) and
-- which inline-completion renderer is used, and the doctor report (the qodeassist.doctor
-- command: every pipeline agent probed for reachability, key, model, FIM and speed).
local M = {}

--- Seconds each doctor probe may take, and how long :checkhealth waits for the whole report.
M.doctor_timeout_s = 10
M.doctor_wait_ms = 45000

local health = vim.health

local function check_neovim()
  local v = vim.version()
  local version = ('%d.%d.%d'):format(v.major, v.minor, v.patch)
  if vim.fn.has('nvim-0.10') == 0 then
    health.error('Neovim ' .. version .. ' is too old', { 'QodeAssist needs Neovim 0.10 or newer' })
  elseif vim.fn.has('nvim-0.12') == 1 then
    health.ok('Neovim ' .. version .. ': native inline completion available')
  else
    health.ok('Neovim ' .. version .. ': inline completion through the plugin (extmarks)')
  end
end

local function check_executable(cfg)
  local cmd = cfg.cmd
  if type(cmd) ~= 'table' or not cmd[1] then
    health.info('server command is a function; cannot check its executable')
    return
  end
  local path = vim.fn.exepath(cmd[1])
  if path ~= '' then
    health.ok(('server executable: %s (cmd = %s)'):format(path, table.concat(cmd, ' ')))
  else
    health.error(('server executable %q not found'):format(cmd[1]), {
      'pip install qodeassist-lsp (or pipx / uv tool install)',
      "or point setup{ cmd = { '/path/to/.venv/bin/qodeassist-lsp' } } at it",
    })
  end
end

local function check_status(client)
  local status, err =
    require('qodeassist.client').request_sync(client, 'qodeassist/status', vim.empty_dict(), 5000)
  if not status then
    health.error('qodeassist/status failed: ' .. tostring(err))
    return
  end
  require('qodeassist.status').on_status(status)
  if status.state == 'degraded' then
    -- A provider outage of a background feature: the server runs, its details still count.
    local outage = type(status.outage) == 'table' and status.outage or {}
    health.warn(
      ('server %s degraded: %s'):format(tostring(status.version), tostring(outage.reason)),
      outage.fix and { outage.fix } or nil
    )
  elseif status.state ~= 'ready' then
    health.warn(
      ('server state: %s (version %s)'):format(tostring(status.state), tostring(status.version))
    )
    return
  else
    health.ok(
      ('server %s ready: %d agents, configuration in %s'):format(
        tostring(status.version),
        status.agents or 0,
        tostring(status.configRoot)
      )
    )
  end
  local problems = status.problems or {}
  if (problems.errors or 0) > 0 then
    health.error(
      ('%d configuration error(s)'):format(problems.errors),
      { 'run `qodeassist-lsp doctor` for details' }
    )
  elseif (problems.warnings or 0) > 0 then
    health.warn(('%d configuration warning(s)'):format(problems.warnings))
  end
  for _, provider in ipairs(status.providers or {}) do
    local line = ('provider %s: %s (%d requests, %d errors)'):format(
      provider.name,
      provider.state,
      provider.requests or 0,
      provider.errors or 0
    )
    local last = provider.lastError
    if type(last) == 'table' then
      line = line .. (' — last error: %s: %s'):format(last.category, last.message)
    end
    if provider.state == 'down' or provider.state == 'degraded' then
      health.warn(line)
    else
      health.ok(line)
    end
  end
  for pipeline, agents in vim.spairs(status.pipelines or {}) do
    local names = type(agents) == 'table' and table.concat(agents, ', ') or tostring(agents)
    health.info(('%s: %s'):format(pipeline, names))
  end
end

local function agent_line(agent)
  local line = agent.name
  if agent.provider ~= '' then
    line = ('%s (%s / %s)'):format(agent.name, agent.provider, agent.model)
  end
  if agent.firstTokenMs ~= vim.NIL and agent.firstTokenMs ~= nil then
    line = line .. (': first token after %d ms'):format(agent.firstTokenMs)
    if agent.tokensPerSecond ~= vim.NIL and agent.tokensPerSecond ~= nil then
      line = line .. (', %.1f tokens/s'):format(agent.tokensPerSecond)
    end
  end
  if agent.circuit and agent.circuit ~= 'closed' then
    line = line .. ('; circuit %s'):format(agent.circuit)
  end
  return line
end

local function check_doctor(client)
  health.start('qodeassist: doctor (every pipeline agent probed)')
  local params = {
    command = 'qodeassist.doctor',
    arguments = { { timeout = M.doctor_timeout_s } },
  }
  local report, err = require('qodeassist.client').request_sync(
    client,
    'workspace/executeCommand',
    params,
    M.doctor_wait_ms
  )
  if not report then
    health.error(
      'the doctor failed: ' .. tostring(err),
      { 'run `qodeassist-lsp doctor` in a shell' }
    )
    return
  end
  local failing = {}
  for _, pipeline in ipairs(report.pipelines or {}) do
    if #pipeline.agents == 0 then
      health.info(pipeline.pipeline .. ': off')
    elseif pipeline.working then
      local names = table.concat(pipeline.agents, ', ')
      health.ok(('%s: working (%s)'):format(pipeline.pipeline, names))
    else
      local names = table.concat(pipeline.agents, ', ')
      health.error(('%s: no working agent (%s)'):format(pipeline.pipeline, names))
      for _, name in ipairs(pipeline.agents) do
        failing[name] = true
      end
    end
  end
  for _, agent in ipairs(report.agents or {}) do
    local line = agent_line(agent)
    if agent.working then
      health.ok(line)
    else
      local advice = {}
      for _, problem in ipairs(agent.problems or {}) do
        local text = ('%s: %s — fix: %s'):format(problem.check, problem.message, problem.fix)
        table.insert(advice, text)
      end
      vim.list_extend(advice, agent.notes or {})
      -- An agent whose pipelines still work through another agent is a warning only.
      if failing[agent.name] then
        health.error(line, advice)
      else
        health.warn(line, advice)
      end
    end
  end
end

function M.check()
  health.start('qodeassist')
  check_neovim()
  local qa = require('qodeassist')
  if not qa.is_setup() then
    health.warn('setup() was not called', { "require('qodeassist').setup({})" })
    return
  end
  local cfg = require('qodeassist.config').values
  check_executable(cfg)

  local client_mod = require('qodeassist.client')
  local client = client_mod.any()
  if not client then
    health.warn(
      'the server is not running',
      { 'open a file it attaches to; see :LspLog if it fails to start' }
    )
  else
    health.ok(
      ('server running (client id %d, root %s)'):format(client.id, tostring(client.root_dir))
    )
    local names = {}
    for bufnr in pairs(client.attached_buffers or {}) do
      local name = vim.api.nvim_buf_get_name(bufnr)
      table.insert(names, name ~= '' and vim.fn.fnamemodify(name, ':~:.') or ('buffer ' .. bufnr))
    end
    table.sort(names)
    if #names > 0 then
      health.ok(('attached to %d buffer(s): %s'):format(#names, table.concat(names, ', ')))
    else
      health.warn('not attached to any buffer')
    end
    check_status(client)
  end

  local inline = require('qodeassist.inline')
  local mode = inline.mode(cfg)
  if mode == 'off' then
    health.info('inline completion: disabled')
  else
    local active = 0
    for bufnr in pairs(client and client.attached_buffers or {}) do
      if inline.attached(bufnr) then
        active = active + 1
      end
    end
    health.ok(
      ('inline completion: %s, active in %d buffer(s)'):format(
        mode == 'native' and 'native (vim.lsp.inline_completion)' or 'extmark renderer (plugin)',
        active
      )
    )
  end
  if client then
    check_doctor(client)
  end
end

return M
