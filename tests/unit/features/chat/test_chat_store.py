"""ChatStore: ids from titles, atomic writes, listing, deletion, confined attachments."""

from __future__ import annotations

import datetime as dt
import os
import re
from pathlib import Path

import pytest

from qodeassist_lsp.config.confinement import PathRefused
from qodeassist_lsp.core.content import Message, TextBlock
from qodeassist_lsp.features.chat import store as store_module
from qodeassist_lsp.features.chat.history_format import ChatFile, HistoryFormatError
from qodeassist_lsp.features.chat.store import ChatNotFound, ChatStore, slug


def chat(text: str = "hello") -> ChatFile:
    return ChatFile(messages=[Message("user", (TextBlock(text),))], agent="A")


def test_slug_follows_the_original_file_naming_in_ascii() -> None:
    assert slug('Fix: the "parser" / lexer?\nsecond line') == "Fix_the_parser_lexer"
    assert slug("   ") == "chat"
    assert len(slug("x" * 100)) == 30
    assert slug("Café crème, s'il vous plaît") == "Cafe_creme_s_il_vous_plait"
    assert slug("修复解析器") == "chat"  # nothing ASCII is left
    assert slug("../.hidden\r\nX-Injected: 1") == "hidden"


def test_ids_are_reserved_unique_and_safe_and_unsafe_ids_are_refused(tmp_path: Path) -> None:
    store = ChatStore(tmp_path)
    ids = [store.new_id("Ünïcode — question: why?") for _ in range(200)]
    assert len(set(ids)) == 200  # the same title within the same second
    assert all(re.fullmatch(r"Unicode_question_why_[0-9_-]{19}_[0-9a-f]{6}", i) for i in ids)
    assert all(store.reservation(i).is_file() for i in ids)
    for bad in ("../escape", "a/b", "..", ""):
        with pytest.raises(ChatNotFound):
            store.path(bad)


class _FrozenClock:
    class datetime:  # stands in for the module's ``dt.datetime``
        @staticmethod
        def now() -> dt.datetime:
            return dt.datetime(2026, 12, 7, 10, 31, 7)


def test_an_id_another_writer_holds_is_never_handed_out_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    draws = iter(["aaaaaa", "aaaaaa", "bbbbbb", "bbbbbb", "cccccc"])
    monkeypatch.setattr(store_module, "dt", _FrozenClock)
    monkeypatch.setattr(store_module.secrets, "token_hex", lambda _n: next(draws))
    store = ChatStore(tmp_path)
    first = store.new_id("Same")  # reserved, no file yet: the next draw of it is refused
    second = store.new_id("Same")
    store.save(second, chat())  # saved: its reservation goes, the file holds the id
    assert not store.reservation(second).exists()
    third = store.new_id("Same")
    assert (first, second, third) == tuple(
        f"Same_2026-12-07_10-31-07_{r}" for r in ("aaaaaa", "bbbbbb", "cccccc")
    )


def test_a_reserved_chat_is_not_listed_and_old_reservations_are_tidied(tmp_path: Path) -> None:
    store = ChatStore(tmp_path)
    empty = store.new_id("")
    assert empty.startswith("chat_") and store.list() == []
    assert not store.exists(empty)
    assert store.remove_stale_temp_files() == 0  # a young reservation may be a live session's
    old = store.reservation(empty).stat().st_mtime - 3 * 24 * 3600
    os.utime(store.reservation(empty), (old, old))
    assert store.remove_stale_temp_files() == 1
    assert list(tmp_path.iterdir()) == []


def test_a_chat_emptied_again_keeps_its_id_and_delete_releases_it(tmp_path: Path) -> None:
    store = ChatStore(tmp_path)
    chat_id = store.new_id("first")
    store.save_merged(chat_id, chat(), ())
    assert not store.reservation(chat_id).exists()
    # Its only message rolled back (the first request failed): no file, the id stays taken.
    store.save_merged(chat_id, ChatFile(), tuple(chat().messages))
    assert not store.exists(chat_id) and store.reservation(chat_id).exists()
    store.save_merged(chat_id, chat("again"), ())
    store.delete(chat_id)
    assert list(tmp_path.iterdir()) == []


def test_save_is_atomic_and_leaves_no_temp_files(tmp_path: Path, monkeypatch) -> None:
    store = ChatStore(tmp_path / "history")
    store.save("c1", chat("old"))

    def crash(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError):
        store.save("c1", chat("new"))
    monkeypatch.undo()
    assert store.load("c1").messages[0].text == "old"  # the old version is intact
    assert sorted(p.name for p in (tmp_path / "history").iterdir()) == ["c1.json"]


def test_list_is_newest_first_and_skips_broken_files(tmp_path: Path) -> None:
    store = ChatStore(tmp_path)
    store.save("older", chat("first chat"))
    store.save("newer", chat("second chat"))
    os.utime(tmp_path / "older.json", (1_000_000, 1_000_000))
    (tmp_path / "broken.json").write_text("{nope")
    listed = store.list()
    assert [s.chat_id for s in listed] == ["newer", "older"]
    assert listed[0].title == "second chat" and listed[0].agent == "A"
    assert listed[1].updated_at == "1970-01-12T13:46:40Z"


def test_delete_removes_the_attachments(tmp_path: Path) -> None:
    store = ChatStore(tmp_path / "h")
    source = tmp_path / "notes.md"
    source.write_text("x")
    store.save("c", chat())
    stored = store.store_attachment("c", source)
    assert stored.startswith("notes_") and stored.endswith(".md")
    assert store.stored_file("c", stored).read_text() == "x"
    with pytest.raises(PathRefused, match="content folder"):
        store.stored_file("c", "../c.json")
    store.delete("c")
    assert not (tmp_path / "h").joinpath("c_content").exists()
    with pytest.raises(ChatNotFound):
        store.delete("c")


def test_stored_paths_stay_inside_the_content_folder(tmp_path: Path) -> None:
    store = ChatStore(tmp_path / "h")
    (tmp_path / "secret.txt").write_text("secret")
    store.content_dir("c").mkdir(parents=True)
    for bad in (str(tmp_path / "secret.txt"), "../../secret.txt", "sub/../../x"):
        with pytest.raises(PathRefused, match="is not a name inside its content folder"):
            store.stored_file("c", bad)
    os.symlink(tmp_path / "secret.txt", store.content_dir("c") / "link.txt")
    with pytest.raises(PathRefused, match="leads to"):
        store.stored_file("c", "link.txt")


def test_a_symlinked_content_folder_is_refused(tmp_path: Path) -> None:
    store = ChatStore(tmp_path / "h")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere/a.txt").write_text("a")
    store.root.mkdir()
    os.symlink(tmp_path / "elsewhere", store.content_dir("c"))
    with pytest.raises(PathRefused):
        store.stored_file("c", "a.txt")
    with pytest.raises(PathRefused):
        store.store_attachment("c", tmp_path / "elsewhere/a.txt")


def test_history_files_must_be_regular_files_inside_the_folder(tmp_path: Path) -> None:
    store = ChatStore(tmp_path / "h")
    store.save("good", chat())
    (tmp_path / "elsewhere.json").write_text(store.path("good").read_text())
    os.symlink(tmp_path / "elsewhere.json", store.path("linked"))
    os.mkfifo(store.path("pipe"))
    with pytest.raises(HistoryFormatError, match="leads to"):
        store.load("linked")
    with pytest.raises(HistoryFormatError, match="is a FIFO"):
        store.load("pipe")
    assert [s.chat_id for s in store.list()] == ["good"]  # listing neither blocks nor follows


def _said(who: str, n: int) -> Message:
    return Message("user", (TextBlock(f"{who} {n}"),))


def test_two_writers_on_one_chat_lose_no_message(tmp_path: Path) -> None:
    """Two servers on one data folder, each appending to its own copy of the same chat."""
    import threading

    barrier = threading.Barrier(2)
    rounds = 40

    def server(who: str) -> None:
        store = ChatStore(tmp_path)  # each server has its own store and its own history
        messages: list[Message] = []
        seen: tuple[Message, ...] = ()
        barrier.wait()
        for n in range(rounds):
            messages.append(_said(who, n))
            store.save_merged("shared", ChatFile(messages=list(messages), agent="A"), seen)
            seen = tuple(messages)

    threads = [threading.Thread(target=server, args=(who,)) for who in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    saved = [m.text for m in ChatStore(tmp_path).load("shared").messages]
    expected = {f"{who} {n}" for who in ("a", "b") for n in range(rounds)}
    assert set(saved) == expected and len(saved) == len(expected)
    # Each writer's own messages keep their order.
    for who in ("a", "b"):
        assert [t for t in saved if t.startswith(who)] == [f"{who} {n}" for n in range(rounds)]
    assert not list(tmp_path.glob("*.tmp"))


def test_a_merge_keeps_the_other_writers_messages_but_not_ones_this_writer_dropped(
    tmp_path: Path,
) -> None:
    store = ChatStore(tmp_path)
    first, mine, theirs = _said("x", 1), _said("me", 2), _said("them", 3)
    store.save("c", ChatFile(messages=[first, first]))
    other = ChatStore(tmp_path)
    other.save_merged("c", ChatFile(messages=[first, first, theirs]), (first, first))
    # This writer rolled one of its two identical messages back and added its own.
    written = store.save_merged("c", ChatFile(messages=[first, mine]), (first, first))
    assert written == (first, mine, theirs)
    assert [m.text for m in store.load("c").messages] == ["x 1", "me 2", "them 3"]
    # Nothing left on either side: the file goes.
    assert store.save_merged("c", ChatFile(), (first, mine, theirs)) == ()
    assert not store.exists("c")


def test_temp_files_of_interrupted_saves_are_removed_but_not_a_live_one(tmp_path: Path) -> None:
    store = ChatStore(tmp_path)
    store.save("c1", chat())
    stale = tmp_path / ".c1.abc123.tmp"
    live = tmp_path / ".c1.def456.tmp"
    for temp in (stale, live):
        temp.write_text("{half a chat")
    old = os.stat(stale).st_mtime - 3600
    os.utime(stale, (old, old))
    assert store.remove_stale_temp_files() == 1
    assert not stale.exists() and live.exists()  # young: maybe another server's save
    assert store.load("c1").messages  # the chat itself is untouched


def test_saving_chats_leaves_no_lock_file_per_chat(tmp_path: Path) -> None:
    store = ChatStore(tmp_path)
    for n in range(5):
        store.save_merged(f"chat{n}", chat(f"hello {n}"), ())
    store.delete("chat0")
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == [f"chat{n}.json" for n in range(1, 5)]


def _append_in_a_process(root: str, who: str, rounds: int, start: object) -> None:
    start.wait()  # type: ignore[attr-defined]
    store = ChatStore(Path(root))
    messages: list[Message] = []
    seen: tuple[Message, ...] = ()
    for n in range(rounds):
        messages.append(_said(who, n))
        store.save_merged("shared", ChatFile(messages=list(messages), agent="A"), seen)
        seen = tuple(messages)


def test_writers_in_separate_processes_lose_no_message(tmp_path: Path) -> None:
    import multiprocessing

    context = multiprocessing.get_context("fork")
    writers, rounds = ("a", "b", "c"), 15
    start = context.Barrier(len(writers))
    processes = [
        context.Process(target=_append_in_a_process, args=(str(tmp_path), who, rounds, start))
        for who in writers
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(60)
    assert [p.exitcode for p in processes] == [0] * len(writers)
    saved = [m.text for m in ChatStore(tmp_path).load("shared").messages]
    assert sorted(saved) == sorted(f"{who} {n}" for who in writers for n in range(rounds))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shared.json"]


def test_per_chat_lock_files_of_older_versions_are_removed(tmp_path: Path) -> None:
    store = ChatStore(tmp_path)
    store.save("c1", chat())
    legacy = tmp_path / ".c1.lock"
    legacy.write_text("")
    old = os.stat(legacy).st_mtime - 3600
    os.utime(legacy, (old, old))
    assert store.remove_stale_temp_files() == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c1.json"]
