-- Plugin extmark renderer, partial accept: with a two-line suggestion shown, accept the next
-- word (<M-Right>), then the next line (<M-Down>), then the rest (<Tab>); snapshot after each.
-- Partial accepts narrow the ghost text locally; only the last one runs the item's command.
local here = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2))
local H = dofile(vim.fs.joinpath(here, 'harness.lua'))

local function wait_changed(what, before)
  H.wait(what, function()
    return vim.api.nvim_buf_get_changedtick(H.buf) ~= before and H.ghosts()[1]
  end)
end

H.run(function()
  H.start_plugin()
  H.type_and_wait_for_suggestion()
  H.report.requests_when_shown = #H.requests('textDocument/inlineCompletion')
  local tick = vim.api.nvim_buf_get_changedtick(H.buf)
  H.input('<M-Right>')
  wait_changed('the next word to be inserted', tick)
  H.snapshot('word')
  tick = vim.api.nvim_buf_get_changedtick(H.buf)
  H.input('<M-Down>')
  wait_changed('the next line to be inserted', tick)
  H.snapshot('line')
  H.sleep(300) -- longer than the debounce: a new request would have been sent by now
  H.report.requests_before_accept = #H.requests('textDocument/inlineCompletion')
  H.report.commands_before_accept = #H.requests('workspace/executeCommand')
  tick = vim.api.nvim_buf_get_changedtick(H.buf)
  H.input('<Tab>')
  H.wait('the rest to be inserted', function()
    return vim.api.nvim_buf_get_changedtick(H.buf) ~= tick
  end)
  H.finish_acceptance()
end)
