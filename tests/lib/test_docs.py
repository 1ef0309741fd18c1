"""The repository speaks of the product only, and the README stays a quick start whose links hold."""
import pathlib
import re
import subprocess

REPO = pathlib.Path(__file__).resolve().parents[2]
TEXT_SUFFIXES = {".py", ".md", ".sh", ".xml", ".js", ".po", ".pot", ".csv", ".yaml", ".yml", ".json", ".txt",
                 ".ini", ".scss", ".css", ".cfg", ".toml"}
# words about how the work was organised rather than about the product (pieces joined so this file passes)
PROCESS_WORDING = [re.compile(p, re.I) for p in (
    r"\biss" r"ues? ?#?\d+",
    r"\bwork" r"place\b",
    r"\b(?:next|last|previous|earlier|later|second|third) (?:ro" r"und|ses" r"sion)\b",
    r"\bthis ro" r"und\b",
    r"\bhel" r"per (?:agent|session)s?\b",
    r"\bthe bri" r"ef\b",
)] + [re.compile(r"\bC" r"EO\b")]


def _tracked_text_files():
    names = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, check=True, capture_output=True).stdout
    for name in names.decode("utf-8").split("\0"):
        path = REPO / name
        if name and path.suffix in TEXT_SUFFIXES and path.is_file() and path.stat().st_size < 2_000_000:
            yield name, path


def test_no_process_wording_in_code_docs_or_ui():
    hits = []
    for name, path in _tracked_text_files():
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if any(rx.search(line) for rx in PROCESS_WORDING):
                hits.append(f"{name}:{number}: {line.strip()[:120]}")
    assert not hits, "\n".join(hits)


def test_the_checker_sees_process_wording():
    assert any(rx.search("as asked in iss" "ue 14") for rx in PROCESS_WORDING)
    assert not any(rx.search("the database session ends") for rx in PROCESS_WORDING)


def test_the_readme_is_a_quick_start():
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    table = [n for n, line in enumerate(lines) if "settings-table:" in line]
    # the settings table is generated from the declaration; the prose around it stays short
    prose = len(lines) - (table[-1] - table[0] if len(table) == 2 else 0)
    assert prose <= 125, prose
    assert "scripts/setup.sh" in lines[lines.index("```bash") + 1]
    assert "scripts/test.sh" in lines[lines.index("```bash") + 2]


def test_links_in_the_docs_point_at_files_that_exist():
    missing = []
    for doc in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", doc.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target):
                continue
            if not (doc.parent / target).exists():
                missing.append(f"{doc.relative_to(REPO)} -> {target}")
    assert not missing, missing


def test_the_readme_settings_table_matches_the_declaration():
    import importlib.util

    spec = importlib.util.spec_from_file_location("settings_table", REPO / "scripts" / "settings_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    from lib.settings import table

    readme = module.readme_table((REPO / "README.md").read_text(encoding="utf-8"))
    assert readme == module.markdown(), "run: python scripts/settings_table.py --write"
    # one row per declared setting, in the declaration's order
    keys = [line.split("|")[2].strip().strip("`") for line in readme.splitlines()[2:]]
    assert keys == [s.key for s in table.SETTINGS]
