-- Plugin chat, cancelled mid-stream: send a message whose answer the provider starts and then
-- holds open; once its first text is in the chat buffer, :QodeAssistChatCancel ends it (the
-- server closes the provider stream and sends the `cancelled` event). Then, in a new chat, the
-- event kinds no loopback provider produces here (tool calls and results, file edits, usage, a
-- max_tokens stop) are fed to the notification handler to check how they render.
local here = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2))
local H = dofile(vim.fs.joinpath(here, 'harness.lua'))

local function session()
  return require('qodeassist.chat').session
end

local function snap(name)
  local state = H.state()
  state.chat_lines = H.lines(session().buf)
  state.chat_status = vim.b[session().buf].qodeassist_chat_status
  state.busy = session().busy
  H.report.snapshots[name] = state
end

H.run(function()
  H.start_plugin()
  vim.cmd('QodeAssistChatSend ' .. H.params.message)
  H.wait('the first part of the answer', function()
    for _, line in ipairs(H.lines(session().buf)) do
      if line:find(H.params.first, 1, true) then
        return true
      end
    end
  end)
  snap('streaming')
  vim.cmd('QodeAssistChatCancel')
  H.wait('the request to end', function()
    return not session().busy
  end)
  snap('cancelled')

  vim.cmd('QodeAssistChatNew')
  local s = session()
  s.chat_id, s.request_id, s.busy = 'synthetic', 'r1', true
  local on_event = vim.lsp.handlers['qodeassist/chat/event']
  for _, ev in ipairs(H.params.synthetic) do
    on_event(nil, vim.tbl_extend('force', { chatId = 'synthetic', requestId = 'r1' }, ev), {})
  end
  snap('rendered')
end)
