"""A kbc HTTP server (UI, REST, MCP, metrics) in a thread of the test, on a free port, and a
small repository with modules, docs behind the code and a file holding a credential."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from helpers import repo_factory

from kbc.serve.http import create_app
from kbc.services.components import Components
from kbc.services.knowledge import KnowledgeBase
from kbc.services.workspace import Workspace

SECRET = "2hpChYgCfrL1spNxnyVmihA+2O76UMFxFkM+R5Kj"
TOKEN = "a-token-for-the-tests-0123456789"
STORE = {
    "kbc.toml": "[graph]\nmodule_split_files = 2\n",  # small as it is, one module per subpackage
    "store/__init__.py": '"""A small store: orders, payments and refunds."""\n',
    "store/payments/__init__.py": '"""Money: payments and refunds."""\n',
    "store/orders/__init__.py": '"""Orders."""\n',
    "store/payments/refunds.py": '''
        """Payments and refunds."""

        MAX_REFUND_DAYS = 30


        def validate_refund(amount: int, paid: int, days: int) -> bool:
            """A refund is valid when positive, not above what was paid, within MAX_REFUND_DAYS."""
            if days > MAX_REFUND_DAYS:
                raise ValueError("refund window closed")
            return 0 < amount <= paid


        def refund(order_id: str, amount: int, paid: int, days: int) -> dict[str, object]:
            """Give money back for an order."""
            if not validate_refund(amount, paid, days):
                raise ValueError("invalid refund amount")
            return {"order": order_id, "refunded": amount}
    ''',
    "store/orders/orders.py": '''
        """Orders: placing them and cancelling them."""

        from store.payments.refunds import refund


        class Order:
            """An order of the store."""

            def __init__(self, order_id: str, paid: int) -> None:
                self.order_id = order_id
                self.paid = paid

            def cancel(self, days: int) -> dict[str, object]:
                """Cancel the order and refund what was paid."""
                return refund(self.order_id, self.paid, self.paid, days)


        def place_order(order_id: str, amount: int) -> Order:
            """Place an order for an amount."""
            return Order(order_id, amount)
    ''',
    "store/cli.py": '''
        """The store's command line."""

        import sys

        from store.orders.orders import place_order


        def main() -> int:
            """Place an order from the command line."""
            order = place_order(sys.argv[1], int(sys.argv[2]))
            print(order.order_id)
            return 0


        if __name__ == "__main__":
            raise SystemExit(main())
    ''',
    "store/settings.py": f'''
        """Deployment settings."""
        AWS_ACCESS_KEY_ID = "AKIAUJZDEGXDNCF32EPF"
        AWS_SECRET_ACCESS_KEY = "{SECRET}"
    ''',
    "docs/refunds.md": """
        ---
        refs: ["store/payments/*.py"]
        ---
        # Refunds

        A refund is checked by `store.payments.refunds.validate_refund`
        and `store.payments.refunds.old_check`.
    """,
}


@contextmanager
def built_repository(
    folder: Path, files: dict[str, str | bytes], keep: tuple[str, ...] = ()
) -> Iterator[Path]:
    """A repository of ``files`` in ``folder``, built lexically without an LLM, with the runner's
    kbc settings (but KBC_CONFIG and ``keep``) out of the way while it is used."""
    import pytest

    with pytest.MonkeyPatch.context() as mp:
        for key in [k for k in os.environ if k.startswith("KBC_") and k not in ("KBC_CONFIG", *keep)]:
            mp.delenv(key)
        root = repo_factory(folder)(files)
        with KnowledgeBase(root, components=Components.lexical()) as kb:
            kb.build(no_llm=True)
        yield root


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def running(
    kb: KnowledgeBase | Workspace, *, host: str = "127.0.0.1", token: str | None = None
) -> Iterator[str]:
    """The whole HTTP surface over ``kb`` (or a workspace), served until the block ends; yields
    its loopback URL."""
    import uvicorn

    from kbc.serve.protocol import server_config

    app = create_app(kb, host=host, token=token)
    port = free_port()
    server = uvicorn.Server(server_config(app, host, port))  # as `kbc serve` runs it
    thread = threading.Thread(target=server.run, name="kbc-test-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise AssertionError("the test server did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        app.close()


@contextmanager
def serving(*repos: str, folder: Path, options: tuple[str, ...] = ()) -> Iterator[str]:
    """``kbc serve --transport http`` of ``repos`` (each ``[NAME=]PATH``) in a process of its own,
    lexical, as a user starts it (``options``: more of kbc's ``-c section.key=value``); yields its
    loopback URL once it answers."""
    import subprocess
    import sys

    import httpx

    port = free_port()
    command = [
        sys.executable,
        "-m",
        "kbc",
        "-c",
        "index.embed_model=none",
        *options,
        "serve",
        "--transport",
        "http",
    ]
    command += ["--port", str(port), *(a for repo in repos for a in ("--repo", repo))]
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("KBC_")}, "HOME": str(folder)}
    env["KBC_CONFIG"] = ""
    log_path = folder / "serve.log"
    with log_path.open("w") as log:
        server = subprocess.Popen(command, stdout=log, stderr=log, stdin=subprocess.DEVNULL, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/api/v1/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"kbc serve did not start: {log_path.read_text()}")
            time.sleep(0.2)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
