"""Shared fixtures. Real Harbor output lives in ../shared/harbor_samples/."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HARBOR_SAMPLES = ROOT.parent / "shared" / "harbor_samples"


@pytest.fixture
def harbor_samples() -> Path:
    if not HARBOR_SAMPLES.is_dir():
        pytest.fail(f"the real Harbor samples are missing: {HARBOR_SAMPLES}")
    return HARBOR_SAMPLES
