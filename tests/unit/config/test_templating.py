import json
from pathlib import Path

import pytest

from qodeassist_lsp.config.template_context import synthetic_context
from qodeassist_lsp.config.templating import (
    BodyCompiler,
    BodyTemplate,
    TemplateError,
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
