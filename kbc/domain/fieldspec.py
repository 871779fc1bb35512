"""How one setting is declared: its table and key in kbc.toml, its type, its environment
variable, its lower bound, its help, and whether a repository's own configuration may set it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class FieldSpec:
    name: str  # attribute of Settings
    section: str  # table in kbc.toml
    key: str  # key in that table
    kind: type  # int, float, bool, str or tuple (of strings)
    env: str
    minimum: int | None = None
    help: str = ""
    # decides where data, code or credentials go: never read from a repository's own files
    trusted_only: bool = False
    # what the machine spends (processes, sizes, connections, waits): the user's to set, not the repository's
    limit: bool = False

    @property
    def dotted(self) -> str:
        return f"{self.section}.{self.key}"
