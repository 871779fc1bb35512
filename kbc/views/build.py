"""The views pass: facts views from the code, prose from the LLM (cached) or docstrings, grounded.

One failed LLM call costs only that view's prose: the view keeps its facts and falls
back to docstrings, the failure is reported, and the next build asks again.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any

from kbc.analyzers.secrets import redact
from kbc.domain.errors import LLMError
from kbc.domain.models import EntryPoint
from kbc.domain.progress import Counting
from kbc.domain.views import Provenance, View, ViewKind
from kbc.graph.components import is_component
from kbc.store.prose_cache import ProseCache, prose_key
from kbc.views.context import Context
from kbc.views.domain import business_rules_facts, domain_concepts_facts, edges_into, integrations_facts
from kbc.views.features import library_features
from kbc.views.flows import (
    communities,
    community_lead,
    dominant,
    feature_facts_for_community,
    feature_facts_for_entries,
    feature_groups,
    workflow_entries,
    workflow_facts,
    workflow_id,
)
from kbc.views.grounding import KnownNames, ground, known_from_facts
from kbc.views.llm import Interpreter
from kbc.views.prose import PROMPT_VERSION, from_docstrings, is_empty, messages, parse_reply, repair_messages
from kbc.views.structure import architecture_facts, entry_points_facts, module_facts


@dataclass(frozen=True, slots=True)
class Draft:
    id: str
    kind: ViewKind
    title: str
    facts: dict[str, Any]
    docs: tuple[str, ...] = ()  # docstrings for the no-LLM prose that the facts do not carry

    @property
    def facts_hash(self) -> str:
        return hashlib.sha256(json.dumps(self.facts, sort_keys=True).encode()).hexdigest()


@dataclass(slots=True)
class ViewsSummary:
    views: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)
    by_source: dict[str, int] = field(default_factory=dict)
    model: str = ""
    llm_calls: int = 0
    cached: int = 0
    repaired: int = 0
    failed: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    ungrounded: int = 0  # sentences and items removed by the grounding check
    errors: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _Outcome:
    interpretation: dict[str, Any] | None = None
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    repaired: bool = False
    error: str = ""


def _package_doc(context: Context) -> str:
    """The docstring of the main package, or under a namespace package (``acme/`` with no
    ``__init__``) of its shallowest package that has one; else what the README or the docs
    index says first (:mod:`kbc.analyzers.project_docs`), never one module's docstring."""
    packages = Counter(f.module.split(".")[0] for f in context.source_files() if f.module)
    for name, _ in sorted(packages.items(), key=lambda kv: (-kv[1], kv[0])):
        own = context.module_path.get(name)
        if own is not None and context.files[own].is_package:
            return context.files[own].doc or context.docs.summary  # never a subpackage's
        inside = sorted(
            (m for m in context.module_path if m == name or m.startswith(f"{name}.")),
            key=lambda m: (m.count("."), m),
        )
        for module in inside:
            facts = context.files[context.module_path[module]]
            if facts.is_package and facts.doc:
                return facts.doc
    return context.docs.summary


def plan_views(context: Context) -> list[Draft]:
    """Every view's facts, in id order."""
    repo = context.repository()
    drafts = [
        Draft(
            "architecture",
            "architecture",
            f"Architecture of {repo}",
            architecture_facts(context),
            (_package_doc(context),),
        ),
        Draft("entry_points", "entry_points", "Entry points", entry_points_facts(context)),
        Draft("integrations", "integrations", "Integrations", integrations_facts(context)),
    ]
    calls_into = edges_into(context)
    for name in sorted(context.groups):
        drafts.append(
            Draft(f"module:{name}", "module", _module_title(context, name), module_facts(context, name))
        )
        concepts = domain_concepts_facts(context, name, calls_into)
        if concepts["concepts"]:
            drafts.append(
                Draft(f"domain_concepts:{name}", "domain_concepts", f"Domain concepts of {name}", concepts)
            )
        rules = business_rules_facts(context, name)
        if rules["rules"]:
            drafts.append(
                Draft(f"business_rules:{name}", "business_rules", f"Business rules of {name}", rules)
            )
    by_group = feature_groups(context)
    library = library_features(context, by_group)
    for feature in library:
        drafts.append(
            Draft(f"feature:{feature.group}", "feature", feature.title, feature.facts, (feature.doc,))
        )
    if library:
        featured = {feature.group for feature in library}
        for name, entries in sorted(by_group.items()):
            if name in featured or all(e.kind == "public_api" for e in entries):
                continue  # a library module's flows are its feature's; commands make their own
            docs = tuple(dict.fromkeys(d for e in entries if (d := _doc_of(context, e.target))))
            facts = feature_facts_for_entries(context, name, entries)
            drafts.append(Draft(f"feature:{name}", "feature", f"Feature: {name}", facts, docs))
    elif by_group:
        for name, entries in sorted(by_group.items()):
            docs = tuple(dict.fromkeys(d for e in entries if (d := _doc_of(context, e.target))))
            title = f"Feature: {_feature_name(context, name, entries)}"
            drafts.append(
                Draft(
                    f"feature:{name}",
                    "feature",
                    title,
                    feature_facts_for_entries(context, name, entries),
                    docs,
                )
            )
    else:
        for members in communities(context):
            facts = feature_facts_for_community(context, members)
            lead = community_lead(context, members)
            named = f" ({facts['name']})" if facts["name"] != lead else ""
            drafts.append(Draft(f"feature:{lead}", "feature", f"Feature: {lead}{named}", facts))
    for entry, also in workflow_entries(context):
        drafts.append(
            Draft(
                workflow_id(entry), "workflow", _workflow_title(entry), workflow_facts(context, entry, also)
            )
        )
    return sorted(drafts, key=lambda d: d.id)


def _feature_name(context: Context, group: str, entries: list[EntryPoint]) -> str:
    """A feature of commands or routes is named by its module group; one reached only through
    the public API by the group's dominant public definitions ("fetch, Client, Transport")."""
    if any(e.kind != "public_api" for e in entries):
        return group
    names = dominant(context, _public_of(context, group))
    return f"{group} ({names})" if names else group


def _workflow_title(entry: EntryPoint) -> str:
    """Named by the code it runs, as its id is, and by the entry point that runs it:
    "Workflow: shop.cli.main (console_script shop)", "Workflow: rich.inspect (public API)"."""
    how = "public API" if entry.kind == "public_api" else f"{entry.kind} {entry.name}"
    return f"Workflow: {entry.target} ({how})"


def _public_of(context: Context, group: str) -> list[str]:
    files = set(context.groups[group].files)
    return [q for q, (symbol, path) in context.symbols.items() if path in files and symbol.public]


def _module_title(context: Context, name: str) -> str:
    """ "Module pkg.sub"; a component (:mod:`kbc.graph.components`) with its central public
    definitions: "Component rich[console]: Console, Segment, Text"."""
    if not is_component(name):
        return f"Module {name}"
    names = dominant(context, _public_of(context, name))
    return f"Component {name}: {names}" if names else f"Component {name}"


def _doc_of(context: Context, qname: str) -> str:
    found = context.symbols.get(qname)
    return found[0].doc if found else ""


def known_names(context: Context) -> KnownNames:
    import builtins
    import keyword

    known = KnownNames()
    known.names.update(dir(builtins), keyword.kwlist, ("__main__", "__init__", "__name__", "__all__"))
    for path, facts in context.files.items():
        known.add_path(path)
        known.add_name(facts.module)
        for symbol in facts.symbols:
            known.add_name(symbol.qname)
        for item in facts.imports:
            for name in (item.module, item.name, item.alias, item.target, item.distribution):
                known.add_name(name)
        for call in facts.calls:
            known.add_name(call.text)
            known.add_name(call.target)
        for entry in facts.entry_points:
            known.add_name(entry.name)
            known.add_name(entry.target)
        for integration in facts.integrations:
            known.add_name(integration.name)
        for declared in facts.fields:
            known.add_name(f"{declared.owner}.{declared.name}")
    for source in context.inventory.files:
        known.add_path(source.path)
    for entry in context.declared_entry_points:
        known.add_name(entry.name)
        known.add_name(entry.target)
    return known


def _keys(draft: Draft) -> dict[str, list[Any]]:
    facts = draft.facts
    if draft.kind == "workflow":
        return {"steps": [s["n"] for s in facts["steps"]]}
    if draft.kind == "business_rules":
        return {"rules": [r["n"] for r in facts["rules"]]}
    if draft.kind == "domain_concepts":
        return {"concepts": [c["name"] for c in facts["concepts"]]}
    if draft.kind == "integrations":
        return {"integrations": [i["name"] for i in facts["integrations"]]}
    return {}


def _ask(interpreter: Interpreter, draft: Draft) -> _Outcome:
    """One view's prose from the LLM: a call, and one repair if the reply is invalid."""
    outcome = _Outcome()
    prompt = [
        {"role": m["role"], "content": redact("prompt.md", m["content"], "markdown").text}
        for m in messages(draft.kind, draft.title, draft.facts)
    ]
    try:
        for attempt in range(2):
            reply = interpreter.complete(prompt)
            outcome.calls += 1
            outcome.prompt_tokens += reply.prompt_tokens
            outcome.completion_tokens += reply.completion_tokens
            outcome.cost += reply.cost
            parsed, problems = parse_reply(draft.kind, reply.text)
            if parsed is not None:
                outcome.interpretation = parsed
                outcome.repaired = attempt == 1
                return outcome
            if attempt == 0:
                prompt = repair_messages(prompt, reply.text, problems)
            else:
                outcome.error = f"{draft.id}: the LLM's reply did not match the schema, twice ({problems[0]})"
    except LLMError as exc:
        outcome.error = f"{draft.id}: the LLM call failed: {exc.message}"
    return outcome


def build_views(
    context: Context,
    interpreter: Interpreter | None,
    cache: ProseCache | None,
    *,
    concurrency: int = 4,
    progress: Counting | None = None,
    cached_model: str = "",
) -> tuple[list[View], ViewsSummary]:
    """Every view; prose from ``interpreter`` (cached), or without one from the cache of
    ``cached_model`` where it holds these facts (no call is made), else from docstrings."""
    summary = ViewsSummary(model=interpreter.model if interpreter else "")
    drafts = _checked(plan_views(context), summary)
    model = interpreter.model if interpreter is not None else cached_model
    prose: dict[str, dict[str, Any]] = {}
    if model:
        keys = {d.id: prose_key(d.kind, d.facts_hash, PROMPT_VERSION, model) for d in drafts}
        misses = []
        for draft in drafts:
            hit = cache.get(keys[draft.id]) if cache is not None else None
            if hit is not None:
                prose[draft.id] = hit
                summary.cached += 1
            else:
                misses.append(draft)
        asker = interpreter
        if asker is None:
            misses = []
        tick = progress(len(misses)) if progress is not None and misses else None
        with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
            futures = {pool.submit(_ask, asker, d): d for d in misses if asker is not None}
            for future in as_completed(futures):
                draft, outcome = futures[future], future.result()
                summary.llm_calls += outcome.calls
                summary.prompt_tokens += outcome.prompt_tokens
                summary.completion_tokens += outcome.completion_tokens
                summary.cost += outcome.cost
                summary.repaired += outcome.repaired
                if outcome.interpretation is not None:
                    prose[draft.id] = outcome.interpretation
                    if cache is not None:
                        cache.put(keys[draft.id], outcome.interpretation)
                else:
                    summary.failed += 1
                    summary.errors.append(outcome.error)
                if tick is not None:
                    tick()
    summary.errors.sort()
    known = known_names(context) if prose else None
    views = [_finish(d, prose.get(d.id), known, model, summary) for d in drafts]
    summary.views = len(views)
    summary.by_kind = dict(sorted(Counter(v.kind for v in views).items()))
    summary.by_source = dict(sorted(Counter(v.provenance.source for v in views).items()))
    return views, summary


def _checked(drafts: list[Draft], summary: ViewsSummary) -> list[Draft]:
    """The drafts whose facts hold to their kind's schema; any other is left out, with an error
    that names it (facts come from the code, so a broken one is kbc's own fault)."""
    from kbc.views.kinds import KINDS
    from kbc.views.schema import schema_errors

    kept = []
    for draft in drafts:
        problems = schema_errors(KINDS[draft.kind].facts, draft.facts)
        if problems:
            summary.errors.append(
                f"{draft.id}: left out, its facts break the {draft.kind} schema "
                f"({'; '.join(problems[:3])}); please report this as a kbc bug"
            )
        else:
            kept.append(draft)
    return kept


def _finish(
    draft: Draft,
    llm_prose: dict[str, Any] | None,
    known: KnownNames | None,
    model: str,
    summary: ViewsSummary,
) -> View:
    from kbc.domain.views import Grounding

    if llm_prose is not None and known is not None and model:
        local = KnownNames(base=known)
        known_from_facts(draft.facts, local)
        interpretation, grounding = ground(llm_prose, local, _keys(draft))
        summary.ungrounded += grounding.removed
        provenance = Provenance("llm", model, PROMPT_VERSION, draft.facts_hash)
    else:
        interpretation = from_docstrings(draft.kind, draft.facts, draft.docs)
        grounding = Grounding()
        provenance = Provenance(
            "none" if is_empty(interpretation) else "docstring", "", PROMPT_VERSION, draft.facts_hash
        )
    view = View(draft.id, draft.kind, draft.title, draft.facts, interpretation, provenance, grounding)
    return view
