-- Plugin next edit after an accepted inline completion: type in insert mode, accept the ghost
-- text with <Tab> (the plugin's inline keymap); the plugin asks for the next edit at once
-- (qodeassist.next_edit.after_accept, not after its edit-pause debounce, which the test makes
-- too long to matter) and shows it. Then <Esc>, <Tab> jumps to it, <Tab> applies it.
local here = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2))
local H = dofile(vim.fs.joinpath(here, 'harness.lua'))
local api = vim.api

local marks = H.next_edit_marks

H.run(function()
  H.start_plugin()
  H.accept_suggestion_with_tab()
  H.wait('the next edit to be shown', function()
    return #marks() > 0
  end)
  H.snapshot('shown')
  H.report.snapshots.shown.marks = marks()
  H.report.snapshots.shown.mode = api.nvim_get_mode().mode
  H.input('<Esc>')
  H.wait('normal mode', function()
    return api.nvim_get_mode().mode == 'n' and #marks() > 0
  end)
  H.input('<Tab>')
  H.wait('the cursor to jump to the edit', function()
    return api.nvim_win_get_cursor(0)[1] == 1
  end)
  H.input('<Tab>')
  H.wait('the edit to be applied', function()
    return H.line(1) == 'def add(a: int, b: int) -> int:'
  end)
  H.wait('both commands to be answered', function()
    local sent = H.requests('workspace/executeCommand')
    return #sent == 2 and sent[2].done
  end)
  H.snapshot('applied')
  H.report.status = H.request('qodeassist/status')
end)
