-- QodeAssist as an ACP agent in avante.nvim (see docs/acp.md).
require("avante").setup({
  provider = "qodeassist",
  acp_providers = {
    qodeassist = { command = "qodeassist-lsp", args = { "acp" }, env = {} },
  },
})
