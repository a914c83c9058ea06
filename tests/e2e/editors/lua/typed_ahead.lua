-- Typed-ahead: once the suggestion shows, type its first characters; the ghost text narrows to
-- the rest and the server answers Neovim's next automatic request from what it already has.
-- Then accept the narrowed suggestion with <Tab>.
local here = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2))
local H = dofile(vim.fs.joinpath(here, 'harness.lua'))

H.run(function()
  H.start()
  H.type_and_wait_for_suggestion()
  local typed_line = H.line(2) .. H.params.type_ahead
  H.input(H.params.type_ahead)
  H.wait_answer(#typed_line)
  H.snapshot('narrowed')
  H.report.status_before_accept = H.request('qodeassist/status')
  H.report.accept_ns = vim.uv.hrtime() -- CLOCK_MONOTONIC, like Python's time.monotonic()
  H.input('<Tab>')
  H.wait('the suggestion to be inserted', function()
    return H.line(2) ~= typed_line
  end)
  H.finish_acceptance()
end)
