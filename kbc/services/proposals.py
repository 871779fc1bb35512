"""Proposals: an agent suggests a change to team knowledge; kbc makes it a git branch, and a
person merges it (or not). kbc never writes the knowledge itself.

A proposal is one commit, built from git objects on top of the knowledge root's followed
branch and stored on a new branch ``kbc/proposal-<id>``: kbc writes a blob, a tree (through
an index file of its own) and a commit, then creates the branch. The work tree, the index,
HEAD and the followed branch never change, so neither does what kbc indexes, until a person
merges. With a remote configured, the branch is pushed there.

Only Markdown under a knowledge root may be proposed; paths are confined as files served
are; credentials are redacted before anything is committed. A proposal is *open* while its
branch is not merged, *merged* once its commit is reachable from the followed branch (or the
followed branch holds exactly its text), *closed* once ``close`` moved its branch aside to
``refs/kbc/closed/``.
"""

from __future__ import annotations

import re
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from kbc.analyzers.gitrepo import GitFailed, git, git_failure, git_ok, work_tree
from kbc.analyzers.knowledge import MARKDOWN, split_indexed
from kbc.analyzers.secrets import redact
from kbc.domain.errors import KbcError, NotFound, PathRefused
from kbc.services.forge import LISTING_SECONDS, LOOKED_UP, Forge, ForgeError
from kbc.services.team import Manifest, RootRecord

BRANCHES = "refs/heads/kbc/"
CLOSED = "refs/kbc/closed/"
PREFIX = "proposal-"
MAX_CONTENT = 1_000_000  # characters of a proposed document
AUTHOR_EMAIL = "kbc@proposals.invalid"


@dataclass(frozen=True, slots=True, kw_only=True)
class Proposal:
    id: str
    root: str  # the knowledge root's name
    path: str  # the document, relative to the root
    branch: str  # kbc/proposal-<id>
    commit: str
    base: str  # the followed branch's head it was built on
    status: str  # open, merged or closed
    author: str
    rationale: str
    date: str  # ISO 8601 of its commit
    pushed: bool = False
    redacted: int = 0  # credentials replaced in the proposed text
    # With a forge configured: the pull (merge) request's page, its state as a listing says it
    # ("#12 open, approved"), or why there is none
    request: str = ""
    review: str = ""
    request_error: str = ""


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_UNPRINTABLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # tabs and newlines are text


def printable(text: str) -> str:
    """``text`` without control characters (a terminal escape, a bell) but its tabs and line
    breaks: what a proposer wrote is shown, never run by a terminal."""
    return _UNPRINTABLE.sub("", text)


def _root_and_path(manifest: Manifest, given: str) -> tuple[RootRecord, str]:
    """The knowledge root a proposal's ``path`` names, and the path inside it (confined)."""
    if not manifest.roots:
        raise KbcError("no knowledge root to propose to", hint="configure [[knowledge]] and `kbc build`")
    raw = given.strip()
    indexed = split_indexed(raw)
    if indexed is not None:  # as retrieval shows it: @knowledge/<root>/<path>
        name, rest = indexed
    elif len(manifest.roots) == 1:  # relative to the one root
        name, rest = manifest.roots[0].name, raw
    else:  # prefixed by the root's name
        name, _, rest = raw.partition("/")
    root = manifest.root(name)
    if root is None:
        names = ", ".join(r.name for r in manifest.roots)
        raise PathRefused(
            f"{given}: no knowledge root named {name!r}", hint=f"prefix the path with a root's name: {names}"
        )
    pure = PurePosixPath(rest.replace("\\", "/"))
    if not rest or pure.is_absolute() or rest.startswith("~"):
        raise PathRefused(f"{given!r}: give a path relative to the knowledge root")
    if _CONTROL.search(rest):
        raise PathRefused(
            f"{given!r}: a path with control characters (a newline, an escape) is refused",
            hint="name the document with printable characters",
        )
    if ".." in pure.parts or any(part.startswith(".") for part in pure.parts):
        raise PathRefused(f"{given}: paths that climb out ('..') or into hidden folders are refused")
    if pure.suffix.lower() not in MARKDOWN:
        raise PathRefused(f"{given}: only Markdown documents (.md) may be proposed")
    return root, pure.as_posix()


def _repository(root: RootRecord) -> tuple[Path, str]:
    """The knowledge root's git work tree and the root's folder inside it ('' at its top)."""
    folder = Path(root.folder)
    top = work_tree(folder)
    if top is None:
        raise KbcError(
            f"knowledge root {root.name!r} is not a git repository, so nothing can be proposed",
            hint="keep the knowledge in git: proposals are branches",
        )
    inside = folder.resolve().relative_to(top.resolve()).as_posix()
    return top, "" if inside == "." else inside


def _followed(top: Path, root: RootRecord) -> str:
    """The followed branch's ref: the root's branch (for a clone, its remote's), else HEAD's."""
    branch = (
        root.branch
        if root.branch and root.branch != "HEAD"
        else git(top, "symbolic-ref", "--short", "HEAD", check=False).strip()
    )
    if not branch:
        raise KbcError(f"knowledge root {root.name!r} has no branch checked out", hint="check out a branch")
    return f"refs/heads/{branch}"


def propose(
    manifest: Manifest,
    path: str,
    *,
    content: str | None = None,
    diff: str | None = None,
    rationale: str,
    author: str,
    forge: Forge | None = None,
) -> Proposal:
    """One commit proposing ``content`` (the whole new document) or ``diff`` (a unified diff of
    it) for ``path``, on a new branch; nothing else in the repository changes. With a
    ``forge``, the pushed branch is opened as a pull (merge) request there."""
    if (content is None) == (diff is None):
        raise KbcError("give the new document as content, or its change as diff (one of them)")
    if not rationale.strip() or not author.strip():
        raise KbcError("a proposal needs a rationale and an author", hint="say why, and who proposes")
    root, inner = _root_and_path(manifest, path)
    top, folder = _repository(root)
    in_repo = f"{folder}/{inner}" if folder else inner
    followed = _followed(top, root)
    try:
        base = git(top, "rev-parse", "--verify", f"{followed}^{{commit}}").strip()
        current = git(top, "show", f"{base}:{in_repo}", check=False) if _exists(top, base, in_repo) else None
        text = content if content is not None else _apply(top, base, in_repo, current, diff or "")
        if len(text) > MAX_CONTENT:
            raise KbcError(f"the proposed document has {len(text)} characters; at most {MAX_CONTENT}")
        cleaned = redact(str(top / in_repo), text, "markdown", where=in_repo)
        if current is not None and cleaned.text == current:
            raise KbcError(f"{path}: the proposal changes nothing", hint="propose different text")
        commit = _commit(top, base, in_repo, cleaned.text, rationale, author, root.name, inner)
        short = commit[:10]
        branch = f"kbc/{PREFIX}{short}"
        git(top, "update-ref", f"refs/heads/{branch}", commit, "")  # "": create, never move one
        pushed = _push(top, branch)
    except GitFailed as exc:
        raise KbcError(f"git refused the proposal: {git_failure(exc.stderr)}") from None
    made = Proposal(
        id=short,
        root=root.name,
        path=inner,
        branch=branch,
        commit=commit,
        base=base,
        status="open",
        author=author.strip(),
        rationale=rationale.strip(),
        date=git(top, "show", "-s", "--format=%cI", commit).strip(),
        pushed=pushed,
        redacted=len(cleaned.findings),
    )
    return _opened(made, forge, followed.removeprefix("refs/heads/")) if forge is not None else made


def _opened(made: Proposal, forge: Forge, base: str) -> Proposal:
    """``made`` with the request the forge opened for its branch, or why none was opened (the
    proposal stands either way)."""
    if not made.pushed:
        return replace(
            made,
            request_error="the knowledge root has no remote, so no request was opened; "
            "add one and push the branch, then open it on the forge",
        )
    body = (
        f"{redact('rationale.md', made.rationale, 'markdown').text}\n\n---\nProposed by "
        f"{' '.join(printable(made.author).split())[:100]} through kbc: `{made.root}/{made.path}`, "
        f"commit {made.commit[:12]} on {made.base[:12]}.\n"
    )
    try:
        found = forge.open_request(made.branch, base, f"Proposed: {made.path}", body)
    except ForgeError as exc:
        return replace(
            made,
            request_error=f"{exc.message} ({exc.hint}); the branch {made.branch} is pushed: "
            "open the request on the forge by hand",
        )
    return replace(made, request=found.url, review=found.said())


def _exists(top: Path, commit: str, path: str) -> bool:
    return bool(git(top, "ls-tree", "--name-only", commit, "--", path, check=False).strip())


def _apply(top: Path, base: str, in_repo: str, current: str | None, diff: str) -> str:
    """The document after ``diff`` (a unified diff of it, as `diff -u` or `git diff` write it),
    applied to a copy outside the knowledge repository: nothing the diff holds is written
    into its object store before it is redacted."""
    if current is None:
        raise KbcError(f"{in_repo} does not exist yet: propose it whole, as content")
    with tempfile.TemporaryDirectory(prefix="kbc-propose-") as scratch:
        copy = Path(scratch) / "tree"
        document = copy / in_repo
        document.parent.mkdir(parents=True)
        document.write_text(current, encoding="utf-8", newline="")
        patch = _retarget(diff, in_repo)
        try:
            git(copy, "apply", "--recount", "-", given=patch, env={"GIT_CEILING_DIRECTORIES": scratch})
        except GitFailed as exc:
            raise KbcError(
                f"the diff does not apply to {in_repo} at the followed branch: {git_failure(exc.stderr)}",
                hint="diff against the document as it is now, or propose the whole document as content",
            ) from None
        return document.read_text(encoding="utf-8", errors="replace")


def _retarget(diff: str, in_repo: str) -> str:
    """``diff`` with its file headers naming ``in_repo``, whatever path it was written against:
    a proposal changes one document, and only that one."""
    lines = diff.splitlines(keepends=True)
    first_hunk = next((i for i, line in enumerate(lines) if line.startswith("@@")), None)
    if first_hunk is None:
        raise KbcError("the diff has no hunk (no line starting with @@)", hint="send a unified diff")
    body = lines[first_hunk:]
    if any(
        line.startswith("diff --git") or (line.startswith("+++ ") and lines[i - 1].startswith("--- "))
        for i, line in enumerate(body, first_hunk)
        if i > first_hunk
    ):
        raise KbcError("the diff changes more than one file; a proposal changes one document")
    text = "".join([f"--- a/{in_repo}\n", f"+++ b/{in_repo}\n", *body])
    return text if text.endswith("\n") else text + "\n"


def _commit(
    top: Path, base: str, in_repo: str, text: str, rationale: str, author: str, root: str, inner: str
) -> str:
    with tempfile.TemporaryDirectory(prefix="kbc-propose-") as scratch:
        env = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
        git(top, "read-tree", base, env=env)
        blob = git(top, "hash-object", "-w", "--stdin", given=text).strip()
        git(top, "update-index", "--add", "--cacheinfo", f"100644,{blob},{in_repo}", env=env)
        tree = git(top, "write-tree", env=env).strip()
    name = " ".join(printable(author).split())[:100]
    who = {
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": AUTHOR_EMAIL,
        "GIT_COMMITTER_NAME": "kbc",
        "GIT_COMMITTER_EMAIL": AUTHOR_EMAIL,
    }
    message = (
        f"Proposed: {inner}\n\n{printable(rationale).strip()}\n\nKbc-Proposal: {root}/{inner}\n"
        f"Proposed-By: {name}\n"
    )
    return git(top, "commit-tree", tree, "-p", base, "-F", "-", given=message, env=who).strip()


def _push(top: Path, branch: str) -> bool:
    """Push the branch when the repository has a remote ``origin``; False when it has none."""
    remotes = git(top, "remote", check=False).split()
    if not remotes:
        return False
    remote = "origin" if "origin" in remotes else remotes[0]
    git(top, "push", "-q", remote, f"refs/heads/{branch}:refs/heads/{branch}")
    return True


def proposals(manifest: Manifest, forge: Forge | None = None) -> list[Proposal]:
    """Every proposal of every knowledge root, newest first; with a ``forge``, the open ones
    (the newest ``LOOKED_UP``) with their requests' review state."""
    found: list[Proposal] = []
    for root in manifest.roots:
        try:
            top, folder = _repository(root)
            followed = _followed(top, root)
        except KbcError:
            continue
        records = git(
            top,
            "for-each-ref",
            "--format=%(refname)%00%(objectname)",
            BRANCHES + PREFIX + "*",
            CLOSED + PREFIX + "*",
            check=False,
        )
        for line in records.splitlines():
            ref, _, commit = line.partition("\0")
            found.append(_read(top, folder, followed, root.name, ref, commit))
    ordered = sorted(found, key=lambda p: (p.date, p.id), reverse=True)
    return _reviewed(ordered, forge) if forge is not None else ordered


def _reviewed(found: list[Proposal], forge: Forge) -> list[Proposal]:
    """``found`` with each open proposal's request as the forge has it (a forge that fails is
    said once, on every proposal it left unread)."""
    out: list[Proposal] = []
    failed = ""
    asked = 0
    deadline = time.monotonic() + LISTING_SECONDS
    for proposal in found:
        if proposal.status != "open":
            out.append(proposal)
            continue
        if not failed and time.monotonic() > deadline:
            failed = f"not read: the forge took over {LISTING_SECONDS:.0f} s for this listing's first ones"
        if failed or asked >= LOOKED_UP:
            out.append(
                replace(
                    proposal,
                    request_error=failed
                    or f"not read: only the newest {LOOKED_UP} open proposals are looked up",
                )
            )
            continue
        asked += 1
        try:
            request = forge.request_for(proposal.branch)
        except ForgeError as exc:
            failed = exc.message
            out.append(replace(proposal, request_error=failed))
            continue
        if request is None:
            out.append(replace(proposal, review="no request"))
        elif request.state in ("merged", "closed"):  # settled on the forge: so is the proposal
            out.append(replace(proposal, status=request.state, request=request.url, review=request.said()))
        else:
            out.append(replace(proposal, request=request.url, review=request.said()))
    return out


def _read(top: Path, folder: str, followed: str, root: str, ref: str, commit: str) -> Proposal:
    body = git(top, "show", "-s", "--format=%an%x00%cI%x00%P%x00%B", commit)
    author, date, parents, message = (body.split("\0") + ["", "", "", ""])[:4]
    # What it changed is read from its tree, never from its message, which quotes a rationale.
    changed = git(top, "diff-tree", "--no-commit-id", "--name-only", "-r", "-z", commit, check=False)
    paths = [p for p in changed.split("\0") if p]
    in_repo = paths[0] if len(paths) == 1 else ""
    inner = in_repo[len(folder) + 1 :] if folder and in_repo.startswith(folder + "/") else in_repo
    body_text = message.split("\n\n", 1)[1] if "\n\n" in message else ""
    rationale = body_text.rsplit("\n\nKbc-Proposal:", 1)[0].strip()
    short = ref.rsplit(PREFIX, 1)[-1]
    if ref.startswith(CLOSED):
        status = "closed"
    elif _merged(top, commit, followed, in_repo):
        status = "merged"
    else:
        status = "open"
    return Proposal(
        id=short,
        root=root,
        path=printable(inner),
        branch=f"kbc/{PREFIX}{short}",
        commit=commit,
        base=parents.split()[0] if parents else "",
        status=status,
        author=" ".join(printable(author).split()),
        rationale=printable(rationale),
        date=date.strip(),
    )


def _merged(top: Path, commit: str, followed: str, in_repo: str) -> bool:
    if git_ok(top, "merge-base", "--is-ancestor", commit, followed):
        return True
    proposed = git(top, "rev-parse", f"{commit}:{in_repo}", check=False).strip()
    now = git(top, "rev-parse", f"{followed}:{in_repo}", check=False).strip()
    return bool(proposed) and proposed == now  # squashed or cherry-picked: the text is there


def find(manifest: Manifest, proposal_id: str) -> Proposal:
    wanted = proposal_id.strip().removeprefix(PREFIX).removeprefix("kbc/" + PREFIX)
    for found in proposals(manifest):
        if found.id == wanted or found.branch == proposal_id.strip():
            return found
    raise NotFound(f"no proposal {proposal_id!r}", hint="`kbc proposals` lists them")


def close(manifest: Manifest, proposal_id: str, forge: Forge | None = None) -> Proposal:
    """Set a proposal aside: its branch moves to refs/kbc/closed/ (kept, no longer listed open);
    with a ``forge``, its open request there is closed too."""
    found = find(manifest, proposal_id)
    if found.status == "closed":
        return found
    root = manifest.root(found.root)
    assert root is not None
    top, _ = _repository(root)
    closed = f"{CLOSED}{PREFIX}{found.id}"
    git(top, "update-ref", closed, found.commit, "")
    git(top, "update-ref", "-d", f"refs/heads/{found.branch}", found.commit)
    closed_one = Proposal(
        id=found.id,
        root=found.root,
        path=found.path,
        branch=found.branch,
        commit=found.commit,
        base=found.base,
        status="closed",
        author=found.author,
        rationale=found.rationale,
        date=found.date,
    )
    if forge is None:
        return closed_one
    try:
        request = forge.close_request(found.branch)
    except ForgeError as exc:
        return replace(closed_one, request_error=f"{exc.message}: close its request on the forge by hand")
    if request is None:
        return closed_one
    return replace(closed_one, request=request.url, review=request.said())


def diff_of(manifest: Manifest, found: Proposal) -> str:
    """What the proposal changes, as a unified diff."""
    root = manifest.root(found.root)
    assert root is not None
    top, _ = _repository(root)
    return git(top, "diff", "--no-color", "--no-ext-diff", f"{found.commit}^", found.commit)
