-- qodeassist: defines the :QodeAssist* commands at startup. Nothing starts until
-- require('qodeassist').setup() is called (or a command is used, which runs it with defaults).
if vim.g.loaded_qodeassist then
  return
end
vim.g.loaded_qodeassist = true

if vim.fn.has('nvim-0.10') == 0 then
  vim.notify_once('qodeassist.nvim needs Neovim 0.10 or newer', vim.log.levels.WARN)
  return
end

require('qodeassist.commands').register()
