-- Plugin edit broken (issue 47): the chat's agent proposes an edit_file change that leaves the
-- open Python file unparsable. The edit block says so under its header; `ga` asks again
-- (vim.ui.select, kind 'qodeassist.confirm', "Cancel" first) and applies only on "Apply anyway".
local here = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2))
local H = dofile(vim.fs.joinpath(here, 'harness.lua'))

local function session()
  return require('qodeassist.chat').session
end

local function edit_status()
  for _, edit in pairs(session().edits) do
    return edit.ev.status
  end
end

local function snap(name)
  local state = H.state()
  state.chat_lines = H.lines(session().buf)
  H.report.snapshots[name] = state
end

H.run(function()
  H.fake_ui({ select = { 'Allow once', H.params.answer } })
  H.start_plugin()
  H.wait_ready()
  vim.cmd('QodeAssistChatAgent ' .. H.params.agent)
  vim.cmd('QodeAssistChat ' .. H.params.message)
  H.wait('the answer to end with an edit block', function()
    return not session().busy and edit_status() == 'pending'
  end)
  snap('proposed')

  local win = vim.fn.win_findbuf(session().buf)[1]
  vim.api.nvim_set_current_win(win)
  for line_no = 1, vim.api.nvim_buf_line_count(session().buf) do
    if vim.startswith(vim.fn.getbufline(session().buf, line_no)[1], '📝') then
      vim.api.nvim_win_set_cursor(win, { line_no, 0 })
    end
  end
  H.input('ga')
  H.wait('the second question', function()
    return #H.report.ui == 2
  end)
  if H.params.answer == 'Apply anyway' then
    H.wait('the edit to reach the buffer', function()
      return edit_status() == 'applied'
    end)
  else
    -- The picker answered on the main loop; whatever it did is done after one more turn.
    local turned = false
    vim.schedule(function()
      vim.schedule(function()
        turned = true
      end)
    end)
    H.wait('the answer to be handled', function()
      return turned
    end)
  end
  snap('answered')
end)
