-- qodeassist.positions: LSP positions to buffer byte positions, shared by the ghost-text and
-- next-edit renderers (vim.str_byteindex changed its signature in Neovim 0.11).
local api = vim.api

local M = {}

local has_011 = vim.fn.has('nvim-0.11') == 1

--- Byte column of LSP ``character`` in ``line`` for ``encoding`` (the line's end if past it).
---@param line string
---@param character integer
---@param encoding string
---@return integer
function M.byte_col(line, character, encoding)
  if encoding == 'utf-8' then
    return math.min(character, #line)
  end
  local ok, col
  if has_011 then
    ok, col = pcall(vim.str_byteindex, line, encoding, character, false)
  else
    ok, col = pcall(vim.str_byteindex, line, character, encoding == 'utf-16')
  end
  return ok and col or #line
end

--- (row, col) of an LSP position in ``bufnr``, 0-based bytes.
---@param bufnr integer
---@param position lsp.Position
---@param encoding string
---@return integer row, integer col
function M.to_pos(bufnr, position, encoding)
  local line = api.nvim_buf_get_lines(bufnr, position.line, position.line + 1, false)[1] or ''
  return position.line, M.byte_col(line, position.character, encoding)
end

return M
