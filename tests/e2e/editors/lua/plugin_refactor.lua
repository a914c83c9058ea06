-- Plugin refactor: :'<,'>QodeAssistRefactor on a linewise selection picks "Improve" from the
-- instruction library (vim.ui.select, scripted), then on a charwise selection picks "Custom
-- instruction…" and types an instruction (vim.ui.input, scripted). The server applies each
-- edit through workspace/applyEdit.
local here = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2))
local H = dofile(vim.fs.joinpath(here, 'harness.lua'))

local function refactor(name, keys)
  local before = vim.api.nvim_buf_get_changedtick(H.buf)
  local commands = #H.requests('workspace/executeCommand')
  H.input(keys)
  H.wait('a visual selection', function()
    local mode = vim.api.nvim_get_mode().mode
    return mode == 'v' or mode == 'V'
  end)
  H.snapshot(name .. '_selected')
  H.input(':QodeAssistRefactor<CR>')
  H.wait('the edit to change the buffer', function()
    return vim.api.nvim_buf_get_changedtick(H.buf) ~= before
  end)
  H.wait('workspace/executeCommand to be answered', function()
    local sent = H.requests('workspace/executeCommand')
    return #sent > commands and sent[#sent].done
  end)
  H.snapshot(name)
end

H.run(function()
  H.fake_ui({ select = { 'Improve', 'Custom instruction' }, input = { H.params.instruction } })
  H.start_plugin()
  refactor('improved', H.params.select)
  refactor('custom', H.params.select_chars)
  H.report.undo = vim.fn.undotree().seq_last
end)
