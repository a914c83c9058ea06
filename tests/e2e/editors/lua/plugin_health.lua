-- Plugin health check: with the server attached, run `:checkhealth qodeassist` and keep the
-- report's lines (the test looks for OK lines and the absence of ERROR/WARNING lines).
local here = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2))
local H = dofile(vim.fs.joinpath(here, 'harness.lua'))

H.run(function()
  H.start_plugin()
  H.wait_ready()
  vim.cmd('checkhealth qodeassist')
  H.report.health = H.lines(vim.api.nvim_get_current_buf())
end)
