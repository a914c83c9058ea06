-- Plugin extmark renderer, typed-ahead and dismissal: once the suggestion shows, type its first
-- characters; the ghost text narrows to the rest without a new request. <Esc> hides it. Back in
-- insert mode (`a`) the rest shows again; <C-]> dismisses it, after which <Tab> is a plain
-- <Tab> again (the keymap falls back to the key).
local here = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2))
local H = dofile(vim.fs.joinpath(here, 'harness.lua'))

H.run(function()
  H.start_plugin()
  H.type_and_wait_for_suggestion()
  H.report.requests_when_shown = #H.requests('textDocument/inlineCompletion')
  local typed_line = H.line(2) .. H.params.type_ahead
  H.input(H.params.type_ahead)
  H.wait('the typed text', function()
    return H.line(2) == typed_line
  end)
  H.sleep(300) -- longer than the debounce: a new request would have been sent by now
  H.snapshot('narrowed')
  H.report.requests_after_typing = #H.requests('textDocument/inlineCompletion')

  H.input('<Esc>')
  H.wait('normal mode', function()
    return vim.api.nvim_get_mode().mode == 'n'
  end)
  H.snapshot('left')

  H.input('a')
  H.wait_ghost('the rest of the suggestion again')
  H.snapshot('again')
  H.input('<C-]>')
  H.wait('the ghost text to go', function()
    return #H.ghosts() == 0
  end)
  H.snapshot('dismissed')
  H.input('<Tab>')
  H.wait('a tab character', function()
    return H.line(2) == typed_line .. '\t'
  end)
  H.snapshot('tab')
  H.input('<Esc>')
  H.wait('normal mode', function()
    return vim.api.nvim_get_mode().mode == 'n'
  end)
  H.report.commands = #H.requests('workspace/executeCommand')
end)
