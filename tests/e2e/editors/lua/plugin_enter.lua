-- Enter under load: in `guard.py` type `try:` at the end of line 2 and wait for the ghost text;
-- then type ``params.keys`` in one go (Neovim gets them as typeahead, as from a fast typist on a
-- busy machine) while the provider is slow to answer the requests they cause. The lines must
-- come out as typed: the Enter is never lost, `try:` is never joined with the next line.
local here = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2))
local H = dofile(vim.fs.joinpath(here, 'harness.lua'))

H.run(function()
  H.start_plugin()
  vim.bo.expandtab = true -- indentation as spaces, whatever Neovim version
  vim.api.nvim_win_set_cursor(0, { 2, 0 })
  H.input('Atry:')
  H.wait('the suggestion as ghost text (lines below the cursor)', function()
    local ghost = H.ghosts()[1]
    return ghost and #ghost.virt_lines > 0
  end)
  H.snapshot('shown')
  H.input(H.params.keys)
  H.wait('the typed text', function()
    for _, line in ipairs(vim.api.nvim_buf_get_lines(0, 0, -1, false)) do
      if line:find(H.params.last, 1, true) then
        return true
      end
    end
  end)
  H.sleep(H.params.settle_ms) -- the slow answers arrive; nothing may change the lines
  H.snapshot('typed')
end)
