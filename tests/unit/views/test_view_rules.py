"""Which guards are business rules."""

from __future__ import annotations

from kbc.domain.models import Guard
from kbc.views.domain import is_rule


def _guard(symbol: str, condition: str, outcome: str, kind: str = "raise") -> Guard:
    return Guard(kind=kind, condition=condition, symbol=symbol, line=1, end_line=2, outcome=outcome)


def test_protocol_guards_type_checks_and_reraises_are_not_rules() -> None:
    assert not is_rule(_guard("kit.Cache.__eq__", "len(other) != len(self)", "return False", "reject"))
    assert not is_rule(_guard("kit.Cache.__getitem__", "key not in self", "raise KeyError(key)"))
    assert not is_rule(_guard("kit.slugify", "not isinstance(text, str)", 'raise ValueError("text")'))
    assert not is_rule(_guard("kit.slugify", "isinstance(a, bytes) or callable(a)", "return None", "reject"))
    assert not is_rule(_guard("kit.load", "strict", 'raise TypeError("expected a mapping")'))
    assert not is_rule(_guard("kit.load", "text is None", "raise"))
    assert not is_rule(_guard("kit.load", "text is None", "raise exc"))


def test_rules_of_the_domain_stay() -> None:
    assert is_rule(
        _guard("kit.Cache.__init__", "maxsize <= 0", 'raise ValueError("maxsize must be positive")')
    )
    assert is_rule(_guard("kit.order", "isinstance(amount, int) and amount < 0", 'raise ValueError("no")'))
    assert is_rule(_guard("kit.order", "amount > MAX_ORDER", "raise OrderTooLarge(amount) from None"))
