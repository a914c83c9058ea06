"""Test support code shared by the unit and end-to-end suites (not a test module)."""
