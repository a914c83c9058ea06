"""Inline code completion: triggers, context, one upstream call per suggestion, cleanup.

The L5 handlers import ``service`` (``CompletionService``) and ``requests``; the modules hold
one concern each (``languages``, ``context_builder``, ``triggers``, ``debounce``,
``extra_context``, ``postprocess``, ``overlap``, ``typed_ahead``, ``generation``, ``stats``,
``service``, ``settings``). Nothing is imported here, so the host can read the ``[completion]``
section (``settings``) without loading the service. See ``docs/completion.md``.
"""
