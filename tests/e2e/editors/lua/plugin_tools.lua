-- Plugin tools: the chat's agent (with tools) first calls `diagnostics` on the open file (the
-- server asks the editor with qodeassist/diagnostics; the plugin answers from vim.diagnostic),
-- then `terminal`, whose permission the server asks with window/showMessageRequest (the
-- plugin's vim.ui.select, scripted to pick params.answer), then answers in text.
local here = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2))
local H = dofile(vim.fs.joinpath(here, 'harness.lua'))

local function session()
  return require('qodeassist.chat').session
end

H.run(function()
  H.fake_ui({ select = { H.params.answer } })
  H.start_plugin()
  H.wait_ready()
  local ns = vim.api.nvim_create_namespace('test.linter')
  vim.diagnostic.set(ns, H.buf, {
    {
      lnum = 1,
      col = 4,
      message = 'return without a value',
      severity = vim.diagnostic.severity.WARN,
      source = 'testlint',
    },
  })
  vim.cmd('QodeAssistChatAgent ' .. H.params.agent)
  vim.cmd('QodeAssistChat ' .. H.params.message)
  H.wait('the answer to end', function()
    return session().chat_id and not session().busy and not session().awaiting
  end)
  H.report.snapshots.answered = { chat_lines = H.lines(session().buf) }
end)
