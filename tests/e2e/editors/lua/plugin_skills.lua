-- Plugin skills: the chat message prompt and :QodeAssistChat complete /skill-name at the start
-- of a message from qodeassist/skills/list (and nothing elsewhere in the message).
local here = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2))
local H = dofile(vim.fs.joinpath(here, 'harness.lua'))

H.run(function()
  H.start_plugin()
  H.wait_ready()
  local chat = require('qodeassist.chat')
  H.report.command = vim.fn.getcompletion('QodeAssistChat /', 'cmdline')
  H.report.command_prefix = vim.fn.getcompletion('QodeAssistChatSend /my', 'cmdline')
  H.report.command_later = vim.fn.getcompletion('QodeAssistChat fix /my', 'cmdline')
  H.report.input = chat.complete_input('/de', '/de', 3)
  H.report.input_later = chat.complete_input('/de', 'please /de', 10)
end)
