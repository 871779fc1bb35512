"""Names a repository chooses are text in the module graph, never Mermaid statements."""

from __future__ import annotations

import html
import re
from pathlib import Path

import httpx
import pytest
from web import built_repository, running

from kbc.services.components import Components
from kbc.services.knowledge import KnowledgeBase

HOSTILE = 'evil"];click m0 call alert(1);x["'


@pytest.mark.slow
def test_a_folder_name_cannot_write_into_the_diagram(tmp_path: Path) -> None:
    files = {
        "shop/__init__.py": "",
        "shop/orders.py": "from shop import payments\n",
        "shop/payments.py": "RATE = 1\n",
        f"{HOSTILE}/__init__.py": "",
        f"{HOSTILE}/a.py": "import shop.orders\n",
        "two\nlines/__init__.py": "",
        "two\nlines/b.py": "import shop.payments\n",
    }
    with (
        built_repository(tmp_path, files) as root,
        running(KnowledgeBase(root, components=Components.lexical())) as url,
    ):
        page = httpx.get(f"{url}/graph?all=1").text
    (diagram,) = re.findall(r'<pre class="mermaid"[^>]*>(.*?)</pre>', page, re.S)
    statements = html.unescape(diagram).splitlines()
    assert statements[0] == "graph LR"
    # Each line is a node (id and one quoted label) or an edge between two ids: nothing else.
    node = re.compile(r'^  m\d+\["[^"\n]*"\]$')
    edge = re.compile(r"^  m\d+ --> m\d+$")
    assert all(node.match(s) or edge.match(s) for s in statements[1:]), statements
    assert any("evil#quot;];click m0 call alert(1);x[#quot;" in s for s in statements)
