-- Plugin, ghost text shown and accepted: setup() starts the server, the renderer the plugin
-- picked (native on 0.12, its extmarks on 0.11 or when forced) shows the suggestion after
-- typing, <Tab> (the plugin's default keymap) accepts it; then ask the server what it counted.
local here = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2))
local H = dofile(vim.fs.joinpath(here, 'harness.lua'))

H.run(function()
  H.start_plugin()
  H.accept_suggestion_with_tab()
  H.finish_acceptance()
  H.snapshot('normal')
end)
