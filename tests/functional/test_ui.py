"""The UI in a real browser: headless Chromium (Debian's package) driven by Playwright, against
the server on loopback over a built repository.

Without a Chromium on the machine these tests are skipped with the reason, unless
KBC_REQUIRE_BROWSER is set (CI sets it, so there they always run).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from click.testing import CliRunner
from helpers import LEXICAL
from llm_server import Reply, chat_server
from starlette.routing import Route
from web import SECRET, STORE, TOKEN, built_repository, running

from kbc.cli.main import cli
from kbc.domain.settings import load_settings
from kbc.serve.pages import Site
from kbc.services.components import Components
from kbc.services.knowledge import KnowledgeBase
from kbc.views.llm import LiteLLMInterpreter

# What Chromium needs to start in a sandboxed, offline machine and stay quiet on the network.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
# Names as long as a real project's, which a phone-width page must wrap.
LONG_NAMES = {
    "store/payments/settlement.py": '''
        """Settlement: the acquirer's statement against the ledger."""


        def statement_lines_of_the_settlement_day(day: str) -> list[str]:
            """The acquirer's statement lines of one settlement day."""
            return [day]


        def reconcile_settlement_batches_with_the_acquirer_statement(day: str) -> int:
            """How many statement lines the ledger does not hold."""
            return len(statement_lines_of_the_settlement_day(day))
    ''',
}
NAMING_TASK = "does validate_refund in store/payments/refunds.py check the window?"


def chromium() -> str | None:
    for candidate in (os.environ.get("KBC_CHROMIUM", ""), "chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(candidate) if candidate else None
        if found:
            return found
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    path = chromium()
    if path is None:
        if os.environ.get("KBC_REQUIRE_BROWSER"):
            pytest.fail("no Chromium found, and KBC_REQUIRE_BROWSER is set: install Debian's chromium")
        pytest.skip("no Chromium on this machine: `apt-get install chromium` to run the browser tests")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        found = playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        yield found
        found.close()


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    browser = ("KBC_REQUIRE_BROWSER", "KBC_CHROMIUM")
    with built_repository(tmp_path_factory.mktemp("ui"), {**STORE, **LONG_NAMES}, browser) as root:
        yield root


def _cite(request: dict[str, Any]) -> Reply:
    """An answer citing the first source of the prompt, as a model would."""
    prompt = request["messages"][-1]["content"]
    found = re.search(r"^### (store/payments/refunds\.py):(\d+)-(\d+)", prompt, re.MULTILINE)
    assert found is not None, prompt
    return Reply(f"A refund is checked against the window first [{found.group(1)}:8-10].")


@pytest.fixture(scope="module")
def llm_url() -> Iterator[str]:
    with chat_server(_cite) as server:
        yield server.url


@pytest.fixture(scope="module")
def url(repo: Path, llm_url: str) -> Iterator[str]:
    """The server as the CLI opens it with `-c index.embed_model=none`, with an LLM on loopback."""
    interpreter = LiteLLMInterpreter(
        "openai/test-model", api_base=llm_url, api_key="k", timeout=20, retries=0
    )
    parts = dataclasses.replace(Components(), interpreter=interpreter)
    kb = KnowledgeBase(repo, settings=load_settings(repo, assignments=[LEXICAL[1]]), components=parts)
    with running(kb) as found:
        yield found


@pytest.fixture
def page(browser: Any, url: str) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 800}, base_url=url)
    found = context.new_page()
    errors: list[str] = []
    found.on("pageerror", lambda error: errors.append(str(error)))
    yield found
    context.close()
    assert errors == []  # no script failed on any page the test opened


def drawn(page: Any) -> None:
    page.wait_for_selector("body[data-diagrams]", timeout=30_000)
    assert page.get_attribute("body", "data-diagrams") == "drawn"


def test_the_architecture_diagram_is_an_svg_of_the_modules(page: Any) -> None:
    page.goto("/view/architecture")
    drawn(page)
    svg = page.locator("pre.mermaid svg")
    assert svg.count() == 1
    labels = {text.strip() for text in svg.locator("g.node").all_text_contents()}
    assert labels == {"store", "store.orders", "store.payments"}
    assert svg.locator("path.flowchart-link, g.edgePaths path").count() == 2
    assert page.locator("h1").inner_text() == "Architecture of store"


@pytest.mark.parametrize(
    ("view", "nodes"),
    [
        ("module:store.orders", {"store", "store.orders", "store.payments"}),
        ("workflow:store.cli.main", {"store.cli.main", "store.orders.orders.place_order"}),
    ],
)
def test_every_kind_of_diagram_kbc_writes_is_drawn(page: Any, view: str, nodes: set[str]) -> None:
    """Only the parts of Mermaid a flowchart loads are shipped: each diagram kbc writes draws."""
    page.goto(f"/view/{view}")
    drawn(page)
    labels = {text.strip() for text in page.locator("pre.mermaid svg g.node").all_text_contents()}
    assert nodes <= labels, labels


def test_the_module_graph_opens_a_module_from_its_node(page: Any) -> None:
    page.goto("/graph")
    drawn(page)
    page.locator("pre.mermaid svg g.node", has_text="store.payments").click()
    page.wait_for_url("**/view/module:store.payments")
    assert "store.payments" in page.locator("h1").inner_text()


def test_a_symbol_link_opens_the_source_with_its_lines_highlighted(page: Any) -> None:
    page.goto("/symbol?name=validate_refund")
    assert page.locator("h2 code").inner_text() == "store.payments.refunds.validate_refund"
    assert "store.orders.orders" not in page.locator("section.symbol h3").first.inner_text()
    callers = page.locator("section.symbol section").first
    assert "store.payments.refunds.refund" in callers.inner_text()
    location = page.locator("section.symbol > p a.loc")
    assert location.inner_text() == "store/payments/refunds.py:6-10"
    location.click()
    page.wait_for_url("**/source/store/payments/refunds.py?start=6&end=10#L6")
    highlighted = page.locator("tr.hl")
    assert highlighted.count() == 5
    assert highlighted.first.get_attribute("id") == "L6"
    assert "def validate_refund" in highlighted.first.inner_text()


def test_a_search_returns_the_file_that_holds_the_words(page: Any) -> None:
    page.goto("/")
    page.fill("#quick-q", "refund window closed")
    page.press("#quick-q", "Enter")
    page.wait_for_url("**/search?q=refund+window+closed")
    assert "store/payments/refunds.py" in page.locator("ol.hits").inner_text()


def test_the_slice_builder_shows_what_kbc_retrieve_gives(page: Any, repo: Path) -> None:
    task = "how is a refund validated when an order is cancelled?"
    page.goto("/slice")
    page.fill("#task", task)
    page.select_option("#use_case", "implementation")
    page.fill("#budget", "1200")
    page.click("form.form button[type=submit]")
    page.wait_for_selector("#slice-tokens")
    result = CliRunner().invoke(
        cli, [*LEXICAL, "retrieve", task, "--repo", str(repo), "--budget", "1200", "--format", "json"]
    )
    expected = json.loads(result.output)
    assert int(page.locator("#slice-tokens").inner_text()) == expected["tokens"]
    assert page.locator("#slice-budget").inner_text() == "1200"
    assert page.locator("#slice-text").inner_text().strip() == expected["text"].strip()
    shown = [row.strip() for row in page.locator("table.items tbody td:first-child").all_inner_texts()]
    assert shown == [f"{i['path']}:{i['start_line']}-{i['end_line']}" for i in expected["items"]]
    page.click("button.copy")
    page.wait_for_function("document.querySelector('.copied').textContent.length > 0")


@pytest.mark.parametrize("extractive", [True, False])
def test_an_answer_cites_lines_that_open_in_the_source(page: Any, extractive: bool) -> None:
    page.goto("/ask")
    page.fill("#q", "how are refunds validated?")
    if extractive:
        page.check("input[name=no_llm]")
    page.click("form.form button[type=submit]")
    page.wait_for_selector("article.answer")
    meta = page.locator("p.meta").first.inner_text()
    assert meta.startswith("Answer: extractive" if extractive else "Answer: llm (openai/test-model)")
    citation = page.locator("article.answer a.loc").first
    label = citation.inner_text()
    path, _, lines = label.rpartition(":")
    start, _, end = lines.partition("-")
    citation.click()
    page.wait_for_url(f"**/source/{path}?start={start}&end={end or start}#L{start}")
    assert page.locator("tr.hl").count() == int(end or start) - int(start) + 1
    if not extractive:
        assert label == "store/payments/refunds.py:8-10"


def test_gaps_and_drift_pages(page: Any, url: str) -> None:
    page.goto("/slice?task=zzkq+xqvv+wwpp")
    page.goto("/gaps")
    assert "zzkq xqvv wwpp" in page.locator("table.items").inner_text()
    page.goto("/drift")
    text = page.locator("section.drift").inner_text()
    assert "docs/refunds.md" in text and "store.payments.refunds.old_check" in text


def test_a_file_holding_a_credential_is_shown_redacted(page: Any) -> None:
    page.goto("/source/store/settings.py")
    assert page.locator("p.error").count() == 0
    assert "AWS_SECRET_ACCESS_KEY" in page.content() and "[REDACTED]" in page.content()
    assert SECRET not in page.content()


def test_keyboard_first_stop_is_the_skip_link_and_it_reaches_main(page: Any) -> None:
    page.goto("/views")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to content"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"
    for _ in range(3):
        page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.tagName") == "A"


# Every page the UI serves (its GET routes, the keys), each at the addresses that fill it in.
PAGES: dict[str, tuple[str, ...]] = {
    "/": ("/",),
    "/views": ("/views", "/views?kind=module"),
    "/view/{view_id:path}": ("/view/architecture", "/view/no-such-view"),  # and every view listed
    "/graph": ("/graph", "/graph?all=1"),
    "/symbol": (
        "/symbol",
        "/symbol?name=refund",
        "/symbol?name=Order",
        "/symbol?name=statement_lines_of_the_settlement_day",
        "/symbol?name=nothing_named_so",
    ),
    "/source/{path:path}": (
        "/source/store/orders/orders.py?start=3&end=9",
        "/source/docs/refunds.md",
        "/source/store/settings.py",
    ),
    "/search": ("/search", "/search?q=refund", "/search?q=settlement+statement", "/search?q=zzkq"),
    "/slice": ("/slice", "/slice?task=" + quote(NAMING_TASK), "/slice?task=zzkq+xqvv+wwpp"),
    "/ask": ("/ask", "/ask?q=how+are+refunds+validated%3F&no_llm=1", "/ask?q=how+are+refunds+validated%3F"),
    "/gaps": ("/gaps",),
    "/drift": ("/drift",),
    "/login": ("/login",),
}
UNKNOWN = "/no-such-page"  # the error page


def test_the_phone_width_check_covers_every_page_the_ui_serves() -> None:
    served = {
        r.path for r in Site(None, None).routes() if isinstance(r, Route) and "GET" in (r.methods or ())
    }
    assert served - {"/favicon.ico"} == set(PAGES)  # the icon is no page


@pytest.mark.parametrize("route", [*PAGES, UNKNOWN])
def test_a_phone_width_screen_needs_no_sideways_scrolling(browser: Any, url: str, route: str) -> None:
    """At 390 px no page scrolls sideways: long paths and names wrap, wide tables and code
    scroll inside themselves."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, base_url=url)
    try:
        page = context.new_page()
        addresses = list(PAGES.get(route, (route,)))
        if route == "/view/{view_id:path}":
            page.goto("/views")
            addresses += page.eval_on_selector_all(
                "main a[href^='/view/']", "links => links.map(a => a.getAttribute('href'))"
            )
        wide = []
        for address in addresses:
            page.goto(address)
            if not page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"):
                wide.append((address, page.evaluate("document.documentElement.scrollWidth")))
        assert wide == []
    finally:
        context.close()


def test_the_slice_builder_shows_what_the_task_named_not_a_python_dict(page: Any) -> None:
    page.goto("/slice?task=" + quote(NAMING_TASK))
    page.wait_for_selector("#slice-tokens")
    shown = page.evaluate(
        "(() => { const main = document.querySelector('main').cloneNode(true);"
        " main.querySelectorAll('pre, textarea').forEach(e => e.remove()); return main.innerText; })()"
    )
    for repr_part in ("{'", "': ", "['", "'}"):
        assert repr_part not in shown
    named = page.locator("ul.matched > li")
    assert named.count() == 2
    assert named.first.locator("code").first.inner_text() == "store/payments/refunds.py"
    link = named.first.locator("a.loc")
    assert link.inner_text() == "store/payments/refunds.py"
    assert link.get_attribute("href") == "/source/store/payments/refunds.py"
    name = named.nth(1)
    assert name.locator("code").first.inner_text() == "validate_refund"
    target = name.locator("a", has_text="store.payments.refunds.validate_refund")
    assert target.get_attribute("href") == "/symbol?name=store.payments.refunds.validate_refund"
    target.click()
    page.wait_for_url("**/symbol?name=store.payments.refunds.validate_refund")


def test_a_search_hit_keeps_its_label_and_its_names_apart(page: Any) -> None:
    page.goto("/search?q=refund")
    hits = page.locator("ol.hits > li")
    names = 0
    for i in range(hits.count()):
        hit = hits.nth(i)
        text = hit.inner_text()
        label = hit.locator(".kind").inner_text()
        assert re.search(rf"(^|\s){re.escape(label)}(\s|$)", text), text
        for name in hit.locator("a[href^='/symbol'] code").all_inner_texts():
            at = text.index(name)
            assert text[at - 1].isspace(), text  # not run into the label or the heading before it
            names += 1
    assert names >= 3
    assert "codestore." not in page.locator("ol.hits").inner_text()


def test_the_favicon_is_an_icon(url: str) -> None:
    icon = httpx.get(f"{url}/favicon.ico")
    assert icon.status_code == 200
    assert icon.headers["content-type"] in ("image/x-icon", "image/vnd.microsoft.icon")
    assert icon.content.startswith(b"\x00\x00\x01\x00")  # an ICO file's header
    page = httpx.get(f"{url}/").text
    linked = re.search(r'<link rel="icon" href="([^"]+)" type="image/svg\+xml">', page)
    assert linked is not None
    drawn = httpx.get(url + linked.group(1))
    assert drawn.status_code == 200 and drawn.headers["content-type"].startswith("image/svg+xml")
    assert drawn.text.lstrip().startswith("<svg")


def test_beyond_loopback_the_browser_signs_in_with_the_token(browser: Any, repo: Path) -> None:
    kb = KnowledgeBase(repo, components=Components.lexical())
    with running(kb, host="0.0.0.0", token=TOKEN) as url:
        context = browser.new_context(base_url=url)
        try:
            page = context.new_page()
            refused = page.request.get("/api/v1/health")
            assert refused.status == 401
            page.goto("/view/architecture")
            assert page.url.endswith("/login?next=/view/architecture")
            page.fill("#token", "not-the-token")
            page.click("form.form button[type=submit]")
            assert "That is not the token." in page.locator("p.error").inner_text()
            page.fill("#token", TOKEN)
            page.click("form.form button[type=submit]")
            page.wait_for_url("**/view/architecture")
            assert page.request.get("/api/v1/health").status == 200  # the cookie it set
        finally:
            context.close()
