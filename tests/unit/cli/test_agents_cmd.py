import json
from pathlib import Path


def test_bundled_configuration_validates_clean(run_cli) -> None:
    code, out, err = run_cli("agents", "validate")
    assert code == 0, out
    assert out == ""
    assert "0 error(s), 0 warning(s)" in err


def test_validate_reports_each_problem_as_file_line_message(run_cli, config_dir: Path) -> None:
    bad = config_dir / "agents" / "bad.toml"
    bad.write_text('name = "Bad"\nextends = "Claude Base Chatt"\nmodle = "x"\n')
    code, out, err = run_cli("agents", "validate", str(bad))
    assert code == 1
    assert out.splitlines() == [
        f"{bad.resolve()}:3: warning: unknown key 'modle' is ignored; did you mean 'model'?",
        f"{bad.resolve()}:2: error: agent 'Bad' extends unknown agent 'Claude Base Chatt'; "
        "did you mean 'Claude Base Chat'?",
    ]
    assert "1 error(s), 1 warning(s)" in err


def test_validate_a_file_outside_the_config_root(run_cli, tmp_path: Path) -> None:
    good = tmp_path / "elsewhere" / "mine.toml"
    good.parent.mkdir()
    good.write_text('name = "Mine"\nextends = "Ollama Base Chat"\nmodel = "qwen3:4b"\n')
    code, _out, err = run_cli("agents", "validate", str(good.parent))
    assert code == 0, err


def test_validate_missing_path_is_a_clear_error(run_cli) -> None:
    code, _out, err = run_cli("agents", "validate", "nope.toml")
    assert code == 1
    assert "nope.toml: no such file or folder" in err


def test_list_json_filters_by_pipeline(run_cli) -> None:
    code, out, _ = run_cli("agents", "list", "--pipeline", "completion", "--json")
    assert code == 0
    rows = json.loads(out)
    assert [r["name"] for r in rows] == ["Embedded Completion"]
    assert rows[0]["provider"] == "Embedded" and rows[0]["pipelines"] == ["code_completion"]
    assert set(rows[0]) >= {"name", "provider", "model", "pipelines", "tools", "thinking"}


def test_list_table_applies_model_overrides(run_cli, config_dir: Path) -> None:
    (config_dir / "agent_models.json").write_text('{"Embedded Chat": {"model": "tiny-chat"}}')
    code, out, _ = run_cli("agents", "list")
    assert code == 0
    line = next(line for line in out.splitlines() if line.startswith("Embedded Chat "))
    assert "tiny-chat" in line and "chat_assistant" in line


def test_render_redacts_keys_everywhere(run_cli, monkeypatch) -> None:
    planted = "sk-ant-PLANTED-0123456789abcdef"
    monkeypatch.setenv("ANTHROPIC_API_KEY", planted)
    monkeypatch.setenv("GEMINI_API_KEY", planted)
    code, out, _ = run_cli("agents", "render", "Claude Chat — Sonnet")
    assert code == 0
    assert planted not in out
    assert json.loads(out)["headers"]["x-api-key"] == "***"
    code, out, _ = run_cli("agents", "render", "Google Chat")
    assert code == 0 and planted not in out
    assert json.loads(out)["url"].endswith("&key=%2A%2A%2A")


def test_render_without_a_key_sends_no_auth_header(run_cli, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    code, out, _ = run_cli("agents", "render", "OpenAI Chat")
    assert code == 0
    assert "Authorization" not in json.loads(out)["headers"]


def test_render_unknown_agent_suggests(run_cli) -> None:
    code, _out, err = run_cli("agents", "render", "Embeded Chat")
    assert code == 1
    assert "did you mean 'Embedded Chat'?" in err


def test_render_abstract_base_is_refused(run_cli) -> None:
    code, _out, err = run_cli("agents", "render", "Claude Base Chat")
    assert code == 1 and "no usable agent" in err


def test_render_bad_context_file(run_cli, tmp_path: Path) -> None:
    ctx = tmp_path / "ctx.json"
    ctx.write_text('{"prefix": ')
    code, _out, err = run_cli("agents", "render", "Embedded Completion", "--context", str(ctx))
    assert code == 1 and f"{ctx}:1: invalid JSON" in err
    ctx.write_text("[1]")
    code, _out, err = run_cli("agents", "render", "Embedded Completion", "--context", str(ctx))
    assert code == 1 and "must be a JSON object" in err


def test_render_refuses_an_unknown_context_key(run_cli, tmp_path: Path) -> None:
    # Issue 43: `messages` (where the key is `history`) rendered `[]` silently.
    ctx = tmp_path / "ctx.json"
    ctx.write_text('{"messages": [{"role": "user", "content": "hi"}]}')
    code, out, err = run_cli("agents", "render", "Claude Chat — Sonnet", "--context", str(ctx))
    assert (code, out) == (1, "")
    assert f"{ctx}: unknown context key 'messages'; did you mean 'history'?" in err
    ctx.write_text('{"prefx": "def f():"}')
    code, out, err = run_cli("agents", "render", "Claude Chat — Sonnet", "--context", str(ctx))
    assert code == 1 and "unknown context key 'prefx'; did you mean 'prefix'?" in err


def test_global_options_work_after_the_subcommand(run_cli, tmp_path: Path) -> None:
    other = tmp_path / "other-config"
    (other / "agents").mkdir(parents=True)
    (other / "agents" / "x.toml").write_text(
        'name = "Only Here"\nextends = "Ollama Base Chat"\nmodel = "m"\n'
    )
    code, out, _ = run_cli("agents", "list", "--json", "--config-dir", str(other))
    assert code == 0 and "Only Here" in out


def test_unknown_command_is_a_usage_error(run_cli) -> None:
    import pytest

    with pytest.raises(SystemExit) as info:
        run_cli("frobnicate")
    assert info.value.code == 2


def test_secrets_status_never_prints_the_key(run_cli, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-PLANTED-xyz")
    code, out, _ = run_cli("secrets", "status", "Claude")
    assert code == 0
    assert "sk-ant-PLANTED-xyz" not in out and "ANTHROPIC_API_KEY" in out


def test_secrets_set_without_keyring_says_what_to_do(run_cli, monkeypatch) -> None:
    import io

    import keyring
    from keyring.backends import fail

    monkeypatch.setattr(keyring, "get_keyring", lambda: fail.Keyring())
    monkeypatch.setattr("sys.stdin", io.StringIO("sk-new\n"))
    code, _out, err = run_cli("secrets", "set", "Claude")
    assert code == 1
    assert "ANTHROPIC_API_KEY" in err


def test_secrets_unknown_provider(run_cli) -> None:
    code, _out, err = run_cli("secrets", "status", "Claud")
    assert code == 1 and "did you mean 'Claude'?" in err


def test_validate_reports_prompt_paths_leading_outside(
    run_cli, config_dir: Path, tmp_path: Path
) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (outside / "secret.md").write_text("secret")
    (config_dir / "prompt.md").symlink_to(outside / "secret.md")
    cases = {
        "up.toml": '{{ read_file("${PROJECT_DIR}/../../x") }}',
        "config_up.toml": '{% if language == "cpp" %}{{ read_file("${CONFIG_DIR}/../x") }}'
        "{% endif %}",
        "linked.toml": '{{ read_file("${CONFIG_DIR}/prompt.md") }}',
    }
    files = []
    for index, (name, prompt) in enumerate(cases.items()):
        path = config_dir / "agents" / name
        path.write_text(
            f'name = "Prompt {index}"\nextends = "Ollama Base Chat"\nmodel = "m"\n\n'
            f"system_prompt = '{prompt}'\n"
        )
        files.append(path.resolve())
    code, out, err = run_cli("agents", "validate", *map(str, files))
    assert code == 1, out
    by_file = {line.split(":5: error: system_prompt: ")[0]: line for line in out.splitlines()}
    assert sorted(by_file) == sorted(map(str, files)), out
    up, config_up, linked = (by_file[str(f)] for f in files)
    assert "'..' is not allowed" in up and "/../../x" in up
    assert "'..' is not allowed" in config_up and "config/../x" in config_up
    assert "prompt.md (it leads to " in linked and "general.allowed_roots" in linked
    assert "3 error(s)" in err


def test_tool_agents_claim_tools(run_cli) -> None:
    code, out, _ = run_cli("agents", "list", "--json")
    assert code == 0
    rows = json.loads(out)
    with_tools = [row["name"] for row in rows if row["tools"]]
    assert with_tools, "some bundled agents set enable_tools"
    assert all("toolsPlanned" not in row for row in rows)
    code, table, _ = run_cli("agents", "list")
    line = next(line for line in table.splitlines() if line.startswith(with_tools[0] + " "))
    assert "tools" in line.split()[-1].split(",") and "planned" not in line


def test_render_names_the_detected_fim_family(run_cli) -> None:
    code, out, err = run_cli("agents", "render", "Ollama Completion — StarCoder2")
    assert code == 0, err
    prompt = json.loads(out)["body"]["prompt"]
    # The context's other files lead, after StarCoder2's file separator; then the FIM layout.
    assert prompt.startswith("<file_sep>src/other") and "\n<fim_prefix>def f(x):" in prompt
    assert "FIM template: StarCoder2 <fim_prefix>…<fim_suffix>…<fim_middle>" in err
    assert "'starcoder2:3b'" in err


def test_render_fim_template_follows_the_model_override(run_cli, config_dir: Path) -> None:
    (config_dir / "agent_models.json").write_text(
        '{"Ollama Completion — FIM Template": {"model": "codellama:7b-code"}}'
    )
    code, out, err = run_cli("agents", "render", "Ollama Completion — FIM Template")
    assert code == 0, err
    body = json.loads(out)["body"]
    # CodeLlama has no file separator: the other file leads under a comment naming it.
    assert body["prompt"].startswith("# src/other") and "\n<PRE> def f(x):" in body["prompt"]
    assert body["options"]["stop"][0] == "<EOT>"
    assert "FIM template: CodeLlama" in err


def test_render_refuses_an_instruct_model_on_a_fim_template(run_cli, config_dir: Path) -> None:
    (config_dir / "agent_models.json").write_text(
        '{"Ollama Completion — FIM Template": "qwen2.5-coder:7b-instruct"}'
    )
    code, _out, err = run_cli("agents", "render", "Ollama Completion — FIM Template")
    assert code != 0
    assert "instruction-tuned (instruct) model" in err and "base (pre-trained) model" in err


def test_validate_refuses_a_chat_model_on_a_fim_endpoint(run_cli, config_dir: Path) -> None:
    mine = config_dir / "agents" / "mine.toml"
    mine.write_text(
        'name = "Mine"\nextends = "llama.cpp Completion — FIM"\nmodel = "deepseek-coder-6.7b-chat"\n'
    )
    code, out, _err = run_cli("agents", "validate", str(mine))
    assert code == 1
    assert out.startswith(f"{mine.resolve()}:3: error: model 'deepseek-coder-6.7b-chat' is an ")
    assert "FIM needs the base (pre-trained) model" in out


def test_validate_warns_about_an_instruct_override_of_a_native_fim_agent(
    run_cli, config_dir: Path
) -> None:
    (config_dir / "agent_models.json").write_text(
        '{"Ollama Completion — FIM": "qwen2.5-coder:7b-instruct"}'
    )
    code, out, _err = run_cli("agents", "validate")
    assert code == 0
    assert "warning: override for 'Ollama Completion — FIM': model 'qwen2.5-coder:7b-inst" in out


def test_validate_reports_skill_problems_as_file_line(run_cli, config_dir: Path) -> None:
    bad = config_dir / "skills" / "review" / "SKILL.md"
    bad.parent.mkdir(parents=True)
    bad.write_text("---\nname: reviews\ndescription: Review code\n---\nBody\n")
    code, out, err = run_cli("agents", "validate")
    assert code == 1
    assert out.splitlines() == [
        f"{bad.resolve()}:2: error: `name: reviews` must equal the skill's folder name 'review': rename one"
    ]
    assert "1 error(s), 0 warning(s)" in err
    code, out, _ = run_cli("agents", "validate", str(bad.parent.parent))
    assert code == 1 and out.startswith(f"{bad.resolve()}:2: error:")
    bad.write_text("---\nname: review\ndescription: Review code\n---\nBody\n")
    assert run_cli("agents", "validate", str(bad))[0] == 0


def test_list_labels_the_demo_models(run_cli) -> None:
    code, out, _ = run_cli("agents", "list", "--json")
    assert code == 0
    demo = {r["name"] for r in json.loads(out) if r["demo"]}
    assert {"Embedded Chat", "Embedded Completion", "Embedded Quick Refactor"} <= demo
    assert "Claude Chat — Sonnet" not in demo
    code, out, _ = run_cli("agents", "list")
    line = next(line for line in out.splitlines() if line.startswith("Embedded Chat "))
    assert line.rstrip().endswith("demo")


def test_list_shows_the_context_window_and_the_effective_concurrency_limit(run_cli) -> None:
    code, out, _ = run_cli("agents", "list", "--pipeline", "chat", "--json")
    assert code == 0
    rows = {row["name"]: row for row in json.loads(out)}
    # Embedded Instruct is on this machine: the pool's default limit there is 1.
    assert rows["Embedded Chat"]["contextTokens"] == 4096
    assert rows["Embedded Chat"]["maxConcurrent"] == 1
    # A remote API without max_concurrent has no limit; an undeclared window is 0.
    assert rows["Claude Chat — Sonnet"]["maxConcurrent"] is None
    assert rows["Claude Chat — Sonnet"]["contextTokens"] == 0
    code, table, _ = run_cli("agents", "list")
    header = table.splitlines()[0].split()
    assert header[-3:] == ["CONTEXT", "CONCURRENT", "FLAGS"]
    line = next(line for line in table.splitlines() if line.startswith("Embedded Chat "))
    assert line.split()[-3:-1] == ["4096", "1"]
    line = next(line for line in table.splitlines() if line.startswith("Claude Chat — Sonnet "))
    assert line.split()[-3:-1] == ["-", "any"]


def test_validate_reports_mcp_json_problems(run_cli, config_dir: Path) -> None:
    bad = config_dir / "mcp.json"
    bad.write_text('{\n  "mcpServers": {\n    "files": {"args": ["x"]}\n  }\n}\n')
    code, out, err = run_cli("agents", "validate")
    assert code == 1, err
    assert out.startswith(f"{bad}:3: error:"), out
    assert "files" in out and "1 error(s)" in err
    assert run_cli("agents", "validate", str(bad))[1] == out
    bad.write_text('{"mcpServers": {"files": {"command": "mcp-files"}}}\n')
    assert run_cli("agents", "validate")[0] == 0
    assert run_cli("agents", "validate", str(bad))[0] == 0
