"""The README's settings table, written from the settings declaration (lib/settings/table.py).

    python scripts/settings_table.py           print the table
    python scripts/settings_table.py --write   replace the table between the README's settings-table markers

Labels are the German texts the settings form shows (i18n/de.po). tests/lib/test_docs.py fails when the
README's table differs from what this prints.
"""
import argparse
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
BEGIN, END = "<!-- settings-table:begin -->", "<!-- settings-table:end -->"


def _german():
    import polib

    return {e.msgid: e.msgstr for e in polib.pofile(str(REPO / "i18n" / "de.po")) if e.msgstr and not e.obsolete}


def _default(value):
    if isinstance(value, bool):
        return "on" if value else "off"
    return f"`{value}`" if value not in ("", None) else "–"


def markdown():
    from lib.settings import table

    po = _german()
    lines = ["| setting (form label) | key `pv_kb.…` | default | bounds |", "|---|---|---|---|"]
    for row in table.rows(lambda text: po.get(text, text)):
        label = row["label"] + ("" if row["in_form"] else " (not in the form)")
        if row["editor"] == "system administrators":
            label += " (readable by system administrators only)"
        lines.append(f"| {label} | `{row['key'].removeprefix('pv_kb.')}` | {_default(row['default'])} | "
                     f"{row['bounds'] or '–'} |")
    return "\n".join(lines)


def readme_table(text):
    """The table between the markers of a README text."""
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    return text[start:end].strip()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="update README.md in place")
    args = parser.parse_args(argv)
    table = markdown()
    if not args.write:
        print(table)
        return
    readme = REPO / "README.md"
    text = readme.read_text(encoding="utf-8")
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    readme.write_text(text[:start] + "\n" + table + "\n" + text[end:], encoding="utf-8")


if __name__ == "__main__":
    main()
