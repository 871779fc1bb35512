"""Read a task pasted from an issue report: the reporter's words apart from the template's.

Issue templates fill a report with the same words whatever it is about: their
instructions (HTML comments), checklists ("- [x] I searched the existing
issues"), headings ("### Expected behavior", "### Environment"), "_No response_"
for the fields left empty, and lists of versions ("pylint 2.12.2", "OS: macOS
11.6", ``pip freeze``). Searched as words, they match the modules of every
repository that speak of configuration, versions, output and environments,
whatever the bug. :func:`clean_report` keeps what the reporter wrote (prose,
code, tracebacks, messages, commands) and drops the rest; the searches read the
result, while the reading of what a task names (:mod:`kbc.retrieval.query`) keeps
the whole text. Nothing here is weighed: a line is the template's or it is not.
"""

from __future__ import annotations

import re

CLEAN = True  # False: the searches read the task as written (for comparison)
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^\s*(?:#{1,6}\s+(.*?)\s*#*|\*\*([^*]+?)\*\*\s*:?|__([^_]+?)__\s*:?)\s*$")
_CHECKLIST = re.compile(r"^\s*[-*]\s+\[[ xX]\]\s")
_EMPTY_FIELD = re.compile(r"^\s*_?(no response|none|n/a|na|-)_?\s*\.?\s*$", re.IGNORECASE)
# A section whose body is the reporter's setup, not the problem.
_SETUP = re.compile(
    r"\b(versions?|environment|env info|system|platform|operating system|os|installed|dependencies"
    r"|python version|pip (list|freeze)|conda|show_versions|extra tools|existing issue|checklist"
    r"|mvce confirmation|code of conduct)\b",
    re.IGNORECASE,
)
_VERSION = re.compile(r"(?:^|[\s(,=v-])v?\d+\.\d+(?:\.\d+)*|==")
_INSTALL = re.compile(
    r"^\s*(?:\$\s*)?(?:python\d?(?:\.\d+)? -m )?(?:pip3?|conda|poetry|uv pip) "
    r"(?:install|list|freeze)\b"
)
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_FIELD = re.compile(r"^\s*(?:[-*+]\s+|[\w .()/-]{1,30}:\s)")  # a list item, or "key: value"
_WORD = re.compile(r"[^\W\d_]")


def is_version_line(line: str) -> bool:
    """A line that lists versions ("pylint 2.12.2", "- OS: Ubuntu 20.04", "numpy==1.26.0",
    "platform linux -- Python 3.9.1, pytest-6.2.1"), not a sentence that mentions one ("drop
    support for Python 3.7"): a version in a field or list item, or in a line of at most three
    words, or versions for a third of its words."""
    words = line.split()
    if not words:
        return False
    versions = sum(1 for word in words if _VERSION.search(word))
    if versions == 0:
        return False
    listed = bool(_FIELD.match(line)) and len(words) <= 8
    return listed or len(words) <= 3 or versions >= max(2, len(words) / 3)


def clean_report(text: str) -> str:
    """``text`` without its template: comments, checklists, headings (their code spans kept),
    empty fields, setup sections, version lists and install commands. Line count is kept
    (dropped lines are blank), so offsets into the result stay meaningful line by line. A
    text that would keep no word at all is all the reporter wrote: it is kept as it is."""
    text = _COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    out: list[str] = []
    in_fence = False
    fence: list[str] = []
    setup = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            if in_fence:
                out.extend(_block(fence, setup))
                out.append("")
                fence = []
            else:
                out.append("")
            in_fence = not in_fence
            continue
        if in_fence:
            fence.append(line)
            continue
        heading = _HEADING.match(line)
        if heading:
            title = next(g for g in heading.groups() if g is not None)
            setup = len(title.split()) <= 5 and bool(_SETUP.search(title))
            out.append(" ".join(_CODE_SPAN.findall(title)))
            continue
        if (
            setup
            or _CHECKLIST.match(line)
            or _EMPTY_FIELD.match(line)
            or is_version_line(line)
            or _INSTALL.match(line)
        ):
            out.append("")
            continue
        out.append(line)
    if in_fence:  # an unclosed fence: its lines are the reporter's
        out.extend(_block(fence, setup))
    cleaned = "\n".join(out)
    return cleaned if _WORD.search(cleaned) else text


def _block(lines: list[str], setup: bool) -> list[str]:
    """A fenced block's lines, or blanks for a block of setup: under a setup heading, or
    mostly versions and install commands (``pip freeze``, a version banner)."""
    filled = [line for line in lines if line.strip()]
    listing = sum(1 for line in filled if is_version_line(line) or _INSTALL.match(line))
    if setup or (filled and listing >= 0.5 * len(filled)):
        return [""] * len(lines)
    return lines
