"""The release ZIP (scripts/release.py): the product without the lab, complete enough to install."""
import ast
import importlib.util
import pathlib
import zipfile

REPO = pathlib.Path(__file__).resolve().parents[2]


def _release():
    spec = importlib.util.spec_from_file_location("pv_kb_release", REPO / "scripts" / "release.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_zip_holds_the_product_and_none_of_the_lab(tmp_path):
    release = _release()
    target = release.build(tmp_path)
    names = zipfile.ZipFile(target).namelist()
    assert names and all(n.startswith("pv_kb/") for n in names)
    inside = {n[len("pv_kb/"):] for n in names}
    for lab in ("tests/", "testing/", "scripts/", "docs/", "data/demo_kb/goldset", "data/pii_eval"):
        assert not [n for n in inside if n.startswith(lab)], lab
    # every file the manifest loads, and every Python file of the product, is inside
    manifest = ast.literal_eval((REPO / "__manifest__.py").read_text(encoding="utf-8"))
    assert set(manifest["data"]) <= inside
    product_py = {str(p.relative_to(REPO)) for d in ("models", "controllers", "lib", "wizards", "cli")
                  for p in (REPO / d).rglob("*.py") if "__pycache__" not in p.parts}
    assert product_py <= inside
    assert "data/demo_kb/wissensbasis/kb.json" in inside
    # far smaller than the repository's addon folder (which carries test vectors and screenshots)
    assert target.stat().st_size < 2_000_000


def test_the_same_tree_gives_the_same_bytes(tmp_path):
    release = _release()
    first = release.build(tmp_path / "a").read_bytes()
    second = release.build(tmp_path / "b").read_bytes()
    assert first == second
