"""An issue report read apart from its template."""

from kbc.retrieval.report import clean_report, is_version_line

REPORT = """\
<!-- Please search existing issues before filing. Fill in every section. -->
### Bug description

`Session.resolve_redirects` drops the `Authorization` header on a 307 redirect.

- [x] I have searched the existing issues

### Steps to reproduce

```python
import requests
requests.get("https://example.org/redirect", headers={"Authorization": "x"})
```

```
Traceback (most recent call last):
  File "requests/sessions.py", line 161, in resolve_redirects
KeyError: 'Authorization'
```

### Expected behavior

The header is kept.

### Environment

- OS: Ubuntu 22.04
- Python version: 3.11.4
- requests 2.31.0

```
$ pip freeze
certifi==2023.7.22
urllib3==2.0.4
```

### Additional context

_No response_
"""


def test_the_template_goes_and_the_reporters_words_stay() -> None:
    cleaned = clean_report(REPORT)
    for kept in (
        "`Session.resolve_redirects` drops the `Authorization` header",
        'requests.get("https://example.org/redirect"',
        'File "requests/sessions.py", line 161',
        "KeyError: 'Authorization'",
        "The header is kept.",
    ):
        assert kept in cleaned
    for gone in (
        "Please search",
        "Bug description",
        "Steps to reproduce",
        "Expected behavior",
        "I have searched",
        "Ubuntu",
        "3.11.4",
        "2.31.0",
        "certifi",
        "pip freeze",
        "No response",
        "Environment",
        "Additional context",
    ):
        assert gone not in cleaned
    assert cleaned.count("\n") == REPORT.count("\n")  # lines keep their numbers


def test_a_heading_keeps_its_code_and_a_sentence_keeps_its_version() -> None:
    cleaned = clean_report("## `Flask.run` ignores `debug`\nSince flask version 2.2.0 the flag is lost.\n")
    assert cleaned.splitlines() == ["Flask.run debug", "Since flask version 2.2.0 the flag is lost."]
    assert is_version_line("platform linux -- Python 3.9.1, pytest-6.2.1, py-1.10.0, pluggy-0.13.1")
    assert is_version_line("pylint 2.12.2") and is_version_line("numpy==1.26.0")
    assert not is_version_line("This works with 2.8.1, but not with 2.9 when the body is bytes.")
    assert is_version_line("- Python version: 3.11.4") and is_version_line("OS: Ubuntu 20.04")


def test_a_short_task_that_names_a_version_is_read_whole() -> None:
    for task in (
        "update identifier pattern for Python 3.10",
        "drop support for Python 3.7",
        "fix test_package_zip_list on 3.13",
    ):
        assert not is_version_line(task)
        assert clean_report(task) == task
    # Nothing but a version: nothing else to read, so the text is read as it is.
    assert clean_report("3.13") == "3.13"


def test_a_report_without_a_template_keeps_every_line_but_its_fences() -> None:
    text = "Refunds after 30 days are accepted.\n\n```python\nrefund(order, days=45)\n```\n"
    assert clean_report(text) == text.replace("```python", "").replace("```", "")
