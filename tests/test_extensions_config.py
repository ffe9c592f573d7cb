"""The book's one list of Sphinx extensions (``sphinx.config.extensions`` in _config.yml),
and the package they form (book/_ext, laid out by build phase).

Jupyter Book replaces its own list, and whatever ``extra_extensions`` or the names of
``local_extensions`` add to it, with ``sphinx.config.extensions``: that list alone is
loaded. It must name every extension module of book/_ext by its dotted name, and nothing
that is neither there nor installed. Each module has that one name: nothing imports a
module of book/_ext by its bare file name, nor a sibling's private name.
"""

import ast
import importlib.util
import shutil

import pytest
import yaml

from buildfiles import ROOT

EXT = ROOT / "book" / "_ext"
PHASES = ("config", "reading", "resolving", "writing", "after")
SPHINX = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["sphinx"]
LISTED = SPHINX["config"]["extensions"]


def dotted(path):
    """book/_ext/reading/claims.py -> book._ext.reading.claims."""
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def extension_modules():
    return sorted(dotted(path) for phase in PHASES for path in (EXT / phase).glob("*.py")
                  if path.name != "__init__.py")


def package_files(suffix):
    return sorted(p for p in EXT.rglob(f"*{suffix}") if "__pycache__" not in p.parts)


def test_the_list_names_every_module_of_book_ext():
    missing = [name for name in extension_modules() if name not in LISTED]
    assert not missing, f"book/_ext modules that _config.yml's sphinx.config.extensions does not name: {missing}"


@pytest.mark.build  # the book's environment: the wheel's venv has no third-party extension
def test_the_list_names_nothing_else():
    """Every other name is an installed module (a stray name would also fail the build)."""
    ours = set(extension_modules())
    stray = [name for name in LISTED
             if name not in ours and (name.startswith("book.") or importlib.util.find_spec(name) is None)]
    assert not stray, f"sphinx.config.extensions names what is neither in book/_ext nor installed: {stray}"


def test_one_list_that_names_each_extension_once():
    twice = sorted({name for name in LISTED if LISTED.count(name) > 1})
    assert not twice, f"sphinx.config.extensions names these more than once: {twice}"
    assert "extra_extensions" not in SPHINX, "extra_extensions is not loaded: name the extension in sphinx.config.extensions"
    local = SPHINX.get("local_extensions", {})
    assert set(local.values()) <= {"."}, "local_extensions only puts the repository's root on the Python path"
    assert set(local) <= set(LISTED), "local_extensions names an extension that the list does not"


def test_the_package_is_laid_out_by_phase():
    """Python modules in the phase folders and shared/, each folder a package; the browser
    scripts in static/ alone."""
    folders = sorted({p.parent.relative_to(EXT).as_posix() for p in package_files(".py")})
    assert folders == sorted([".", "shared", *PHASES]), folders
    for folder in folders:
        assert (EXT / folder / "__init__.py").is_file(), f"book/_ext/{folder} has no __init__.py"
    assert [p.name for p in EXT.glob("*.py")] == ["__init__.py"], "a module at the top of book/_ext"
    scripts = package_files(".js")
    assert scripts and all(p.parent == EXT / "static" for p in scripts), "a script outside book/_ext/static"
    assert not list((EXT / "static").glob("*.py")), "book/_ext/static holds scripts only"


def _imports(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node, alias.name, None
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                yield node, "." * node.level + (node.module or ""), alias.name


def test_each_module_is_imported_by_its_one_name():
    """No bare ``import claims`` or relative import of a module of book/_ext (it would be a
    second module with the same code), and no sibling's private name, anywhere in book/_ext,
    tools/ or the tests."""
    stems = {p.stem for p in package_files(".py")} - {"__init__"}
    sources = package_files(".py") + sorted((ROOT / "tools").rglob("*.py")) + sorted((ROOT / "tests").glob("*.py"))
    wrong = []
    for path in sources:
        for node, module, name in _imports(path):
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            top = module.split(".")[0]
            if path.is_relative_to(EXT) and module.startswith("."):  # the one name, written out
                wrong.append(f"{where}: relative import {module}")
            elif top in stems:
                wrong.append(f"{where}: {module} by its bare name")
            elif module.startswith("book._ext") and name and name.startswith("_"):
                wrong.append(f"{where}: {module}.{name}, a private name")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):  # app.setup_extension("x")
            if (isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "setup_extension"
                    and node.args and isinstance(node.args[0], ast.Constant)
                    and node.args[0].value.split(".")[0] in stems):
                wrong.append(f"{path.relative_to(ROOT)}:{node.lineno}: setup_extension({node.args[0].value!r})")
    assert not wrong, wrong


def test_shared_helpers_are_no_extensions():
    for path in (EXT / "shared").glob("*.py"):
        defined = {node.name for node in ast.parse(path.read_text(encoding="utf-8")).body
                   if isinstance(node, ast.FunctionDef)}
        assert "setup" not in defined, f"{dotted(path)} is an extension: it belongs in a phase folder"


def test_the_environment_version_covers_the_whole_package(tmp_path):
    """reading/execution.py hashes every file of book/_ext, in every subfolder and scripts
    included (an edit to any of them reads every page again); caches do not count."""
    from book._ext.reading.execution import extensions_key

    shutil.copytree(EXT, tmp_path / "book" / "_ext", ignore=shutil.ignore_patterns("__pycache__"))
    before = extensions_key(tmp_path)
    (tmp_path / "book" / "_ext" / "__pycache__").mkdir()
    (tmp_path / "book" / "_ext" / "__pycache__" / "x.pyc").write_bytes(b"\0")
    assert extensions_key(tmp_path) == before
    keys = {before}
    for name in ("static/twin.js", "shared/checkout.py", "writing/book_pdf.py", "__init__.py"):
        with open(tmp_path / "book" / "_ext" / name, "a", encoding="utf-8") as file:
            file.write("\n")
        keys.add(extensions_key(tmp_path))
    assert len(keys) == 5, "an edit in book/_ext that the environment's version does not see"
