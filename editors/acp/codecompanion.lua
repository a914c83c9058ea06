-- QodeAssist as an ACP agent in CodeCompanion.nvim (see docs/acp.md).
-- Any ACP adapter can be the base; opencode's needs no authentication.
require("codecompanion").setup({
  adapters = {
    acp = {
      qodeassist = function()
        return require("codecompanion.adapters").extend("opencode", {
          name = "qodeassist",
          formatted_name = "QodeAssist",
          commands = { default = { "qodeassist-lsp", "acp" } },
        })
      end,
    },
  },
  interactions = { chat = { adapter = "qodeassist" } },
})
