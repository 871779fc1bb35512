"""Golden files: questions with the paths that answer them, for ``kbc eval``.

YAML (a ``questions:`` list, or a bare list) or JSONL (one question object per
line). Each question::

    - question: "how does packing stay within the token budget?"
      paths: [kbc/retrieval/pack.py]            # required: the files that answer it
      lines: {kbc/retrieval/pack.py: [60, 152]}  # optional: ranges that must be packed
      symbols: [kbc.retrieval.pack.pack]         # optional: definitions that answer it
      use_case: implementation                   # optional, default implementation
      id: pack-budget                            # optional: a name for reports

Every problem of the file is collected and reported at once, each naming the
question (its number and line) and what is wrong with it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from kbc.domain.errors import GOLDEN_HINT, GoldenError, KbcError

DEFAULT_USE_CASE = "implementation"
KEYS = ("question", "paths", "lines", "symbols", "use_case", "id")
TOP_KEYS = ("questions", "description")
HINT = GOLDEN_HINT


@dataclass(frozen=True, slots=True)
class GoldenQuestion:
    number: int  # 1-based position in the file
    line: int  # where it starts in the file (0 when unknown)
    question: str
    paths: tuple[str, ...]
    lines: Mapping[str, tuple[tuple[int, int], ...]] = field(default_factory=dict)
    symbols: tuple[str, ...] = ()
    use_case: str = DEFAULT_USE_CASE
    id: str = ""

    @property
    def label(self) -> str:
        where = f", line {self.line}" if self.line else ""
        name = self.id or _short(self.question)
        return f"question {self.number}{where} ({name})"


def _short(text: str, size: int = 48) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= size else text[: size - 1] + "…")


def _label(number: int, line: int, raw: Any) -> str:
    where = f", line {line}" if line else ""
    name = ""
    if isinstance(raw, Mapping):
        if isinstance(raw.get("id"), str) and raw["id"].strip():
            name = raw["id"].strip()
        elif isinstance(raw.get("question"), str) and raw["question"].strip():
            name = _short(raw["question"])
    return f"question {number}{where}" + (f" ({name})" if name else "")


def clean_path(raw: str) -> str | None:
    """A repository-relative POSIX path, or None for absolute or climbing paths."""
    text = raw.strip().replace("\\", "/")
    pure = PurePosixPath(text)
    if not text or pure.is_absolute() or ".." in pure.parts or text.startswith("~"):
        return None
    return pure.as_posix().removeprefix("./")


def _strings(value: Any, what: str, problems: list[str], label: str) -> list[str] | None:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        problems.append(f"{label}: `{what}` must be a list of non-empty strings")
        return None
    return [v.strip() for v in value]


def _range(value: Any) -> tuple[int, int] | None:
    if isinstance(value, str) and "-" in value:
        first, _, last = value.partition("-")
        if first.strip().isdigit() and last.strip().isdigit():
            value = [int(first), int(last)]
    if (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
        and 1 <= value[0] <= value[1]
    ):
        return value[0], value[1]
    return None


def _ranges(value: Any) -> tuple[tuple[int, int], ...] | None:
    single = _range(value)
    if single is not None:
        return (single,)
    if isinstance(value, list) and value:
        many = [_range(v) for v in value]
        if all(r is not None for r in many):
            return tuple(r for r in many if r is not None)
    return None


def question_from(raw: Any, number: int, line: int, problems: list[str]) -> GoldenQuestion | None:  # noqa: C901 - one check per field of a golden question
    """One entry checked; its problems are appended to ``problems`` (None when it has any)."""
    label = _label(number, line, raw)
    if not isinstance(raw, Mapping):
        problems.append(f"{label}: must be a mapping with `question` and `paths`, not {type(raw).__name__}")
        return None
    before = len(problems)
    unknown = sorted(str(k) for k in raw if k not in KEYS)
    if unknown:
        problems.append(
            f"{label}: unknown key{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(repr(k) for k in unknown)} (known: {', '.join(KEYS)})"
        )
    text = raw.get("question")
    if not isinstance(text, str) or not text.strip():
        problems.append(f"{label}: `question` is missing or empty")
    paths: list[str] = []
    if "paths" not in raw:
        problems.append(f"{label}: `paths` is missing (the files that answer the question)")
    else:
        given = _strings(raw["paths"], "paths", problems, label)
        for path in given or []:
            clean = clean_path(path)
            if clean is None:
                problems.append(f"{label}: path {path!r} must be relative to the repository, without '..'")
            elif clean not in paths:
                paths.append(clean)
        if given == []:
            problems.append(f"{label}: `paths` is empty; name at least one file")
    lines: dict[str, tuple[tuple[int, int], ...]] = {}
    raw_lines = raw.get("lines")
    if raw_lines is not None:
        if not isinstance(raw_lines, Mapping):
            problems.append(f"{label}: `lines` must map a path to [start, end]")
        else:
            for key, value in raw_lines.items():
                clean = clean_path(str(key))
                ranges = _ranges(value)
                if clean is None or clean not in paths:
                    problems.append(f"{label}: `lines` names {key!r}, which is not one of its `paths`")
                elif ranges is None:
                    problems.append(
                        f"{label}: `lines` of {key!r} must be [start, end] (1 <= start <= "
                        f"end) or a list of such ranges, not {value!r}"
                    )
                else:
                    lines[clean] = ranges
    symbols: list[str] = []
    if raw.get("symbols") is not None:
        symbols = _strings(raw["symbols"], "symbols", problems, label) or []
    use_case = raw.get("use_case", DEFAULT_USE_CASE)
    if not isinstance(use_case, str) or not use_case.strip():
        problems.append(f"{label}: `use_case` must be the name of a use case, e.g. implementation")
    ident = raw.get("id", "")
    if not isinstance(ident, str | int) or isinstance(ident, bool):
        problems.append(f"{label}: `id` must be a string")
    if len(problems) > before:
        return None
    assert isinstance(text, str) and isinstance(use_case, str)
    return GoldenQuestion(
        number, line, text.strip(), tuple(paths), lines, tuple(symbols), use_case.strip(), str(ident).strip()
    )


def _yaml_entries(text: str, source: str) -> list[tuple[Any, int]]:
    import yaml

    try:
        data = yaml.safe_load(text)
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise GoldenError(source, [f"not valid YAML{where}: {problem}"]) from None
    items_node: Any = root
    if isinstance(data, Mapping):
        unknown = sorted(str(k) for k in data if k not in TOP_KEYS)
        if unknown or "questions" not in data or not isinstance(data["questions"], list):
            problems = [
                "the top level must be a list of questions or a mapping with a `questions` list"
                + (f"; unknown keys {', '.join(repr(k) for k in unknown)}" if unknown else "")
            ]
            raise GoldenError(source, problems)
        data = data["questions"]
        items_node = next(
            (
                value
                for key, value in getattr(root, "value", [])
                if getattr(key, "value", None) == "questions"
            ),
            None,
        )
    if not isinstance(data, list):
        raise GoldenError(
            source, ["the top level must be a list of questions or a mapping with a `questions` list"]
        )
    lines = [node.start_mark.line + 1 for node in getattr(items_node, "value", [])]
    if len(lines) != len(data):
        lines = [0] * len(data)
    return list(zip(data, lines, strict=True))


def _jsonl_entries(text: str, source: str) -> list[tuple[Any, int]]:
    entries: list[tuple[Any, int]] = []
    problems: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entries.append((json.loads(line), number))
        except ValueError as exc:
            problems.append(f"line {number}: not valid JSON: {exc}")
    if problems:
        raise GoldenError(source, problems, hint="a JSONL golden file holds one JSON object per line")
    return entries


def parse_golden(text: str, source: str = "<golden>", jsonl: bool | None = None) -> list[GoldenQuestion]:
    """The questions of a golden file's ``text``; ``jsonl`` None guesses from the content."""
    if jsonl is None:
        jsonl = text.lstrip().startswith("{")
    entries = _jsonl_entries(text, source) if jsonl else _yaml_entries(text, source)
    problems: list[str] = []
    questions = [
        question_from(raw, number, line, problems) for number, (raw, line) in enumerate(entries, start=1)
    ]
    if problems:
        raise GoldenError(source, problems)
    if not questions:
        raise GoldenError(source, ["it holds no questions"])
    return [q for q in questions if q is not None]


def read_golden(path: Path) -> list[GoldenQuestion]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise KbcError(
            f"cannot read the golden file {path}: {exc}", hint="give the path of a YAML or JSONL golden file"
        ) from None
    suffix = path.suffix.lower()
    jsonl = True if suffix in (".jsonl", ".ndjson") else False if suffix in (".yaml", ".yml") else None
    return parse_golden(text, str(path), jsonl)
