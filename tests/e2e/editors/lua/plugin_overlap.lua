-- Plugin extmark renderer, item range: inside `print(add())` type `1`; the suggestion
-- `, 2))` comes with a range over the `))` right of the cursor, which accepting replaces.
local here = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2))
local H = dofile(vim.fs.joinpath(here, 'harness.lua'))

H.run(function()
  H.start_plugin()
  vim.api.nvim_win_set_cursor(0, { 4, 10 })
  H.input('i1')
  H.wait_ghost('the suggestion as ghost text')
  H.snapshot('shown')
  H.input('<Tab>')
  H.wait('workspace/executeCommand to be answered', function()
    local sent = H.requests('workspace/executeCommand')
    return sent[1] and sent[1].done
  end)
  H.snapshot('accepted')
end)
