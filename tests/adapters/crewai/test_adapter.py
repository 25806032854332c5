"""The adapter's framework: the crewai installed in its environment is the release the requirements pin."""

from __future__ import annotations

from importlib import metadata

import pytest

from tests.adapters.crewai.conftest import NOT_HERE

crewai = pytest.importorskip("crewai", reason=NOT_HERE)

from tests.adapters.crewai.conftest import REGISTRY  # noqa: E402


def test_the_pinned_version_is_the_installed_one():
    assert metadata.version("crewai") == crewai.__version__
    if "crewai" in REGISTRY:  # an isolated entry reports the pinned version: it must be the one installed
        assert REGISTRY["crewai"].version == metadata.version("crewai")
