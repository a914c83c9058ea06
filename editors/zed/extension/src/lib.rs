//! Zed extension that starts the `qodeassist-lsp` language server.
//!
//! Zed starts only the language servers an extension declares; this one declares `qodeassist`
//! (see extension.toml) and tells Zed how to run it. Everything else is configured in Zed's
//! settings.json under `"lsp": {"qodeassist": {...}}`:
//!
//! * `binary.path` / `binary.arguments` / `binary.env`: the command (default: `qodeassist-lsp`
//!   found on the PATH of the worktree's shell);
//! * `initialization_options`: sent as `initializationOptions` (the sections of settings.toml);
//! * `settings` (optional): what `workspace/configuration` and `workspace/didChangeConfiguration`
//!   carry; defaults to the initialization options, so both paths agree.

use zed_extension_api::{self as zed, serde_json, settings::LspSettings, LanguageServerId, Result};

const SERVER: &str = "qodeassist";
const EXECUTABLE: &str = "qodeassist-lsp";

struct QodeAssistExtension;

impl zed::Extension for QodeAssistExtension {
    fn new() -> Self {
        QodeAssistExtension
    }

    fn language_server_command(
        &mut self,
        _language_server_id: &LanguageServerId,
        worktree: &zed::Worktree,
    ) -> Result<zed::Command> {
        let binary = LspSettings::for_worktree(SERVER, worktree)
            .ok()
            .and_then(|settings| settings.binary);
        let configured = binary.as_ref().and_then(|b| b.path.clone());
        let command = match configured {
            // A bare name is looked up on the worktree's PATH, a path is used as is.
            Some(path) if !path.contains('/') && !path.contains('\\') => {
                worktree.which(&path).unwrap_or(path)
            }
            Some(path) => path,
            None => worktree.which(EXECUTABLE).ok_or_else(|| {
                format!(
                    "{EXECUTABLE} was not found on PATH: install it (pipx install qodeassist-lsp) \
                     or set lsp.{SERVER}.binary.path in settings.json"
                )
            })?,
        };
        let args = binary
            .as_ref()
            .and_then(|b| b.arguments.clone())
            .unwrap_or_default();
        let mut env = worktree.shell_env();
        if let Some(extra) = binary.and_then(|b| b.env) {
            env.extend(extra);
        }
        Ok(zed::Command { command, args, env })
    }

    fn language_server_initialization_options(
        &mut self,
        _language_server_id: &LanguageServerId,
        worktree: &zed::Worktree,
    ) -> Result<Option<serde_json::Value>> {
        Ok(LspSettings::for_worktree(SERVER, worktree)
            .ok()
            .and_then(|settings| settings.initialization_options))
    }

    fn language_server_workspace_configuration(
        &mut self,
        _language_server_id: &LanguageServerId,
        worktree: &zed::Worktree,
    ) -> Result<Option<serde_json::Value>> {
        // Zed sends this object in `workspace/didChangeConfiguration` after start-up and answers
        // the server's `workspace/configuration` (section "qodeassist") from it. Serve the same
        // settings as the initialization options (unless `settings` is given), so that no path
        // hands the server an empty object that would replace them.
        let settings = LspSettings::for_worktree(SERVER, worktree).ok();
        let section = settings
            .as_ref()
            .and_then(|s| s.settings.clone())
            .or_else(|| settings.as_ref().and_then(|s| s.initialization_options.clone()))
            .map(|value| match value.get(SERVER) {
                Some(inner) => inner.clone(),
                None => value,
            });
        Ok(section.map(|section| serde_json::json!({ SERVER: section })))
    }
}

zed::register_extension!(QodeAssistExtension);
