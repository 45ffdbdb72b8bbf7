"""What keeps the code base as docs/product.md "Architecture" lays it out, beyond ruff, mypy and lint-imports
(`make check`)."""

from __future__ import annotations

import re
from pathlib import Path

APP = Path(__file__).resolve().parents[2] / "app"
IGNORE = re.compile(r"#\s*type:\s*ignore(?P<codes>\[[^\]]*\])?(?P<rest>.*)$")


def test_every_type_ignore_names_its_error_and_says_why() -> None:
    bare = []
    for path in sorted(APP.rglob("*.py")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            found = IGNORE.search(line)
            if found and (not found["codes"] or not found["rest"].strip().startswith("#")):
                bare.append(f"{path.relative_to(APP.parent)}:{number}: {line.strip()}")
    assert not bare, "a `type: ignore` needs its code and a reason after it, `# why`:\n" + "\n".join(bare)


ROOT = APP.parent
# a document a comment cites: one of the project's docs, a path outside the checkout, or a spec by its bare name
CITED = re.compile(r"(?<![\w./-])(\.\./[\w./-]+\.md|docs/[\w./-]+\.md|(?:FORMAT|UI|PRODUCT|DEVELOPERS)\.md)")
MOST_MODULES = 20


def test_every_document_a_comment_cites_is_in_the_repository() -> None:
    """One who clones the project can follow every citation: none names a file only a workplace has beside it."""
    missing = []
    own_static = [p for p in (ROOT / "static").glob("*.*") if not p.name.startswith(("htmx", "idiomorph"))]
    own_code = [p for p in APP.rglob("*.py") if "demo" not in p.relative_to(APP).parts]  # the demo's is its data
    for path in sorted([*own_code, *(ROOT / "templates").rglob("*.html"), *own_static]):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            for cited in CITED.findall(line):
                if not (ROOT / cited).is_file():
                    missing.append(f"{path.relative_to(ROOT)}:{number}: {cited}")
    assert not missing, "citations of documents not in the repository:\n" + "\n".join(missing)


def test_no_folder_of_the_package_holds_more_than_twenty_modules() -> None:
    crowded = {
        str(folder.relative_to(ROOT)): count
        for folder in [APP, *(p for p in APP.rglob("*") if p.is_dir() and p.name != "__pycache__")]
        if (count := len([m for m in folder.glob("*.py") if m.name != "__init__.py"])) > MOST_MODULES
    }
    assert not crowded, f"folders of more than {MOST_MODULES} modules: {crowded}"


def test_no_layer_names_a_function_after_one_of_its_modules() -> None:
    """`from dsh_inspect.sessions import search_index` must give the module: a package whose public API held a
    function of that name would hand the function to whoever asked for the module."""
    import importlib
    import pkgutil
    import types

    clashes = {}
    for folder in sorted(p for p in APP.iterdir() if (p / "__init__.py").is_file()):
        package = importlib.import_module(f"dsh_inspect.{folder.name}")
        modules = {m.name for m in pkgutil.iter_modules(package.__path__)}
        exported = set(getattr(package, "__all__", ())) & modules  # a module exported as itself is fine
        if clash := {name for name in exported if not isinstance(getattr(package, name), types.ModuleType)}:
            clashes[folder.name] = sorted(clash)
    assert not clashes, clashes
