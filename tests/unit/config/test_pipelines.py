from qodeassist_lsp.config.pipelines import (
    CHAT_ASSISTANT,
    CHAT_COMPRESSION,
    CHAT_ROUTER,
    CODE_COMPLETION,
    QUICK_REFACTOR,
    PipelinesStatus,
)


def test_bundled_defaults_apply_without_user_file(tree) -> None:
    pipelines = tree.load().pipelines
    assert pipelines.roster(CHAT_ASSISTANT) == ("Chat",)
    assert pipelines.status is PipelinesStatus.OK


def test_user_file_overrides_key_by_key(tree) -> None:
    tree.write(
        "bundled/pipelines.toml",
        '[pipelines]\ncode_completion = ["A"]\nchat_assistant = ["Chat"]\nquick_refactor = "R"\n',
    )
    tree.write("config/pipelines.toml", '[pipelines]\ncode_completion = ["B", "A"]\n')
    pipelines = tree.load().pipelines
    assert pipelines.roster(CODE_COMPLETION) == ("B", "A")
    assert pipelines.agent(QUICK_REFACTOR) == "R" and pipelines.roster(CHAT_ASSISTANT) == ("Chat",)


def test_project_file_overrides_user_file(tree) -> None:
    tree.write("config/pipelines.toml", '[pipelines]\nquick_refactor = "User"\n')
    tree.write("project/.qodeassist/pipelines.toml", '[pipelines]\nquick_refactor = "Proj"\n')
    assert tree.load().pipelines.agent(QUICK_REFACTOR) == "Proj"


def test_parse_rules_of_the_original(tree) -> None:
    long = "x" * 300
    tree.write(
        "config/pipelines.toml",
        f"""
        [pipelines]
        code_completion = ["  Chat  ", "Chat", 3, "", "{long}"]
        chat_compression = ["", "  First ", "Second"]
        quick_refactor = ""
        colde_completion = []
    """,
    )
    config = tree.load()
    pipelines = config.pipelines
    assert pipelines.roster(CODE_COMPLETION) == ("Chat", "x" * 256)
    assert pipelines.agent(CHAT_COMPRESSION) == "First"
    assert pipelines.agent(QUICK_REFACTOR) == ""
    messages = tree.messages(config)
    assert any("'Chat' is listed twice" in m for m in messages)
    assert any("3 is not an agent name" in m for m in messages)
    assert any(
        "unknown pipeline 'colde_completion' is ignored; did you mean 'code_completion'?" in m
        for m in messages
    )


def test_missing_pipelines_table_keeps_defaults(tree) -> None:
    tree.write("config/pipelines.toml", '[pipeline]\nchat_assistant = ["X"]\n')
    config = tree.load()
    assert config.pipelines.roster(CHAT_ASSISTANT) == ("Chat",)
    assert config.pipelines.status is PipelinesStatus.SCHEMA_ERROR


def test_broken_file_keeps_defaults(tree) -> None:
    tree.write("config/pipelines.toml", "[pipelines\n")
    config = tree.load()
    assert config.pipelines.roster(CHAT_ASSISTANT) == ("Chat",)
    assert config.pipelines.status is PipelinesStatus.PARSE_ERROR


def test_pipelines_naming_missing_agents_warn(tree) -> None:
    tree.write("config/pipelines.toml", '[pipelines]\nquick_refactor = "Chatt"\n')
    assert any(
        "'Chatt', which is not loaded; did you mean 'Chat'?" in m
        for m in tree.messages(tree.load())
    )


def test_a_missing_agent_is_located_at_its_pipelines_entry(tree) -> None:
    # Issue 43: the warning had no file:line, unlike every other configuration problem.
    path = tree.write(
        "config/pipelines.toml",
        '[pipelines]\nchat_assistant = ["Chat"]\nquick_refactor = "Chatt"\n',
    )
    [problem] = [p for p in tree.load().problems if "'Chatt'" in p.message]
    assert (problem.file, problem.line) == (str(path), 3)
    assert problem.format().startswith(f"{path}:3: warning: pipelines name agent 'Chatt'")


def test_pipelines_of() -> None:
    from qodeassist_lsp.config.pipelines import Pipelines

    p = Pipelines(
        {"code_completion": ("A",), "chat_assistant": ("A", "B"), "quick_refactor": ("A",)}
    )
    assert p.pipelines_of("A") == ["code_completion", "chat_assistant", "quick_refactor"]
    assert p.pipelines_of("B") == ["chat_assistant"]


def test_chat_router_is_one_agent_and_off_by_default(tree) -> None:
    assert tree.load().pipelines.agent(CHAT_ROUTER) == ""
    tree.write("config/pipelines.toml", '[pipelines]\nchat_router = ["Router", "Other"]\n')
    pipelines = tree.load().pipelines
    assert pipelines.agent(CHAT_ROUTER) == "Router" and "Router" in pipelines.agent_names()
    assert pipelines.pipelines_of("Router") == ["chat_router"]


def test_what_a_request_may_name_is_the_loaded_roster_then_auto() -> None:
    from qodeassist_lsp.config.pipelines import AUTO, Pipelines

    p = Pipelines({"chat_assistant": ("A", "Gone", "B"), "chat_router": ("R",)})
    loaded = p.loaded({"A", "B", "R"})
    assert loaded.roster(CHAT_ASSISTANT) == ("A", "B") and loaded.agent(CHAT_ASSISTANT) == "A"
    assert loaded.choices(CHAT_ASSISTANT) == ("A", "B", AUTO)
    assert loaded.picker(CHAT_ASSISTANT) == "R"
    assert p.loaded({"A", "B"}).choices(CHAT_ASSISTANT) == ("A", "B")  # the router is not loaded
    assert p.loaded({"R"}).choices(CHAT_ASSISTANT) == ()  # nothing to pick among: no auto
    assert p.loaded({"A", "R"}).choices(CODE_COMPLETION) == ()  # no picker, no agents
    assert p.roster(CHAT_ASSISTANT) == ("A", "Gone", "B")  # the table itself is unchanged
