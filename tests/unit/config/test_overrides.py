from qodeassist_lsp.config.overrides import AgentOverride, effective_instance


def test_nested_and_flat_overrides(tree) -> None:
    tree.write(
        "config/agent_models.json",
        '{"Chat": {"model": "big", "provider_instance": "Local", "enable_tools": true},'
        ' "Other": "m"}',
    )
    config = tree.load()
    assert config.overrides["Chat"] == AgentOverride("big", "Local", True)
    assert config.overrides["Other"] == AgentOverride(model="m")
    assert any("override for unknown agent 'Other'" in m for m in tree.messages(config))


def test_invalid_json_is_reported_with_its_line(tree) -> None:
    path = tree.write("config/agent_models.json", '{\n"Chat": {"model": }\n}')
    config = tree.load()
    assert config.overrides == {}
    assert any(
        m.startswith(f"{path}:2: error: cannot read overrides") for m in tree.messages(config)
    )


def test_unknown_provider_override_warns(tree) -> None:
    tree.write("config/agent_models.json", '{"Chat": {"provider_instance": "Nope"}}')
    assert any("unknown provider instance 'Nope'" in m for m in tree.messages(tree.load()))


def test_the_effective_instance_is_the_override_when_it_is_loaded(tree) -> None:
    tree.write("bundled/providers/twin.toml", 'name = "Twin"\nextends = "Local"\n')
    tree.write("config/agent_models.json", '{"Chat": {"provider_instance": "Twin"}}')
    config = tree.load()
    assert not config.errors, tree.messages(config)
    assert effective_instance(config, config.agents["Chat"]) == "Twin"
    tree.write("config/agent_models.json", '{"Chat": {"provider_instance": "Nope"}}')
    config = tree.load()
    assert effective_instance(config, config.agents["Chat"]) == "Local"
