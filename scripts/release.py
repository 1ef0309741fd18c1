"""Build the installable addon ZIP: the product without the lab.

    python scripts/release.py [--out DIR]      prints the path of dist/pv_kb-<version>.zip

The ZIP holds ``pv_kb/`` with the files git tracks under the product's paths (an allow list: code, views,
security, data, translations, migrations, web assets and the demo knowledge base). Left out: tests and test
doubles (``tests/``, ``testing/``), benches, demos, screenshots and the local-model installer (``scripts/``),
developer documentation (``docs/``), gold sets and evaluation data. The contents are read from the working
tree, so a build of uncommitted changes shows them; file times are fixed, so the same tree gives the same bytes.
"""
import argparse
import ast
import pathlib
import subprocess
import sys
import zipfile

REPO = pathlib.Path(__file__).resolve().parents[1]
# what ships: paths relative to the repository (a folder ships with all its tracked files)
PRODUCT = [
    "__init__.py", "__manifest__.py", "README.md", "requirements.txt",
    "cli", "controllers", "lib", "models", "wizards", "views", "security", "i18n", "migrations",
    "data/pv.kb.synonym.csv", "data/pv_kb_cron.xml", "data/demo_kb/wissensbasis",
    "static/description", "static/src", "static/tests",
]
FIXED_TIME = (2026, 1, 1, 0, 0, 0)


def product_files(repo=REPO):
    """Tracked files of the product, sorted."""
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=repo, check=True, capture_output=True).stdout
    names = [n for n in tracked.decode("utf-8").split("\0") if n]
    keep = [n for n in names if any(n == p or n.startswith(p.rstrip("/") + "/") for p in PRODUCT)]
    return sorted(n for n in keep if (repo / n).is_file() and "__pycache__" not in n)


def version(repo=REPO):
    return ast.literal_eval((repo / "__manifest__.py").read_text(encoding="utf-8"))["version"]


def build(out_dir, repo=REPO):
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"pv_kb-{version(repo)}.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for name in product_files(repo):
            info = zipfile.ZipInfo("pv_kb/" + name, FIXED_TIME)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, (repo / name).read_bytes())
    return target


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(REPO / "dist"), help="output folder (default: dist/)")
    args = parser.parse_args(argv)
    target = build(args.out)
    print(target)
    print(f"{target.stat().st_size / 1e6:.2f} MB, {len(product_files())} files", file=sys.stderr)


if __name__ == "__main__":
    main()
