"""L3 context engine: documents, project files, the ignore filter, token estimates."""
