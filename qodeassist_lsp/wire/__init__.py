"""L0 wire: one streaming client per provider wire protocol, readers, HTTP plumbing."""
