-- qodeassist.commands: the :QodeAssist* user commands (defined by plugin/qodeassist.lua and by
-- setup(); a command used before setup() runs setup() with the defaults first).
local M = {}

local function run(module, fn)
  return function(opts)
    require('qodeassist').ensure_setup()
    require(module)[fn](opts)
  end
end

local function with_args(module, fn)
  return function(opts)
    require('qodeassist').ensure_setup()
    require(module)[fn](opts.args)
  end
end

local function plan_action(action)
  return function()
    require('qodeassist').ensure_setup()
    require('qodeassist.chat').plan(action)
  end
end

--- /skill-name completion of a chat message given as command arguments.
local function complete_skill(arglead, cmdline, pos)
  require('qodeassist').ensure_setup()
  return require('qodeassist.chat').complete_command(arglead, cmdline, pos)
end

local COMMANDS = {
  QodeAssistRefactor = {
    run('qodeassist.refactor', 'command'),
    {
      range = true,
      nargs = '*',
      desc = 'QodeAssist: refactor the selection (pick or type an instruction)',
    },
  },
  QodeAssistChat = {
    run('qodeassist.chat', 'command'),
    {
      nargs = '*',
      complete = complete_skill,
      desc = 'QodeAssist: open the chat, sending [message] if given',
    },
  },
  QodeAssistChatSend = {
    with_args('qodeassist.chat', 'send'),
    { nargs = '+', complete = complete_skill, desc = 'QodeAssist: send a message in the chat' },
  },
  QodeAssistChatPlan = {
    with_args('qodeassist.chat', 'send_plan'),
    {
      nargs = '+',
      complete = complete_skill,
      desc = 'QodeAssist: send a message in plan mode (the model writes a plan of steps first)',
    },
  },
  QodeAssistPlanApprove = {
    plan_action('approve'),
    { nargs = 0, desc = "QodeAssist: approve (run or resume) the chat's plan" },
  },
  QodeAssistPlanCancel = {
    plan_action('cancel'),
    { nargs = 0, desc = "QodeAssist: stop the chat's running plan" },
  },
  QodeAssistChatCancel = {
    run('qodeassist.chat', 'cancel'),
    { nargs = 0, desc = 'QodeAssist: cancel the chat answer in flight' },
  },
  QodeAssistChatAgent = {
    with_args('qodeassist.chat', 'pick_agent'),
    { nargs = '?', desc = 'QodeAssist: pick the agent of the next chat message' },
  },
  QodeAssistChatList = {
    run('qodeassist.chat', 'list'),
    { nargs = 0, desc = 'QodeAssist: open a saved chat' },
  },
  QodeAssistConfig = {
    run('qodeassist.settings', 'command'),
    {
      nargs = '*',
      bang = true,
      desc = 'QodeAssist: show settings, or set KEY VALUE in settings.toml (! = project file)',
    },
  },
  QodeAssistCheckpoints = {
    run('qodeassist.checkpoints', 'command'),
    {
      nargs = 0,
      bang = true,
      desc = "QodeAssist: restore a checkpoint of the chat's files (! = of every chat)",
    },
  },
  QodeAssistChatNew = {
    run('qodeassist.chat', 'new'),
    { nargs = 0, desc = 'QodeAssist: start a new chat' },
  },
}

--- Define the commands (again: idempotent).
function M.register()
  for name, spec in pairs(COMMANDS) do
    vim.api.nvim_create_user_command(name, spec[1], spec[2])
  end
end

return M
