from qodeassist_lsp.core.system_prompt_builder import AGENT_LAYER, SystemPromptBuilder


def test_layers_compose_by_priority_then_insertion() -> None:
    builder = SystemPromptBuilder()
    builder.set_layer("chat.context", "context")
    builder.set_layer("refactor", "refactor")
    builder.set_layer(AGENT_LAYER, "persona\n", priority=0)
    builder.set_layer("empty", "   ")
    assert builder.compose() == "persona\n\ncontext\n\nrefactor"
    builder.set_layer("chat.context", "context v2")  # replacing keeps its place
    assert builder.names() == [AGENT_LAYER, "chat.context", "refactor"]
    builder.set_layer("refactor", "")
    builder.set_layer(AGENT_LAYER, "")
    assert builder.compose() == "context v2"
    builder.clear()
    assert builder.compose() == ""
