"""Small corpora the slice tests build: a library of independent utility modules (one of which
keeps an older copy of another's class), and a team's notes beside it."""

from __future__ import annotations

LICENCE = """\
# Copyright 2021 The Toolbelt Authors
#
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file
# except in compliance with the License. You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software distributed under the
# License is distributed on an "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND,
# either express or implied. See the License for the specific language governing permissions
# and limitations under the License.

"""

_MULTIDICT = '''
class OrderedMultiDict(dict):
    """A dict that keeps every value given for a key, in the order they were added."""

    def __init__(self, *args, **kwargs):
        super().__init__()
        self._order = []
        for key, value in dict(*args, **kwargs).items():
            self.add(key, value)

    def add(self, key, value):
        """Add ``value`` under ``key``, keeping the values already there."""
        super().setdefault(key, []).append(value)
        self._order.append(key)

    def getlist(self, key, default=None):
        """Every value of ``key``, oldest first."""
        return list(super().get(key, default or []))

    def poplast(self, key):
        """Remove and return the newest value of ``key``."""
        values = super().__getitem__(key)
        value = values.pop()
        if not values:
            super().__delitem__(key)
        for index in range(len(self._order) - 1, -1, -1):
            if self._order[index] == key:
                del self._order[index]
                break
        return value

    def items(self, multi=False):
        """The pairs in insertion order; with ``multi``, every value of every key."""
        seen = set()
        for key in self._order:
            if multi:
                yield key, super().__getitem__(key)
            elif key not in seen:
                seen.add(key)
                yield key, super().__getitem__(key)[-1]
'''

TOOLBELT: dict[str, str] = {
    "README.md": """\
        # toolbelt

        Independent utility modules: durations, caching, retries, multi-valued dicts, URLs,
        text and a tiny HTTP session. Each module stands alone.
        """,
    "pyproject.toml": '[project]\nname = "toolbelt"\nversion = "1.4.0"\n',
    "toolbelt/__init__.py": LICENCE + '"""toolbelt: independent utility modules."""\n',
    "toolbelt/durations.py": LICENCE
    + '''"""Durations written as text: "1h30m", "45s", "2d"."""

import re

_PART = re.compile(r"(\\d+)([dhms])")
_SECONDS = {"d": 86400, "h": 3600, "m": 60, "s": 1}


def parse_duration(text):
    """The number of seconds ``text`` names, or None when it names none."""
    parts = _PART.findall(text.strip().lower())
    if not parts:
        return None
    return sum(int(amount) * _SECONDS[unit] for amount, unit in parts)


def format_duration(seconds):
    """Seconds written back as text, largest unit first."""
    out = []
    for unit, size in _SECONDS.items():
        amount, seconds = divmod(seconds, size)
        if amount:
            out.append(f"{amount}{unit}")
    return "".join(out) or "0s"
''',
    "toolbelt/cache.py": LICENCE
    + '''"""A least-recently-used cache with a size limit."""

from collections import OrderedDict


class LRUCache:
    """Keeps the ``maxsize`` most recently used entries."""

    def __init__(self, maxsize=128):
        self.maxsize = maxsize
        self._data = OrderedDict()
        self.hits = self.misses = 0

    def get(self, key, default=None):
        if key in self._data:
            self._data.move_to_end(key)
            self.hits += 1
            return self._data[key]
        self.misses += 1
        return default

    def set(self, key, value):
        self._data[key] = value
        self._data.move_to_end(key)
        while len(self._data) > self.maxsize:
            self._data.popitem(last=False)
''',
    "toolbelt/retry.py": LICENCE
    + '''"""Retrying a call with exponential backoff."""

import time


def backoff_delays(attempts, base=0.5, factor=2.0, limit=30.0):
    """The delay before each retry: base, base*factor, ... never above ``limit``."""
    return [min(limit, base * factor**n) for n in range(attempts)]


def retry(call, attempts=3, exceptions=(Exception,), sleep=time.sleep):
    """Call ``call`` until it succeeds or ``attempts`` are spent, sleeping between tries."""
    for delay in [*backoff_delays(attempts - 1), None]:
        try:
            return call()
        except exceptions:
            if delay is None:
                raise
            sleep(delay)
''',
    "toolbelt/http.py": LICENCE
    + '''"""A tiny HTTP session: cookies and headers kept across requests."""

from urllib.request import Request, urlopen


class Session:
    """Keeps cookies and default headers between requests to the same service."""

    def __init__(self, headers=None, timeout=10):
        self.headers = dict(headers or {})
        self.cookies = {}
        self.timeout = timeout

    def request(self, method, url, body=None):
        """Send a request with the session's headers and cookies; remember the cookies set."""
        headers = dict(self.headers)
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        with urlopen(Request(url, data=body, headers=headers, method=method), timeout=self.timeout) as reply:
            for value in reply.headers.get_all("Set-Cookie") or []:
                name, _, rest = value.partition("=")
                self.cookies[name.strip()] = rest.split(";", 1)[0]
            return reply.status, reply.read()
''',
    "toolbelt/dictutils.py": LICENCE
    + '"""Dicts that keep more than one value per key."""\n\n__all__ = ["OrderedMultiDict"]\n\n'
    + _MULTIDICT,
    "toolbelt/urlutils.py": LICENCE
    + '''"""Query strings parsed into multi-valued dicts."""

from urllib.parse import parse_qsl


def parse_query(text):
    """The query string's pairs, every value of a repeated key kept."""
    found = OrderedMultiDict()
    for key, value in parse_qsl(text, keep_blank_values=True):
        found.add(key, value)
    return found


# A copy of toolbelt.dictutils.OrderedMultiDict, kept here so urlutils stands alone
# (copied 2019-03; dictutils has the fixes since).
'''
    + _MULTIDICT,
    "toolbelt/textutils.py": LICENCE
    + '''"""Text helpers: slugs and truncation."""

import re


def slugify(text, separator="-"):
    """Lower-case words of ``text`` joined by ``separator``."""
    return separator.join(re.findall(r"[a-z0-9]+", text.lower()))


def truncate(text, width, ellipsis="..."):
    """``text`` cut to ``width`` characters, the cut marked."""
    return text if len(text) <= width else text[: max(0, width - len(ellipsis))] + ellipsis
''',
    "tests/test_durations.py": """\
        from toolbelt.durations import format_duration, parse_duration


        def test_parse_duration_reads_hours_and_minutes():
            assert parse_duration("1h30m") == 5400


        def test_format_duration_writes_the_largest_unit_first():
            assert format_duration(5400) == "1h30m"
        """,
    "tests/test_dictutils.py": """\
        from toolbelt.dictutils import OrderedMultiDict


        def test_poplast_removes_the_newest_value():
            d = OrderedMultiDict()
            d.add("a", 1)
            d.add("a", 2)
            assert d.poplast("a") == 2
        """,
}

NOTES: dict[str, str] = {
    "domain/refunds.md": """\
        # Refunds

        Members may ask for a refund within 90 days of delivery; others within 30 days.
        A refund goes back to the card that paid; store credit only when the card has expired.
        """,
    "domain/shipping.md": """\
        # Shipping

        Orders placed before 2 pm ship the same working day. Free shipping starts at 50 euros.
        Parcels to islands take two extra days.
        """,
    "domain/loyalty.md": """\
        # Loyalty points

        One point per euro spent; points expire after 12 months without a purchase.
        Members see their points on the account page.
        """,
    "domain/invoices.md": """\
        # Invoices

        Invoices are numbered per year without gaps. A corrected invoice cancels the old one.
        """,
    "conventions/reviews.md": """\
        # Code reviews

        Every change needs one approval; changes to payments need two.
        Reviewers answer within one working day.
        """,
    "conventions/testing.md": """\
        # Testing

        New code comes with tests. Integration tests run against a database in a container.
        """,
    "conventions/naming.md": """\
        # Naming

        Modules are nouns, functions are verbs. Flags start with is_ or has_.
        """,
    "ops/oncall.md": """\
        # On call

        The on-call engineer answers pages within 15 minutes, day and night.
        Escalate to the team lead after 30 minutes without progress.
        """,
    "ops/releases.md": """\
        # Releases

        We release on Tuesdays and Thursdays. No release after 3 pm or on Fridays.
        """,
    "ops/backups.md": """\
        # Backups

        Databases are backed up every night and kept for 35 days; a restore is tested monthly.
        """,
}
