"""Shared fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import RepoFactory, repo_factory


@pytest.fixture
def make_repo(tmp_path: Path) -> RepoFactory:
    """make_repo({"pkg/__init__.py": "", ...}, use_git=True) -> the repository's root."""
    return repo_factory(tmp_path)
