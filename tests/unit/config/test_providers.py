import pytest

from qodeassist_lsp.config.client_apis import CLIENT_APIS, models_endpoint
from qodeassist_lsp.config.definitions import Layer


def test_bundled_provider_loads(tree) -> None:
    local = tree.load().providers["Local"]
    assert local.url == "http://127.0.0.1:9999/v1"
    assert local.api.name == "OpenAI Compatible" and local.is_loopback


@pytest.mark.parametrize("api", sorted(a.name for a in CLIENT_APIS.values() if not a.process))
def test_every_client_api_is_accepted(tree, api: str) -> None:
    tree.write("config/providers/p.toml", f'name = "P"\nclient_api = "{api}"\nurl = "https://x"\n')
    assert tree.load().providers["P"].client_api == api


@pytest.mark.parametrize("api", ["ACP Agent", "Claude Code", "Gemini CLI"])
def test_a_process_client_api_takes_a_command_and_env_instead_of_a_url(tree, api: str) -> None:
    tree.write(
        "config/providers/p.toml",
        f'name = "P"\nclient_api = "{api}"\ncommand = ["agent-x", "--acp"]\n'
        'package = "agent-x-npm"\nmax_processes = 2\n[env]\nAGENT_MODEL = "m"\n',
    )
    config = tree.load()
    instance = config.providers["P"]
    assert instance.command == ("agent-x", "--acp") and instance.env == {"AGENT_MODEL": "m"}
    assert instance.package == "agent-x-npm" and instance.max_processes == 2
    assert instance.url == "" and instance.is_loopback
    assert tree.messages(config) == []


def test_a_process_client_api_without_a_command_is_refused(tree) -> None:
    path = tree.write("config/providers/p.toml", 'name = "P"\nclient_api = "ACP Agent"\n')
    config = tree.load()
    assert "P" not in config.providers
    assert any(str(path) in m and "command = [" in m for m in tree.messages(config))


def test_an_http_client_api_without_a_url_is_refused(tree) -> None:
    tree.write("config/providers/p.toml", 'name = "P"\nclient_api = "Claude"\ncommand = ["x"]\n')
    config = tree.load()
    assert "P" not in config.providers
    assert any("needs url = an http:// or https:// URL" in m for m in tree.messages(config))


def test_thirteen_http_client_apis_and_three_processes() -> None:
    assert len([api for api in CLIENT_APIS.values() if not api.process]) == 13
    assert [api.name for api in CLIENT_APIS.values() if api.process] == [
        "ACP Agent",
        "Claude Code",
        "Gemini CLI",
    ]


def test_unknown_client_api_suggests_the_closest(tree) -> None:
    path = tree.write(
        "config/providers/p.toml", 'name = "P"\nclient_api = "Claud"\nurl = "https://x"\n'
    )
    config = tree.load()
    assert "P" not in config.providers
    assert any(
        m.startswith(
            f"{path}:2: error: client_api: Value error, unknown client_api "
            "'Claud' (did you mean 'Claude'?)"
        )
        for m in tree.messages(config)
    )


@pytest.mark.parametrize("url", ["ftp://x", "localhost:8080", "http://", "not a url"])
def test_bad_urls_are_rejected(tree, url: str) -> None:
    path = tree.write(
        "config/providers/p.toml", f'name = "P"\nclient_api = "Claude"\nurl = "{url}"\n'
    )
    config = tree.load()
    assert "P" not in config.providers
    assert any(
        m.startswith(f"{path}:3: error: url:") and "http://" in m for m in tree.messages(config)
    )


def test_plain_http_with_a_key_to_a_remote_host_warns(tree) -> None:
    path = tree.write(
        "config/providers/p.toml",
        'name = "P"\nclient_api = "Ollama (Native)"\n'
        'url = "http://gpu-box.lan:11434"\napi_key_ref = "qodeassist/providers/P"\n',
    )
    config = tree.load()
    assert "P" in config.providers
    assert any(
        m.startswith(f"{path}:3: warning: 'P' sends its API key over plain http://")
        for m in tree.messages(config)
    )


def test_plain_http_to_loopback_does_not_warn(tree) -> None:
    tree.write(
        "config/providers/p.toml",
        'name = "P"\nclient_api = "Ollama (Native)"\n'
        'url = "http://localhost:11434"\napi_key_ref = "x"\n',
    )
    assert not [p for p in tree.load().problems if p.severity == "warning"]


def test_user_provider_replaces_the_bundled_one_by_name(tree) -> None:
    tree.write(
        "config/providers/other_file_name.toml",
        'name = "Local"\nclient_api = "llama.cpp"\nurl = "http://127.0.0.1:8080"\n',
    )
    local = tree.load().providers["Local"]
    assert local.client_api == "llama.cpp" and local.layer is Layer.USER


def test_extends_and_abstract_providers(tree) -> None:
    tree.write(
        "config/providers/base.toml",
        'name = "Base"\nabstract = true\n'
        'client_api = "OpenRouter"\nurl = "https://openrouter.ai/api"\n[extras]\na = 1\n',
    )
    tree.write("config/providers/child.toml", 'name = "Child"\nextends = "Base"\n[extras]\nb = 2\n')
    providers = tree.load().providers
    assert "Base" not in providers
    assert providers["Child"].client_api == "OpenRouter"
    assert providers["Child"].extras == {"a": 1, "b": 2}


def test_provider_extends_depth_is_16(tree) -> None:
    tree.write(
        "config/providers/p0.toml", 'name = "P0"\nclient_api = "Claude"\nurl = "https://x"\n'
    )
    for i in range(1, 20):
        tree.write(f"config/providers/p{i}.toml", f'name = "P{i}"\nextends = "P{i - 1}"\n')
    config = tree.load()
    assert "P10" in config.providers and "P19" not in config.providers
    assert any("deeper than 16" in m for m in tree.messages(config))


def test_launch_table_is_validated(tree) -> None:
    tree.write(
        "config/providers/ok.toml",
        """
        name = "Ok"
        client_api = "llama.cpp"
        url = "http://127.0.0.1:8080"
        [launch]
        command = "llama-server"
        args = ["-m", "${MODEL_PATH}"]
        ready_url = "http://127.0.0.1:8080/health"
        auto_start = true
        [launch.env]
        MODEL_PATH = "/models/x.gguf"
    """,
    )
    path = tree.write(
        "config/providers/bad.toml",
        """
        name = "Bad"
        client_api = "llama.cpp"
        url = "http://127.0.0.1:8081"
        [launch]
        args = ["x"]
        ready_timeout_s = 0.5
        autostart = true
    """,
    )
    config = tree.load()
    ok = config.providers["Ok"]
    assert (
        ok.launch is not None
        and ok.launch.auto_start
        and ok.launch.env == {"MODEL_PATH": "/models/x.gguf"}
    )
    assert ok.launch.ready_timeout_s == 30
    assert "Bad" not in config.providers
    messages = tree.messages(config)
    assert (
        f"{path}:7: warning: unknown key 'launch.autostart' is ignored; did you mean "
        "'auto_start'?" in messages
    )
    assert any(m.startswith(f"{path}:4: error: 'Bad' has no command") for m in messages)
    assert any(m.startswith(f"{path}:6: error: launch.ready_timeout_s:") for m in messages)


def test_models_endpoint_v1_rule() -> None:
    openai = CLIENT_APIS["OpenAI Compatible"]
    assert models_endpoint(openai, "http://h/v1") == "/models"
    assert models_endpoint(openai, "http://h") == "/v1/models"
    assert models_endpoint(CLIENT_APIS["Ollama (Native)"], "http://h") == "/api/tags"


def test_the_pool_limit_is_one_on_this_machine_unlimited_remote_unless_set(tree) -> None:
    tree.write("config/providers/r.toml", 'name = "R"\nclient_api = "Claude"\nurl = "https://x"\n')
    tree.write(
        "config/providers/c.toml",
        'name = "C"\nclient_api = "Claude Code"\ncommand = ["claude"]\n',
    )
    tree.write(
        "config/providers/s.toml",
        'name = "S"\nclient_api = "Claude"\nurl = "https://x"\nmax_concurrent = 3\n',
    )
    tree.write(
        "config/providers/l.toml",
        'name = "L"\nclient_api = "llama.cpp"\nurl = "http://127.0.0.1:8080"\n',
    )
    config = tree.load()
    names = ("Local", "L", "R", "C", "S")
    limits = {name: config.providers[name].concurrency_limit for name in names}
    assert limits == {"Local": 1, "L": 1, "R": None, "C": 1, "S": 3}
    assert tree.messages(config) == []


@pytest.mark.parametrize(
    ("api", "url", "extra", "local"),
    [
        ("llama.cpp", "http://127.0.0.1:8080", "", True),
        ("Ollama (Native)", "http://localhost:11434", "", True),
        ("Ollama (OpenAI-compatible)", "http://localhost:11434/v1", "", True),
        ("LM Studio (Chat Completions)", "http://127.0.0.1:1234/v1", "", True),
        ("LM Studio (Responses API)", "http://127.0.0.1:1234/v1", "", True),
        ("llama.cpp", "https://llm.example.com", "", False),
        # A LiteLLM proxy, a company gateway or an SSH tunnel to a billed API:
        ("OpenAI Compatible", "http://127.0.0.1:4000/v1", "", False),
        ("OpenAI (Chat Completions)", "http://localhost:8443/v1", "", False),
        ("Claude", "http://127.0.0.1:9000", "", False),
        # ...unless the instance says otherwise, or starts the server itself.
        ("OpenAI Compatible", "http://127.0.0.1:8000/v1", "local = true\n", True),
        ("llama.cpp", "http://127.0.0.1:8080", "local = false\n", False),
        (
            "OpenAI Compatible",
            "http://127.0.0.1:8000/v1",
            '[launch]\ncommand = "vllm"\n',
            True,
        ),
        ("OpenAI Compatible", "https://api.example.com/v1", "local = true\n", True),
    ],
)
def test_on_this_machine_is_decided_by_what_the_provider_is(
    tree, api: str, url: str, extra: str, local: bool
) -> None:
    tree.write(
        "config/providers/p.toml", f'name = "P"\nclient_api = "{api}"\nurl = "{url}"\n{extra}'
    )
    config = tree.load()
    assert tree.messages(config) == []
    instance = config.providers["P"]
    assert instance.is_local is local
    assert instance.concurrency_limit == (1 if local else None)


def test_the_embedded_description_says_where_chat_runs() -> None:
    # Issue 43: the bundled description still said chat ran on Gemma's Question/Answer transcript.
    import tomllib

    from qodeassist_lsp.config.paths import ConfigPaths

    paths = ConfigPaths.discover(project=None, env={})
    text = (paths.bundled / "providers" / "embedded.toml").read_text(encoding="utf-8")
    description = tomllib.loads(text)["description"]
    chat = tomllib.loads(
        (paths.bundled / "agents" / "embedded_base_chat.toml").read_text(encoding="utf-8")
    )
    assert chat["provider_instance"] == "Embedded Instruct"
    assert "Embedded Instruct" in description
    assert "chat, refactor and compression use /v1/chat/completions" not in description


def test_a_key_is_optional_only_for_a_local_api_on_this_machine() -> None:
    from qodeassist_lsp.config.client_apis import key_is_optional

    compatible, claude = CLIENT_APIS["OpenAI Compatible"], CLIENT_APIS["Claude"]
    assert key_is_optional(compatible, "http://127.0.0.1:8000/v1")
    assert key_is_optional(compatible, "http://localhost:8000/v1")
    assert key_is_optional(compatible, "http://[::1]:8000/v1")
    assert not key_is_optional(compatible, "https://api.deepseek.com/v1")
    assert not key_is_optional(compatible, "http://192.168.1.20:8000/v1")
    assert not key_is_optional(claude, "http://127.0.0.1:9")
    assert key_is_optional(CLIENT_APIS["Claude Code"], "")
