-- Ghost text shown and accepted: in insert mode at the end of `    return `, type, wait for
-- the server's suggestion as ghost text, accept it with <Tab> (vim.lsp.inline_completion.get())
-- and ask the server what it counted.
local here = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2))
local H = dofile(vim.fs.joinpath(here, 'harness.lua'))

H.run(function()
  H.start()
  H.accept_suggestion_with_tab()
  H.finish_acceptance()
end)
