"""Hostile YAML in entries and gold sets: aliases refused before anything is built, every message bounded."""
import time

import pytest

from lib.evaluation.goldset import GoldsetError, read_goldset
from lib.kb import batch as kb_batch, format as kb_format
from lib.text import untrusted


def alias_bomb(levels: int, key: str = "title") -> str:
    """Each level a list of nine references to the one before: 9**levels strings once expanded."""
    lines = ['a0: &a0 ["lol"]']
    for level in range(1, levels + 1):
        refs = ", ".join([f"*a{level - 1}"] * 9)
        lines.append(f"a{level}: &a{level} [{refs}]")
    lines.append(f"{key}: *a{levels}")
    return "\n".join(lines)


def entry(frontmatter: str) -> bytes:
    return ("---\nid: lb-x-01\n" + frontmatter + "\n---\n# T\n\n## Zusammenfassung\nText.\n").encode()


@pytest.mark.parametrize("key", ["title", "tags", "id", "stand"])
def test_an_alias_bomb_in_the_frontmatter_is_refused_with_a_short_message_naming_the_file(key):
    started = time.perf_counter()
    parsed, issues = kb_format.parse_entry(entry(alias_bomb(5, key)), "dokumente/lb-x-01.md")
    assert parsed is None
    assert [i.code for i in issues] == ["yaml_alias"]
    assert issues[0].file == "dokumente/lb-x-01.md"
    assert "Anker" in issues[0].message and len(issues[0].message) < 500
    assert time.perf_counter() - started < 1.0


def test_a_deep_bomb_is_refused_without_expanding_it():
    # 9**12 strings would never fit in memory: refused from the events alone
    started = time.perf_counter()
    parsed, issues = kb_format.parse_entry(entry(alias_bomb(12)), "dokumente/lb-x-01.md")
    assert parsed is None and issues[0].code == "yaml_alias"
    assert time.perf_counter() - started < 1.0


def test_a_single_anchor_without_alias_is_refused_too():
    parsed, issues = kb_format.parse_entry(entry('title: &t "Titel"\ntopic: x\nsource: y\nstand: 2026-01'),
                                           "dokumente/lb-x-01.md")
    assert parsed is None and issues[0].code == "yaml_alias"


@pytest.mark.parametrize("frontmatter", [
    "title: [" + ", ".join(f'"{"x" * 50}{i}"' for i in range(2000)) + "]",
    "tags: [" + ", ".join("[" + ", ".join(str(j) for j in range(50)) + "]" for _ in range(200)) + "]",
    "stand: " + "9" * 4000,
    "id: [" + ", ".join(f'"{"y" * 100}"' for _ in range(500)) + "]",
])
def test_a_large_value_is_quoted_with_a_cap(frontmatter):
    _parsed, issues = kb_format.parse_entry(entry(frontmatter + "\ntopic: t\nsource: s"), "dokumente/lb-x-01.md")
    assert issues and all(len(i.message) <= untrusted.MESSAGE_LIMIT + 20 for i in issues)
    assert max(len(i.message) for i in issues) < 600


def test_a_deeply_nested_frontmatter_is_an_error_not_a_crash():
    parsed, issues = kb_format.parse_entry(entry("title: " + "[" * 50000 + "]" * 50000), "dokumente/lb-x-01.md")
    assert parsed is None and issues[0].code == "yaml_invalid" and len(issues[0].message) < 500


def test_kb_json_values_are_quoted_with_a_cap():
    files = {"dokumente/lb-x-01.md": entry('title: "T"\ntopic: t\nsource: s\nstand: 2026-01'),
             "kb.json": ('{"count": "' + "z" * 100000 + '", "entries": [{"id": "lb-x-01", "title": "'
                         + "w" * 100000 + '", "file": "' + "v" * 100000 + '"}]}').encode()}
    batch = kb_batch.load_batch(files)
    assert batch.issues and max(len(i.message) for i in batch.issues) < 600


# --------------------------------------------------------------------------- gold sets


def test_an_alias_bomb_in_a_gold_set_is_refused_in_a_short_message():
    text = alias_bomb(5, "x") + "\nquestions:\n  - id: *a5\n    question: q\n    kind: fact\n"
    with pytest.raises(GoldsetError) as info:
        read_goldset(text)
    assert "Anker" in str(info.value) and len(str(info.value)) < 500


def test_aliases_as_question_ids_and_keys_are_refused():
    text = ("- &q {id: q1, question: a, kind: fact}\n- *q\n")
    with pytest.raises(GoldsetError) as info:
        read_goldset(text)
    assert "Anker" in str(info.value)


def test_gold_set_problems_are_bounded_in_number_and_length():
    items = "\n".join(f"- id: {'k' * 3000}{i}\n  question: ''\n  kind: {'z' * 3000}" for i in range(500))
    with pytest.raises(GoldsetError) as info:
        read_goldset(items)
    assert len(info.value.problems) > 20          # every finding is kept for the caller
    assert len(str(info.value)) <= untrusted.MESSAGE_LIMIT + 20


def test_a_deeply_nested_gold_set_is_a_gold_set_error():
    with pytest.raises(GoldsetError):
        read_goldset("[" * 50000 + "]" * 50000)


# --------------------------------------------------------------------------- the helpers


def test_quote_never_walks_a_huge_structure():
    huge = [["x" * 1000] * 1000] * 1000          # a million references, as an alias bomb would build
    started = time.perf_counter()
    shown = untrusted.quote(huge)
    assert len(shown) <= untrusted.QUOTE_LIMIT + 1 and time.perf_counter() - started < 0.1


@pytest.mark.parametrize("text, bad", [
    ("Frage\x00", True), ("a\ud800b", True), ("x\ufffe", True), ("x\U0010ffff", True), ("\ufdd0", True),
    ("\x1b[31m", True), ("\x85", True), ("Zeile\nZeile\tTab\r\n", False), ("Überstunden € 12,50 – ok", False),
    ("emoji 😀", False),
])
def test_bad_character(text, bad):
    assert (untrusted.bad_character(text) is not None) is bad


# --------------------------------------------------------------------------- a text is never a path


@pytest.mark.parametrize("make", [lambda p: str(p), lambda p: str(p).replace(".yaml", ".yml"),
                                  lambda p: f"  {p}  ", lambda p: f"file://{p}"])
def test_a_text_naming_a_file_is_never_read(tmp_path, make):
    secret = tmp_path / "secret.yaml"
    secret.write_text("- id: geheim-01\n  question: Geheim?\n  kind: fact\n", encoding="utf-8")
    with pytest.raises(GoldsetError) as exists:
        read_goldset(make(secret))
    with pytest.raises(GoldsetError) as missing:
        read_goldset(make(tmp_path / "nothing.yaml"))
    for error in (exists, missing):
        assert "geheim" not in str(error.value).lower()
        assert str(tmp_path) not in str(error.value)
    # the same message whether the path exists or not
    assert str(exists.value) == str(missing.value)


def test_a_path_object_is_read(tmp_path):
    path = tmp_path / "gold.yaml"
    path.write_text("- id: q1\n  question: Frage?\n  kind: fact\n", encoding="utf-8")
    assert [q.id for q in read_goldset(path).questions] == ["q1"]


def test_gold_set_bytes_must_be_utf8():
    with pytest.raises(GoldsetError) as info:
        read_goldset(b"- id: q1\n  question: \xff\n  kind: fact\n")
    assert "UTF-8" in str(info.value)


def test_zip_guard_messages_are_bounded():
    import io
    import zipfile

    from lib.kb import zip_guard
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("../" + "x" * 60000, b"boom")
    with pytest.raises(zip_guard.ZipGuardError) as info:
        zip_guard.read_zip(buffer.getvalue())
    assert len(str(info.value)) <= 1100
