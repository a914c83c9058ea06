-- Plugin next edit: rename `add` to `plus` in the definition with real keystrokes
-- (`w` then `cwplus<Esc>`); after the edit pause the plugin asks the server
-- (textDocument/copilotInlineEdit) and shows the suggested edit: the replaced range
-- highlighted, the line as it would read as a virtual line. <Tab> jumps to it, <Tab> again
-- applies it and runs its command (the server counts the acceptance).
local here = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2))
local H = dofile(vim.fs.joinpath(here, 'harness.lua'))
local api = vim.api

local marks = H.next_edit_marks

local function snapshot(name)
  H.snapshot(name)
  H.report.snapshots[name].marks = marks()
end

H.run(function()
  H.start_plugin()
  H.wait_ready()
  H.input('w')
  H.input('cwplus<Esc>')
  H.wait('the rename', function()
    return H.line(1) == 'def plus(a, b):' and api.nvim_get_mode().mode == 'n'
  end)
  H.wait('the next edit to be shown', function()
    return #marks() > 0
  end)
  snapshot('shown')
  H.input('<Tab>')
  H.wait('the cursor to jump to the edit', function()
    return api.nvim_win_get_cursor(0)[1] == 4
  end)
  snapshot('jumped')
  H.input('<Tab>')
  H.wait('the edit to be applied', function()
    return H.line(4) == 'print(plus(1, 2))'
  end)
  H.wait('workspace/executeCommand to be answered', function()
    local sent = H.requests('workspace/executeCommand')
    return #sent > 0 and sent[#sent].done
  end)
  snapshot('accepted')
  H.report.status = H.request('qodeassist/status')
end)
