"""Deterministic JSON for the domain models.

``dumps`` sorts keys and uses fixed separators, so the same value always gives
the same bytes. ``load_as`` rebuilds a dataclass from what ``to_data``
produced. Both compile one converter per dataclass from its type hints, once,
so large stores load and save quickly.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from collections.abc import Callable
from functools import cache
from typing import Any, TypeVar, get_args, get_origin

T = TypeVar("T")
Convert = Callable[[Any], Any]


def _identity(value: Any) -> Any:
    return value


def _float(value: Any) -> Any:
    return float(f"{value:.9g}")  # 9 significant digits: stable across summation order


def to_data(value: Any) -> Any:
    """Turn dataclasses, tuples, lists and dicts into plain JSON-ready data."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _encoder(type(value))(value)
    if isinstance(value, (tuple, list)):
        return [to_data(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_data(v) for k, v in value.items()}
    if isinstance(value, float):
        return _float(value)
    return value


@cache
def _encoder(cls: type) -> Convert:
    hints = typing.get_type_hints(cls)
    plan = [(f.name, _encode_for(hints[f.name])) for f in dataclasses.fields(cls)]

    def encode(value: Any) -> Any:
        return {name: convert(getattr(value, name)) for name, convert in plan}

    return encode


def _encode_for(tp: Any) -> Convert:
    origin = get_origin(tp)
    if tp in (str, int, bool) or origin is typing.Literal:
        return _identity
    if tp is float:
        return _float
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _encoder(tp)
    return to_data


def _decode_for(tp: Any) -> Convert:
    origin = get_origin(tp)
    if origin is tuple:
        args = get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            item = _decode_for(args[0])
            if item is _identity:
                return tuple
            return lambda data: tuple(item(v) for v in data)
        items = [_decode_for(a) for a in args]
        return lambda data: tuple(f(v) for f, v in zip(items, data, strict=True))
    if origin in (types.UnionType, typing.Union):
        options = [a for a in get_args(tp) if a is not type(None)]
        inner = _decode_for(options[0]) if len(options) == 1 else _identity
        return lambda data: None if data is None else inner(data)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _decoder(tp)
    return _identity


@cache
def _decoder(cls: type) -> Convert:
    hints = typing.get_type_hints(cls)
    plan = {name: _decode_for(tp) for name, tp in hints.items()}
    name = cls.__name__

    def decode(data: dict[str, Any]) -> Any:
        try:
            return cls(**{key: plan[key](raw) for key, raw in data.items()})
        except KeyError as exc:
            raise ValueError(f"unknown field {exc.args[0]!r} for {name}") from None

    return decode


def dumps(value: Any, *, indent: int | None = None) -> str:
    """``value`` as JSON text. Text that UTF-8 cannot hold (a lone surrogate, which a Python
    string literal may spell) is written with ASCII escapes, so the text can always be
    stored, and loads back the same."""
    data = to_data(value)
    separators = (",", ": ") if indent is not None else (",", ":")
    text = json.dumps(data, sort_keys=True, ensure_ascii=False, indent=indent, separators=separators)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(data, sort_keys=True, ensure_ascii=True, indent=indent, separators=separators)
    return text


def load_as(cls: type[T], data: dict[str, Any]) -> T:
    """Rebuild ``cls`` from ``data``; unknown keys are an error (a stale store)."""
    result: T = _decoder(cls)(data)  # type: ignore[arg-type]
    return result
