"""Shared fixtures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import RepoFactory, repo_factory

# the suite never reads the configuration of the user who runs it
os.environ["KBC_CONFIG"] = ""
os.environ.pop("KBC_TRUST_REPOSITORIES", None)


@pytest.fixture
def make_repo(tmp_path: Path) -> RepoFactory:
    """make_repo({"pkg/__init__.py": "", ...}, use_git=True) -> the repository's root."""
    return repo_factory(tmp_path)
