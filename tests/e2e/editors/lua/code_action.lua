-- Quick refactor through Neovim's own code action UI: select lines 2-5 linewise (`V`), run
-- vim.lsp.buf.code_action() for `refactor.rewrite` filtered to one title with `apply = true`;
-- Neovim lists the server's lazy actions, resolves the picked one (codeAction/resolve, where the
-- model runs) and applies the WorkspaceEdit it gets back.
local here = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2))
local H = dofile(vim.fs.joinpath(here, 'harness.lua'))

local function resolved()
  local sent = H.requests('codeAction/resolve')
  return sent[1] and sent[1].done and sent[1]
end

H.run(function()
  H.start()
  local before = vim.api.nvim_buf_get_changedtick(H.buf)
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  H.input(H.params.select)
  H.wait('linewise visual mode on line 5', function()
    return vim.api.nvim_get_mode().mode == 'V' and vim.fn.line('.') == 5 and vim.fn.line('v') == 2
  end)
  H.snapshot('selected')
  H.report.step = 'vim.lsp.buf.code_action()'
  vim.lsp.buf.code_action({
    apply = true,
    context = { only = { 'refactor.rewrite' } },
    filter = function(action)
      return action.title == H.params.title
    end,
  })
  H.wait('the answer to textDocument/codeAction', function()
    local sent = H.requests('textDocument/codeAction')
    return sent[1] and sent[1].done
  end)
  H.wait('the answer to codeAction/resolve', resolved)
  local answer = resolved()
  if answer.err or not (answer.result and answer.result.edit) then
    error('codeAction/resolve brought no edit: ' .. vim.inspect(answer.err or answer.result), 0)
  end
  H.wait('the edit to change the buffer', function()
    return vim.api.nvim_buf_get_changedtick(H.buf) ~= before
  end)
  H.snapshot('applied')
  H.input('<Esc>')
  H.wait('normal mode', function()
    return vim.api.nvim_get_mode().mode == 'n'
  end)
  H.report.status = H.request('qodeassist/status')
end)
