import json
import marshal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jinja2
import pytest

from qodeassist_lsp.config.code_cache import CodeTable, read_table
from qodeassist_lsp.config.configuration import Configuration, load_configuration
from qodeassist_lsp.config.paths import ConfigPaths, bundled_root
from qodeassist_lsp.config.template_context import synthetic_context
from qodeassist_lsp.config.templating import (
    BodyCompiler,
    BodyTemplate,
    TemplateError,
    default_code_cache_path,
    filter_by_type,
    filter_skip_role,
    strip_signature_suffix,
    strip_trailing_commas,
)


@pytest.fixture
def env(tmp_path: Path):
    return BodyCompiler([tmp_path])


def test_template_strings_render_and_splice_as_json(env) -> None:
    body = BodyTemplate(
        {
            "stream": True,
            "prompt": "{{ ctx.prefix | tojson }}",
            "options": {"num_predict": 8, "stop": ["{{ '</x>' | tojson }}"]},
            "plain": "no template here",
        },
        env,
    )
    assert body.render({"prefix": 'a "b" \\ \n ü'}) == {
        "stream": True,
        "prompt": 'a "b" \\ \n ü',
        "options": {"num_predict": 8, "stop": ["</x>"]},
        "plain": "no template here",
    }


def test_empty_render_drops_the_key_and_array_item(env) -> None:
    body = BodyTemplate(
        {"system": "{% if ctx.s %}{{ ctx.s | tojson }}{% endif %}", "a": ["{{ '' }}", 1]}, env
    )
    assert body.render({"s": ""}) == {"a": [1]}
    assert body.render({"s": "x"}) == {"system": "x", "a": [1]}


@pytest.mark.parametrize(
    "source",
    [
        "{{ ctx.v | tojson }}",
        "{{ (ctx.v or 'fallback') | tojson }}",
        "{{ ctx.v | tojson }}{{ '' }}",  # not a lone tojson: rendered as text
        "{{ '[1,' ~ ctx.v | tojson ~ ']' }}",  # the filter binds to ctx.v only: text
    ],
)
@pytest.mark.parametrize(
    "value",
    [
        "",
        'a "q" \\ \n ü \u2028 \U0001f600',
        0,
        -7,
        2.5,
        True,
        False,
        None,
        [1, "a", [None]],
        {"k": [1, 2], "s": "t"},
        ("t", 1),
        float("inf"),
    ],
)
def test_a_lone_tojson_expression_gives_the_value_the_json_text_gives(env, source, value) -> None:
    body = BodyTemplate({"v": source}, env)
    text = env.compile(source).render({"ctx": {"v": value}})
    expected = json.loads(text) if text.strip() else None
    assert body.render({"v": value}) == ({"v": expected} if text.strip() else {})
    assert type(body.render({"v": value}).get("v")) is type(expected)


def test_a_lone_tojson_expression_still_fails_on_undefined_and_unserialisable(env) -> None:
    body = BodyTemplate({"v": "{{ ctx.missing | tojson }}"}, env)
    with pytest.raises(TemplateError, match="undefined"):
        body.render({})
    with pytest.raises(TemplateError, match="not JSON serialisable"):
        BodyTemplate({"v": "{{ ctx.v | tojson }}"}, env).render({"v": object()})


def test_trailing_commas_outside_strings_are_removed(env) -> None:
    body = BodyTemplate({"m": "[{% for x in ctx.xs %}{{ x | tojson }},{% endfor %}]"}, env)
    assert body.render({"xs": ["a,]", "b"]}) == {"m": ["a,]", "b"]}
    assert strip_trailing_commas('{"a": [1, 2, ], "s": ",}",\n}') == '{"a": [1, 2 ], "s": ",}"\n}'


def test_invalid_json_names_the_key_and_explains(env) -> None:
    body = BodyTemplate({"outer": {"prompt": "{{ ctx.prefix }}"}}, env)
    with pytest.raises(TemplateError) as info:
        body.render({"prefix": "not json"})
    assert info.value.key == "outer.prompt"
    assert "tojson" in str(info.value)


def test_undefined_values_are_errors_not_silent_empties(env) -> None:
    body = BodyTemplate({"p": "{{ ctx.prefx | tojson }}"}, env)
    with pytest.raises(TemplateError, match="undefined"):
        body.render({"prefix": "x"})


def test_syntax_errors_surface_at_compile_time(env) -> None:
    with pytest.raises(TemplateError, match="syntax"):
        BodyTemplate({"p": "{% for x in %}"}, env)


def test_sandbox_blocks_python_internals(env) -> None:
    body = BodyTemplate({"p": "{{ ''.__class__.__mro__ | tojson }}"}, env)
    with pytest.raises(TemplateError):
        body.render({})


def test_include_is_restricted_to_the_roots(tmp_path: Path) -> None:
    (tmp_path / "partials").mkdir()
    (tmp_path / "partials" / "msg.jinja").write_text("{{ ctx.x | tojson }}")
    env = BodyCompiler([tmp_path])
    assert BodyTemplate({"a": '{% include "partials/msg.jinja" %}'}, env).render({"x": 1}) == {
        "a": 1
    }
    for name in ("../secret.jinja", "/etc/passwd"):
        with pytest.raises(TemplateError, match="include"):
            BodyTemplate({"a": '{% include "' + name + '" %}'}, env).render({})


def test_helpers() -> None:
    blocks = [{"type": "text"}, {"type": "image"}]
    assert filter_by_type(blocks, "image") == [{"type": "image"}]
    assert filter_skip_role([{"role": "system"}, {"role": "user"}], "system") == [{"role": "user"}]
    assert strip_signature_suffix("thought\n[Signature: abc]") == "thought"


def test_synthetic_context_is_hostile_and_complete() -> None:
    ctx = synthetic_context("m")
    text = json.dumps(ctx, ensure_ascii=False)
    for needle in ('\\"', "\\\\", "\\n", "ü", "redacted_thinking", "tool_result", "image"):
        assert needle in text
    assert ctx["model"] == "m"
    assert all(m["content_blocks"] for m in ctx["history"])


def test_synthetic_context_has_the_files_metadata_header_completion_sends(env) -> None:
    """A body using ``f.header`` (docs/completion.md) must pass the validation render."""
    source = "{% for f in ctx.files_metadata %}{{ (f.header ~ f.content) | tojson }}{% endfor %}"
    item = synthetic_context()["files_metadata"][0]
    rendered = BodyTemplate({"p": source}, env).render(synthetic_context())
    assert rendered == {"p": item["header"] + item["content"]}
    assert item["header"].startswith("# ") and item["header"].endswith("\n")


# The persistent code cache: a warm load takes every body template's code from the file.


def _bundled(tmp_path: Path) -> ConfigPaths:
    return ConfigPaths(tmp_path / "config", tmp_path / "data", bundled_root())


def _renders(config: Configuration) -> dict[str, Any]:
    environments = config.body_environments
    return {
        name: BodyTemplate(agent.body, environments.for_file(agent.source)).render(
            synthetic_context(agent.model)
        )
        for name, agent in sorted(config.agents.items())
    }


def _body_compilers(config: Configuration) -> list[BodyCompiler]:
    return list(config.body_environments._cache.values())


def test_a_warm_load_compiles_no_body_template_and_renders_as_a_cold_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache" / "jinja.marshal"
    uncached = load_configuration(_bundled(tmp_path))
    cold = load_configuration(_bundled(tmp_path), code_cache=cache)
    assert cold.body_environments.code.loaded == 0
    assert cache.is_file()

    compiled_in: list[jinja2.Environment] = []
    parsed_in: list[jinja2.Environment] = []
    real_compile, real_parse = jinja2.Environment.compile, jinja2.Environment._parse

    def compile_(self: jinja2.Environment, *args: Any, **kwargs: Any) -> Any:
        compiled_in.append(self)
        return real_compile(self, *args, **kwargs)

    def parse(self: jinja2.Environment, *args: Any, **kwargs: Any) -> Any:
        parsed_in.append(self)
        return real_parse(self, *args, **kwargs)

    monkeypatch.setattr(jinja2.Environment, "compile", compile_)
    monkeypatch.setattr(jinja2.Environment, "_parse", parse)
    warm = load_configuration(_bundled(tmp_path), code_cache=cache)
    monkeypatch.undo()

    table = warm.body_environments.code
    assert table.loaded > 20  # the bundled agents' distinct sources, twice (text and value)
    assert table.hits == table.loaded
    assert table.added == 0
    body_envs = {id(compiler.env) for compiler in _body_compilers(warm)}
    assert body_envs
    assert not [env for env in compiled_in + parsed_in if id(env) in body_envs]
    assert compiled_in  # the check sees Jinja at work: the system prompts still compile

    assert set(warm.agents) == set(cold.agents) == set(uncached.agents)
    assert len(warm.agents) > 50
    assert warm.problems == cold.problems == uncached.problems
    assert _renders(warm) == _renders(cold) == _renders(uncached)
    # the lone `| tojson` strings are evaluated directly, warm as cold
    [cold_compiler], [warm_compiler] = _body_compilers(cold), _body_compilers(warm)
    kinds = {s: c._value is None for s, c in cold_compiler._cache.items()}
    assert {s: c._value is None for s, c in warm_compiler._cache.items()} == kinds
    assert False in kinds.values() and True in kinds.values()


def test_a_syntax_error_is_reported_with_the_cache_warm(tree: Any, tmp_path: Path) -> None:
    path = tree.write(
        "config/agents/broken.toml",
        """
        name = "Broken"
        extends = "Chat"

        [body]
        prompt = "{{ ctx.prefix | tojson }"
        """,
    )
    cache = tmp_path / "cache" / "jinja.marshal"
    cold = load_configuration(tree.paths, code_cache=cache)
    warm = load_configuration(tree.paths, code_cache=cache)
    assert warm.body_environments.code.hits > 0
    for config in (cold, warm):
        [problem] = [p for p in config.problems if p.severity == "error"]
        assert problem.file == str(path)
        assert "template syntax error on its line 1" in problem.message
        assert "Broken" not in config.agents
    assert warm.problems == cold.problems == tree.load().problems


@pytest.mark.parametrize(
    "spoil",
    [
        lambda data: b"garbage",
        lambda data: data[: len(data) // 2],  # truncated
        lambda data: b"\x00\x00\r\n" + data[4:],  # another interpreter's magic number
        lambda data: data[:4] + marshal.dumps(dict.fromkeys(marshal.loads(data[4:]), 1)),
    ],
    ids=["garbage", "truncated", "foreign-magic", "wrong-values"],
)
def test_a_spoilt_cache_file_is_the_plain_path(
    tmp_path: Path, spoil: Callable[[bytes], bytes]
) -> None:
    cache = tmp_path / "cache" / "jinja.marshal"
    cold = load_configuration(_bundled(tmp_path), code_cache=cache)
    cache.write_bytes(spoil(cache.read_bytes()))
    config = load_configuration(_bundled(tmp_path), code_cache=cache)
    table = config.body_environments.code
    assert table.hits == 0
    assert config.problems == cold.problems
    assert _renders(config) == _renders(cold)
    assert CodeTable(cache).loaded == len(read_table(cache)) > 0  # rewritten whole


def test_the_cache_file_follows_the_environment(tmp_path: Path) -> None:
    path = default_code_cache_path({"QODEASSIST_CACHE_DIR": str(tmp_path)})
    assert path == tmp_path / (
        f"jinja-code-{sys.implementation.cache_tag}-jinja2-{jinja2.__version__}.marshal"
    )
    disabled = {"QODEASSIST_CACHE_DIR": str(tmp_path), "QODEASSIST_NO_STARTUP_CACHE": "1"}
    assert default_code_cache_path(disabled) is None
    config = load_configuration(_bundled(tmp_path), code_cache=default_code_cache_path(disabled))
    assert config.agents
    assert not list(tmp_path.rglob("*.marshal"))


def test_compilers_sharing_a_table_compile_a_source_once(tmp_path: Path) -> None:
    table = CodeTable(tmp_path / "jinja.marshal")
    source = "{{ ctx.x | tojson }}"
    BodyCompiler([tmp_path], table).compile(source)
    assert (table.added, table.hits) == (2, 0)  # the text template and the value expression
    other = BodyCompiler([tmp_path / "elsewhere"], table).compile(source)
    assert (table.added, table.hits) == (2, 2)
    assert other.evaluate({"ctx": {"x": [1]}}) == [1]
    assert other.render({"ctx": {"x": "a"}}) == '"a"'
