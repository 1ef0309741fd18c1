"""Safe reading of a KB batch from a ZIP file or a folder.

Nothing is written to disk: members are read into memory, in pieces, and the
read stops as soon as a limit is exceeded. The sizes stored in the ZIP
headers are never trusted. Every refusal is a :class:`ZipGuardError` with a
German message that names the member and says what to do.
"""
from __future__ import annotations

import io
import os
import posixpath
import re
import stat
import unicodedata
import zipfile
import zlib
from dataclasses import dataclass
from typing import BinaryIO

from ..text import untrusted

_PIECE = 64 * 1024
_DRIVE_RE = re.compile(r"^[A-Za-z]:")
_IGNORED_NAMES = {"__MACOSX", "Thumbs.db", "desktop.ini"}
KBJSON = "kb.json"
ENTRY_DIR = "dokumente"


class ZipGuardError(Exception):
    """A batch that must not be read; the message is a German sentence for the user (bounded: it may quote a
    member name, which a ZIP allows to be 64 KB long)."""

    def __init__(self, message: str):
        super().__init__(untrusted.cap(str(message), 1000))


@dataclass(frozen=True)
class Limits:
    """Upper bounds for one batch (uncompressed sizes)."""

    max_total_bytes: int = 50 * 1024 * 1024
    max_member_bytes: int = 5 * 1024 * 1024
    max_members: int = 5000


def _mib(size: int) -> str:
    """Human size in German notation: "5,0 MB", "200 KB", "512 Bytes"."""
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.1f} MB".replace(".", ",")
    if size >= 1024:
        return f"{size // 1024} KB"
    return f"{size} Bytes"


class _Budget:
    """Counts bytes read against the member and total limits."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.total = 0

    def read(self, stream: BinaryIO, name: str) -> bytes:
        """Read stream in pieces, refusing as soon as a limit is passed."""
        pieces: list[bytes] = []
        size = 0
        while True:
            piece = stream.read(_PIECE)
            if not piece:
                return b"".join(pieces)
            size += len(piece)
            self.total += len(piece)
            if size > self.limits.max_member_bytes:
                raise ZipGuardError(
                    f"Die Datei {name} ist entpackt größer als {_mib(self.limits.max_member_bytes)} und wird "
                    "nicht gelesen. Bitte nur die Wissensbasis (Markdown-Einträge und kb.json) einpacken.")
            if self.total > self.limits.max_total_bytes:
                raise ZipGuardError(
                    f"Der Stapel ist entpackt größer als {_mib(self.limits.max_total_bytes)} und wird nicht "
                    "gelesen. Bitte den Stapel aufteilen oder nur die Wissensbasis einpacken.")
            pieces.append(piece)


def safe_member_name(name: str) -> str:
    """Check a member name and return it normalised ("a/./b" -> "a/b"); raise ZipGuardError if unsafe."""
    if any(ord(ch) < 32 for ch in name):
        raise ZipGuardError(f"Das ZIP enthält einen Namen mit Steuerzeichen: {name!r}. Bitte die Datei umbenennen.")
    if "\\" in name:
        raise ZipGuardError(f"Das ZIP enthält einen Pfad mit Backslash: {name}. Bitte das ZIP mit '/' als "
                            "Trennzeichen neu erstellen.")
    if name.startswith("/"):
        raise ZipGuardError(f"Das ZIP enthält einen absoluten Pfad: {name}. Bitte nur relative Pfade einpacken.")
    if _DRIVE_RE.match(name):
        raise ZipGuardError(f"Das ZIP enthält einen Pfad mit Laufwerksbuchstaben: {name}. Bitte nur relative "
                            "Pfade einpacken.")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise ZipGuardError(f"Das ZIP enthält einen Pfad mit '..': {name}. Solche Pfade könnten aus dem Ziel "
                            "herausführen und werden abgelehnt.")
    return unicodedata.normalize("NFC", "/".join(parts))


def _open_zip(source: bytes | str | os.PathLike | BinaryIO) -> zipfile.ZipFile:
    try:
        if isinstance(source, (bytes, bytearray, memoryview)):
            return zipfile.ZipFile(io.BytesIO(bytes(source)))
        return zipfile.ZipFile(source)
    except FileNotFoundError as exc:
        raise ZipGuardError(f"Die ZIP-Datei wurde nicht gefunden: {exc.filename}. Bitte den Pfad prüfen.") from exc
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError, TypeError) as exc:
        raise ZipGuardError("Die Datei ist kein gültiges ZIP-Archiv oder beschädigt. Bitte das ZIP neu "
                            "erstellen.") from exc


def read_zip(source: bytes | str | os.PathLike | BinaryIO, limits: Limits = Limits()) -> dict[str, bytes]:
    """Read every file member of a ZIP into memory: normalised name -> bytes.

    Refuses (ZipGuardError) unsafe names, symlinks, encrypted members,
    duplicate names, too many members, oversize members or totals (counted
    while decompressing), and anything that is not a readable ZIP.
    Directory members are skipped.
    """
    archive = _open_zip(source)
    budget = _Budget(limits)
    result: dict[str, bytes] = {}
    with archive:
        infos = archive.infolist()
        if len(infos) > limits.max_members:
            raise ZipGuardError(f"Das ZIP enthält {len(infos)} Einträge, erlaubt sind höchstens "
                                f"{limits.max_members}. Bitte nur die Wissensbasis einpacken.")
        for info in infos:
            name = safe_member_name(info.orig_filename)
            mode = info.external_attr >> 16
            if stat.S_ISLNK(mode):
                raise ZipGuardError(f"Das ZIP enthält einen symbolischen Link: {info.filename}. Bitte nur "
                                    "echte Dateien einpacken.")
            if info.is_dir() or not name:
                continue
            if info.flag_bits & 0x1:
                raise ZipGuardError(f"Die Datei {info.filename} im ZIP ist verschlüsselt. Bitte das ZIP ohne "
                                    "Passwort erstellen.")
            if name in result:
                raise ZipGuardError(f"Das ZIP enthält den Namen {name} mehrfach. Bitte das ZIP neu erstellen.")
            try:
                with archive.open(info) as stream:
                    result[name] = budget.read(stream, name)
            except ZipGuardError:
                raise
            except (zipfile.BadZipFile, OSError, EOFError, ValueError, RuntimeError, NotImplementedError,
                    zlib.error) as exc:
                raise ZipGuardError(f"Die Datei {name} im ZIP ist beschädigt oder nicht lesbar. Bitte das ZIP "
                                    "neu erstellen.") from exc
    return result


def _is_hidden(name: str) -> bool:
    return name.startswith(".") or name in _IGNORED_NAMES


def read_folder(path: str | os.PathLike, limits: Limits = Limits()) -> dict[str, bytes]:
    """Read every regular file below a folder: relative "/" path -> bytes.

    Hidden files and folders (".git", ".DS_Store") and "__MACOSX" are skipped.
    Symlinks are followed only if they stay inside the folder; one pointing
    outside is refused. The limits apply as for :func:`read_zip`.
    """
    root = os.path.realpath(os.fspath(path))
    if not os.path.isdir(root):
        raise ZipGuardError(f"Der Ordner {os.fspath(path)} existiert nicht. Bitte den Pfad prüfen.")
    budget = _Budget(limits)
    result: dict[str, bytes] = {}
    for current, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not _is_hidden(d))
        for entry in sorted(dirs) + sorted(f for f in files if not _is_hidden(f)):
            full = os.path.join(current, entry)
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            real = os.path.realpath(full)
            if os.path.islink(full) and os.path.commonpath([root, real]) != root:
                raise ZipGuardError(f"Die Datei {rel} ist ein Verweis (Symlink) nach außerhalb des Ordners und "
                                    "wird abgelehnt. Bitte die Datei selbst in den Ordner kopieren.")
            if entry in dirs:
                continue
            try:
                st = os.stat(real)
            except OSError as exc:
                raise ZipGuardError(f"Die Datei {rel} ist nicht lesbar. Bitte die Zugriffsrechte prüfen.") from exc
            if not stat.S_ISREG(st.st_mode):
                continue
            if len(result) >= limits.max_members:
                raise ZipGuardError(f"Der Ordner enthält mehr als {limits.max_members} Dateien. Bitte nur die "
                                    "Wissensbasis auswählen.")
            try:
                with open(real, "rb") as handle:
                    result[unicodedata.normalize("NFC", rel)] = budget.read(handle, rel)
            except OSError as exc:
                raise ZipGuardError(f"Die Datei {rel} ist nicht lesbar. Bitte die Zugriffsrechte prüfen.") from exc
    return result


def kb_root_files(files: dict[str, bytes]) -> dict[str, bytes]:
    """Paths relative to the KB root: the folder holding kb.json, else the one holding dokumente/.

    The shallowest candidate wins; two candidates at the same depth raise
    ZipGuardError. "__MACOSX/", ".DS_Store" and other hidden files are dropped,
    as are files outside the root. Without any candidate the files are returned
    unchanged (the parser then reports what is missing).
    """
    visible = {p: b for p, b in files.items()
               if not any(_is_hidden(part) for part in p.split("/"))}
    roots = {posixpath.dirname(p) for p in visible if posixpath.basename(p) == KBJSON}
    if not roots:
        roots = set()
        for p in visible:
            parts = p.split("/")
            if ENTRY_DIR in parts[:-1]:
                roots.add("/".join(parts[:parts.index(ENTRY_DIR)]))
    if not roots:
        return dict(visible)
    depth = min(r.count("/") + (1 if r else 0) for r in roots)
    best = sorted(r for r in roots if r.count("/") + (1 if r else 0) == depth)
    if len(best) > 1:
        raise ZipGuardError("Der Stapel enthält mehrere Wissensbasen (" + ", ".join(best) +
                            "). Bitte nur eine Wissensbasis pro Import wählen.")
    root = best[0]
    prefix = f"{root}/" if root else ""
    return {p[len(prefix):]: b for p, b in visible.items() if p.startswith(prefix)}
