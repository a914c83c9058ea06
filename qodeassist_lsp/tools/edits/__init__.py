"""File edits the model proposes: edit blocks, create/edit/delete tools, pending edits, checkpoints.

A model never writes a file blindly. ``edit_file`` carries edit blocks (search text and its
replacement) that are matched exactly, then fuzzily, against the current text of the file (the
open buffer wins over the disk); the result is a `pending.FileEdit` shown to the user as a
``fileEdit`` event with a unified diff, applied when the user accepts it (or at once when
``[tools] auto_apply_file_edits`` is set). Before the first change a turn makes to a file, the
file's exact bytes are saved in a `checkpoints.CheckpointStore`, so undo and restore give them
back, also after a restart. The editor side (open buffers, ``workspace/applyEdit``) is reached
through the small protocols of `ports`, implemented in ``lsp/``.
"""
