-- Plugin edit apply: the chat's agent (with tools) calls edit_file on the file open in Neovim;
-- the server asks permission for the write tool (window/showMessageRequest, answered "Allow
-- once" through the plugin's vim.ui.select) and shows the proposed change as a fileEdit event.
-- The chat buffer shows the diff; `ga` on the block applies it (workspace/applyEdit changes
-- the open buffer), `gu` undoes it (the old text comes back). Real keystrokes throughout.
local here = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2))
local H = dofile(vim.fs.joinpath(here, 'harness.lua'))

local function session()
  return require('qodeassist.chat').session
end

local function chat_state()
  local state = H.state()
  state.chat_lines = H.lines(session().buf)
  return state
end

local function snap(name)
  H.report.snapshots[name] = chat_state()
end

--- The status in the header of the one edit block of the chat.
local function edit_status()
  for _, edit in pairs(session().edits) do
    return edit.ev.status
  end
end

--- Put the chat window's cursor on the edit block's header line and type ``keys``.
local function press_on_edit(keys)
  local win = vim.fn.win_findbuf(session().buf)[1]
  vim.api.nvim_set_current_win(win)
  for _, line_no in ipairs(vim.fn.range(1, vim.api.nvim_buf_line_count(session().buf))) do
    if vim.startswith(vim.fn.getbufline(session().buf, line_no)[1], '📝') then
      vim.api.nvim_win_set_cursor(win, { line_no, 0 })
    end
  end
  H.input(keys)
end

H.run(function()
  H.fake_ui({ select = { 'Allow once' } })
  H.start_plugin()
  H.wait_ready()
  vim.cmd('QodeAssistChatAgent ' .. H.params.agent)
  vim.cmd('QodeAssistChat ' .. H.params.message)
  H.wait('the answer to end with an edit block', function()
    return not session().busy and edit_status() == 'pending'
  end)
  snap('proposed')

  press_on_edit('ga')
  H.wait('the edit to reach the buffer', function()
    return H.line(2) == H.params.applied_line and edit_status() == 'applied'
  end)
  snap('applied')

  press_on_edit('gu')
  H.wait('the undo to restore the buffer', function()
    return H.line(2) ~= H.params.applied_line and edit_status() == 'undone'
  end)
  snap('undone')
end)
