"""The shipped defaults written out as a kbc.toml: ``config/kbc.example.toml`` is this text."""

from __future__ import annotations

from kbc.domain.fields import FIELDS
from kbc.domain.settings import SECTIONS, Settings


def defaults_as_toml() -> str:
    """The shipped defaults written as a kbc.toml (the example in config/ is this text)."""
    defaults = Settings()
    out: list[str] = ["# kbc.toml: every setting with its default value.", ""]
    for section in SECTIONS:
        out.append(f"[{section}]")
        for spec in (f for f in FIELDS if f.section == section):
            trust = "; honoured only from your user configuration" if spec.trusted_only else ""
            out.append(f"# {spec.help} (environment: {spec.env}{trust})")
            value = getattr(defaults, spec.name)
            if spec.kind is tuple:
                rendered = "[" + ", ".join(f'"{v}"' for v in value) + "]"
            elif spec.kind is bool:
                rendered = "true" if value else "false"
            elif spec.kind is str:
                rendered = f'"{value}"'
            else:
                rendered = str(value)
            out.append(f"{spec.key} = {rendered}")
        out.append("")
    out.extend(
        [
            "# Knowledge roots: Markdown the team keeps beside the code, indexed in scopes "
            "(docs/knowledge.md).",
            "# One table per root: path (a folder; a repository's own kbc.toml may only name one inside",
            "# the repository) or url (a git repository, cloned and followed: your configuration only),",
            "# branch (default: the remote's) and name (default: the folder's). Also KBC_KNOWLEDGE",
            "# ([name=]path-or-url, comma-separated) and `kbc build --knowledge`.",
            "# [[knowledge]]",
            '# path = "team-knowledge"',
            '# name = "team"',
            "",
        ]
    )
    return "\n".join(out)
