"""The browsable UI: server-rendered pages over the knowledge base.

Pages are plain HTML from jinja2 templates (autoescaped) with forms that GET, so every page
has a URL that can be shared and reloaded. The scripts ship with the package and nothing is
fetched from elsewhere: ``diagrams.mjs`` draws the diagrams as SVG with Mermaid (vendored
under ``static/mermaid/``) and makes the module graph's nodes links; ``kbc.js`` copies a
slice.
"""

from __future__ import annotations

import html
import mimetypes
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from kbc import __version__
from kbc.domain.errors import KbcError, NotFound
from kbc.domain.views import VIEW_KINDS, View
from kbc.serve.api import status_of
from kbc.serve.graph import module_graph
from kbc.serve.markdown import linkify, source_href, to_html, view_href
from kbc.serve.named import named
from kbc.serve.security import COOKIE, token_matches
from kbc.serve.worker import Worker
from kbc.services.drift import render_drift
from kbc.services.knowledge import KnowledgeBase
from kbc.services.payloads import hits_data
from kbc.services.reads import FileLines
from kbc.services.status import Status
from kbc.views.kinds import KINDS
from kbc.views.render import render_view, view_file

mimetypes.add_type("text/javascript", ".mjs")  # a module script is refused with another type

NAV = (
    ("/", "Overview"),
    ("/views", "Views"),
    ("/graph", "Module graph"),
    ("/symbol", "Symbols"),
    ("/search", "Search"),
    ("/slice", "Slice builder"),
    ("/ask", "Ask"),
    ("/gaps", "Gaps"),
    ("/drift", "Drift"),
)
HOME_LIMIT = 12  # views of a kind listed on the overview
SOURCE_LINES = 2000  # lines of a file one page shows
CONTEXT_LINES = 200  # lines shown around a highlighted range of a long file
EXCERPT_LINES = 8  # of a search hit
STATIC = Path(__file__).with_name("static")  # the scripts, styles and icons the pages load


@cache
def _templates() -> Any:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(Path(__file__).with_name("templates"))),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals.update(source_href=source_href, view_href=view_href)
    return env


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What the pages read of one build: the views, the files that may be served, the name,
    what the store holds."""

    views: tuple[View, ...]
    served: frozenset[str]
    repository: str
    commit: str
    finished: str
    state: Status | None = None  # None: the store cannot say (the overview reports why)

    @property
    def files(self) -> dict[str, str]:
        return {view_file(v.id): v.id for v in self.views}


ANONYMOUS = Snapshot((), frozenset(), "", "", "")
REPOSITORY_COOKIE = "kbc_repository"  # the repository the pages show, when a server has several


class Site:
    """The pages of one server; what they read is kept until a new build completes."""

    def __init__(self, worker: Worker, token: str | None) -> None:
        self.worker = worker
        self.token = token
        self._lock = threading.Lock()
        self._snapshots: dict[Path, tuple[tuple[int, int, int, str], Snapshot]] = {}

    def chosen(self, request: Request) -> str:
        """The repository the pages show: the one the switcher chose (a cookie), else the first."""
        names = self.worker.workspace.names()
        asked = request.cookies.get(REPOSITORY_COOKIE, "")
        return asked if asked in names else names[0]

    def snapshot(self, kb: KnowledgeBase) -> Snapshot:
        marker = (*kb.served.marker(), kb.served.fallback)  # read again when retrieval falls back too
        with self._lock:
            kept = self._snapshots.get(kb.root)
            if kept is not None and kept[0] == marker:
                return kept[1]
        try:
            views = tuple(kb.reads.views())
        except KbcError:
            views = ()
        architecture = next((v for v in views if v.kind == "architecture"), None)
        repository = str(architecture.facts.get("repository")) if architecture else kb.root.name
        state: Status | None
        try:
            state = kb.status()
        except KbcError:
            state = None
        last = state.last_build if state is not None else {}
        try:
            served = kb.reads.tracked_paths()
        except KbcError:
            served = frozenset()
        found = Snapshot(
            views, served, repository, str(last.get("commit", "")), str(last.get("finished", "")), state
        )
        with self._lock:
            self._snapshots[kb.root] = (marker, found)
        return found

    def page(
        self, template: str, snap: Snapshot, request: Request, status: int = 200, **values: Any
    ) -> HTMLResponse:
        names = self.worker.workspace.names() if snap is not ANONYMOUS else []
        context = {
            "repository": snap.repository,
            "commit": snap.commit,
            "finished": snap.finished,
            "repositories": names if len(names) > 1 else [],
            "current": self.chosen(request),
            "version": __version__,
            "nav": NAV,
            "active": values.pop("active", request.url.path),
            "mermaid": False,
            "query": "",
            **values,
        }
        text = _templates().get_template(template).render(**context)
        return HTMLResponse(text, status_code=status)

    # -- the pages ----------------------------------------------------------------

    def home(self, kb: KnowledgeBase, request: Request) -> HTMLResponse:
        snap = self.snapshot(kb)
        return self.page(
            "home.html",
            snap,
            request,
            title="Overview",
            state=snap.state or kb.status(),
            by_kind=_by_kind(snap.views),
            limit=HOME_LIMIT,
            gaps=len(kb.queries.gaps()),
            drift=len(kb.reads.drift()),
        )

    def views(self, kb: KnowledgeBase, request: Request) -> HTMLResponse:
        snap = self.snapshot(kb)
        kind = request.query_params.get("kind", "")
        chosen = [v for v in snap.views if not kind or v.kind == kind]
        return self.page("views.html", snap, request, title="Views", by_kind=_by_kind(chosen))

    def view(self, kb: KnowledgeBase, request: Request) -> HTMLResponse:
        snap = self.snapshot(kb)
        wanted = request.path_params["view_id"]
        found = next((v for v in snap.views if v.id == wanted), None)
        if found is None:
            raise NotFound(f"no view {wanted!r}", hint="the Views page lists them")
        markdown = render_view(found, {v.id for v in snap.views})
        body = to_html(markdown, snap.served, snap.files, view_file(found.id))
        return self.page(
            "page.html",
            snap,
            request,
            title=found.title,
            body=body,
            mermaid="mermaid" in body,
            active="/views",
        )

    def graph(self, kb: KnowledgeBase, request: Request) -> HTMLResponse:
        snap = self.snapshot(kb)
        architecture = next((v for v in snap.views if v.kind == "architecture"), None)
        if architecture is None:
            raise NotFound("no architecture view", hint="run `kbc build` on the repository")
        every = request.query_params.get("all", "") not in ("", "0")
        body = module_graph(architecture, {v.id for v in snap.views}, every)
        return self.page("page.html", snap, request, title="Module graph", body=body, mermaid=True)

    def symbol(self, kb: KnowledgeBase, request: Request) -> HTMLResponse:
        snap = self.snapshot(kb)
        name = request.query_params.get("name", "").strip()
        reports = kb.reads.symbol(name) if name else []
        sources: dict[str, list[tuple[int, str]]] = {}
        for report in reports[:20]:
            if report.path in snap.served:
                lines = kb.reads.file(report.path, report.symbol.start_line, report.symbol.end_line)
                sources[report.location] = _rows(lines)
        return self.page(
            "symbols.html",
            snap,
            request,
            title=name or "Symbols",
            name=name,
            reports=reports,
            sources=sources,
        )

    def source(self, kb: KnowledgeBase, request: Request) -> HTMLResponse:
        snap = self.snapshot(kb)
        path = request.path_params["path"]
        start = _number(request.query_params.get("start"))
        end = _number(request.query_params.get("end")) or start
        whole = kb.reads.file(path, 1, 1)
        lines = whole.lines
        first, last = 1, min(lines, SOURCE_LINES)
        if start and lines > SOURCE_LINES:
            first = max(1, start - CONTEXT_LINES)
            last = min(lines, max(end or start, start) + CONTEXT_LINES, first + SOURCE_LINES - 1)
        shown = kb.reads.file(path, first, max(first, last)) if lines else None
        return self.page(
            "source.html",
            snap,
            request,
            title=path,
            path=whole.path,
            lines=lines,
            start=start,
            end=max(end or 0, start or 0),
            rows=_rows(shown),
            truncated=first > 1 or last < lines,
            active="/search",
        )

    def search(self, kb: KnowledgeBase, request: Request) -> HTMLResponse:
        snap = self.snapshot(kb)
        query = request.query_params.get("q", "").strip()
        hits = []
        if query:
            for hit in hits_data(kb.search(query, 20)):
                excerpt = "\n".join(str(hit["text"]).split("\n")[:EXCERPT_LINES])
                hits.append({**hit, "excerpt": excerpt})
        return self.page("search.html", snap, request, title="Search", query=query, hits=hits)

    def slice(self, kb: KnowledgeBase, request: Request) -> HTMLResponse:
        snap = self.snapshot(kb)
        params = request.query_params
        task = params.get("task", "").strip()
        use_case = params.get("use_case", "implementation")
        budget = _number(params.get("budget"))
        chosen = params.get("scopes", "").strip()
        asked = [s.strip() for s in chosen.split(",") if s.strip()] or None
        found = kb.retrieve_logged(task, use_case, budget, scopes=asked)[0] if task else None
        scopes = [s.scope for s in kb.reads.scopes() if s.default]
        return self.page(
            "slice.html",
            snap,
            request,
            title="Slice builder",
            task=task,
            use_case=use_case,
            budget=budget,
            found=found,
            named=named(found.matched, snap.served) if found else [],
            profiles=list(kb.use_cases.all().values()),
            scopes=scopes,
            chosen=chosen,
        )

    def ask(self, kb: KnowledgeBase, request: Request) -> HTMLResponse:
        snap = self.snapshot(kb)
        question = request.query_params.get("q", "").strip()
        no_llm = request.query_params.get("no_llm", "") not in ("", "0")
        answer = kb.ask(question, no_llm=no_llm)[0] if question else None
        body = to_html(answer.text, snap.served) if answer is not None else ""
        return self.page(
            "ask.html", snap, request, title="Ask", question=question, no_llm=no_llm, answer=answer, body=body
        )

    def gaps(self, kb: KnowledgeBase, request: Request) -> HTMLResponse:
        return self.page("gaps.html", self.snapshot(kb), request, title="Gaps", gaps=kb.queries.gaps())

    def drift(self, kb: KnowledgeBase, request: Request) -> HTMLResponse:
        snap = self.snapshot(kb)
        reports = [
            {
                "path": r.path,
                "html": "<pre>" + linkify(html.escape(render_drift([r])), snap.served) + "</pre>",
            }
            for r in kb.reads.drift()
        ]
        return self.page("drift.html", snap, request, title="Drift", reports=reports)

    # -- wiring --------------------------------------------------------------------

    def _handler(
        self, method: Callable[[KnowledgeBase, Request], HTMLResponse]
    ) -> Callable[[Request], Awaitable[Response]]:
        async def handle(request: Request) -> Response:
            name = self.chosen(request)
            try:
                return await self.worker.run(lambda kb: method(kb, request), name)
            except KbcError as error:
                title = "Not found" if isinstance(error, NotFound) else "Cannot show this"
                try:
                    snap = await self.worker.run(self.snapshot, name)
                except KbcError:  # the repository has no build yet: the page says why
                    snap = Snapshot((), frozenset(), name, "", "")
                return self.page(
                    "error.html",
                    snap,
                    request,
                    status=status_of(error),
                    title=title,
                    message=error.message,
                    hint=error.hint,
                )

        return handle

    async def not_found(self, request: Request) -> Response:
        try:
            snap = await self.worker.run(self.snapshot, self.chosen(request))
        except KbcError:
            snap = Snapshot((), frozenset(), self.chosen(request), "", "")
        return self.page(
            "error.html",
            snap,
            request,
            status=404,
            title="Not found",
            message=f"There is no page at {request.url.path}.",
            hint="The menu above has them all.",
        )

    async def login(self, request: Request) -> Response:
        # Shown to anyone who reaches the server: nothing of the repository (its name, commit,
        # build time) until the token is given.
        snap = ANONYMOUS
        target = request.query_params.get("next", "/")
        if request.method == "POST":
            form = await request.form()
            target = str(form.get("next") or "/")
            given = str(form.get("token") or "")
            if self.token and token_matches(given, self.token):
                response = RedirectResponse(_local_path(target), status_code=303)
                response.set_cookie(
                    COOKIE, given, httponly=True, samesite="strict", secure=request.url.scheme == "https"
                )
                return response
            return self.page(
                "login.html",
                snap,
                request,
                status=401,
                title="Sign in",
                next=target,
                error="That is not the token.",
            )
        return self.page("login.html", snap, request, title="Sign in", next=target, error="")

    async def switch(self, request: Request) -> Response:
        """The repository switcher: remembers the choice (a cookie) and goes back to the overview."""
        form = await request.form()
        name = str(form.get("repository") or "")
        if name not in self.worker.workspace.names():
            return await self.not_found(request)
        response = RedirectResponse("/", status_code=303)
        response.set_cookie(
            REPOSITORY_COOKIE, name, httponly=True, samesite="strict", secure=request.url.scheme == "https"
        )
        return response

    def routes(self) -> list[Route | Mount]:
        pages = [
            ("/", self.home),
            ("/views", self.views),
            ("/view/{view_id:path}", self.view),
            ("/graph", self.graph),
            ("/symbol", self.symbol),
            ("/source/{path:path}", self.source),
            ("/search", self.search),
            ("/slice", self.slice),
            ("/ask", self.ask),
            ("/gaps", self.gaps),
            ("/drift", self.drift),
        ]
        found: list[Route | Mount] = [
            Route(path, self._handler(method), methods=["GET"]) for path, method in pages
        ]
        found.append(Route("/login", self.login, methods=["GET", "POST"]))
        found.append(Route("/repository", self.switch, methods=["POST"]))
        found.append(Route("/favicon.ico", _favicon, methods=["GET"]))
        found.append(Mount("/static", StaticFiles(directory=str(STATIC)), name="static"))
        return found


async def _favicon(request: Request) -> Response:
    """The icon, for a client that asks where icons used to be (the pages link the SVG)."""
    return FileResponse(STATIC / "favicon.ico", media_type="image/vnd.microsoft.icon")


def _local_path(target: str) -> str:
    """Only a path on this server is followed after signing in, never another site."""
    return target if target.startswith("/") and not target.startswith("//") else "/"


def _number(value: str | None) -> int | None:
    try:
        return int(value) if value else None
    except ValueError:
        return None


def _rows(lines: FileLines | None) -> list[tuple[int, str]]:
    if lines is None or not lines.text:
        return []
    body = lines.text[:-1] if lines.text.endswith("\n") else lines.text
    return [(lines.start_line + i, line) for i, line in enumerate(body.split("\n"))]


def _by_kind(views: Any) -> list[tuple[str, str, list[View]]]:
    out: list[tuple[str, str, list[View]]] = []
    for kind in VIEW_KINDS:
        items = sorted((v for v in views if v.kind == kind), key=lambda v: v.title.lower())
        if items:
            out.append((kind, KINDS[kind].heading, items))
    return out


__all__ = ["Site"]
