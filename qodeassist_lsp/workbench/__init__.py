"""The workbench: the engine every door serves, composed once per process from the door's ports.

A door (``lsp/``, ``acp_agent/``, ``http_api/``, the command line) hands `bench.Workbench` its
`bench.Ports` (how to ask the user, the editor's buffers, how to run a program, diagnostics,
the workspace folders, where edit status goes); the workbench builds the ignore rules, the tool
kit, the edit manager (always with the ignore rules and the parse check), skills and
``load_skill``, the MCP hub with its connect-and-wait, the permission gate and the chat service.
A rule written here cannot differ between doors.
"""
