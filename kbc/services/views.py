"""The views pass over a built facts store, and reading the views back."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from kbc.analyzers.mentions import is_changelog
from kbc.analyzers.project_docs import ProjectDocs, is_readme, project_docs
from kbc.analyzers.roles import DOC_LANGUAGES
from kbc.domain.errors import KbcError
from kbc.domain.models import Inventory
from kbc.domain.progress import Counting
from kbc.domain.settings import Settings
from kbc.domain.views import VIEW_PREFIX, View
from kbc.store.facts_store import FactsStore
from kbc.store.layout import prose_cache
from kbc.store.prose_cache import ProseCache
from kbc.store.views_store import ViewsStore
from kbc.views.llm import Interpreter
from kbc.views.render import render_all, render_view, view_file

if TYPE_CHECKING:  # the views pass (and the graph library under it) is loaded when it runs
    from kbc.views.build import ViewsSummary
    from kbc.views.context import Context

MAX_DOC_FILES = 400
MAX_DOC_BYTES = 4_000_000


def load_context(store_root: Path, repo_root: Path, settings: Settings, generation: str = "") -> Context:
    from kbc.views.context import build_context

    store = FactsStore(store_root, generation)
    inventory = store.inventory(str(repo_root.resolve()))
    files = list(store.facts())
    return build_context(
        inventory,
        files,
        store.graph(),
        store.entry_points(),
        workflow_depth=settings.workflow_depth,
        max_workflows=settings.max_workflows,
        max_api_workflows=settings.max_api_workflows,
        docs=read_project_docs(repo_root, inventory, (f.module for f in files if f.module)),
    )


def read_project_docs(repo_root: Path, inventory: Inventory, modules: Iterable[str]) -> ProjectDocs:
    """What the repository's README and docs say (:mod:`kbc.analyzers.project_docs`): the README
    and the docs index first, then the other documents (not changelogs nor packaging's copies
    in ``*.egg-info`` and ``PKG-INFO``), within ``MAX_DOC_FILES`` files and ``MAX_DOC_BYTES``
    bytes; the summary with its credentials redacted."""
    from dataclasses import replace

    from kbc.analyzers.secrets import redact

    texts: dict[str, str] = {}
    budget = MAX_DOC_BYTES
    documents = [
        f
        for f in inventory.files
        if f.language in DOC_LANGUAGES
        and (f.role == "doc" or is_readme(f.path))
        and not is_changelog(f.path)  # a history names internal modules, not what users import
        and ".egg-info/" not in f.path
        and f.path.rsplit("/", 1)[-1] != "PKG-INFO"  # packaging's copies of the README
    ]
    for source in sorted(documents, key=lambda f: (not is_readme(f.path), f.path.count("/"), f.path)):
        if len(texts) >= MAX_DOC_FILES or source.size > budget:
            continue
        try:
            texts[source.path] = (repo_root / source.path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        budget -= source.size
    docs = project_docs(texts, modules)
    if docs.summary:
        docs = replace(docs, summary=redact(docs.source, docs.summary, "markdown").text)
    return docs


def build_views_pass(
    store_root: Path,
    repo_root: Path,
    settings: Settings,
    *,
    no_llm: bool = False,
    interpreter: Interpreter | None = None,
    progress: Counting | None = None,
    generation: str = "",
) -> tuple[list[View], ViewsSummary]:
    """Write the views of the store's current facts (or of the unpublished ``generation``,
    then staged until :meth:`ViewsStore.publish`), their prose by ``interpreter`` (None, or
    ``no_llm``: from docstrings)."""
    from kbc.views.build import build_views

    context = load_context(store_root, repo_root, settings, generation)
    chosen = None if no_llm else interpreter
    with ProseCache(prose_cache(store_root)) as cache:
        views, summary = build_views(
            context,
            chosen,
            cache,
            concurrency=settings.llm_concurrency,
            progress=progress,
            cached_model=settings.llm_model,
        )
    ViewsStore(store_root).write(views, staged=bool(generation))
    return views, summary


def read_views(store_root: Path) -> list[View]:
    store = ViewsStore(store_root)
    if not store.exists():
        raise KbcError(f"no views in {store_root}", hint="run `kbc build` on the repository first")
    return store.read()


def view_documents(views: list[View]) -> dict[str, str]:
    """Each view's Markdown under its index path (what retrieval cites)."""
    ids = {v.id for v in views}
    return {VIEW_PREFIX + view_file(v.id): render_view(v, ids) for v in views}


def render_folder(store_root: Path, repo_root: Path, out: Path) -> list[Path]:
    """Write every view and an index page as a browsable Markdown folder; stale pages removed."""
    views = read_views(store_root)
    inventory = FactsStore(store_root).inventory()
    architecture = next((v for v in views if v.kind == "architecture"), None)
    repository = str(architecture.facts["repository"]) if architecture else repo_root.resolve().name
    files = render_all(views, repository, inventory.commit)
    written = []
    try:
        out.mkdir(parents=True, exist_ok=True)
        for relative, text in files.items():
            target = out / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
            written.append(target)
    except OSError as exc:
        raise KbcError(
            f"cannot write the rendered views to {out}: {exc.strerror or exc}",
            hint="give --out a folder you can write to",
        ) from exc
    wanted = {p.resolve() for p in written}
    for stale in sorted(out.rglob("*.md")):
        if stale.resolve() not in wanted and _rendered_by_kbc(stale, out):
            stale.unlink()
    return written


def _rendered_by_kbc(path: Path, out: Path) -> bool:
    """Only pages in the folders kbc writes are removed, never a user's own files elsewhere."""
    relative = path.relative_to(out).parts
    from kbc.domain.views import VIEW_KINDS

    return len(relative) == 2 and relative[0] in VIEW_KINDS
