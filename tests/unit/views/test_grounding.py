"""Grounding: code-shaped references in prose are checked against what the facts hold."""

from kbc.views.grounding import KnownNames, ground, known_from_facts, references


def known() -> KnownNames:
    names = KnownNames()
    names.add_name("shop.orders.place_order")
    names.add_name("shop.models.Order")
    names.add_path("shop/orders.py")
    known_from_facts(
        {"rules": [{"condition": "amount > MAX_ORDER", "location": "shop/orders.py:12-13"}]}, names
    )
    return names


def test_references_are_code_shaped_text_only() -> None:
    text = (
        "The `place_order` function, e.g. in shop/orders.py, calls Order.validate() and "
        "write_ledger; PaymentGateway is new. Plain words are not checked."
    )
    assert list(references(text)) == [
        "place_order",
        "shop/orders.py",
        "Order.validate",
        "write_ledger",
        "PaymentGateway",
    ]


def test_known_names_accept_suffixes_paths_and_written_code() -> None:
    names = known()
    for reference in (
        "shop.orders.place_order",
        "place_order",
        "orders.place_order",
        "Order",
        "shop/orders.py",
        "orders.py",
        "shop",
        "amount > MAX_ORDER",
        "self.place_order()",
        "MAX_ORDER",
        "e.g",
    ):
        assert names.knows(reference), reference
    for reference in ("shop.orders.cancel_order", "Refund", "shop/refunds.py", "order.cancel(now)"):
        assert not names.knows(reference), reference


def test_ungrounded_sentences_and_items_are_removed_and_counted() -> None:
    interpretation = {
        "summary": "It starts in `place_order`. Then `issue_refund` runs. It ends.",
        "rules": [
            {"n": 1, "rule": "Orders over `MAX_ORDER` are refused."},
            {"n": 7, "rule": "A rule the facts do not have."},
            {"n": 2, "rule": "Calls `notify_customer()`."},
        ],
    }
    cleaned, grounding = ground(interpretation, known(), {"rules": [1, 2]})
    assert cleaned == {
        "summary": "It starts in `place_order`. It ends.",
        "rules": [{"n": 1, "rule": "Orders over `MAX_ORDER` are refused."}],
    }
    assert grounding.removed == 3
    assert grounding.ungrounded == ("7", "issue_refund", "notify_customer()")
    assert grounding.checked == 5
