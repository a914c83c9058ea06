-- Plugin plan mode: :QodeAssistChatPlan sends in plan mode; the proposed plan is drawn as a
-- checklist; :QodeAssistPlanApprove runs it, each step's answer streams under `## Step N`, and
-- the checklist is rewritten in place until every step is done; reopened, the chat shows it.
local here = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2))
local H = dofile(vim.fs.joinpath(here, 'harness.lua'))

local function session()
  return require('qodeassist.chat').session
end

local function has_line(text)
  for _, line in ipairs(H.lines(session().buf)) do
    if line == text then
      return true
    end
  end
end

local function snap(name)
  local state = H.state()
  state.chat_lines = H.lines(session().buf)
  state.busy = session().busy
  H.report.snapshots[name] = state
end

H.run(function()
  H.start_plugin()
  vim.cmd('QodeAssistChatPlan ' .. H.params.message)
  H.wait('the proposed plan', function()
    return has_line('**Plan** · proposed')
  end)
  H.wait('the planning turn to end', function()
    return not session().busy
  end)
  snap('proposed')
  vim.cmd('QodeAssistPlanApprove')
  H.wait('the plan to be done', function()
    return has_line('**Plan** · done') and not session().busy
  end)
  snap('done')
  -- Reopened from the server's history, the chat shows its stored plan again.
  local chat_id = session().chat_id
  vim.cmd('QodeAssistChatNew')
  local loaded = false
  require('qodeassist.chat').load(chat_id, function()
    loaded = true
  end)
  H.wait('the chat to be reopened', function()
    return loaded
  end)
  snap('reopened')
end)
