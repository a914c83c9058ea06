-- Plugin extmark renderer, cancellation: type while the provider holds its answer back, then
-- leave insert mode; the plugin cancels its request ($/cancelRequest), the server answers it
-- with RequestCancelled (which Neovim settles without calling the handler) and closes the
-- upstream stream.
local here = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2))
local H = dofile(vim.fs.joinpath(here, 'harness.lua'))

local function request_at(column)
  for _, rec in ipairs(H.requests('textDocument/inlineCompletion')) do
    if rec.params.position.line == 1 and rec.params.position.character == column then
      return rec
    end
  end
end

H.run(function()
  H.start_plugin()
  vim.api.nvim_win_set_cursor(0, { 2, 0 })
  H.input('A')
  H.wait_answer(#H.line(2))
  H.input(H.params.typed)
  local column = #H.line(2) + #H.params.typed
  local rec = H.wait('the request after typing', function()
    return request_at(column)
  end)
  H.sleep(H.params.hold_ms) -- the server is waiting for the provider by now
  H.report.done_before_leaving = rec.done == true
  H.snapshot('waiting')
  H.input('<Esc>')
  H.wait('the cancellation to be acknowledged', function()
    return rec.settled_ms
  end)
  H.snapshot('left')
end)
