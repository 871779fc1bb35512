"""An OpenAI-compatible chat server on loopback, for tests of kbc's real LLM path.

Each request is answered by ``script(request) -> Reply``; every request is recorded.
litellm reaches it as model ``openai/<name>`` with ``api_base`` set to ``server.url``.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    content: str = ""
    status: int = 200
    delay: float = 0.0


@dataclass
class ChatServer:
    url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    script: Callable[[dict[str, Any]], Reply] = lambda _r: Reply("{}")

    def calls(self) -> int:
        return len(self.requests)


def view_kind(request: dict[str, Any]) -> str:
    """The view kind a kbc prompt asks about."""
    text = "\n".join(str(m.get("content", "")) for m in request.get("messages", []))
    found = re.search(r"^View kind: (\w+)$", text, re.MULTILINE)
    return found.group(1) if found else ""


def prompt_facts(request: dict[str, Any]) -> dict[str, Any]:
    """The facts JSON a kbc prompt carries."""
    for message in request.get("messages", []):
        content = str(message.get("content", ""))
        if "Facts (JSON):\n" in content:
            data: dict[str, Any] = json.loads(content.split("Facts (JSON):\n", 1)[1])
            return data
    return {}


def _completion(content: str) -> bytes:
    return json.dumps(
        {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": 0,
            "model": "test-model",
            "choices": [
                {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}
            ],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
        }
    ).encode()


class _JSONHandler(BaseHTTPRequestHandler):
    """A handler that reads each POST's JSON body and answers with ``answer(path, request)``."""

    answer: Callable[[str, dict[str, Any]], tuple[int, bytes, float]]

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        status, body, delay = type(self).answer(self.path, json.loads(self.rfile.read(length) or b"{}"))
        if delay:
            time.sleep(delay)
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test)


@contextmanager
def _serving(answer: Callable[[str, dict[str, Any]], tuple[int, bytes, float]]) -> Iterator[str]:
    """A server on a free loopback port answering with ``answer``; yields its base URL (/v1)."""
    handler = type("Handler", (_JSONHandler,), {"answer": staticmethod(answer)})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


FAILURE = json.dumps({"error": {"message": "scripted failure", "type": "server_error"}}).encode()


@contextmanager
def chat_server(script: Callable[[dict[str, Any]], Reply]) -> Iterator[ChatServer]:
    state = ChatServer(url="", script=script)
    lock = threading.Lock()

    def answer(path: str, request: dict[str, Any]) -> tuple[int, bytes, float]:
        with lock:
            state.requests.append(request)
        reply = state.script(request)
        body = _completion(reply.content) if reply.status == 200 else FAILURE
        return reply.status, body, reply.delay

    with _serving(answer) as url:
        state.url = url
        yield state


def grounded_answer(request: dict[str, Any]) -> str:
    """A valid interpretation for the prompt's view kind that names only what its facts hold."""
    kind, facts = view_kind(request), prompt_facts(request)
    if kind == "architecture":
        first = facts["modules"][0]["name"] if facts.get("modules") else "the code"
        return json.dumps(
            {
                "overview": f"The repository is organised around `{first}`.",
                "design_decisions": ["Modules import downwards only."],
            }
        )
    if kind == "module":
        return json.dumps(
            {
                "purpose": f"`{facts['name']}` holds the code of this part.",
                "responsibilities": ["It keeps the records."],
                "collaborators": [],
            }
        )
    if kind == "workflow":
        steps = facts.get("steps", [])
        return json.dumps(
            {
                "summary": "It runs the command.",
                "steps": [{"n": s["n"], "explanation": f"Calls `{s['symbol']}`."} for s in steps],
            }
        )
    if kind == "domain_concepts":
        return json.dumps(
            {
                "concepts": [
                    {"name": c["name"], "meaning": "A record of the shop."} for c in facts.get("concepts", [])
                ]
            }
        )
    if kind == "business_rules":
        return json.dumps(
            {"rules": [{"n": r["n"], "rule": "The amount must be positive."} for r in facts.get("rules", [])]}
        )
    if kind == "integrations":
        return json.dumps(
            {
                "integrations": [
                    {"name": i["name"], "role": "An outside service."} for i in facts.get("integrations", [])
                ]
            }
        )
    return json.dumps({"summary": "What a user can do."})


@dataclass
class EmbeddingServer:
    """An OpenAI-compatible embeddings endpoint on loopback: deterministic vectors (each word
    of a text, after ``salt``, hashed into one of ``dim`` buckets), every request recorded.
    Changing ``dim`` or ``salt`` makes the same model name answer like another model."""

    url: str
    dim: int = 32
    salt: str = ""
    failing: bool = False
    requests: list[dict[str, Any]] = field(default_factory=list)

    def texts(self) -> int:
        return sum(len(r.get("input", [])) for r in self.requests)


def vector_of(text: str, dim: int, salt: str = "") -> list[float]:
    import hashlib
    import math

    counts = [0.0] * dim
    for word in re.findall(r"\w+", text.lower()):
        counts[int(hashlib.sha256((salt + word).encode()).hexdigest(), 16) % dim] += 1.0
    norm = math.sqrt(sum(c * c for c in counts)) or 1.0
    return [c / norm for c in counts]


@contextmanager
def embedding_server(dim: int = 32) -> Iterator[EmbeddingServer]:
    import base64
    import struct

    state = EmbeddingServer(url="", dim=dim)
    lock = threading.Lock()

    def answer(path: str, request: dict[str, Any]) -> tuple[int, bytes, float]:
        with lock:
            state.requests.append(request)
        texts = request.get("input", [])
        texts = [texts] if isinstance(texts, str) else texts
        if state.failing or not path.endswith("/embeddings"):
            return 500, FAILURE, 0.0
        vectors = [vector_of(str(t), state.dim, state.salt) for t in texts]
        encoded: list[Any] = vectors
        if request.get("encoding_format") == "base64":
            encoded = [base64.b64encode(struct.pack(f"<{len(v)}f", *v)).decode() for v in vectors]
        return (
            200,
            json.dumps(
                {
                    "object": "list",
                    "model": request.get("model", ""),
                    "data": [
                        {"object": "embedding", "index": i, "embedding": e} for i, e in enumerate(encoded)
                    ],
                    "usage": {"prompt_tokens": 1, "total_tokens": 1},
                }
            ).encode(),
            0.0,
        )

    with _serving(answer) as url:
        state.url = url
        yield state
