-- Plugin, native renderer, accept the next line: <M-Down> inserts the first line of a two-line
-- suggestion with its line break; Neovim asks again on the new line and the server answers the
-- rest from its typed-ahead cache (no new upstream request).
local here = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2))
local H = dofile(vim.fs.joinpath(here, 'harness.lua'))

H.run(function()
  H.start_plugin()
  H.type_and_wait_for_suggestion()
  local tick = vim.api.nvim_buf_get_changedtick(H.buf)
  H.input('<M-Down>')
  H.wait('the rest to be shown on the next line', function()
    if vim.api.nvim_buf_get_changedtick(H.buf) == tick then
      return false
    end
    local ghost = H.ghosts()[1]
    return ghost and ghost.row == 2
  end)
  H.snapshot('line')
  H.input('<Esc>')
end)
