"""The facts build: discover → analyze (cached, pooled) → link → graph → store."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path

from kbc import __version__
from kbc.analyzers.code.gomod import go_modules
from kbc.analyzers.code.languages import ANALYZED_ROLES, CODE_ANALYZER_VERSION, CODE_LANGUAGES, code_modules
from kbc.analyzers.discover import discover
from kbc.analyzers.link import link
from kbc.analyzers.modules import detect_source_roots, module_name
from kbc.analyzers.pool import run_analysis
from kbc.analyzers.project_meta import metadata_entry_points
from kbc.analyzers.python.analyze import ANALYZER_VERSION
from kbc.analyzers.roles import role_of
from kbc.analyzers.sweep import Sweep, sweep_key, sweep_secrets
from kbc.domain.errors import in_pass
from kbc.domain.models import (
    AnalysisFailed,
    AnalysisOk,
    AnalysisResult,
    AnalysisSkipped,
    AnalysisTask,
    FileFacts,
    Inventory,
    SourceFile,
    models_shape,
)
from kbc.domain.progress import Reporter
from kbc.domain.settings import Settings
from kbc.domain.timing import PassTiming, Stopwatch
from kbc.graph.build import build_graph
from kbc.graph.dispatched import settle_dispatches
from kbc.store.cache import AnalysisCache, cache_key
from kbc.store.facts_store import FactsStore, Snapshot
from kbc.store.layout import analysis_cache, store_path


@dataclass(frozen=True, slots=True)
class AnalyzeSummary:
    root: str
    store: str
    files: int
    python_files: int
    parsed: int
    cached: int
    failed: int
    skipped: int
    ignored: int
    symbols: int
    import_edges: int
    call_edges: int
    entry_points: int
    integrations: int  # the product's, by kind and name: what the architecture view lists
    seconds: float
    skipped_by_reason: dict[str, int] = field(default_factory=dict)
    failures: tuple[AnalysisFailed, ...] = ()
    warnings: tuple[str, ...] = ()
    passes: tuple[PassTiming, ...] = ()  # discover, analyze, graph, store: seconds and peak RSS
    generation: str = ""  # the facts' generation in the store
    integrations_elsewhere: int = 0  # uses in tests, examples, vendored and generated code


def product_integrations(files: Iterable[FileFacts], inventory: Inventory) -> Counter[tuple[str, str]]:
    """Uses of each (kind, name) of integration in the product's own code: the files whose role
    is ``source``, as the architecture and integrations views count them (tests, examples,
    vendored and generated code left out)."""
    role = {f.path: f.role for f in inventory.files}
    counts: Counter[tuple[str, str]] = Counter()
    for facts in files:
        if (role.get(facts.path) or role_of(facts.path, "python")) == "source":
            counts.update((item.kind, item.name) for item in facts.integrations)
    return counts


def analyzer_version() -> str:
    """The Python analyzer's version, libcst's and the facts' shape (a cached result of an older
    shape is never read back)."""
    return f"{ANALYZER_VERSION}+libcst-{version('libcst')}+facts-{models_shape()}"


def code_analyzer_version() -> str:
    """The version of what reads languages other than Python: a new grammar is a new version."""
    return f"code-{CODE_ANALYZER_VERSION}+tslp-{version('tree-sitter-language-pack')}+facts-{models_shape()}"


def analyze_repository(
    root: Path,
    settings: Settings,
    store_dir: Path | None = None,
    progress: Reporter | None = None,
    *,
    fresh: bool = False,
) -> AnalyzeSummary:
    """Build the facts store for the repository at ``root``; ``fresh`` parses every file again;
    ``progress`` hears each pass (discover, secrets, analyze, graph, store facts)."""
    return analyze_with_sweep(root, settings, store_dir, progress, fresh=fresh)[0]


def analyze_with_sweep(
    root: Path,
    settings: Settings,
    store_dir: Path | None = None,
    progress: Reporter | None = None,
    *,
    fresh: bool = False,
    publish: bool = True,
    discovered: tuple[Inventory, Sweep] | None = None,
) -> tuple[AnalyzeSummary, Sweep]:
    """:func:`analyze_repository`, with the credential sweep the index pass needs too;
    ``publish``: make the facts written the live ones (a build does so only at its end);
    ``discovered``: the files and their sweep, when already read (:func:`discover_and_sweep`)."""
    started = time.perf_counter()
    clock = Stopwatch(progress)
    root = root.resolve()
    store_root = store_path(root, settings, store_dir)
    inventory, swept = discovered or discover_and_sweep(root, settings, store_root, clock)
    cache_file = analysis_cache(store_root)
    roots = detect_source_roots((f.path for f in inventory.files), settings.source_roots)
    warnings: list[str] = []
    tasks: list[tuple[AnalysisTask, str]] = []
    seen_modules: dict[str, str] = {}
    code = [f for f in inventory.files if f.language in CODE_LANGUAGES and f.role in ANALYZED_ROLES]
    code_module_of = code_modules(f.path for f in code)
    for source in inventory.files:
        if source.path in code_module_of:
            tasks.append(
                (
                    AnalysisTask(
                        source.path,
                        str(root / source.path),
                        code_module_of[source.path],
                        False,
                        swept.also(source.path),
                        source.path in swept.clean,
                        language=source.language,
                    ),
                    source.blob,
                )
            )
            continue
        if source.language != "python":
            continue
        name, is_package = module_name(source.path, roots)
        if name in seen_modules:
            warnings.append(
                f"{source.path}: module {name} is also {seen_modules[name]}; "
                "set analyze.source_roots to tell them apart"
            )
        seen_modules.setdefault(name, source.path)
        tasks.append(
            (
                AnalysisTask(
                    source.path,
                    str(root / source.path),
                    name,
                    is_package,
                    swept.also(source.path),
                    source.path in swept.clean,
                ),
                source.blob,
            )
        )

    version_key, code_version = analyzer_version(), code_analyzer_version()

    def version_of(task: AnalysisTask) -> str:
        return version_key if task.language == "python" else code_version

    keys = [cache_key(task, blob, version_of(task)) for task, blob in tasks]
    analyzing = clock.measure("analyze", len(tasks), "files")
    with in_pass("analyze"), analyzing as parsing, AnalysisCache(cache_file) as cache:
        cached = {} if fresh else cache.get_many(keys)
        misses = [task for (task, _), key in zip(tasks, keys, strict=True) if key not in cached]
        parsing.skip(len(tasks) - len(misses))
        parsed_now = run_analysis(misses, settings.worker_count(), lambda _result: parsing.advance())
        fresh_keys = [
            cache_key(task, _blob_of(result), version_of(task))
            for task, result in zip(misses, parsed_now, strict=True)
        ]
        cache.put_many(zip(fresh_keys, parsed_now, strict=True))
        cache.retain([*fresh_keys, *(k for k in keys if k in cached)])
    by_path = {r.path: r for r in (*cached.values(), *parsed_now)}
    results = [by_path[task.path] for task, _ in tasks]

    facts: list[FileFacts] = [r.facts for r in results if isinstance(r, AnalysisOk)]
    failures = tuple(r for r in results if isinstance(r, AnalysisFailed))
    skipped_files = [r for r in results if isinstance(r, AnalysisSkipped)]
    for facts_item in facts:
        warnings.extend(f"{facts_item.path}: {w}" for w in facts_item.warnings)
    with in_pass("graph"), clock.measure("graph"):
        linked = settle_dispatches(link(facts, go_modules(root, (f.path for f in inventory.files))))
        declared, problems = metadata_entry_points(
            root,
            (
                f.path
                for f in inventory.files
                if f.language in ("toml", "ini")
                or f.language == "json"
                and f.role not in ("vendored", "test", "example")
            ),
        )
        graph = build_graph(linked, settings.module_split_files, settings.max_modules)
    with clock.measure("store facts"):
        generation = FactsStore(store_root).write(
            Snapshot(
                inventory=inventory,
                facts=tuple(linked),
                failures=failures,
                entry_points=tuple(declared),
                problems=tuple(problems),
                graph=graph,
                versions={"kbc": __version__, "analyzer": version_key, "code analyzer": code_version},
            ),
            publish=publish,
        )
    reasons = Counter(s.reason for s in inventory.skipped)
    reasons.update(s.reason for s in skipped_files)
    product = product_integrations(linked, inventory)
    return AnalyzeSummary(
        root=str(root),
        store=str(store_root),
        files=len(inventory.files),
        python_files=sum(task.language == "python" for task, _ in tasks),
        parsed=len(misses),
        cached=len(tasks) - len(misses),
        failed=len(failures),
        skipped=len(inventory.skipped) + len(skipped_files),
        ignored=inventory.ignored,
        symbols=sum(len(f.symbols) for f in linked),
        import_edges=len(graph.import_edges),
        call_edges=len(graph.call_edges),
        entry_points=len(declared) + sum(len(f.entry_points) for f in linked),
        integrations=len(product),
        integrations_elsewhere=sum(len(f.integrations) for f in linked) - sum(product.values()),
        seconds=time.perf_counter() - started,
        skipped_by_reason=dict(sorted(reasons.items())),
        failures=failures,
        warnings=tuple([*warnings, *problems]),
        passes=tuple(clock.passes),
        generation=generation,
    ), swept


def discover_and_sweep(
    root: Path, settings: Settings, store_root: Path, clock: Stopwatch
) -> tuple[Inventory, Sweep]:
    """The repository's text files, and what the credential sweep found in them (each file's
    count cached by its content); the clock hears both passes (discover, secrets)."""
    with in_pass("discover"), clock.measure("discover"):
        inventory = discover(
            root, max_file_bytes=settings.max_file_bytes, exclude=settings.exclude, store_dir=store_root
        )
    sweeping = clock.measure("secrets", len(inventory.files), "files")
    with in_pass("secrets"), sweeping as scanning, AnalysisCache(analysis_cache(store_root)) as counts:
        known = counts.secret_counts(sweep_key(f) for f in inventory.files)
        swept, scanned = sweep_secrets(root, inventory.files, known, settings.worker_count(), scanning)
        counts.put_secret_counts(scanned.items())
    return inventory, swept


def python_modules(files: Sequence[SourceFile], settings: Settings) -> dict[str, str]:
    """Each Python file the facts pass reads, with its module name as the facts name it."""
    roots = detect_source_roots((f.path for f in files), settings.source_roots)
    code = {f.path for f in files if f.language in CODE_LANGUAGES and f.role in ANALYZED_ROLES}
    code_module_of = code_modules(code)
    return {
        f.path: module_name(f.path, roots)[0]
        for f in files
        if f.language == "python" and f.path not in code_module_of
    }


def _blob_of(result: AnalysisResult) -> str:
    if isinstance(result, AnalysisOk):
        return result.facts.blob
    if isinstance(result, AnalysisFailed):
        return result.blob
    return ""
