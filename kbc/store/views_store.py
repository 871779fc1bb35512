"""Views on disk: ``views/views.jsonl`` (one view per line, sorted by id), replaced atomically;
a build stages its views beside it and puts them in place when it publishes."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from kbc.domain.codec import dumps, load_as
from kbc.domain.errors import StoreError
from kbc.domain.views import View
from kbc.store.files import write_atomic
from kbc.store.layout import views_file


class ViewsStore:
    def __init__(self, root: Path) -> None:
        self.path = views_file(root)
        self.staged = self.path.with_name(self.path.stem + ".next" + self.path.suffix)

    def exists(self) -> bool:
        return self.path.is_file()

    def write(self, views: Iterable[View], *, staged: bool = False) -> None:
        write_atomic(
            self.staged if staged else self.path,
            "".join(dumps(v) + "\n" for v in sorted(views, key=lambda v: v.id)),
        )

    def publish(self) -> None:
        """Put the staged views in place (nothing staged: nothing changes)."""
        if self.staged.is_file():
            os.replace(self.staged, self.path)

    def discard(self) -> None:
        """Forget views a build staged and never published."""
        self.staged.unlink(missing_ok=True)

    def read(self) -> list[View]:
        if not self.path.is_file():
            return []
        views = []
        with self.path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                try:
                    views.append(load_as(View, json.loads(line)))
                except (ValueError, TypeError) as exc:
                    raise StoreError(
                        f"{self.path}:{number}: unreadable view ({exc})",
                        hint="run `kbc build` to write the views again",
                    ) from None
        return views
