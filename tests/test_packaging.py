"""The package metadata: one version, the licence and py.typed shipped, the dependency lists in step."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

import biasamp

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = ROOT / "pyproject.toml"

pytestmark = pytest.mark.skipif(not PYPROJECT.is_file(), reason="no pyproject.toml (an installed copy)")


@pytest.fixture(scope="module")
def meta() -> dict:
    if sys.version_info < (3, 11):
        pytest.skip("tomllib needs Python >= 3.11")
    import tomllib

    return tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))


def test_version_is_written_once(meta):
    assert "version" not in meta["project"] and "version" in meta["project"]["dynamic"]
    assert meta["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "biasamp._core.version.__version__"}
    # setuptools reads the literal without importing biasamp: it must stay a plain string assignment
    init = (ROOT / "src" / "biasamp" / "_core" / "version.py").read_text(encoding="utf-8")
    literal = re.search(r'^__version__ = "([^"]+)"$', init, flags=re.M)
    assert literal and literal[1] == biasamp.__version__


def test_licence_and_type_marker_are_shipped(meta):
    assert meta["project"]["license"] == "MIT" and meta["project"]["license-files"] == ["LICENSE"]
    assert "MIT License" in (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert (ROOT / "src" / "biasamp" / "py.typed").is_file()
    assert meta["tool"]["setuptools"]["package-data"]["biasamp"] == ["py.typed"]
    assert "Typing :: Typed" in meta["project"]["classifiers"]


def test_sdist_manifest_carries_what_the_tests_import():
    manifest = (ROOT / "MANIFEST.in").read_text(encoding="utf-8").split()
    for needed in ("conftest.py", "CHANGELOG.md", "LICENSE", "README.md"):
        assert needed in manifest
    for folder in ("tests", "docs", "examples"):
        assert f"graft {folder}" in " ".join(manifest)


def test_test_group_is_the_dev_extra(meta):
    """PEP 735 `test` group and the `dev` extra list the same requirements (two spellings of one list)."""
    extra = meta["project"]["optional-dependencies"]["dev"]
    group = meta["dependency-groups"]["test"]
    assert sorted(group) == sorted(extra), "pyproject.toml: keep [dependency-groups] test equal to the dev extra"
    assert meta["dependency-groups"]["docs"] == meta["project"]["optional-dependencies"]["docs"]
    includes = [g["include-group"] for g in meta["dependency-groups"]["dev"]]
    assert set(includes) == {"test", "docs", "lint"}


def test_core_floors_are_plain_and_match_the_ci_step(meta):
    """.ci/min_versions.sh installs each `>=` floor exactly: every core dependency needs one."""
    for dep in meta["project"]["dependencies"]:
        assert re.fullmatch(r"[A-Za-z0-9_.\-]+>=[0-9][0-9.]*", dep), dep
