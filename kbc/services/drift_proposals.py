"""Proposals for the documents behind the code (``kbc drift --propose``): each document
unchanged with a comment block saying why it is behind, or, with an LLM, its rewrite when every
name the rewrite mentions exists in the code. Made as any proposal is
(:func:`kbc.services.proposals.propose`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from kbc.analyzers.drift import parse_front_matter
from kbc.analyzers.knowledge import split_indexed
from kbc.analyzers.mentions import MentionJudge, code_spans
from kbc.analyzers.secrets import redact
from kbc.domain.drift import DriftReport
from kbc.domain.errors import LLMError
from kbc.services.forge import Forge
from kbc.services.proposals import Proposal, propose
from kbc.services.team import Manifest, RootRecord
from kbc.store.facts_store import FactsStore
from kbc.views.llm import Interpreter

SKELETON = "<!-- kbc drift:"


def skeleton(text: str, report: DriftReport) -> str:
    """The document unchanged, with a comment block at its end listing why it is behind: the
    changed governed files, the commits since, the names it mentions that no longer exist.
    Never prose: what to write is for a person (or a marked machine suggestion) to decide."""
    lines = [
        f"{SKELETON} this document is behind the code (kbc drift, {len(report.reasons)} "
        f"reason{'s' if len(report.reasons) != 1 else ''}); review it, then remove this block."
    ]
    for reason in report.reasons:
        lines.append(f"- {reason.kind.replace('_', ' ')}: {reason.detail}")
        lines.extend(f"  - changed: {path}" for path in reason.files)
        lines.extend(f"  - no longer in the code: {name}" for name in reason.names)
        lines.extend(f"  - matches no file: {ref}" for ref in reason.refs)
    block = "\n".join(lines).replace("-->", "- ->") + "\n-->\n"
    body = text.split(f"\n{SKELETON}")[0].rstrip("\n")  # a skeleton proposed before is replaced
    return f"{body}\n\n{block}"


REWRITE_SYSTEM = """\
You keep a team's Markdown document in line with the code it describes. You get the document,
why it is behind the code, and the current text of the code files that changed. Reply with the
whole updated document and nothing else: keep its front-matter, headings and wording wherever
the code does not contradict them, change only what the code now does differently, and name
only functions, classes and modules that appear in the code shown."""
SOURCE_CHARS = 12_000  # of the changed files' text given to the LLM


def suggest_rewrite(
    text: str, report: DriftReport, repo: Path, interpreter: Interpreter, code: MentionJudge
) -> tuple[str, str]:
    """An LLM's rewrite of a drifted document, and "" — or "" and why none is offered: the
    call failed, or the rewrite names code the facts do not hold (it would not be grounded)."""
    files = sorted({path for reason in report.reasons for path in reason.files})
    shown: list[str] = []
    room = SOURCE_CHARS
    for path in files:
        try:
            source = (repo / path).read_text(encoding="utf-8", errors="replace")[:room]
        except OSError:
            continue
        room -= len(source)
        shown.append(f"### {path}\n```\n{source}\n```")
        if room <= 0:
            break
    reasons = "\n".join(
        f"- {r.detail}" + "".join(f"\n  - {n}" for n in (*r.files, *r.names)) for r in report.reasons
    )
    asked = f"Document:\n\n{text}\n\nWhy it is behind:\n{reasons}\n\nThe code now:\n\n" + "\n\n".join(shown)
    prompt = [
        {"role": "system", "content": REWRITE_SYSTEM},
        {"role": "user", "content": redact("prompt.md", asked, "markdown").text},
    ]
    try:
        reply = interpreter.complete(prompt, json_output=False).text.strip()
    except LLMError as exc:
        return "", f"the LLM call failed: {exc.message}"
    body = reply.removeprefix("```markdown").removeprefix("```").removesuffix("```").strip() + "\n"
    front = parse_front_matter(body)
    ungrounded = code.missing(code_spans(front.body, front.body_line))
    if ungrounded:
        return "", f"the LLM's rewrite names code that does not exist ({', '.join(ungrounded)}); not offered"
    return body, ""


def propose_drift(
    manifest: Manifest,
    repo: Path,
    reports: Sequence[DriftReport],
    interpreter: Interpreter | None = None,
    code: MentionJudge | None = None,
    forge: Forge | None = None,
) -> list[Proposal]:
    """One proposal per document behind the code: a knowledge document in its root, a document
    of the repository in the repository itself. The skeleton is the document unchanged with a
    comment block saying why; with an ``interpreter`` (and ``code`` to ground it), the
    document is the LLM's rewrite instead, marked as machine-written in the block and the
    rationale, when every name it mentions exists. ``forge`` opens requests for the knowledge
    roots' proposals (the repository's own documents are proposed to the repository)."""
    own = RootRecord("repository", str(repo), str(repo))
    made: list[Proposal] = []
    for report in reports:
        indexed = split_indexed(report.path)
        if indexed is not None:
            name, inner = indexed
            root, where = manifest.root(name), report.path
        else:
            name, inner, root, where = own.name, report.path, own, report.path
        if root is None:
            continue
        scope = manifest if indexed is not None else Manifest((own,))
        folder = Path(root.folder)
        try:
            text = (folder / inner).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        reasons = "; ".join(r.detail for r in report.reasons)
        content, rationale, author = skeleton(text, report), f"kbc drift: {reasons}", "kbc drift"
        if interpreter is not None and code is not None:
            rewrite, why_not = suggest_rewrite(text, report, repo, interpreter, code)
            if rewrite:
                content = skeleton(rewrite, report).replace(
                    SKELETON,
                    f"{SKELETON} machine-written: the text above is a suggested rewrite by "
                    f"{interpreter.model}, grounded in the code's names; check every line.",
                    1,
                )
                rationale += f"\n\nMachine-written suggestion by {interpreter.model}."
                author = f"kbc drift ({interpreter.model})"
            else:
                rationale += f"\n\nNo rewrite suggested: {why_not}."
        made.append(
            propose(
                scope,
                where if indexed is not None else inner,
                content=content,
                rationale=rationale,
                author=author,
                forge=forge if indexed is not None else None,
            )
        )
    return made


def grounding(root: Path, store: Path) -> MentionJudge:
    """What checks a rewrite's names: the symbol table of the last build's facts, reading the
    repository's files as they are now."""
    from kbc.graph.mentions import MentionChecker
    from kbc.graph.symbols import SymbolTable

    def source(path: str) -> str:
        try:
            return (root / path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    return MentionChecker(SymbolTable(FactsStore(store).facts(), source))
