"""The trial page's Harbor tabs (agent logs, verifier logs, trial log, artifacts, analysis,
exception), the folder's files as downloads, and blind review of a trial with no trajectory."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from rewards.models import Trial
from tests import review_factories as f
from tests.harbor_desk import ingest_desk, trial_name

pytestmark = pytest.mark.django_db

HX = {"HX-Request": "true"}


@pytest.fixture
def desk(tmp_path: Path) -> dict[str, Path]:
    return ingest_desk(tmp_path)


def _trial(kind: str) -> Trial:
    return Trial.objects.get(name=trial_name(kind))


def _tab(client: Client, kind: str, tab: str, **headers: str) -> str:
    response = client.get(f"/trials/{_trial(kind).pk}/?tab={tab}", headers=headers)
    assert response.status_code == 200
    return response.content.decode()


@pytest.mark.parametrize(
    ("kind", "tab", "expected"),
    [
        # Agent logs: each file under its path, escaped, colour as classes.
        ("logs-only", "agent-logs", "<code>agent/claude-code.txt</code>"),
        ("logs-only", "agent-logs", "&lt;script&gt;window.__pwned=1&lt;/script&gt;"),
        ("logs-only", "agent-logs", '<span class="ansi-bold ansi-fg-2">ALL CHECKS PASSED</span>'),
        ("logs-only", "agent-logs", "<code>agent/command-0/stderr.txt</code>"),
        # The trajectory tab of a trial without one points at the agent's logs.
        ("logs-only", "trajectory", 'href="/trials/{pk}/?tab=agent-logs#tabs"'),
        ("trajectory", "trajectory", "<strong>City"),
        ("trajectory", "verifier", '<span class="ansi-fg-1">FAILED</span>'),
        ("trajectory", "verifier", "<code>verifier/test-stderr.txt</code>"),
        ("trajectory", "trial-log", '<span class="ansi-fg-2">verifier done</span>'),
        ("timeout", "exception", "<strong>AgentTimeoutError</strong>: Agent execution timed out"),
        ("timeout", "exception", "raise AgentTimeoutError(message) from exc"),
        ("timeout", "exception", "2026-10-05 11:24:51 UTC"),
        ("timeout", "agent-logs", "tail -f /var/log/audit.log"),
        ("multistep", "agent-logs", "Step run"),
        ("multistep", "agent-logs", "steps/check/agent/agent.txt"),
        ("multistep", "artifacts", "steps/run/artifacts/invoice.json"),
        ("multistep", "verifier", "check step verifier: totals match"),
        ("artifacts", "artifacts", "Manifest <code>artifacts/manifest.json</code>"),
        ("artifacts", "artifacts", "width,lines\n10,14"),
        ("artifacts", "artifacts", "Binary file: download it to open it."),
        (
            "artifacts",
            "artifacts",
            'href="/trials/{pk}/files/?path=artifacts/plots/wrap-widths.png"',
        ),
        ("analysis", "analysis", "<h1>Trial analysis</h1>"),
        ("analysis", "analysis", "&lt;img src=x onerror=&quot;window.__pwned=1&quot;&gt;"),
        ("analysis", "analysis", "&quot;reward_hacking&quot;"),
    ],
)
def test_each_harbor_tab_shows_its_part_of_the_folder_escaped(
    client: Client, desk: dict[str, Path], kind: str, tab: str, expected: str
) -> None:
    f.login(client, "rita", "reviewer")
    expected = expected.replace("{pk}", str(_trial(kind).pk))
    page = _tab(client, kind, tab)
    assert expected in page
    fragment = _tab(client, kind, tab, **HX)
    assert f.is_fragment(fragment)
    assert expected in fragment


@pytest.mark.parametrize(
    ("kind", "tab", "empty"),
    [
        ("trajectory", "agent-logs", "The agent wrote no log files"),
        ("trajectory", "artifacts", "The trial collected no artifacts"),
        ("trajectory", "analysis", "No analysis yet"),
        ("multistep", "exception", "The trial raised no exception."),
    ],
)
def test_a_tab_with_nothing_to_show_says_so(
    client: Client, desk: dict[str, Path], kind: str, tab: str, empty: str
) -> None:
    f.login(client, "rita", "reviewer")
    assert empty in _tab(client, kind, tab)


def _open_tab(html: str) -> str:
    """The label of the tab the page shows open."""
    strip = html.split('<nav class="tabs" aria-label="Artifacts">')[1].split("</nav>")[0]
    found = re.search(r'aria-current="page">([^<]+)</a>', strip)
    assert found, "no tab is open"
    return found.group(1)


@pytest.mark.parametrize(
    ("kind", "opens_on", "shown"),
    [
        ("trajectory", "Trajectory", "<strong>City"),
        # No trajectory: the agent's own logs, not an empty Trajectory tab.
        ("logs-only", "Agent logs", "<code>agent/claude-code.txt</code>"),
        ("timeout", "Agent logs", "tail -f /var/log/audit.log"),
    ],
)
def test_a_trial_opens_on_its_trajectory_or_else_its_agent_logs(
    client: Client, desk: dict[str, Path], kind: str, opens_on: str, shown: str
) -> None:
    f.login(client, "rita", "reviewer")
    html = client.get(f"/trials/{_trial(kind).pk}/").content.decode()
    assert _open_tab(html) == opens_on
    assert shown in html
    # Asked for, the Trajectory tab still opens, and says where the logs are.
    if kind != "trajectory":
        asked = _tab(client, kind, "trajectory")
        assert _open_tab(asked) == "Trajectory"
        assert "No trajectory was recorded for this trial" in asked
        assert f'href="/trials/{_trial(kind).pk}/?tab=agent-logs#tabs"' in asked


def test_a_trial_with_neither_trajectory_nor_agent_logs_opens_on_its_trial_log(
    client: Client, desk: dict[str, Path]
) -> None:
    f.login(client, "rita", "reviewer")
    shutil.rmtree(desk["logs-only"] / "agent")
    html = client.get(f"/trials/{_trial('logs-only').pk}/").content.decode()
    assert _open_tab(html) == "Trial log"
    # Without a trial log either, the Trajectory tab says there is none.
    (desk["logs-only"] / "trial.log").unlink()
    html = client.get(f"/trials/{_trial('logs-only').pk}/").content.decode()
    assert _open_tab(html) == "Trajectory"
    assert "No trajectory was recorded for this trial" in html


def test_a_trial_from_no_folder_without_trajectory_opens_on_the_trajectory_tab(
    client: Client,
) -> None:
    f.login(client, "rita", "reviewer")
    trial = f.make_trial(name="from-a-bundle")
    assert _open_tab(client.get(f"/trials/{trial.pk}/").content.decode()) == "Trajectory"


def test_the_header_shows_the_exception_message_beside_its_type(
    client: Client, desk: dict[str, Path]
) -> None:
    f.login(client, "rita", "reviewer")
    page = _tab(client, "timeout", "trajectory")
    header = page.split('<header class="trial-head">')[1].split("</header>")[0]
    assert (
        "<strong>AgentTimeoutError</strong>: Agent execution timed out after 600.0 seconds"
        in header
    )


def test_a_trial_whose_folder_is_gone_shows_what_was_stored_and_says_so(
    client: Client, desk: dict[str, Path]
) -> None:
    f.login(client, "rita", "reviewer")
    shutil.rmtree(desk["timeout"])
    for tab in ("agent-logs", "trial-log", "artifacts", "analysis"):
        assert "is not there any more" in _tab(client, "timeout", tab)
    # What ingest stored is still there.
    assert "raise AgentTimeoutError" in _tab(client, "timeout", "exception")


def test_a_trial_from_no_folder_says_it_has_none(client: Client) -> None:
    f.login(client, "rita", "reviewer")
    trial = f.make_trial(name="from-a-bundle")
    html = client.get(f"/trials/{trial.pk}/?tab=agent-logs").content.decode()
    assert "This trial was not ingested from a folder." in html


def test_the_raw_toggle_comes_with_the_text_as_stored(
    client: Client, desk: dict[str, Path]
) -> None:
    f.login(client, "rita", "reviewer")
    page = _tab(client, "trajectory", "verifier")
    assert 'data-raw-toggle aria-pressed="false"' in page
    assert "tests/test_report.py::test_units ␛[31mFAILED␛[0m" in page


# --- downloads ----------------------------------------------------------------------------
def _file_url(kind: str, path: str) -> str:
    return f"/trials/{_trial(kind).pk}/files/?path={path}"


def test_a_file_downloads_as_an_attachment_with_its_type_and_nosniff(
    client: Client, desk: dict[str, Path]
) -> None:
    f.login(client, "rita", "reviewer")
    response = client.get(_file_url("artifacts", "artifacts/plots/wrap-widths.png"))
    assert response.status_code == 200
    assert response["Content-Type"] == "image/png"
    assert response["Content-Disposition"] == 'attachment; filename="wrap-widths.png"'
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response.content == (desk["artifacts"] / "artifacts/plots/wrap-widths.png").read_bytes()
    html = client.get(_file_url("artifacts", "artifacts/summary.md"))
    assert html["Content-Type"].startswith("text/markdown")
    assert "sandbox" in html["Content-Security-Policy"]


def test_downloads_need_a_login_a_role_and_a_get(client: Client, desk: dict[str, Path]) -> None:
    url = _file_url("artifacts", "artifacts/results.csv")
    anonymous = client.get(url)
    assert anonymous.status_code == 302
    assert "/accounts/login/" in anonymous["Location"]
    f.login(client, "nobody")
    assert client.get(url).status_code == 403
    f.login(client, "ana", "analyst")
    assert client.get(url).status_code == 200
    assert client.post(url).status_code == 405


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("../../../../etc/passwd", 403),
        ("artifacts/../../secret.txt", 403),
        ("/etc/passwd", 404),
        ("artifacts/none.png", 404),
        ("", 400),
    ],
)
def test_a_download_stays_inside_the_trial_folder(
    client: Client, desk: dict[str, Path], path: str, status: int
) -> None:
    (desk["artifacts"].parent.parent / "secret.txt").write_text("TOP SECRET")
    f.login(client, "rita", "reviewer")
    response = client.get(_file_url("artifacts", path))
    assert response.status_code == status
    assert b"TOP SECRET" not in response.content
    assert b"root:" not in response.content


def test_a_symlink_leading_out_is_not_served(client: Client, desk: dict[str, Path]) -> None:
    secret = desk["artifacts"].parent.parent / "secret.txt"
    secret.write_text("TOP SECRET")
    (desk["artifacts"] / "artifacts" / "leak.txt").symlink_to(secret)
    f.login(client, "rita", "reviewer")
    response = client.get(_file_url("artifacts", "artifacts/leak.txt"))
    assert response.status_code == 403
    assert b"TOP SECRET" not in response.content
    listing = _tab(client, "artifacts", "artifacts")
    assert "TOP SECRET" not in listing
    assert "Not shown: a symlink that points outside the folder given" in listing


def test_a_download_from_a_folder_that_is_gone_is_not_found(
    client: Client, desk: dict[str, Path]
) -> None:
    f.login(client, "rita", "reviewer")
    shutil.rmtree(desk["artifacts"])
    assert client.get(_file_url("artifacts", "artifacts/results.csv")).status_code == 404


# --- query counts -------------------------------------------------------------------------
@pytest.mark.parametrize("tab", ["agent-logs", "trial-log", "artifacts", "analysis", "exception"])
def test_the_folder_tabs_read_no_more_rows_than_the_default_tab(
    client: Client,
    desk: dict[str, Path],
    django_assert_num_queries: Callable[..., Any],
    tab: str,
) -> None:
    f.login(client, "ana", "analyst")
    trial = _trial("analysis")
    # 1 the user, 2 their role groups, 3 the trial with its job, task and the open tab's
    # blobs, 4 its results, 5 its step comments, 6 scorers; no judge, error tag or
    # annotation to read. The files come from the folder, not the database.
    with django_assert_num_queries(6):
        response = client.get(f"/trials/{trial.pk}/?tab={tab}")
    assert response.status_code == 200
    # The tab alone: 1 the user (their roles kept in the cache since the page), 2 the trial
    # with the tab's blobs.
    with django_assert_num_queries(2):
        response = client.get(f"/trials/{trial.pk}/?tab={tab}", headers=HX)
    assert response.status_code == 200


# --- blind review -------------------------------------------------------------------------
def test_blind_review_of_a_trial_without_trajectory_shows_its_logs(
    client: Client, desk: dict[str, Path]
) -> None:
    f.login(client, "rita", "reviewer")
    trial = _trial("logs-only")
    html = client.get(f"/trials/{trial.pk}/blind/").content.decode()
    assert "0 steps" not in html
    assert "Agent logs" in html
    assert "I will list the repository, then fix the failing parser." in html
    assert '<span class="ansi-bold ansi-fg-2">ALL CHECKS PASSED</span>' in html
    assert "agent exited with code 0" in html  # trial.log
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in html
    # The reward stays hidden.
    assert "verifier/reward.json" not in html


def test_blind_review_with_a_trajectory_shows_it_rather_than_the_logs(
    client: Client, desk: dict[str, Path]
) -> None:
    f.login(client, "rita", "reviewer")
    html = client.get(f"/trials/{_trial('trajectory').pk}/blind/").content.decode()
    assert "6 steps" in html
    assert "<strong>City" in html
    assert 'id="logs-title"' not in html


def test_blind_review_says_when_the_folder_with_the_logs_is_gone(
    client: Client, desk: dict[str, Path]
) -> None:
    f.login(client, "rita", "reviewer")
    shutil.rmtree(desk["logs-only"])
    html = client.get(f"/trials/{_trial('logs-only').pk}/blind/").content.decode()
    assert "is not there any more" in html
