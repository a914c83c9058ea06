"""Next-edit suggestions: after the user changes something, the related change nearby.

``window`` cuts the fixed window around the cursor, ``prompts`` and ``model_formats`` turn the
context (edit history, window, viewed snippets, diagnostics) into a prompt for a chat model,
Sweep's next-edit models or Zeta-style models, ``rewrite`` turns the model's rewritten window
into the smallest edit (or none), and ``service`` runs one request within its time budget.
"""
