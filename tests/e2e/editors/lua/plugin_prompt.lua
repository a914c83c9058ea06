-- Plugin prompt: the server asks the editor a question with window/showMessageRequest (here the
-- refactor guard's "Discard" / "Apply anyway" on an answer that repeats itself; tool
-- permissions ask the same way) and the plugin's own handler asks the user with vim.ui.select
-- (scripted). The picked action goes back to the server, which applies the edit.
local here = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2))
local H = dofile(vim.fs.joinpath(here, 'harness.lua'))

H.run(function()
  H.fake_ui({
    select = { 'Custom instruction', H.params.answer },
    input = { 'Add type hints' },
  })
  H.start_plugin()
  local before = vim.api.nvim_buf_get_changedtick(H.buf)
  H.input('2GV5G')
  H.wait('a visual selection', function()
    return vim.api.nvim_get_mode().mode == 'V'
  end)
  H.input(':QodeAssistRefactor<CR>')
  H.wait('workspace/executeCommand to be answered', function()
    local sent = H.requests('workspace/executeCommand')
    return sent[1] and sent[1].done
  end)
  H.report.changed = vim.api.nvim_buf_get_changedtick(H.buf) ~= before
  H.snapshot('answered')
end)
