"""Agent loading: one test per broken case, each checking the exact message and location."""

from pathlib import Path

import pytest

from qodeassist_lsp.config.definitions import Layer


def only(config, severity="error"):
    return [p for p in config.problems if p.severity == severity]


def test_valid_tree_merges_extends_and_drops_abstract(tree) -> None:
    config = tree.load()
    assert only(config) == []
    assert set(config.agents) == {"Chat"}
    chat = config.agents["Chat"]
    assert chat.body["stream"] is True and chat.body["temperature"] == 0.2
    assert "messages" in chat.body
    assert chat.provider_instance == "Local" and chat.endpoint == "/v1/chat/completions"
    assert chat.extends_chain == ("Wire Base", "Chat")


def test_unknown_key_warns_with_suggestion_and_line(tree) -> None:
    path = tree.write(
        "config/agents/mine.toml",
        """
        name = "Mine"
        extends = "Chat"
        modle = "x"
    """,
    )
    config = tree.load()
    assert f"{path}:3: warning: unknown key 'modle' is ignored; did you mean 'model'?" in (
        tree.messages(config)
    )
    assert "Mine" in config.agents


def test_unknown_match_key_warns(tree) -> None:
    path = tree.write(
        "config/agents/mine.toml",
        """
        name = "Mine"
        extends = "Chat"
        [match]
        file_pattern = ["*.py"]
    """,
    )
    assert (
        f"{path}:4: warning: unknown key 'match.file_pattern' is ignored; did you mean "
        "'file_patterns'?" in tree.messages(tree.load())
    )


def test_extends_unknown_agent_is_an_error_with_suggestion(tree) -> None:
    path = tree.write("config/agents/mine.toml", 'name = "Mine"\nextends = "Chatt"\n')
    config = tree.load()
    assert (
        f"{path}:2: error: agent 'Mine' extends unknown agent 'Chatt'; did you mean "
        "'Chat'?" in tree.messages(config)
    )
    assert "Mine" not in config.agents and "Chat" in config.agents


def test_extends_cycle_is_an_error(tree) -> None:
    tree.write("config/agents/a.toml", 'name = "A"\nextends = "B"\n')
    tree.write("config/agents/b.toml", 'name = "B"\nextends = "A"\n')
    config = tree.load()
    messages = "\n".join(tree.messages(config))
    assert "cycle" in messages and "A" not in config.agents and "B" not in config.agents


def test_self_extends_is_a_cycle(tree) -> None:
    tree.write("config/agents/a.toml", 'name = "A"\nextends = "A"\n')
    assert "cycle" in "\n".join(tree.messages(tree.load()))


def test_extends_depth_limit(tree) -> None:
    tree.write("config/agents/d0.toml", 'name = "D0"\nextends = "Chat"\n')
    for i in range(1, 34):
        tree.write(f"config/agents/d{i}.toml", f'name = "D{i}"\nextends = "D{i - 1}"\n')
    config = tree.load()
    assert "D20" in config.agents
    assert "D33" not in config.agents
    assert any("deeper than 32" in m for m in tree.messages(config))


def test_newer_schema_version_is_rejected_with_upgrade_hint(tree) -> None:
    path = tree.write("config/agents/new.toml", 'schema_version = 2\nname = "New"\n')
    assert (
        f"{path}:1: error: schema_version 2 is newer than this qodeassist-lsp understands "
        "(1); upgrade with `pip install -U qodeassist-lsp`" in tree.messages(tree.load())
    )


def test_missing_required_key_names_the_agent(tree) -> None:
    tree.write("config/agents/nomodel.toml", 'name = "NoModel"\nextends = "Wire Base"\n')
    config = tree.load()
    assert any("'NoModel' has no model" in m for m in tree.messages(config))
    assert "NoModel" not in config.agents


def test_missing_name_is_an_error(tree) -> None:
    path = tree.write("config/agents/anon.toml", 'model = "x"\n')
    assert f'{path}:1: error: agent has no name; add name = "…" at the top' in tree.messages(
        tree.load()
    )


def test_body_that_is_not_json_points_at_the_body_key(tree) -> None:
    path = tree.write(
        "config/agents/bad.toml",
        """
        name = "Bad"
        extends = "Chat"

        [body]
        prompt = "{{ ctx.prefix }}"
    """,
    )
    config = tree.load()
    [problem] = only(config)
    assert problem.file == str(path) and problem.line == 5
    assert "[body] failed to render to valid JSON" in problem.message
    assert "prompt" in problem.message and "tojson" in problem.message
    assert "Bad" not in config.agents


def test_body_template_referencing_unknown_ctx_key_fails_at_load(tree) -> None:
    tree.write(
        "config/agents/typo.toml",
        """
        name = "Typo"
        extends = "Chat"
        [body]
        prompt = "{{ ctx.prefx | tojson }}"
    """,
    )
    assert any("undefined" in m and "prefx" in m for m in tree.messages(tree.load()))


def test_unknown_provider_instance_is_an_error(tree) -> None:
    path = tree.write(
        "config/agents/p.toml",
        """
        name = "P"
        extends = "Chat"
        provider_instance = "Locl"
    """,
    )
    assert (
        f"{path}:3: error: agent 'P' uses provider instance 'Locl', which does not exist; "
        "did you mean 'Local'?" in tree.messages(tree.load())
    )


def test_bundled_names_cannot_be_shadowed_but_can_be_extended(tree) -> None:
    path = tree.write("config/agents/chat.toml", 'name = "Chat"\nmodel = "mine"\n')
    tree.write("config/agents/mine.toml", 'name = "My Chat"\nextends = "Chat"\nmodel = "m2"\n')
    config = tree.load()
    assert any(
        m.startswith(f"{path}:1: error: 'Chat' is a bundled agent and cannot be replaced")
        for m in tree.messages(config)
    )
    assert config.agents["Chat"].model == "m1"
    assert config.agents["My Chat"].model == "m2"
    assert config.agents["My Chat"].layer is Layer.USER


def test_two_user_files_with_one_name_warn_and_the_later_wins(tree) -> None:
    tree.write("config/agents/a.toml", 'name = "Dup"\nextends = "Chat"\nmodel = "first"\n')
    tree.write("config/agents/b.toml", 'name = "Dup"\nextends = "Chat"\nmodel = "second"\n')
    config = tree.load()
    assert config.agents["Dup"].model == "second"
    assert any("also defined in" in m for m in tree.messages(config))


def test_project_agents_layer_on_top_of_user_agents(tree) -> None:
    tree.write("config/agents/a.toml", 'name = "Team"\nextends = "Chat"\nmodel = "user"\n')
    tree.write(
        "project/.qodeassist/agents/a.toml", 'name = "Team"\nextends = "Chat"\nmodel = "project"\n'
    )
    config = tree.load()
    assert config.agents["Team"].model == "project"
    assert config.agents["Team"].layer is Layer.PROJECT
    assert only(config, "warning") == []


def test_one_broken_file_never_blocks_the_others(tree) -> None:
    tree.write("config/agents/broken.toml", 'name = "Broken"\nthis is = = not toml\n')
    tree.write("config/agents/fine.toml", 'name = "Fine"\nextends = "Chat"\n')
    config = tree.load()
    assert "Fine" in config.agents
    assert any("invalid TOML" in m and ":2:" in m for m in tree.messages(config))


def test_abstract_and_hidden_are_not_inherited(tree) -> None:
    tree.write("config/agents/h.toml", 'name = "H"\nextends = "Chat"\nhidden = true\n')
    tree.write("config/agents/h2.toml", 'name = "H2"\nextends = "H"\n')
    config = tree.load()
    assert config.agents["H"].hidden is True
    assert config.agents["H2"].hidden is False


def test_tables_merge_arrays_and_scalars_replace(tree) -> None:
    tree.write(
        "config/agents/base.toml",
        """
        name = "Base2"
        extends = "Chat"
        tags = ["a", "b"]
        [body.options]
        stop = ["x", "y"]
        top_k = 5
    """,
    )
    tree.write(
        "config/agents/child.toml",
        """
        name = "Child"
        extends = "Base2"
        tags = ["c"]
        [body.options]
        stop = ["z"]
    """,
    )
    child = tree.load().agents["Child"]
    assert child.tags == ["c"]
    assert child.body["options"] == {"stop": ["z"], "top_k": 5}
    assert child.body["temperature"] == 0.2


def test_wrong_type_names_key_and_line(tree) -> None:
    path = tree.write(
        "config/agents/t.toml", 'name = "T"\nextends = "Chat"\nenable_tools = "yes"\n'
    )
    messages = tree.messages(tree.load())
    assert any(m.startswith(f"{path}:3: error: enable_tools:") for m in messages), messages


def test_unknown_cache_breakpoint_warns(tree) -> None:
    tree.write(
        "config/agents/c.toml",
        'name = "C"\nextends = "Chat"\ncache_breakpoints = ["system", "sytem"]\n',
    )
    config = tree.load()
    assert "C" in config.agents
    assert any("cache_breakpoints value 'sytem' is ignored" in m for m in tree.messages(config))


def test_system_prompt_reads_bundled_files_and_reports_missing_ones(tree) -> None:
    tree.write(
        "config/agents/ok.toml",
        'name = "Ok"\nextends = "Chat"\nsystem_prompt = \'{{ read_file(":/personas/p.md") }}\'\n',
    )
    path = tree.write(
        "config/agents/missing.toml",
        'name = "Missing"\nextends = "Chat"\n'
        "system_prompt = '{{ read_file(\":/personas/nope.md\") }}'\n",
    )
    config = tree.load()
    assert "Ok" in config.agents and "Missing" not in config.agents
    assert any(
        m.startswith(f"{path}:3: error: read_file(':/personas/nope.md'): no such file")
        for m in tree.messages(config)
    )


def test_system_prompt_needing_a_project_is_not_a_load_error(tree) -> None:
    tree.write(
        "config/agents/proj.toml",
        'name = "Proj"\nextends = "Chat"\n'
        "system_prompt = '{{ read_file(\"${PROJECT_DIR}/RULES.md\") }}'\n",
    )
    config = tree.load()
    assert "Proj" in config.agents


def test_extra_files_validate_like_user_agents(tree, tmp_path: Path) -> None:
    extra = tree.write("elsewhere/x.toml", 'name = "X"\nextends = "Chat"\n')
    assert "X" in tree.load(extra).agents


@pytest.mark.parametrize("value", ["[]", "{}"])
def test_empty_body_is_an_error(tree, value: str) -> None:
    tree.write(
        "config/agents/e.toml",
        f'name = "E"\nprovider_instance = "Local"\nmodel = "m"\nbody = {value}\n',
    )
    config = tree.load()
    assert "E" not in config.agents
    assert any("body" in m for m in tree.messages(config))
