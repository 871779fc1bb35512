"""Guards (raise, reject, limit, assert) and class fields, read in the facts pass."""

import json

from helpers import RepoFactory, analyze_repo, facts_of

from kbc.domain.codec import dumps, load_as
from kbc.domain.models import ClassField, FileFacts, Guard


def guards(source: str) -> list[Guard]:
    return list(facts_of(source).guards)


def fields(source: str) -> list[ClassField]:
    return list(facts_of(source).fields)


def test_an_if_that_raises_is_a_raise_guard() -> None:
    (guard,) = guards("""
        def pay(amount):
            # amounts are checked first
            if amount <= 0:
                log("refused")
                raise ValueError("amount must be positive")
            return amount
    """)
    assert guard == Guard(
        kind="raise",
        condition="amount <= 0",
        symbol="pkg.mod.pay",
        line=3,
        end_line=5,
        outcome='raise ValueError("amount must be positive")',
        message="amount must be positive",
        limits=(),
    )


def test_raise_messages_from_f_strings_formatting_and_keywords() -> None:
    found = guards("""
        def check(n, user):
            if n > LIMIT: raise TooMany(f"{n} is over {LIMIT!r}") from None
            if not user:
                raise Denied("no user %s" % n)
            if n == 3:
                raise HTTPException(status_code=400, detail="three is " "not allowed")
            if user == "root":
                raise
            if n == 4:
                raise ValueError(_("four is {}").format(n))
    """)
    assert [(g.line, g.end_line, g.message) for g in found] == [
        (2, 2, "{n} is over {LIMIT!r}"),
        (3, 4, "no user %s"),
        (5, 6, "three is not allowed"),
        (7, 8, ""),
        (9, 10, "four is {}"),
    ]
    assert (found[0].condition, found[0].limits) == ("n > LIMIT", ("LIMIT",))
    assert found[0].outcome == 'raise TooMany(f"{n} is over {LIMIT!r}") from None'
    assert found[3].outcome == "raise"
    assert {g.kind for g in found} == {"raise"}


def test_elif_branches_are_guards_with_their_own_test_and_span() -> None:
    found = guards("""
        def grade(score):
            if score < 0:
                raise ValueError("negative")
            # scores past the maximum are refused
            elif score > MAX_SCORE:
                raise ValueError("too high")
            else:
                return score
    """)
    assert [(g.kind, g.condition, g.line, g.end_line, g.limits) for g in found] == [
        ("raise", "score < 0", 2, 3, ()),
        ("raise", "score > MAX_SCORE", 5, 6, ("MAX_SCORE",)),
    ]


def test_a_condition_over_several_lines_is_written_on_one() -> None:
    (guard,) = guards("""
        while (
            queue.size()
            >= MAX_QUEUE  # full
        ):
            wait()
    """)
    assert (guard.condition, guard.line, guard.end_line, guard.limits) == (
        "( queue.size() >= MAX_QUEUE # full )",
        1,
        5,
        ("MAX_QUEUE",),
    )


def test_asserts_are_guards() -> None:
    found = guards("""
        assert VERSION >= 3
        def f(items):
            assert len(items) <= MAX_ITEMS, (
                f"at most {MAX_ITEMS} items"
            )
    """)
    assert [
        (g.kind, g.condition, g.symbol, g.line, g.end_line, g.outcome, g.message, g.limits) for g in found
    ] == [
        ("assert", "VERSION >= 3", "pkg.mod", 1, 1, "assert", "", ("VERSION", "3")),
        (
            "assert",
            "len(items) <= MAX_ITEMS",
            "pkg.mod.f",
            3,
            5,
            "assert",
            "at most {MAX_ITEMS} items",
            ("MAX_ITEMS",),
        ),
    ]


def test_rejections_are_reject_guards() -> None:
    found = guards("""
        def view(request, user, form):
            if user is None:
                return None
            if not user.active:
                return False
            if user.banned:
                return
            if not request.ok:
                return HttpResponseBadRequest("bad request")
            if not form.is_valid():
                return self.form_invalid(form)
            if user.locked:
                return Response({"detail": "locked"}, status=status.HTTP_423_LOCKED)
            if user.gone:
                return jsonify(error="gone"), 410
            if user.blocked:
                abort(403, "blocked")
            if not request.args:
                parser.error("no arguments")
            if request.stop:
                sys.exit(2)
            return user
    """)
    assert [(g.kind, g.outcome, g.message) for g in found] == [
        ("reject", "return None", ""),
        ("reject", "return False", ""),
        ("reject", "return", ""),
        ("reject", 'return HttpResponseBadRequest("bad request")', "bad request"),
        ("reject", "return self.form_invalid(form)", ""),
        ("reject", 'return Response({"detail": "locked"}, status=status.HTTP_423_LOCKED)', ""),
        ("reject", 'return jsonify(error="gone"), 410', "gone"),
        ("reject", 'abort(403, "blocked")', "blocked"),
        ("reject", 'parser.error("no arguments")', "no arguments"),
        ("reject", "sys.exit(2)", ""),
    ]
    assert [g.line for g in found] == [2, 4, 6, 8, 10, 12, 14, 16, 18, 20]


def test_ordinary_branches_are_not_guards() -> None:
    assert (
        guards("""
        def f(x, items):
            if x:
                return x.value
            if items:
                logger.error("items left")
            if x is None:
                x = 0
                return None
            if x == 1 or x != 0 or x > -1 or x <= 1.0 or x == 0x0:
                pass
            for item in items:
                if item in ALLOWED:
                    continue
            while True:
                break
    """)
        == []
    )


def test_comparisons_against_constants_are_limit_guards() -> None:
    found = guards("""
        def retry(attempts, size, config):
            while attempts < config.MAX_RETRIES:
                attempts += 1
            if size > 1_000 and size * 2 <= _HARD_CAP:
                # too big: split it
                for part in split(size):
                    send(part)
            if 0 < size <= MAX_SIZE - 5 or size >= MAX_SIZE:
                size = -2.5
            if size != -3:
                return size
            if status == Status.PAID:
                ship()
    """)
    assert [(g.kind, g.condition, g.line, g.end_line, g.outcome, g.limits) for g in found] == [
        ("limit", "attempts < config.MAX_RETRIES", 2, 3, "attempts += 1", ("config.MAX_RETRIES",)),
        (
            "limit",
            "size > 1_000 and size * 2 <= _HARD_CAP",
            4,
            7,
            "for part in split(size): send(part)",
            ("1_000", "2", "_HARD_CAP"),
        ),
        ("limit", "0 < size <= MAX_SIZE - 5 or size >= MAX_SIZE", 8, 9, "size = -2.5", ("MAX_SIZE", "5")),
        ("limit", "size != -3", 10, 11, "return size", ("-3",)),
        ("limit", "status == Status.PAID", 12, 13, "ship()", ("Status.PAID",)),
    ]


def test_limits_of_raise_and_reject_guards() -> None:
    found = guards("""
        def f(n, user):
            if n > MAX_N or n < -10 or n == 1:
                raise ValueError("out of range")
            if user.age < ADULT_AGE:
                return None
    """)
    assert [(g.kind, g.limits) for g in found] == [("raise", ("MAX_N", "-10")), ("reject", ("ADULT_AGE",))]


def test_guards_belong_to_the_innermost_symbol() -> None:
    found = guards("""
        if DEBUG_LEVEL > 2:
            raise RuntimeError("debug builds only")

        class Account:
            if LIMIT < 10:
                raise ImportError("misconfigured")

            def withdraw(self, amount):
                def check(value):
                    if value > self.balance:
                        raise Overdrawn("not enough money")
                check(amount)
                if amount > DAILY_LIMIT:
                    return None
    """)
    assert [(g.symbol, g.line) for g in found] == [
        ("pkg.mod", 1),
        ("pkg.mod.Account", 5),
        ("pkg.mod.Account.withdraw.check", 10),
        ("pkg.mod.Account.withdraw", 13),
    ]


def test_main_and_type_checking_tests_are_not_guards() -> None:
    found = guards("""
        import sys
        import typing
        from typing import TYPE_CHECKING

        if TYPE_CHECKING:
            raise ImportError("never at run time")
        if typing.TYPE_CHECKING:
            sys.exit(1)

        if __name__ == "__main__":
            if len(sys.argv) > 3:
                sys.exit("too many arguments")
            sys.exit(main())
    """)
    assert [(g.kind, g.condition, g.symbol, g.message) for g in found] == [
        ("reject", "len(sys.argv) > 3", "pkg.mod", "too many arguments")
    ]


def test_long_conditions_and_outcomes_are_shortened() -> None:
    long_name = "a" * 300
    (guard,) = guards(f"""
        if {long_name} > LIMIT:
            raise ValueError({long_name})
    """)
    assert len(guard.condition) == 200 and guard.condition.endswith("…")
    assert len(guard.outcome) == 120 and guard.outcome.endswith("…")


def test_annotated_class_attributes_are_fields() -> None:
    assert fields("""
        @dataclass
        class Order:
            id: int
            lines: list[Line] = field(
                default_factory=list,
            )
            note: str | None = None
    """) == [
        ClassField("pkg.mod.Order", "id", 3, "int", ""),
        ClassField("pkg.mod.Order", "lines", 4, "list[Line]", "field( default_factory=list, )"),
        ClassField("pkg.mod.Order", "note", 7, "str | None", "None"),
    ]


def test_enum_members_and_model_fields_are_fields() -> None:
    assert fields("""
        class Color(Enum):
            __slots__ = ()
            RED = "red"
            GREEN = BLUE = 2

        class Article(models.Model):
            __tablename__ = "article"
            title = models.CharField(max_length=200, help_text="a title that is long enough to be shortened")
            a, b = 1, 2

            class Meta:
                ordering = ["title"]

            def save(self):
                title = "not a field"
    """) == [
        ClassField("pkg.mod.Color", "RED", 3, "", '"red"'),
        ClassField("pkg.mod.Color", "GREEN", 4, "", "2"),
        ClassField("pkg.mod.Color", "BLUE", 4, "", "2"),
        ClassField(
            "pkg.mod.Article",
            "title",
            8,
            "",
            'models.CharField(max_length=200, help_text="a title that is long enough to be s…',
        ),
        ClassField("pkg.mod.Article.Meta", "ordering", 12, "", '["title"]'),
    ]


def test_self_attributes_set_in_init_are_fields_first_assignment_wins() -> None:
    assert fields("""
        class Client:
            timeout: float = 5.0

            def __init__(self, url: str, timeout: float):
                self.url = url
                self.timeout = timeout
                self.session: Session | None = None
                if url:
                    self.url = url.rstrip("/")
                    self.retries = 3
                other.name = url

            def connect(self):
                self.connected = True
    """) == [
        ClassField("pkg.mod.Client", "timeout", 2, "float", "5.0"),
        ClassField("pkg.mod.Client", "url", 5, "", "url"),
        ClassField("pkg.mod.Client", "session", 7, "Session | None", "None"),
        ClassField("pkg.mod.Client", "retries", 10, "", "3"),
    ]


def test_a_file_without_rules_or_classes_has_none() -> None:
    facts = facts_of("""
        import os

        def f(x):
            if x:
                return os.path.join(x, "y")
            return ""
    """)
    assert facts.guards == ()
    assert facts.fields == ()


RULES_AND_FIELDS = """
class Account:
    limit: int = 100

    def __init__(self, owner):
        self.owner = owner

    def withdraw(self, amount):
        if amount > MAX_WITHDRAWAL:
            raise ValueError(f"over {MAX_WITHDRAWAL}")
        assert amount > 0, "positive"
"""


def test_guards_and_fields_survive_the_codec_and_the_store(make_repo: RepoFactory) -> None:
    facts = facts_of(RULES_AND_FIELDS)
    assert [g.kind for g in facts.guards] == ["raise", "assert"]
    assert [f.name for f in facts.fields] == ["limit", "owner"]
    assert load_as(FileFacts, json.loads(dumps(facts))) == facts

    root = make_repo({"pkg/__init__.py": "", "pkg/mod.py": RULES_AND_FIELDS})
    stored = {f.path: f for f in analyze_repo(root).facts()}["pkg/mod.py"]
    assert stored.guards == facts.guards
    assert stored.fields == facts.fields
