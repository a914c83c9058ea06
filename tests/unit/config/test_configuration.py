def test_settings_problems_are_part_of_the_snapshot(tree) -> None:
    path = tree.write("config/settings.toml", "[completion]\ndebounce_mss = 10\n")
    tree.write("project/.qodeassist/settings.toml", "[completion]\nlines_before = 12\n")
    config = tree.load()
    assert config.settings.completion.lines_before == 12
    assert any(
        m.startswith(f"{path}:2: warning:") and "debounce_ms" in m for m in tree.messages(config)
    )


def test_errors_property_filters_by_severity(tree) -> None:
    tree.write("config/agents/x.toml", 'name = "X"\nextends = "Nope"\nmodle = 1\n')
    config = tree.load()
    assert {p.severity for p in config.errors} == {"error"}
    assert len(config.errors) < len(config.problems)
