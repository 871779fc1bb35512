"""Calls: resolved to qualified names where scope analysis allows, else kept as text."""

from helpers import facts_of, targets


def test_call_through_self_names_the_method_of_the_class() -> None:
    facts = facts_of("""
        class Repo:
            def save(self): ...
            def run(self):
                self.save()
    """)
    (call,) = facts.calls
    assert (call.caller, call.text, call.target, call.line) == (
        "pkg.mod.Repo.run",
        "self.save",
        "pkg.mod.Repo.save",
        4,
    )


def test_call_through_cls_in_a_classmethod() -> None:
    facts = facts_of("""
        class Repo:
            @classmethod
            def create(cls):
                return cls.build()
    """)
    assert targets(facts) == {"cls.build": "pkg.mod.Repo.build"}


def test_call_to_an_imported_function() -> None:
    facts = facts_of("""
        from pkg.billing import charge
        def pay():
            charge(10)
    """)
    assert targets(facts) == {"charge": "pkg.billing.charge"}


def test_call_to_a_function_defined_later_in_the_module() -> None:
    facts = facts_of("""
        def first():
            return second()
        def second():
            return 2
    """)
    assert targets(facts) == {"second": "pkg.mod.second"}


def test_assignment_alias_is_followed() -> None:
    facts = facts_of("""
        from pkg import util
        run = util.execute
        run()
    """)
    assert targets(facts)["run"] == "pkg.util.execute"


def test_annotated_parameter_types_its_method_calls() -> None:
    facts = facts_of("""
        from pkg.store import Store
        def persist(store: Store, other: "Store | None"):
            store.save()
    """)
    assert targets(facts) == {"store.save": "pkg.store.Store.save"}


def test_instance_attribute_set_through_self_is_followed() -> None:
    facts = facts_of("""
        import httpx
        class Api:
            def __init__(self):
                self.client = httpx.Client()
            def fetch(self):
                return self.client.get("/")
    """)
    assert targets(facts)["self.client.get"] == "httpx.Client.get"


def test_local_variable_shadows_a_module_function() -> None:
    facts = facts_of("""
        def helper(): ...
        def run(helper):
            helper()
    """)
    assert targets(facts) == {"helper": ""}


def test_unresolvable_callee_is_kept_as_text() -> None:
    facts = facts_of("""
        def run(items):
            items[0].close()
            get_handler()()
    """)
    texts = {c.text: c.target for c in facts.calls}
    assert texts == {"items[0].close": "", "get_handler()": "", "get_handler": ""}


def test_builtins_resolve_to_the_builtins_module() -> None:
    assert targets(facts_of("print(len([]))\n")) == {"print": "builtins.print", "len": "builtins.len"}


def test_global_declaration_binds_in_the_module() -> None:
    facts = facts_of("""
        from pkg import factory
        client = None
        def setup():
            global client
            client = factory.Client()
        def use():
            client.send()
    """)
    assert targets(facts)["client.send"] == "pkg.factory.Client.send"
