-- Ghost text shown and accepted: in insert mode at the end of `    return `, type, wait for
-- the server's suggestion as ghost text, accept it with <Tab> (vim.lsp.inline_completion.get())
-- and ask the server what it counted.
local here = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2))
local H = dofile(vim.fs.joinpath(here, 'harness.lua'))

H.run(function()
  H.start()
  H.type_and_wait_for_suggestion()
  local typed_line = H.line(2)
  H.input('<Tab>')
  H.wait('the suggestion to be inserted', function()
    return H.line(2) ~= typed_line
  end)
  H.finish_acceptance()
end)
