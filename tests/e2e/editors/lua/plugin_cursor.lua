-- The caret hint: the plugin tells the server where the caret rests (qodeassist/didMoveCursor
-- on attach, BufEnter and CursorHold), and the server warms the completion agent's request there
-- before any key. The test checks what reached the model.
local here = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2))
local H = dofile(vim.fs.joinpath(here, 'harness.lua'))

H.run(function()
  H.start_plugin()
  H.wait_ready()
  H.sleep(200) -- past the open's own warm-up (the file's end, when no caret came in time)
  local before = H.request('qodeassist/status').completion.warmUps
  vim.api.nvim_win_set_cursor(0, { 2, 10 }) -- "    return|"
  vim.api.nvim_exec_autocmds('CursorHold', { buffer = H.buf })
  H.wait('the warm-up at the caret', function()
    return H.request('qodeassist/status').completion.warmUps > before
  end)
end)
