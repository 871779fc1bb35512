"""Pull requests for proposals: a proposal's branch, once pushed, opened as a pull request
(GitHub) or merge request (GitLab) with its rationale, and the request's review state read back.

The forge is the user's to configure (``forge.kind``, ``forge.api_base``, ``forge.repository``
and ``forge.token``, all trusted-only): nothing in a repository decides where a token goes.
The token is sent only to ``forge.api_base``, over HTTPS unless that is a loopback address.
Every call is bounded (``TIMEOUT`` seconds, one response of at most ``MAX_RESPONSE`` bytes); a
forge that fails costs the proposal nothing, and the message says what to do. A branch's
request, once read, is kept for ``LOOKUP_SECONDS``: listings asked again and again (a page
reloaded, a metrics scrape) ask the forge once, and one caller at a time waits on it (the
others are told the request is not read yet), so a slow forge holds one thread of a server,
never all of them. What the forge says is shown without the
token (a forge may echo it) and without control characters (a page URL holding a terminal
escape is no URL).
"""

from __future__ import annotations

import json
import re
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field, replace
from typing import Any

from kbc.domain.errors import KbcError
from kbc.domain.places import is_loopback
from kbc.domain.settings import Settings

KINDS = {"github": "https://api.github.com", "gitlab": "https://gitlab.com/api/v4"}
TIMEOUT = 20.0
MAX_RESPONSE = 4_000_000
LOOKED_UP = 50  # open proposals whose requests `kbc proposals` reads, newest first
LOOKUP_SECONDS = 60.0  # how long a branch's request, once read, is taken as the forge's answer
LISTING_SECONDS = 30.0  # a listing asks the forge no more once it has waited this long on it
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_PAGE = re.compile(r"https?://[^\s\x00-\x1f\x7f-\x9f]+")


class ForgeError(KbcError):
    """The forge refused or did not answer."""


class ForgeBusy(ForgeError):
    """Another caller is waiting on the forge: this one does not wait too."""


@dataclass(frozen=True, slots=True)
class Request:
    number: int
    url: str  # the request's page on the forge
    state: str  # open, merged or closed
    review: str = ""  # approved, changes requested, awaiting review, draft (of an open request)

    def said(self) -> str:
        """As a listing shows it: ``#12 open, approved``."""
        return f"#{self.number} {self.state}" + (f", {self.review}" if self.review else "")


@dataclass(frozen=True, slots=True)
class Forge:
    kind: str
    api_base: str
    repository: str
    token: str
    # branch -> (when it was read, its request): what request_for answers for LOOKUP_SECONDS
    _known: dict[str, tuple[float, Request | None]] = field(default_factory=dict, compare=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, compare=False, repr=False)
    # held while a lookup waits on the forge: a slow forge holds one caller, never all of them
    _asking: threading.Lock = field(default_factory=threading.Lock, compare=False, repr=False)

    def _remember(self, branch: str, request: Request | None) -> None:
        with self._lock:
            self._known[branch] = (time.monotonic(), request)

    def open_request(self, branch: str, base: str, title: str, body: str) -> Request:
        """Open the request from ``branch`` into ``base``; one already open for the branch is
        returned as it is."""
        if self.kind == "github":
            owner = self.repository.split("/", 1)[0]
            status, data = self._call(
                "POST",
                f"{self._project()}/pulls",
                {"title": title, "head": branch, "base": base, "body": body},
            )
            if status == 422:  # GitHub's answer when a request for the branch exists
                found = self.request_for(branch)
                if found is not None:
                    return found
                raise ForgeError(
                    f"GitHub refused the pull request: {self._message(data)}",
                    hint=f"check that {base} exists in {self.repository} and {owner} "
                    f"holds the pushed branch {branch}",
                )
        else:
            status, data = self._call(
                "POST",
                f"{self._project()}/merge_requests",
                {
                    "source_branch": branch,
                    "target_branch": base,
                    "title": title,
                    "description": body,
                    "remove_source_branch": True,
                },
            )
            if status == 409:  # GitLab's answer when a request for the branch exists
                found = self.request_for(branch)
                if found is not None:
                    return found
        if status not in (200, 201) or not isinstance(data, dict):
            raise ForgeError(
                f"{self.kind} answered {status} to the new request: {self._message(data)}",
                hint=_hint(status, self),
            )
        made = self._request(data, review=False)
        made = replace(made, review="awaiting review") if made.state == "open" else made
        self._remember(branch, made)
        return made

    def request_for(self, branch: str) -> Request | None:
        """The newest request from ``branch`` (any state), with its review state; None when none
        (as read at most ``LOOKUP_SECONDS`` ago)."""
        with self._lock:
            known = self._known.get(branch)
        if known is not None and time.monotonic() - known[0] < LOOKUP_SECONDS:
            return known[1]
        if not self._asking.acquire(blocking=False):
            raise ForgeBusy(
                "not read yet: the forge is still answering another listing",
                hint="list the proposals again in a moment",
            )
        try:
            found = self._look_up(branch)
        finally:
            self._asking.release()
        self._remember(branch, found)
        return found

    def _look_up(self, branch: str) -> Request | None:
        if self.kind == "github":
            owner = self.repository.split("/", 1)[0]
            query = urllib.parse.urlencode({"head": f"{owner}:{branch}", "state": "all"})
            status, data = self._call("GET", f"{self._project()}/pulls?{query}")
        else:
            query = urllib.parse.urlencode({"source_branch": branch, "state": "all"})
            status, data = self._call("GET", f"{self._project()}/merge_requests?{query}")
        if status != 200 or not isinstance(data, list):
            raise ForgeError(
                f"{self.kind} answered {status} when asked for {branch}'s request: {self._message(data)}",
                hint=_hint(status, self),
            )
        found = [d for d in data if isinstance(d, dict)]
        if not found:
            return None
        newest = max(found, key=lambda d: int(d.get("number", d.get("iid", 0)) or 0))
        return self._request(newest, review=True)

    def close_request(self, branch: str) -> Request | None:
        """Close the open request from ``branch``, if there is one."""
        found = self.request_for(branch)
        if found is None or found.state != "open":
            return found
        if self.kind == "github":
            status, data = self._call("PATCH", f"{self._project()}/pulls/{found.number}", {"state": "closed"})
        else:
            status, data = self._call(
                "PUT", f"{self._project()}/merge_requests/{found.number}", {"state_event": "close"}
            )
        if status != 200 or not isinstance(data, dict):
            raise ForgeError(
                f"{self.kind} answered {status} when closing #{found.number}: {self._message(data)}",
                hint=_hint(status, self),
            )
        closed = self._request(data, review=False)
        self._remember(branch, closed)
        return closed

    # -- the two REST shapes --------------------------------------------------

    def _project(self) -> str:
        if self.kind == "github":
            return f"/repos/{self.repository}"
        return f"/projects/{urllib.parse.quote(self.repository, safe='')}"

    def _request(self, data: dict[str, Any], *, review: bool) -> Request:
        if self.kind == "github":
            number = int(data.get("number", 0) or 0)
            state = "merged" if data.get("merged_at") or data.get("merged") else str(data.get("state", ""))
            said = ""
            if review and state == "open":
                said = "draft" if data.get("draft") else self._github_review(number)
            return Request(number, _page(data.get("html_url")), _CONTROL.sub("", state), said)
        number = int(data.get("iid", 0) or 0)
        given = str(data.get("state", ""))
        state = {"opened": "open", "locked": "open"}.get(given, given)
        said = ""
        if review and state == "open":
            draft = data.get("draft") or data.get("work_in_progress")
            said = "draft" if draft else self._gitlab_review(number)
        return Request(number, _page(data.get("web_url")), _CONTROL.sub("", state), said)

    def _github_review(self, number: int) -> str:
        status, data = self._call("GET", f"{self._project()}/pulls/{number}/reviews?per_page=100")
        if status != 200 or not isinstance(data, list):
            return "review state unknown"
        latest: dict[str, str] = {}  # each reviewer's last word counts
        for review in data:
            if isinstance(review, dict) and review.get("state") in (
                "APPROVED",
                "CHANGES_REQUESTED",
                "DISMISSED",
            ):
                who = str((review.get("user") or {}).get("login", ""))
                latest[who] = str(review["state"])
        if "CHANGES_REQUESTED" in latest.values():
            return "changes requested"
        return "approved" if "APPROVED" in latest.values() else "awaiting review"

    def _gitlab_review(self, number: int) -> str:
        status, data = self._call("GET", f"{self._project()}/merge_requests/{number}/approvals")
        if status != 200 or not isinstance(data, dict):
            return "review state unknown"
        return "approved" if data.get("approved") and data.get("approved_by") else "awaiting review"

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
        """(status, parsed JSON or the text); a forge that cannot be reached raises."""
        headers = {"Accept": "application/json", "User-Agent": "kbc"}
        if self.kind == "github":
            headers.update(
                {
                    "Authorization": f"Bearer {self.token}",
                    "Accept": "application/vnd.github+json",
                    "X-GitHub-Api-Version": "2022-11-28",
                }
            )
        else:
            headers["PRIVATE-TOKEN"] = self.token
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(self.api_base + path, data=data, headers=headers, method=method)
        opener = urllib.request.build_opener(_NoRedirect)  # the token never follows a redirect elsewhere
        try:
            with opener.open(request, timeout=TIMEOUT) as response:
                status, raw = response.status, response.read(MAX_RESPONSE)
        except urllib.error.HTTPError as exc:
            status, raw = exc.code, exc.read(MAX_RESPONSE)
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            raise ForgeError(
                f"the forge at {self.api_base} did not answer: {reason}",
                hint="check forge.api_base and the network",
            ) from None
        try:
            return status, json.loads(raw.decode("utf-8", "replace"))
        except json.JSONDecodeError:
            return status, raw.decode("utf-8", "replace")[:300]

    def _message(self, data: Any) -> str:
        """What the forge said went wrong: at most 300 characters, without the token and
        without control characters."""
        if isinstance(data, dict):
            data = data.get("message") or data.get("error") or data.get("errors") or data
        text = str(data)
        if self.token:
            text = text.replace(self.token, "***")
        return _CONTROL.sub(" ", text)[:300]


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def _page(url: Any) -> str:
    """A request's page as the forge gives it, if it is a plain http(s) URL; else nothing."""
    text = str(url or "")
    return text if _PAGE.fullmatch(text) else ""


def _hint(status: int, forge: Forge) -> str:
    if status in (401, 403):
        return (
            f"check forge.token (KBC_FORGE_TOKEN): it must be allowed to open requests on {forge.repository}"
        )
    if status == 404:
        return f"check forge.repository ({forge.repository}) and forge.api_base ({forge.api_base})"
    return "try again; the forge may be busy"


def forge_from(settings: Settings) -> Forge | None:
    """The configured forge, or None when ``forge.kind`` is empty. A forge half configured, an
    unknown kind or a token bound for plain HTTP beyond loopback is a clear error."""
    kind = settings.forge_kind.strip().lower()
    if not kind:
        return None
    if kind not in KINDS:
        raise KbcError(
            f"forge.kind {settings.forge_kind!r} is not one kbc knows", hint="set github or gitlab"
        )
    missing = [
        name
        for name, value in (
            ("forge.repository", settings.forge_repository),
            ("forge.token (or KBC_FORGE_TOKEN)", settings.forge_token),
        )
        if not value.strip()
    ]
    if missing:
        raise KbcError(
            f"forge.kind is {kind} but {' and '.join(missing)} is not set",
            hint="set them in your kbc configuration or the environment, or unset forge.kind",
        )
    base = (settings.forge_api_base.strip() or KINDS[kind]).rstrip("/")
    parsed = urllib.parse.urlsplit(base)
    if parsed.scheme not in ("https", "http") or not parsed.hostname:
        raise KbcError(f"forge.api_base {base!r} is not an http(s) URL", hint=f"e.g. {KINDS[kind]}")
    if parsed.scheme == "http" and not is_loopback(parsed.hostname):
        raise KbcError(
            f"forge.api_base {base!r} would send the token unencrypted",
            hint="use https (plain http is allowed on loopback only)",
        )
    return Forge(kind, base, settings.forge_repository.strip().strip("/"), settings.forge_token.strip())
