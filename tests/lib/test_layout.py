"""The shape of the repository: the product never imports the test doubles, lib/ never imports Odoo, no
Python file in lib/ or models/ grows past MAX_LINES (one room per job), and the Odoo test classes served over
HTTP carry the tag the test command splits the Odoo suite by."""
import ast
import pathlib

REPO = pathlib.Path(__file__).resolve().parents[2]
PRODUCT = ["__init__.py", "__manifest__.py", "models", "controllers", "lib", "wizards", "cli"]


def _python_files(*names):
    for name in names:
        path = REPO / name
        yield from ([path] if path.is_file() else sorted(path.rglob("*.py")))


def _imports(path):
    """Absolute module names a file imports (relative imports resolved against the addon root)."""
    rel = path.relative_to(REPO).with_suffix("")
    package = list(rel.parts[:-1])   # the package a module (or a package's __init__) belongs to
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
                module = ".".join(["odoo.addons.pv_kb", *base, *([node.module] if node.module else [])])
                # "from .. import testing" names the module in the alias
                found += [module] if node.module else [module + "." + a.name for a in node.names]
            else:
                found.append(node.module or "")
    return found


def _is_testing(module):
    return module == "testing" or module.startswith(("testing.", "odoo.addons.pv_kb.testing"))


def test_the_product_never_imports_the_test_doubles():
    offenders = {str(p.relative_to(REPO)): [m for m in _imports(p) if _is_testing(m)] for p in _python_files(*PRODUCT)}
    assert not {k: v for k, v in offenders.items() if v}
    # the checker sees relative imports: the agent's import of the answer engine resolves as expected
    assert "odoo.addons.pv_kb.lib.answer" in _imports(REPO / "models" / "pv_kb_agent.py")


def test_lib_imports_no_odoo():
    offenders = {str(p.relative_to(REPO)): [m for m in _imports(p) if m == "odoo" or m.startswith("odoo.")
                                            and not m.startswith("odoo.addons.pv_kb.lib")]
                 for p in _python_files("lib")}
    assert not {k: v for k, v in offenders.items() if v}


def test_the_test_doubles_live_in_testing_and_scripts_holds_entry_points():
    assert (REPO / "testing" / "standin" / "__init__.py").is_file()
    assert (REPO / "testing" / "synthetic_kb.py").is_file()
    assert not (REPO / "scripts" / "__init__.py").exists()
    for command in ("ollama_standin.py", "gen_synthetic_kb.py"):
        source = (REPO / "scripts" / command).read_text(encoding="utf-8")
        assert len(source.splitlines()) < 25 and "from testing." in source, command


MAX_LINES = 460


def test_no_python_file_in_lib_or_models_is_longer_than_max_lines():
    too_long = {}
    for path in _python_files("lib", "models"):
        name = str(path.relative_to(REPO))
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_LINES:
            too_long[name] = lines
    assert not too_long, (f"more than {MAX_LINES} lines (split the file along the jobs it holds): "
                          + ", ".join(f"{name} ({lines})" for name, lines in sorted(too_long.items())))


def _definitions(pattern):
    """Files of lib/ whose source matches ``pattern`` (a regular expression), relative to the repository."""
    import re

    rx = re.compile(pattern, re.M)
    return sorted(str(p.relative_to(REPO)) for p in _python_files("lib") if rx.search(p.read_text(encoding="utf-8")))


def test_each_text_primitive_has_one_definition():
    # folding: umlaut tables and accent stripping (names are folded by text_de.fold_name as well)
    assert _definitions(r"maketrans|\(\"ä\", \"ae\"\)|unicodedata\.combining") == ["lib/text/german.py"]
    # table rows, headings, fences
    assert _definitions(r"startswith\(\"\|\"\)") == ["lib/text/md_blocks.py"]
    assert _definitions(r"#\{1,6\}|\^##|\^###|`\{3,\}") == ["lib/text/md_blocks.py"]
    # the entry-id pattern
    assert _definitions(r"\[a-z0-9\]\+\(\?:-\[a-z0-9\]\+\)\+") == ["lib/kb/format.py"]
    # stemming, stopword lists, the token estimate
    assert _definitions(r"^def (?:\w*_)?stem\(") == ["lib/text/german.py"]
    assert _definitions(r"^\w*STOPWORDS = ") == ["lib/text/german.py"]
    assert _definitions(r"^def estimate_tokens\(") == ["lib/llm/tokens.py"]


# The wings of lib/ and their floors: a module may import from its own wing and from wings on a lower floor only
# (evaluation, cockpit and settings stand apart: they may use anything below them, nothing in lib/ imports them).
FLOORS = {"text": 0, "pii": 1, "llm": 2, "kb": 3, "search": 3, "facts": 4, "answer": 5, "evaluation": 6, "cockpit": 6,
          "settings": 6}


def _wing(module):
    parts = module.split(".")
    if parts[:3] == ["odoo", "addons", "pv_kb"]:
        parts = parts[3:]
    return parts[1] if len(parts) > 1 and parts[0] == "lib" else None


def test_lib_has_only_wings_at_its_top_level():
    top = sorted(p.name for p in (REPO / "lib").iterdir() if p.suffix == ".py" or p.is_dir() and p.name != "__pycache__")
    assert top == sorted(["__init__.py", *FLOORS]), top
    for wing in FLOORS:
        doc = ast.get_docstring(ast.parse((REPO / "lib" / wing / "__init__.py").read_text(encoding="utf-8")))
        assert doc and doc.splitlines()[0].strip(), f"lib/{wing}/__init__.py needs a one-line docstring"


def test_no_import_runs_from_a_lower_wing_to_a_higher_one():
    upward = []
    for path in _python_files("lib"):
        own = path.relative_to(REPO).parts[1]
        if own not in FLOORS:
            continue
        for module in _imports(path):
            other = _wing(module)
            if other and other != own and (other not in FLOORS or FLOORS[other] >= FLOORS[own]):
                upward.append(f"{path.relative_to(REPO)} -> lib.{other}")
    assert not upward, upward
    # the checker sees the arrows: the answer engine does import the search wing
    assert "search" in {_wing(m) for m in _imports(REPO / "lib" / "answer" / "prompt.py")}


def test_every_module_of_lib_opens_with_a_docstring():
    missing = [str(p.relative_to(REPO)) for p in _python_files("lib")
               if not ast.get_docstring(ast.parse(p.read_text(encoding="utf-8")))]
    assert not missing, missing


def test_each_wing_names_all_its_modules_in_its_docstring():
    """A wing's package docstring is its table of contents: every module (and sub-package) is named in it."""
    unnamed = []
    for wing in FLOORS:
        folder = REPO / "lib" / wing
        for package in [folder, *[p for p in folder.iterdir() if (p / "__init__.py").is_file()]]:
            doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text(encoding="utf-8"))) or ""
            names = [p.stem for p in package.glob("*.py") if p.stem != "__init__"]
            names += [p.name for p in package.iterdir() if (p / "__init__.py").is_file()]
            unnamed += [f"{package.relative_to(REPO)}: {n}" for n in names if f"``{n}``" not in doc
                        and f"``{n}/``" not in doc]
    assert not unnamed, unnamed


def _odoo_test_classes():
    """{class name: (base names, tags of its own @tagged or None)} of the Odoo test files (tests/*.py)."""
    classes = {}
    for path in sorted((REPO / "tests").glob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if not isinstance(node, ast.ClassDef):
                continue
            tags = None
            for deco in node.decorator_list:
                if isinstance(deco, ast.Call) and getattr(deco.func, "id", "") == "tagged":
                    tags = {arg.value for arg in deco.args if isinstance(arg, ast.Constant)}
            classes[node.name] = ([getattr(b, "id", getattr(b, "attr", "")) for b in node.bases], tags)
    return classes


def test_every_odoo_test_class_served_over_http_has_the_http_tag():
    # scripts/test.sh runs the HttpCase classes (tag pv_kb_http) in a process of their own: Odoo builds the
    # asset bundles (half a minute) for a test run with an HttpCase in it, and so does it once
    classes = _odoo_test_classes()

    def over_http(name):
        return name == "HttpCase" or any(over_http(base) for base in classes.get(name, ((), None))[0])

    def tags(name):   # @tagged of the class, else of the nearest base that has one
        own = classes.get(name, ((), None))
        return own[1] if own[1] is not None else set().union(*[tags(b) for b in own[0]], set())

    served = sorted(name for name in classes if name != "HttpCase" and over_http(name))
    assert {"TestUi", "TestRpcAccess", "TestChatEndpoints"} <= set(served), served
    assert [name for name in served if "pv_kb_http" not in tags(name)] == []
    assert "pv_kb_http" not in tags("TestDemoEval") and "pv_kb_http" not in tags("TestImport")
