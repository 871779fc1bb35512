"""`/metrics` of a live `kbc serve --transport http` (one repository, and several) serves every
metric `docs/api.md` lists, the store's own labelled with the repository's name."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from web import STORE, built_repository, serving

DOCUMENTED = Path(__file__).resolve().parents[2] / "docs" / "api.md"
SEVERAL_ONLY = {"kbc_repositories", "kbc_repositories_open", "kbc_refreshes_queued"}
TASK = "how is a refund validated when an order is cancelled?"


def documented() -> set[str]:
    """The metric names of the table in docs/api.md."""
    text = DOCUMENTED.read_text(encoding="utf-8").split("## Metrics", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in text.splitlines() if line.startswith("| `kbc_")]
    names = {name for row in rows for name in re.findall(r"`(kbc_\w+)`", row.split("|")[1])}
    assert len(names) >= 20  # the table was read
    return names


def served(url: str) -> dict[str, list[dict[str, str]]]:
    """Each metric family's name (counters under their ``_total`` name) and its samples' labels."""
    from prometheus_client.parser import text_string_to_metric_families

    families: dict[str, list[dict[str, str]]] = {}
    for family in text_string_to_metric_families(httpx.get(f"{url}/metrics", timeout=30).text):
        name = f"{family.name}_total" if family.type == "counter" else family.name
        families[name] = [dict(sample.labels) for sample in family.samples]
    return families


STORE_METRICS = {
    "kbc_slice_cache_hits_total",
    "kbc_documents_behind",
    "kbc_proposals",
    "kbc_index_size",
    "kbc_retrieval_mode",
    "kbc_last_build_timestamp_seconds",
}


@pytest.mark.slow
def test_a_live_server_of_one_repository_serves_every_documented_metric(tmp_path: Path) -> None:
    (tmp_path / "shop").mkdir()
    with built_repository(tmp_path / "shop", STORE) as root, serving(str(root), folder=tmp_path) as url:
        assert httpx.post(f"{url}/api/v1/retrieve", json={"task": TASK, "budget": 800}).status_code == 200
        families = served(url)
    assert documented() - SEVERAL_ONLY <= set(families), documented() - SEVERAL_ONLY - set(families)
    for name in STORE_METRICS:
        assert {s.get("repository") for s in families[name]} == {root.name}, name
    sizes = {s["part"] for s in families["kbc_index_size"]}
    assert sizes == {"files", "chunks", "units", "embedded"}


@pytest.mark.slow
def test_a_live_server_of_several_repositories_labels_each_open_store(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with (
        built_repository(tmp_path / "a", STORE) as first,
        built_repository(tmp_path / "b", STORE) as second,
        serving(f"shop={first}", f"depot={second}", folder=tmp_path) as url,
    ):
        for name in ("shop", "depot"):
            asked = httpx.post(
                f"{url}/api/v1/retrieve", json={"task": TASK, "repository": name, "budget": 800}
            )
            assert asked.status_code == 200, asked.text
        families = served(url)
    assert documented() <= set(families), documented() - set(families)
    for name in STORE_METRICS:
        assert {s.get("repository") for s in families[name]} == {"shop", "depot"}, name
