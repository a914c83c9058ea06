-- qodeassist.refactor: :QodeAssistRefactor. Takes the visual selection (or the command's line
-- range, or the current line), picks an instruction with vim.ui.select from the server's
-- library (qodeassist/refactor/instructions) or "Custom instruction…" (vim.ui.input), then runs
-- workspace/executeCommand qodeassist.refactor; the server applies the edit itself through
-- workspace/applyEdit, as one undo step. (The same refactors are code actions, so
-- vim.lsp.buf.code_action() offers them too.)
local api = vim.api
local client_mod = require('qodeassist.client')

local M = {}

M.CUSTOM = 'Custom instruction…'

--- The byte length of the character starting at 1-based byte ``col`` of ``line``.
local function char_len(line, col)
  local char = vim.fn.strcharpart(line:sub(col), 0, 1)
  return math.max(#char, 1)
end

--- The selection as 0-based byte positions (end exclusive): the last visual selection when the
--- command runs on it, else the command's lines (or the current line).
---@param bufnr integer
---@param opts {range: integer, line1: integer, line2: integer}
---@return integer, integer, integer, integer
local function selection(bufnr, opts)
  local line = function(row)
    return api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ''
  end
  local first, last = vim.fn.getpos("'<"), vim.fn.getpos("'>")
  local mode = vim.fn.visualmode()
  local visual = opts.range == 2 and first[2] == opts.line1 and last[2] == opts.line2
  if visual and (mode == 'v' or mode == '\22') then
    local er = last[2] - 1
    local text = line(er)
    local ec = math.min(last[3], #text)
    if ec >= 1 then
      ec = ec - 1 + char_len(text, ec)
    end
    return first[2] - 1, math.min(first[3] - 1, #line(first[2] - 1)), er, ec
  end
  local sr = (opts.range > 0 and opts.line1 or vim.fn.line('.')) - 1
  local er = (opts.range > 0 and opts.line2 or vim.fn.line('.')) - 1
  return sr, 0, er, #line(er)
end

--- The LSP range of a byte range of ``bufnr`` in the client's position encoding.
local function lsp_range(bufnr, encoding, sr, sc, er, ec)
  local offset = vim.lsp.util.character_offset
  return {
    start = { line = sr, character = offset(bufnr, sr, sc, encoding) },
    ['end'] = { line = er, character = offset(bufnr, er, ec, encoding) },
  }
end

--- Run the refactor with ``instruction`` ({instructionId = id} or {instruction = text}).
---@param client vim.lsp.Client
---@param target {bufnr: integer, uri: string, range: lsp.Range, version: integer?}
---@param instruction table
function M.run(client, target, instruction)
  local args = vim.tbl_extend('force', {
    uri = target.uri,
    range = target.range,
    version = target.version,
  }, instruction)
  vim.notify('QodeAssist: refactoring…', vim.log.levels.INFO)
  client_mod.execute(
    client,
    { command = 'qodeassist.refactor', arguments = { args } },
    target.bufnr,
    function(err, result)
      if err then
        vim.notify(
          'QodeAssist: refactor failed: ' .. (err.message or vim.inspect(err)),
          vim.log.levels.ERROR
        )
      elseif type(result) == 'table' and result.applied == false then
        local why = result.message ~= '' and result.message or 'nothing was changed'
        vim.notify('QodeAssist: refactor not applied: ' .. why, vim.log.levels.WARN)
      end
    end
  )
end

--- Ask the server for its instruction library.
---@param client vim.lsp.Client
---@param callback fun(instructions: table[])
function M.instructions(client, callback)
  client_mod.request(
    client,
    'qodeassist/refactor/instructions',
    vim.empty_dict(),
    function(err, result)
      if err then
        vim.notify('QodeAssist: cannot list instructions: ' .. err.message, vim.log.levels.WARN)
      end
      callback(type(result) == 'table' and result or {})
    end
  )
end

--- Let the user pick an instruction, then refactor.
local function pick(client, target)
  M.instructions(client, function(instructions)
    local items = vim.list_extend({}, instructions)
    table.insert(items, { name = M.CUSTOM, custom = true })
    vim.ui.select(items, {
      prompt = 'QodeAssist refactor',
      kind = 'qodeassist.instruction',
      format_item = function(item)
        return item.name .. (item.default and ' (default)' or '')
      end,
    }, function(choice)
      if not choice then
        return
      end
      if not choice.custom then
        M.run(client, target, { instructionId = choice.id })
        return
      end
      vim.ui.input({ prompt = 'Instruction: ' }, function(text)
        if text and vim.trim(text) ~= '' then
          M.run(client, target, { instruction = text })
        end
      end)
    end)
  end)
end

--- :[range]QodeAssistRefactor [instruction]
---@param opts {range: integer, line1: integer, line2: integer, args: string}
function M.command(opts)
  local bufnr = api.nvim_get_current_buf()
  local client = client_mod.get(bufnr)
  if not client then
    vim.notify('QodeAssist: the server is not attached to this buffer', vim.log.levels.ERROR)
    return
  end
  local target = {
    bufnr = bufnr,
    uri = vim.uri_from_bufnr(bufnr),
    range = lsp_range(bufnr, client.offset_encoding, selection(bufnr, opts)),
    version = vim.lsp.util.buf_versions[bufnr],
  }
  if opts.args and vim.trim(opts.args) ~= '' then
    M.run(client, target, { instruction = opts.args })
  else
    pick(client, target)
  end
end

return M
