"""L1 config: provider instances, agent profiles, templates, pipelines, settings, secrets."""
