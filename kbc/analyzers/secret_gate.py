"""Which lines a detect-secrets plugin could fire on, decided from the plugins themselves.

detect-secrets reads each line it is handed through every plugin, behind a layer of
dependency injection, filters and result objects: about 0.2 ms a line, whatever the line.
Most lines the screens of :mod:`kbc.analyzers.secret_scan` pass set off nothing (a message
catalog's source references, a minified script's names). A plugin can fire on a line only if

- it is a regex-based detector and one of its own patterns matches the line;
- it is the keyword detector and one of its words appears in the line (every form it reads
  holds one; searched here in the text lowercased, as :mod:`kbc.analyzers.screen` does);
- it is a high-entropy string detector and a quoted run of its characters has an entropy
  above its limit (reckoned here as it reckons it, less a rounding margin, and without the
  hex detector's discount for digits, which only lowers it).

A line none of these hold for is not handed over: the same findings, at a small part of the
cost. The patterns are searched over a reading's lines joined, a few calls a file rather than
dozens a line. A plugin of any other kind opens the gate to every line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kbc.analyzers.credentials import entropy
from kbc.analyzers.screen import Text

# A pattern searched in the lines joined by newlines finds a match wherever it finds one in a
# line alone, given ^ and $ at each line's ends (re.MULTILINE), unless it anchors at the text's
# ends or looks around for what a newline may be; such a pattern is searched line by line.
_LINE_BY_LINE = re.compile(r"\\[AZz]|\(\?<?!")
_MARGIN = 0.01  # below each limit, for floating-point sums taken in another order


@dataclass(frozen=True, slots=True)
class Gate:
    """The necessary conditions of every configured plugin (see the module's docstring)."""

    joined: tuple[re.Pattern[str], ...]  # searched over the lines joined
    words: re.Pattern[str] | None  # the keyword detector's, searched over them lowercased
    alone: tuple[re.Pattern[str], ...]  # searched in each line
    strings: tuple[tuple[re.Pattern[str], float], ...]  # (quoted run of a charset, entropy limit)
    wide_open: bool = False  # a plugin of a kind not known here

    def passing(self, lines: list[str]) -> list[bool]:
        """For each of ``lines``, whether any plugin could fire on it (read right-stripped,
        as detect-secrets reads it)."""
        if self.wide_open:
            return [True] * len(lines)
        lines = [line.rstrip() for line in lines]
        searched = Text(lines)
        text = searched.joined
        hit = [False] * len(lines)
        if self.words is not None:
            for index in searched.matching(self.words, caseless=True):
                hit[index] = True
        for pattern in self.joined:
            for match in pattern.finditer(text):
                first = searched.line_at(match.start())
                last = searched.line_at(max(match.start(), match.end() - 1))
                hit[first : last + 1] = [True] * (last - first + 1)
        for run, limit in self.strings:
            for match in run.finditer(text):
                value = match.group()
                if len(value) > 2 ** (limit - _MARGIN) and entropy(value) > limit - _MARGIN:
                    hit[searched.line_at(match.start())] = True
        for index, line in enumerate(lines):
            if not hit[index] and any(pattern.search(line) for pattern in self.alone):
                hit[index] = True
        return hit


@dataclass(frozen=True, slots=True)
class Plugin:
    """What the gate needs of one configured detect-secrets plugin (read by
    :func:`kbc.analyzers.secret_scan.gate`, the one module that imports detect-secrets)."""

    kind: str  # keyword, entropy, regex, or other (a kind the gate does not know)
    words: tuple[str, ...] = ()  # the keyword detector's
    charset: str = ""  # a high-entropy string detector's, and its limit
    limit: float = 0.0
    patterns: tuple[re.Pattern[str], ...] = ()  # a regex-based detector's


def gate_of(plugins: list[Plugin]) -> Gate:
    """The gate of the configured plugins."""
    patterns: list[re.Pattern[str]] = []
    strings: list[tuple[re.Pattern[str], float]] = []
    words = None
    for plugin in plugins:
        if plugin.kind == "keyword":  # its words are lower-case
            words = re.compile("|".join(plugin.words))
        elif plugin.kind == "entropy":
            strings.append((re.compile(f"(?<=['\"])[{re.escape(plugin.charset)}]+(?=['\"])"), plugin.limit))
        elif plugin.kind == "regex":
            patterns.extend(plugin.patterns)
        else:
            return Gate((), None, (), (), wide_open=True)
    alone = tuple(p for p in patterns if _LINE_BY_LINE.search(p.pattern))
    joined = tuple(re.compile(p.pattern, p.flags | re.MULTILINE) for p in patterns if p not in alone)
    return Gate(joined, words, alone, tuple(strings))


def handed_over(numbered: list[tuple[int, str]], lines: list[str], gate: Gate) -> list[tuple[int, str]]:
    """Of ``numbered`` (line number from 1, text) from ``lines``, those the gate passes, in
    order. detect-secrets reads each line's predecessor in the run it is handed for an
    ``allowlist nextline`` pragma: where that is not the line's own predecessor in ``lines``
    and mentions an allowlist, an empty line is put between, and a line's own predecessor
    that mentions one goes along before it."""
    passing = gate.passing([line for _, line in numbered])
    out: list[tuple[int, str]] = []
    for (number, line), passes in zip(numbered, passing, strict=True):
        if not passes:
            continue
        before = lines[number - 2] if number >= 2 else None
        last = out[-1][0] if out else None
        if last != number - 1:
            if before is not None and "allowlist" in before.lower():
                out.append((number - 1, before))
            elif out and "allowlist" in out[-1][1].lower():
                out.append((0, ""))
        out.append((number, line))
    return out
