"""Start, adopt, watch and stop the local model server of a provider instance (``[launch]``).

One module per part (docs/architecture.md lists them): `supervisor.ProviderLauncher` and
`LauncherState`, `errors.LaunchError` and `EX_CONFIG`, `spawn.OWNER_PID_ENV`. Nothing is
re-exported here: a thread importing a module of the package directly while another runs this
``__init__`` would deadlock on the import locks (tests/unit/test_import_graph.py).
"""
