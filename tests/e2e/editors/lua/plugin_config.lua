-- :QodeAssistConfig: write a setting (kept comments are checked by the test), have a bad value
-- refused, then show the settings buffer and keep its lines.
local here = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2))
local H = dofile(vim.fs.joinpath(here, 'harness.lua'))

local function notified(pattern)
  return function()
    for _, note in ipairs(H.report.notifications) do
      if note.msg:find(pattern) then
        return true
      end
    end
  end
end

H.run(function()
  H.start_plugin()
  H.wait_ready()
  vim.cmd('QodeAssistConfig completion.debounceMs 222')
  H.wait('the write to be confirmed', notified('wrote '))
  vim.cmd('QodeAssistConfig completion.debounce_ms "fast"')
  H.wait('the bad value to be refused', notified('is invalid'))
  vim.cmd('QodeAssistConfig')
  H.wait('the settings buffer', function()
    return require('qodeassist.settings').buf
  end)
  H.report.settings_buffer = H.lines(require('qodeassist.settings').buf)
end)
