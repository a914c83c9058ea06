-- Plugin chat: pick the agent (:QodeAssistChatAgent, vim.ui.select scripted), open the chat with
-- a message (:QodeAssistChat …) and watch the answer stream into the chat buffer (thinking
-- folded, text appended in place, "⏳ streaming…" in the winbar and "QA …" in the status line
-- until the terminal event). Then start a new chat, reopen the first one from
-- :QodeAssistChatList, and send a second message that the provider refuses (failed event).
-- A message sent while the first answer streams is not sent (a warning says to cancel first).
local here = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2))
local H = dofile(vim.fs.joinpath(here, 'harness.lua'))

local chat = function()
  return require('qodeassist.chat').session
end

--- The chat buffer as the user sees it.
local function chat_state()
  local session = chat()
  local state = H.state()
  state.chat_lines = H.lines(session.buf)
  state.chat_status = vim.b[session.buf].qodeassist_chat_status
  local win = vim.fn.win_findbuf(session.buf)[1]
  if win then
    state.winbar = vim.wo[win].winbar
    state.closed_folds = vim.api.nvim_win_call(win, function()
      local folds = {}
      local lnum = 1
      while lnum <= vim.fn.line('$') do
        local fold_end = vim.fn.foldclosedend(lnum)
        if fold_end ~= -1 then
          table.insert(folds, { lnum, fold_end })
          lnum = fold_end
        end
        lnum = lnum + 1
      end
      return folds
    end)
  end
  state.chat_id = session.chat_id
  state.busy = session.busy
  return state
end

local function snap(name)
  H.report.snapshots[name] = chat_state()
end

local function has_line(pattern)
  for _, line in ipairs(H.lines(chat().buf)) do
    if line:find(pattern, 1, true) then
      return true
    end
  end
end

local function wait_idle(what)
  H.wait(what, function()
    return not chat().busy and not chat().awaiting
  end)
end

H.run(function()
  H.fake_ui({ select = { 'Embedded Chat', H.params.message } })
  H.start_plugin()
  vim.cmd('QodeAssistChatAgent')
  H.wait('the agent to be picked', function()
    return chat().next_agent
  end)
  vim.cmd('QodeAssistChat ' .. H.params.message)
  H.wait('the first part of the answer', function()
    return has_line(H.params.first) and chat().busy
  end)
  snap('streaming')
  -- A second message while the chat answers: refused here (the server would answer ChatBusy).
  vim.cmd('QodeAssistChatSend ' .. H.params.early)
  snap('sent_while_busy')
  wait_idle('the answer to end')
  snap('finished')

  vim.cmd('QodeAssistChatNew')
  snap('new')
  vim.cmd('QodeAssistChatList')
  H.wait('the saved chat to be shown', function()
    return chat().chat_id and has_line(H.params.first)
  end)
  snap('reopened')

  vim.cmd('QodeAssistChatSend ' .. H.params.second)
  wait_idle('the second answer to end')
  snap('failed')
end)
