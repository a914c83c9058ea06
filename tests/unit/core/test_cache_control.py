from qodeassist_lsp.core.cache_control import apply_cache_control

EPHEMERAL = {"type": "ephemeral"}


def body():
    return {
        "system": "sys",
        "tools": [{"name": "a"}, {"name": "b"}],
        "messages": [
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": [{"type": "text", "text": "x"}]},
            {"role": "user", "content": "new"},
        ],
    }


def test_all_breakpoints_by_default() -> None:
    original = body()
    out = apply_cache_control(original, [])
    assert out["system"] == [{"type": "text", "text": "sys", "cache_control": EPHEMERAL}]
    assert out["tools"][-1]["cache_control"] == EPHEMERAL and "cache_control" not in out["tools"][0]
    assert out["messages"][-2]["content"][-1]["cache_control"] == EPHEMERAL
    assert original == body()  # not modified


def test_selected_breakpoints_and_long_ttl() -> None:
    out = apply_cache_control(body(), ["history"], ttl="1h")
    assert out["system"] == "sys" and "cache_control" not in out["tools"][-1]
    assert out["messages"][-2]["content"][-1]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}


def test_string_content_is_converted_before_marking() -> None:
    b = body()
    b["messages"] = b["messages"][:2]
    b["messages"][0], b["messages"][1] = b["messages"][1], {"role": "user", "content": "q"}
    b["messages"].insert(0, {"role": "user", "content": "string turn"})
    b["messages"] = [b["messages"][0], {"role": "user", "content": "last"}]
    out = apply_cache_control(b, ["history"])
    assert out["messages"][0]["content"] == [
        {"type": "text", "text": "string turn", "cache_control": EPHEMERAL}
    ]
