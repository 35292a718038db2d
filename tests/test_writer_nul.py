"""NUL characters in agent output: kept visible as ␀, never a lost trial."""

import pytest

from rewards.ingest.digest import NUL_STANDIN
from rewards.ingest.writer import BundleWriter
from rewards.models import Trial
from tests.test_export_bundles import full_bundle


@pytest.mark.django_db
def test_nul_in_agent_output_is_stored_as_a_visible_stand_in() -> None:
    bundle = full_bundle("t-nul")
    trial = bundle.trial.model_copy(
        update={
            "stdout_tail": "before\x00after",
            "trajectory": {"steps": [{"message": "a\x00b", "k\x00": 1}]},
        }
    )
    outcome = BundleWriter().write(bundle.model_copy(update={"trial": trial}))

    assert outcome.status == "ingested"
    detail = Trial.objects.get(name="t-nul").detail
    assert detail.stdout_tail == f"before{NUL_STANDIN}after"
    assert detail.trajectory == {"steps": [{"message": f"a{NUL_STANDIN}b", f"k{NUL_STANDIN}": 1}]}


@pytest.mark.django_db
def test_an_escaped_backslash_u0000_is_not_mistaken_for_nul() -> None:
    bundle = full_bundle("t-literal")
    trial = bundle.trial.model_copy(update={"stdout_tail": "literal \\u0000 text"})
    BundleWriter().write(bundle.model_copy(update={"trial": trial}))
    assert Trial.objects.get(name="t-literal").detail.stdout_tail == "literal \\u0000 text"
