"""Inline code completion."""
