"""A forge on loopback speaking the REST shape of GitHub's pull requests or GitLab's merge
requests (the calls kbc makes), for tests of kbc's real HTTP path. It keeps its requests in
memory, checks the token as the forge would, and records every call."""

from __future__ import annotations

import json
import re
import threading
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Call:
    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class Forge:
    kind: str  # github or gitlab
    repository: str  # owner/name, or a GitLab project's path
    token: str
    url: str = ""  # the API's base
    calls: list[Call] = field(default_factory=list)
    requests: dict[int, dict[str, Any]] = field(default_factory=dict)  # number -> as the forge shows it
    reviews: dict[int, list[dict[str, Any]]] = field(default_factory=dict)  # GitHub's
    approvals: dict[int, list[str]] = field(default_factory=dict)  # GitLab's: who approved
    echo: bool = False  # a refusal quotes the token it was sent, as some forges' errors do
    # while set, a GET waits here (a forge that hangs) after setting ``arrived``
    gate: threading.Event | None = None
    arrived: threading.Event = field(default_factory=threading.Event)

    def writes(self) -> list[Call]:
        return [c for c in self.calls if c.method != "GET"]

    # what a person does on the forge
    def review(self, number: int, who: str, state: str) -> None:
        self.reviews.setdefault(number, []).append({"user": {"login": who}, "state": state})

    def approve(self, number: int, who: str) -> None:
        self.approvals.setdefault(number, []).append(who)

    def merge(self, number: int) -> None:
        record = self.requests[number]
        if self.kind == "github":
            record.update(state="closed", merged_at="2026-12-06T10:00:00Z")
        else:
            record["state"] = "merged"

    def answer(
        self, method: str, path: str, headers: dict[str, str], body: dict[str, Any]
    ) -> tuple[int, Any]:
        self.calls.append(Call(method, path, headers, body))
        given = (
            headers.get("Authorization", "").removeprefix("Bearer ")
            if self.kind == "github"
            else headers.get("Private-Token", "")
        )
        if given != self.token or self.echo:
            said = "Bad credentials" if self.kind == "github" else "401 Unauthorized"
            return 401, {"message": f"{said}: {given}" if self.echo else said}
        route, _, raw_query = path.partition("?")
        query = dict(urllib.parse.parse_qsl(raw_query))
        if self.kind == "github":
            return self._github(method, route, query, body)
        return self._gitlab(method, route, query, body)

    def _github(
        self, method: str, route: str, query: dict[str, str], body: dict[str, Any]
    ) -> tuple[int, Any]:
        base = f"/repos/{self.repository}/pulls"
        owner = self.repository.split("/")[0]
        if not route.startswith(base):
            return 404, {"message": "Not Found"}
        if route == base and method == "POST":
            if not all(isinstance(body.get(k), str) and body[k] for k in ("title", "head", "base")):
                return 422, {"message": "Validation Failed"}
            if any(r["head"]["ref"] == body["head"] and r["state"] == "open" for r in self.requests.values()):
                return 422, {
                    "message": "Validation Failed",
                    "errors": [{"message": f"A pull request already exists for {owner}:{body['head']}."}],
                }
            number = len(self.requests) + 1
            self.requests[number] = {
                "number": number,
                "html_url": f"https://github.test/{self.repository}/pull/{number}",
                "state": "open",
                "title": body["title"],
                "body": body.get("body", ""),
                "draft": False,
                "head": {"ref": body["head"], "label": f"{owner}:{body['head']}"},
                "base": {"ref": body["base"]},
                "merged_at": None,
            }
            return 201, self.requests[number]
        if route == base and method == "GET":
            wanted = query.get("head", "")
            return 200, [r for r in self.requests.values() if not wanted or r["head"]["label"] == wanted]
        found = re.fullmatch(rf"{re.escape(base)}/(\d+)(/reviews)?", route)
        if found is None or int(found.group(1)) not in self.requests:
            return 404, {"message": "Not Found"}
        number = int(found.group(1))
        if found.group(2):
            return 200, self.reviews.get(number, [])
        if method == "PATCH":
            self.requests[number]["state"] = body.get("state", self.requests[number]["state"])
        return 200, self.requests[number]

    def _gitlab(
        self, method: str, route: str, query: dict[str, str], body: dict[str, Any]
    ) -> tuple[int, Any]:
        base = f"/projects/{urllib.parse.quote(self.repository, safe='')}/merge_requests"
        if not route.startswith(base):
            return 404, {"message": "404 Project Not Found"}
        if route == base and method == "POST":
            if not all(
                isinstance(body.get(k), str) and body[k] for k in ("source_branch", "target_branch", "title")
            ):
                return 400, {"message": "source_branch, target_branch and title are required"}
            if any(
                r["source_branch"] == body["source_branch"] and r["state"] == "opened"
                for r in self.requests.values()
            ):
                return 409, {"message": ["Another open merge request already exists for this source branch"]}
            number = len(self.requests) + 1
            self.requests[number] = {
                "iid": number,
                "web_url": f"https://gitlab.test/{self.repository}/-/merge_requests/{number}",
                "state": "opened",
                "title": body["title"],
                "description": body.get("description", ""),
                "source_branch": body["source_branch"],
                "target_branch": body["target_branch"],
                "draft": False,
            }
            return 201, self.requests[number]
        if route == base and method == "GET":
            wanted = query.get("source_branch", "")
            return 200, [r for r in self.requests.values() if not wanted or r["source_branch"] == wanted]
        found = re.fullmatch(rf"{re.escape(base)}/(\d+)(/approvals)?", route)
        if found is None or int(found.group(1)) not in self.requests:
            return 404, {"message": "404 Not found"}
        number = int(found.group(1))
        if found.group(2):
            who = self.approvals.get(number, [])
            return 200, {"approved": bool(who), "approved_by": [{"user": {"username": w}} for w in who]}
        if method == "PUT" and body.get("state_event") == "close":
            self.requests[number]["state"] = "closed"
        return 200, self.requests[number]


class _Handler(BaseHTTPRequestHandler):
    forge: Forge
    lock: threading.Lock

    def log_message(self, *args: Any) -> None:
        pass

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length) if length else b""
        body = json.loads(raw) if raw else {}
        prefix = urllib.parse.urlsplit(self.forge.url).path
        path = self.path.removeprefix(prefix)
        headers = {k.title(): v for k, v in self.headers.items()}
        gate = self.forge.gate
        if gate is not None and self.command == "GET":
            self.forge.arrived.set()
            gate.wait(timeout=120)
        with type(self).lock:
            status, data = self.forge.answer(self.command, path, headers, body)
        out = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    do_GET = do_POST = do_PATCH = do_PUT = _serve


@contextmanager
def forge_server(kind: str, repository: str = "acme/kn", token: str = "forge-token-1") -> Iterator[Forge]:
    """A forge of ``kind`` on a free loopback port; its ``url`` is the API base kbc is given
    (GitLab's under /api/v4, as gitlab.com's)."""
    forge = Forge(kind, repository, token)
    handler = type("Handler", (_Handler,), {"forge": forge, "lock": threading.Lock()})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    forge.url = f"http://127.0.0.1:{server.server_address[1]}" + ("/api/v4" if kind == "gitlab" else "")
    try:
        yield forge
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
