"""Language table: detection by file, LSP id, custom languages, fence tags, MIME types."""

from __future__ import annotations

from qodeassist_lsp.features.completion.languages import LanguageTable, mime_type
from qodeassist_lsp.features.completion.settings import CustomLanguage


def test_builtin_detection_by_extension_and_lsp_id() -> None:
    table = LanguageTable()
    assert table.detect("/p/a.py").comment_prefix == "#"
    assert table.detect("/p/a.HPP").name == "c-like"
    assert table.detect("/p/init.lua").comment_prefix == "--"
    assert table.detect("/p/Main.hs").comment_prefix == "--"
    assert table.detect("/p/x.unknown") is None
    assert table.detect("", "typescriptreact").name == "ts"
    assert table.detect("/p/noext", "shellscript").comment_prefix == "#"
    assert table.detect("/p/noext", "klingon") is None


def test_default_custom_languages_and_exact_file_names() -> None:
    table = LanguageTable()
    assert table.detect("/p/CMakeLists.txt").name == "cmake"
    assert table.detect("/p/app.pro").name == "qmake"
    assert table.detect("/p/other.txt") is None


def test_custom_languages_override_builtin() -> None:
    custom = CustomLanguage(
        name="mypython", comment_prefix=";;", model_names=["snake"], extensions=[".py"]
    )
    table = LanguageTable([custom])
    assert table.detect("/p/a.py").name == "mypython"
    assert table.is_fence_tag("snake") and table.is_fence_tag("SNAKE")
    assert table.detect("/p/CMakeLists.txt") is None  # the list replaces the defaults


def test_fence_tags() -> None:
    table = LanguageTable()
    for tag in ("python", "cpp", "c++", "qml", "json", "js", "typescript", "c-like"):
        assert table.is_fence_tag(tag), tag
    assert not table.is_fence_tag("x = 1")
    assert table.by_name("python") is table.detect("/a.py")


def test_mime_types() -> None:
    assert mime_type("/p/a.cpp") == "text/x-c++src"
    assert mime_type("/p/a.py") == "text/x-python"
    assert mime_type("/p/CMakeLists.txt") == "text/x-cmake"
    assert mime_type("/p/page.html").startswith("text/html")
    assert mime_type("untitled:1", "go") == "text/x-go"
    assert mime_type("/p/README") == "text/plain"
