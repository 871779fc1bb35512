"""Use-case profiles from the shipped file and a repository's kbc.toml."""

from pathlib import Path

import pytest

from kbc.domain.errors import ConfigError
from kbc.domain.views import VIEW_KINDS
from kbc.retrieval.profiles import load_profiles


def test_a_repository_chooses_the_view_kinds_and_the_cited_weight_of_a_profile(tmp_path: Path) -> None:
    (tmp_path / "kbc.toml").write_text(
        '[profiles.qa]\nview_kinds = ["workflow", "architecture"]\ncited = 0.5\n'
    )
    qa = load_profiles(tmp_path)["qa"]
    assert qa.view_kinds == ("architecture", "workflow") and qa.cited == 0.5  # in the kinds' order
    assert load_profiles()["qa"].view_kinds == VIEW_KINDS


def test_an_unknown_view_kind_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "kbc.toml").write_text('[profiles.qa]\nview_kinds = ["workflows"]\n')
    with pytest.raises(ConfigError) as caught:
        load_profiles(tmp_path)
    assert "profiles.qa.view_kinds" in str(caught.value) and "entry_points" in str(caught.value)


def test_a_new_profile_may_leave_cited_at_its_default(tmp_path: Path) -> None:
    fields = "".join(
        f"{name} = {value}\n"
        for name, value in (
            ("budget", 900),
            ("code", 1),
            ("tests", 0),
            ("docs", 0),
            ("views", 0),
            ("config", 0),
            ("examples", 0),
            ("vendored", 0),
            ("graph", 0),
        )
    )
    (tmp_path / "kbc.toml").write_text("[profiles.mine]\n" + fields)
    mine = load_profiles(tmp_path)["mine"]
    assert (mine.budget, mine.cited, mine.view_kinds) == (900, 0.0, VIEW_KINDS)
