"""Tests in a real VS Code (code-server in headless Chromium): one package, so its browser stops after its last test."""
