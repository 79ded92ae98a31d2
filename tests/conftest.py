"""Shared fixtures: location of the third-party validation data (``../shared/data``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SHARED_DATA = Path(os.environ.get("BIASAMP_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))


@pytest.fixture
def shared_data() -> Path:
    """Path of ``shared/data``; skips the test cleanly where it is absent (a user's clone)."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"validation data not found at {SHARED_DATA}")
    return SHARED_DATA
