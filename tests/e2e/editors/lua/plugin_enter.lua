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
  local before = #H.requests('textDocument/inlineCompletion')
  H.input(H.params.keys)
  H.wait('the typed text', function()
    for _, line in ipairs(vim.api.nvim_buf_get_lines(0, 0, -1, false)) do
      if line:find(H.params.last, 1, true) then
        return true
      end
    end
  end)
  -- The slow answers arrive (nothing may change the lines): the typing asked again, and every
  -- request is answered or its cancellation settled, whatever the machine's load.
  H.wait('the answers to the requests the typing caused', function()
    local requests = H.requests('textDocument/inlineCompletion')
    if #requests <= before then
      return false
    end
    for _, rec in ipairs(requests) do
      if not (rec.done or (rec.cancelled_ms and rec.settled_ms)) then
        return false
      end
    end
    return true
  end)
  H.snapshot('typed')
end)
