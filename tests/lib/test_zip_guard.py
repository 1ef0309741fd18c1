"""Tests for lib.kb.zip_guard: every refused attack, streaming limits, KB root detection."""
import io
import os
import stat
import struct
import time
import warnings
import zipfile

import pytest

from lib.kb import batch as kb_batch, zip_guard

ENTRY = """---
id: lb-atz-07
title: Altersteilzeit – Ersatzquote des AMS
stand: 2026-01
topic: altersteilzeit
source: Lexis Briefings Personalrecht
---

# Altersteilzeit – Ersatzquote des AMS

## Zusammenfassung
Ersatzquote 28,5 % – § 27 AlVG.
""".encode("utf-8")

KBJSON = ('{"generated": "2026-02-01", "count": 1, "entries": [{"id": "lb-atz-07", '
          '"title": "Altersteilzeit – Ersatzquote des AMS", "stand": "2026-01", "topic": "altersteilzeit", '
          '"source": "Lexis Briefings Personalrecht", "file": "dokumente/lb-atz-07.md"}]}').encode("utf-8")


def make_zip(members, compression=zipfile.ZIP_DEFLATED):
    """members: list of (name or ZipInfo, bytes)."""
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # duplicate names are written on purpose
        with zipfile.ZipFile(buf, "w", compression) as zf:
            for name, data in members:
                zf.writestr(name, data)
    return buf.getvalue()


def patch_headers(data, local_offset, local_fmt, central_offset, central_fmt, value):
    """Overwrite one field in the (single) local header and central directory record."""
    out = bytearray(data)
    local = out.find(b"PK\x03\x04")
    central = out.find(b"PK\x01\x02")
    struct.pack_into(local_fmt, out, local + local_offset, value)
    struct.pack_into(central_fmt, out, central + central_offset, value)
    return bytes(out)


def refused(data, limits=zip_guard.Limits(), match=None):
    with pytest.raises(zip_guard.ZipGuardError, match=match) as info:
        zip_guard.read_zip(data, limits)
    return str(info.value)


# --------------------------------------------------------------------------- clean input


def test_clean_zip_round_trips(tmp_path):
    members = [("wissensbasis/kb.json", KBJSON), ("wissensbasis/dokumente/lb-atz-07.md", ENTRY),
               ("wissensbasis/INDEX.md", b"# Index\n"), ("wissensbasis/dokumente/", b""),
               ("__MACOSX/wissensbasis/._kb.json", b"\x00"), ("wissensbasis/.DS_Store", b"\x00")]
    data = make_zip(members)
    files = zip_guard.read_zip(data)
    assert files["wissensbasis/dokumente/lb-atz-07.md"] == ENTRY
    assert "wissensbasis/dokumente/" not in files          # directories are skipped
    root = zip_guard.kb_root_files(files)
    assert sorted(root) == ["INDEX.md", "dokumente/lb-atz-07.md", "kb.json"]
    batch = kb_batch.load_batch(root)
    assert batch.ok and [e.id for e in batch.entries] == ["lb-atz-07"]
    # the same from a path and from an open file
    path = tmp_path / "kb.zip"
    path.write_bytes(data)
    assert zip_guard.read_zip(path) == files
    assert zip_guard.read_zip(str(path)) == files
    with open(path, "rb") as handle:
        assert zip_guard.read_zip(handle) == files


def test_dot_components_are_normalised():
    files = zip_guard.read_zip(make_zip([("./kb.json", KBJSON), ("dokumente//lb-atz-07.md", ENTRY)]))
    assert sorted(files) == ["dokumente/lb-atz-07.md", "kb.json"]


# --------------------------------------------------------------------------- attacks


@pytest.mark.parametrize("name,word", [
    ("/etc/passwd", "absoluten Pfad"),
    ("C:/Windows/evil.md", "Laufwerksbuchstaben"),
    ("c:evil.md", "Laufwerksbuchstaben"),
    ("../evil.md", "'..'"),
    ("wissensbasis/../../evil.md", "'..'"),
    ("wissensbasis/dokumente/..", "'..'"),
    ("..\\evil.md", "Backslash"),
    ("wissensbasis\\..\\..\\evil.md", "Backslash"),
    ("ok/\x01evil.md", "Steuerzeichen"),
])
def test_unsafe_names_are_refused(name, word):
    message = refused(make_zip([("kb.json", KBJSON), (name, b"x")]))
    assert word in message


def test_symlink_member_is_refused():
    info = zipfile.ZipInfo("wissensbasis/dokumente/lb-atz-07.md")
    info.create_system = 3
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    message = refused(make_zip([("wissensbasis/kb.json", KBJSON), (info, b"/etc/passwd")]))
    assert "symbolischen Link" in message


def test_duplicate_names_are_refused():
    refused(make_zip([("kb.json", KBJSON), ("kb.json", KBJSON)]), match="mehrfach")
    refused(make_zip([("a/kb.json", KBJSON), ("a/./kb.json", KBJSON)]), match="mehrfach")


def test_too_many_members():
    members = [(f"dokumente/lb-x-{n:02d}.md", b"x") for n in range(6)]
    refused(make_zip(members), zip_guard.Limits(max_members=5), match="höchstens 5")
    assert len(zip_guard.read_zip(make_zip(members), zip_guard.Limits(max_members=6))) == 6


def test_member_over_limit():
    data = make_zip([("kb.json", b"a" * 2001)])
    refused(data, zip_guard.Limits(max_member_bytes=2000), match="kb.json")
    assert zip_guard.read_zip(data, zip_guard.Limits(max_member_bytes=2001))["kb.json"] == b"a" * 2001


def test_total_over_limit():
    data = make_zip([(f"dokumente/lb-x-{n}.md", b"b" * 1000) for n in range(5)])
    refused(data, zip_guard.Limits(max_total_bytes=4500), match="Stapel")
    assert len(zip_guard.read_zip(data, zip_guard.Limits(max_total_bytes=5000))) == 5


def test_zip_bomb_stops_early():
    """A 200 MB member of zeros (about 200 KB compressed) is refused after reading ~5 MB."""
    buf = io.BytesIO()
    piece = bytes(1024 * 1024)
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        with zf.open("dokumente/lb-bomb-01.md", "w") as member:
            for _ in range(200):
                member.write(piece)
    data = buf.getvalue()
    assert len(data) < 1024 * 1024
    start = time.perf_counter()
    refused(data, match="lb-bomb-01")
    assert time.perf_counter() - start < 2.0


def test_lying_header_size_is_not_trusted():
    """The headers claim 100 bytes for 3 MB of data: the read fails instead of accepting the claim."""
    data = make_zip([("kb.json", bytes(3 * 1024 * 1024))])
    lying = patch_headers(data, 22, "<I", 24, "<I", 100)   # uncompressed size fields
    info = zipfile.ZipFile(io.BytesIO(lying)).infolist()[0]
    assert info.file_size == 100
    refused(lying, zip_guard.Limits(max_member_bytes=1000))


def test_encrypted_member_is_refused():
    data = make_zip([("kb.json", KBJSON)], compression=zipfile.ZIP_STORED)
    encrypted = patch_headers(data, 6, "<H", 8, "<H", 0x1)   # general purpose flag bit 0
    refused(encrypted, match="verschlüsselt")


@pytest.mark.parametrize("data", [b"", b"not a zip at all", b"PK\x03\x04" + b"\x00" * 40])
def test_not_a_zip(data):
    refused(data, match="kein gültiges ZIP")


def test_corrupt_member_data():
    data = bytearray(make_zip([("kb.json", KBJSON * 20)]))
    local = data.find(b"PK\x03\x04")
    name_len, extra_len = struct.unpack_from("<HH", data, local + 26)
    start = local + 30 + name_len + extra_len
    for i in range(start + 5, start + 25):
        data[i] ^= 0xFF
    refused(bytes(data), match="beschädigt")


def test_truncated_zip():
    data = make_zip([("kb.json", KBJSON)])
    refused(data[: len(data) // 2])


def test_missing_zip_path(tmp_path):
    refused(str(tmp_path / "nope.zip"), match="nicht gefunden")


# --------------------------------------------------------------------------- folders


def write_kb(root):
    (root / "dokumente").mkdir(parents=True)
    (root / "kb.json").write_bytes(KBJSON)
    (root / "dokumente" / "lb-atz-07.md").write_bytes(ENTRY)


def test_read_folder_reads_files_and_skips_hidden(tmp_path):
    write_kb(tmp_path / "wissensbasis")
    (tmp_path / "wissensbasis" / ".git").mkdir()
    (tmp_path / "wissensbasis" / ".git" / "HEAD").write_bytes(b"ref")
    os.mkfifo(tmp_path / "wissensbasis" / "pipe")   # not a regular file: must not block or be read
    files = zip_guard.read_folder(tmp_path)
    assert sorted(files) == ["wissensbasis/dokumente/lb-atz-07.md", "wissensbasis/kb.json"]
    assert kb_batch.load_batch(zip_guard.kb_root_files(files)).ok


def test_read_folder_symlinks(tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_bytes(b"secret")
    root = tmp_path / "kb"
    write_kb(root)
    (root / "dokumente" / "alias.md").symlink_to(root / "kb.json")         # inside: read as a file
    assert zip_guard.read_folder(root)["dokumente/alias.md"] == KBJSON
    (root / "dokumente" / "evil.md").symlink_to(outside)
    with pytest.raises(zip_guard.ZipGuardError, match="außerhalb"):
        zip_guard.read_folder(root)
    (root / "dokumente" / "evil.md").unlink()
    (root / "linked_dir").symlink_to(tmp_path, target_is_directory=True)
    with pytest.raises(zip_guard.ZipGuardError, match="außerhalb"):
        zip_guard.read_folder(root)


def test_read_folder_limits(tmp_path):
    write_kb(tmp_path)
    with pytest.raises(zip_guard.ZipGuardError, match="höchstens|mehr als"):
        zip_guard.read_folder(tmp_path, zip_guard.Limits(max_members=1))
    limit = len(KBJSON) - 1
    assert len(ENTRY) <= limit                 # only kb.json is too big
    with pytest.raises(zip_guard.ZipGuardError, match=f"kb.json ist entpackt größer als {limit} Bytes"):
        zip_guard.read_folder(tmp_path, zip_guard.Limits(max_member_bytes=limit))
    with pytest.raises(zip_guard.ZipGuardError, match="Stapel"):
        zip_guard.read_folder(tmp_path, zip_guard.Limits(max_total_bytes=len(ENTRY) + len(KBJSON) - 1))
    with pytest.raises(zip_guard.ZipGuardError, match="existiert nicht"):
        zip_guard.read_folder(tmp_path / "fehlt")


# --------------------------------------------------------------------------- KB root


@pytest.mark.parametrize("prefix", ["", "wissensbasis/", "x/wissensbasis/"])
def test_kb_root_found_by_kbjson(prefix):
    files = {f"{prefix}kb.json": KBJSON, f"{prefix}dokumente/lb-atz-07.md": ENTRY, "LIESMICH.txt": b"x",
             f"{prefix}.DS_Store": b"", f"__MACOSX/{prefix}._kb.json": b""}
    expected = ["dokumente/lb-atz-07.md", "kb.json"] + (["LIESMICH.txt"] if not prefix else [])
    assert sorted(zip_guard.kb_root_files(files)) == sorted(expected)   # files outside the root are dropped


def test_kb_root_without_kbjson_uses_dokumente_folder():
    files = {"export/wissensbasis/dokumente/lb-atz-07.md": ENTRY, "export/readme.txt": b"x"}
    root = zip_guard.kb_root_files(files)
    assert sorted(root) == ["dokumente/lb-atz-07.md"]
    assert [i.code for i in kb_batch.load_batch(root).errors] == ["kbjson_missing"]


def test_kb_root_prefers_shallowest_and_refuses_ambiguity():
    files = {"kb/kb.json": KBJSON, "kb/dokumente/lb-atz-07.md": ENTRY, "kb/archiv/alt/kb.json": b"{}"}
    assert "kb.json" in zip_guard.kb_root_files(files)
    assert "archiv/alt/kb.json" in zip_guard.kb_root_files(files)
    with pytest.raises(zip_guard.ZipGuardError, match="mehrere"):
        zip_guard.kb_root_files({"a/kb.json": KBJSON, "b/kb.json": KBJSON})
