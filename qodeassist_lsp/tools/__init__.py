"""L3 tool kit: the built-in tools sessions can offer to a model, and the permission gate.

``kit.ToolKit`` registers the enabled tools on each chat session (read-class tools only for the
quick refactor); ``permissions.PermissionGate`` applies the ``[tools.permissions]`` policy before
every call. What the tools need from the editor (workspace folders, ignore rules, open buffers,
diagnostics, asking the user) comes in through small protocols that the LSP layer implements.
"""
