"""Reading what a task names, and matching it against the facts."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from helpers import write_tree

from kbc.analyzers.python.analyze import analyze_source
from kbc.domain.models import AnalysisOk, AnalysisTask, EntryPoint, FileFacts
from kbc.retrieval.query import read_query
from kbc.retrieval.resolve import FactsLookup, Target

TASK = """Redirects drop cookies in `Session.resolve_redirects`

When `requests.Session` follows a redirect, cookies set by the first response are lost.
Calling resolve_redirects() by hand shows it; `--max-redirects` does not help.

```python
from shop.orders import Refund
s = shop.Session()
s.get("http://x")
```

Traceback (most recent call last):
  File "/venv/lib/python3.11/site-packages/shop/sessions.py", line 14, in resolve_redirects
    raise TooManyRedirects("Exceeded 30 redirects.")
shop.exceptions.TooManyRedirects: Exceeded 30 redirects.

See shop/cookies.py:3 and the message "refunds are allowed for 180 days only".

```
$ shop refund --all
File ~/src/shop/sessions.py:9, in Session.send(self, request)
----> 9     return self.adapter.send(request)
```
"""


def test_the_query_names_frames_paths_code_messages_and_options() -> None:
    found = {(m.label, m.text) for m in read_query(TASK)}
    assert ("frame", "/venv/lib/python3.11/site-packages/shop/sessions.py:14 in resolve_redirects") in found
    assert ("path", "shop/cookies.py") in found
    assert ("code", "Session.resolve_redirects") in found and ("code", "requests.Session") in found
    assert ("name", "resolve_redirects") in found
    assert ("option", "--max-redirects") in found
    assert ("message", "Exceeded 30 redirects.") in found
    assert ("message", "refunds are allowed for 180 days only") in found
    assert ("snippet", "shop.orders.Refund") in found and ("snippet", "shop.Session") in found
    assert ("frame", "~/src/shop/sessions.py:9 in send") in found  # IPython 8's form
    assert ("command", "shop refund") in found
    assert ("line", "return self.adapter.send(request)") in found
    assert ("line", "s = shop.Session()") in found
    frames = [m.text for m in read_query(TASK) if m.label == "frame"]
    assert frames[0] == "~/src/shop/sessions.py:9 in send"  # the latest frame first
    kinds = [m.kind for m in read_query(TASK)]
    assert kinds == sorted(kinds)  # strongest first
    assert not any(text in ("e.g", "i.e") for _, text in found)
    assert read_query("") == [] and read_query("how are refunds validated?") == []


SHOP = {
    "shop/__init__.py": "from shop.sessions import Session\n",
    "shop/sessions.py": (
        "class SessionRedirectMixin:\n"
        "    def resolve_redirects(self, resp):\n"
        "        return resp\n"
        "\n"
        "\n"
        "class Session(SessionRedirectMixin):\n"
        "    def send(self, request):\n"
        "        return request\n"
        "\n"
        "\n"
        "def follow(resp, limit):\n"
        "    '''Follow redirects.'''\n"
        "    if limit > 30:\n"
        "        raise TooManyRedirects('Exceeded %s redirects.' % limit)\n"
        "    return resp\n"
    ),
    "shop/cookies.py": "def merge_cookies(jar, cookies):\n    return jar\n",
    "tests/test_sessions.py": "def test_send():\n    pass\n",
}


def lookup(tmp_path: Path) -> FactsLookup:
    write_tree(tmp_path, SHOP)
    facts: list[FileFacts] = []
    for path in sorted(SHOP):
        module = path[:-3].replace("/", ".").removesuffix(".__init__")
        task = AnalysisTask(path, str(tmp_path / path), module, path.endswith("__init__.py"))
        result = analyze_source((tmp_path / path).read_bytes(), task)
        assert isinstance(result, AnalysisOk)
        facts.append(result.facts)
    return FactsLookup(facts, [*SHOP, "README.md"])


def test_mentions_resolve_to_definitions_files_and_raises(tmp_path: Path) -> None:
    matches, unmatched = lookup(tmp_path).match(read_query(TASK.replace("requests.", "shop.")))
    got = {(m.mention.label, m.mention.text): (m.how, m.targets) for m in matches}
    frame = got[("frame", "/venv/lib/python3.11/site-packages/shop/sessions.py:14 in resolve_redirects")]
    # the frame's file holds the name, so the frame names that definition
    held = "shop.sessions.SessionRedirectMixin.resolve_redirects"
    assert frame == ("frame", (Target("shop/sessions.py", held, 14),))
    assert got[("code", "shop.Session")] == (
        "reexport",
        (Target("shop/sessions.py", "shop.sessions.Session"),),
    )  # through shop/__init__.py
    assert got[("code", "Session.resolve_redirects")][0] == "tail"
    assert got[("path", "shop/cookies.py")] == ("path", (Target("shop/cookies.py", "", 3),))
    assert got[("message", "Exceeded 30 redirects.")] == (
        "message",
        (Target("shop/sessions.py", "shop.sessions.follow", 13),),
    )  # the guard's line
    assert "--max-redirects" in {m.text for m in unmatched}  # left to the lexical index


def test_a_shared_file_name_or_a_common_name_matches_nothing(tmp_path: Path) -> None:
    found = lookup(tmp_path)
    assert found.path("site-packages/shop/sessions.py") == "shop/sessions.py"
    assert found.path("elsewhere/unknown.py") == ""
    assert found.name("nothing_like_this") == ([], "")
    many = FactsLookup(list(found.facts), [f"pkg{i}/utils.py" for i in range(5)])
    assert many.path("utils.py") == ""  # five files share the name
    assert many.path("pkg3/utils.py") == "pkg3/utils.py"


def test_a_frame_of_a_file_the_repository_does_not_hold_names_none_of_its_code(tmp_path: Path) -> None:
    found = lookup(tmp_path)
    task = (
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3.11/http/client.py", line 9, in send\n'
        '  File "/venv/sessions.py", line 2, in resolve_redirects\n'
    )
    shared = FactsLookup(list(found.facts), [*SHOP, "vendor/sessions.py"])  # two files named sessions.py
    matches, _ = shared.match(read_query(task))
    got = {m.mention.path: (m.how, m.targets) for m in matches}
    assert "/usr/lib/python3.11/http/client.py" not in got  # not Session.send: another file's send
    assert got["/venv/sessions.py"] == (  # which sessions.py: the one defining the frame's function
        "tail",
        (Target("shop/sessions.py", "shop.sessions.SessionRedirectMixin.resolve_redirects"),),
    )


def test_a_shell_command_of_the_repository_names_its_subcommand_code(tmp_path: Path) -> None:
    found = lookup(tmp_path)
    refund = EntryPoint("click", "refund", "shop.cookies.merge_cookies", "shop/cookies.py", 1)
    facts = [
        dataclasses.replace(f, entry_points=(refund,)) if f.path == "shop/cookies.py" else f
        for f in found.facts
    ]
    task = read_query("Running\n$ shop refund --all\nfails.")
    matches, _ = FactsLookup(facts, SHOP, scripts=["shop"]).match(task)
    assert [(m.how, m.targets) for m in matches if m.mention.label == "command"] == [
        ("command", (Target("shop/cookies.py", "shop.cookies.merge_cookies"),))
    ]
    matches, _ = FactsLookup(facts, SHOP).match(task)  # `shop` is not this repository's program
    assert not [m for m in matches if m.mention.label == "command"]


def test_a_task_is_read_only_as_far_as_words_go() -> None:
    from kbc.retrieval.query import MAX_RUN_CHARS, MAX_TASK_CHARS, bounded

    task = "Session.send fails: " + "QUJD" * 1_000 + " after shop/orders.py:12 " + "word " * 20_000
    seen = bounded(task)
    assert len(seen) <= MAX_TASK_CHARS < len(task)
    blob = "QUJD" * (MAX_RUN_CHARS // 4)
    assert seen.startswith(f"Session.send fails: {blob} after shop/orders.py:12 ")
    ordinary = "an ordinary task\nwith `code` and a/path.py"
    assert bounded(ordinary) == ordinary
    assert [m.text for m in read_query(seen)][:2] == ["shop/orders.py", "Session.send"]


def test_reading_a_huge_task_takes_one_pass() -> None:
    # Every pattern that reads a task, given 300,000 characters without a space: in a process that
    # must finish within a minute (looking back over the run at each character takes hours).
    import subprocess
    import sys

    for shape in ('"x" * 300_000', '"a." * 150_000', '"a/" * 150_000'):
        script = (
            "from kbc.retrieval.query import bounded, read_query\n"
            "from kbc.retrieval.report import clean_report\n"
            f"task = bounded({shape})\nread_query(task)\nclean_report(task)\n"
        )
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr[-500:]


def test_a_method_called_on_what_a_call_returns_is_a_code_name() -> None:
    found = {
        (m.label, m.text)
        for m in read_query("`z.string().email()` accepts `a@b`; so does `s.trim().lower()`")
    }
    assert ("code", "email") in found and ("code", "z.string") in found
    assert ("code", "lower") in found
    assert ("name", "email") in {
        (m.label, m.text) for m in read_query("why does z.string().email() accept it?")
    }
