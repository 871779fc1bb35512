"""link: classify imports once every module of the repository is known.

Per-file analysis is cached by content, but whether ``import foo`` is in-repo
depends on the other files, so classification runs after analysis on every
run (it is cheap). The external distribution is named from a fixed table of
import names that differ from their distribution, so the result depends on
the repository alone, not on what happens to be installed.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterable, Mapping

from kbc.analyzers.code.resolve import link_code
from kbc.domain.models import FileFacts, Import, Integration

# Import name -> distribution, where they differ (the common cases).
DISTRIBUTIONS: dict[str, str] = {
    "yaml": "PyYAML",
    "cv2": "opencv-python",
    "PIL": "Pillow",
    "sklearn": "scikit-learn",
    "bs4": "beautifulsoup4",
    "git": "GitPython",
    "dateutil": "python-dateutil",
    "attr": "attrs",
    "jwt": "PyJWT",
    "dotenv": "python-dotenv",
    "magic": "python-magic",
    "google": "google-api-core",
    "Crypto": "pycryptodome",
    "OpenSSL": "pyOpenSSL",
    "MySQLdb": "mysqlclient",
    "psycopg2": "psycopg2",
    "serial": "pyserial",
    "usb": "pyusb",
    "zmq": "pyzmq",
    "docx": "python-docx",
    "pptx": "python-pptx",
    "slugify": "python-slugify",
    "multipart": "python-multipart",
    "jose": "python-jose",
    "win32api": "pywin32",
    "skimage": "scikit-image",
    "fitz": "PyMuPDF",
    "pkg_resources": "setuptools",
    "_pytest": "pytest",
    "typing_extensions": "typing-extensions",
}
STDLIB = frozenset(sys.stdlib_module_names) | {"__future__", "__main__"}


class ModuleIndex:
    """The repository's modules, for deciding where an import points."""

    def __init__(self, modules: Iterable[str]) -> None:
        self.modules = frozenset(modules)
        self.tops = frozenset(m.split(".")[0] for m in self.modules if m)

    def longest(self, dotted: str) -> str:
        """The longest in-repo module that ``dotted`` starts with, or ""."""
        parts = dotted.split(".")
        for end in range(len(parts), 0, -1):
            candidate = ".".join(parts[:end])
            if candidate in self.modules:
                return candidate
        return ""


def classify(imp: Import, index: ModuleIndex) -> Import:
    if not imp.module:
        return dataclasses.replace(imp, kind="unresolved")
    top = imp.module.split(".")[0]
    if top in index.tops:
        full = f"{imp.module}.{imp.name}" if imp.name and imp.name != "*" else imp.module
        target = index.longest(full)
        return dataclasses.replace(imp, kind="internal", target=target)
    if top in STDLIB:
        return dataclasses.replace(imp, kind="stdlib")
    return dataclasses.replace(imp, kind="external", distribution=DISTRIBUTIONS.get(top, top))


def _named(integrations: Iterable[Integration], constants: dict[str, str]) -> list[Integration]:
    """Environment variables named by a constant imported from another module get its value;
    one whose constant the repository does not bind to a string is not reported."""
    out = []
    for found in integrations:
        if found.kind == "env_var" and not found.name:
            value = constants.get(found.detail.removeprefix("constant "))
            if not value:
                continue
            found = dataclasses.replace(found, name=value)
        out.append(found)
    return out


def link(files: list[FileFacts], go_modules: Mapping[str, str] | None = None) -> list[FileFacts]:
    """Imports classified, environment variables named by imported constants resolved, and one
    ``package`` integration per external distribution used; ``go_modules``: folder -> the
    module path its ``go.mod`` declares, by which Go imports name the repository's packages."""
    linked_code = link_code(files, go_modules)
    index = ModuleIndex(f.module for f in files if f.language == "python")
    constants = {f"{f.module}.{name}": value for f in files for name, value in f.constants}
    out = []
    for facts in files:
        if facts.path in linked_code:
            facts = linked_code[facts.path]
            imports = facts.imports
        else:
            imports = tuple(classify(i, index) for i in facts.imports)
        first_use: dict[str, int] = {}
        for imp in imports:
            if imp.kind == "external" and imp.distribution not in first_use:
                first_use[imp.distribution] = imp.line
        packages = [
            Integration("package", dist, facts.path, line, facts.module) for dist, line in first_use.items()
        ]
        integrations = tuple(
            sorted(
                (*_named(facts.integrations, constants), *packages),
                key=lambda i: (i.line, i.kind, i.name, i.symbol),
            )
        )
        out.append(dataclasses.replace(facts, imports=imports, integrations=integrations))
    return out
