import pytest

from qodeassist_lsp.config.agent_profile import MatchRules
from qodeassist_lsp.core.router import AgentRouter, NoAgentMatches


def profile(name: str, **match):
    from qodeassist_lsp.config.agent_profile import AgentProfile

    return AgentProfile(
        name=name, provider_instance="P", model="m", body={"a": 1}, match=MatchRules(**match)
    )


def test_first_matching_agent_of_the_roster_wins() -> None:
    agents = {
        "QML": profile("QML", file_patterns=["*.qml"]),
        "Src": profile("Src", path_patterns=["*/src/*"], project_names=["App"]),
        "Any": profile("Any"),
    }
    router = AgentRouter(agents)
    roster = ["Missing", "QML", "Src", "Any"]
    assert router.pick(roster, "/w/ui/Main.QML").name == "QML"  # case-insensitive
    assert router.pick(roster, "/w/src/deep/a.py", "App").name == "Src"  # * crosses /
    assert router.pick(roster, "/w/src/a.py", "Other").name == "Any"
    assert router.pick(roster, "C:\\w\\src\\a.py", "App").name == "Src"


def test_no_match_explains_the_fix() -> None:
    router = AgentRouter({"QML": profile("QML", file_patterns=["*.qml"])})
    with pytest.raises(NoAgentMatches, match="catch-all"):
        router.pick(["QML"], "/a.py")
    with pytest.raises(NoAgentMatches, match=r"pipelines\.code_completion"):
        router.pick([], "/a.py")


def test_file_pattern_matches_name_or_full_path() -> None:
    rules = MatchRules(file_patterns=["*/tests/*"])
    assert rules.accepts("/p/tests/x.py") and not rules.accepts("/p/src/x.py")
    assert MatchRules().is_catch_all
