"""Two trajectories side by side (issue 24, item 3): steps aligned by what they did, the
first divergence marked, one-sided steps shown as such, each side's totals up to each step;
the alignment kept in the cache and shown a page at a time."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client

from rewards import alignment
from rewards.cache import alignment_key
from rewards.models import Trial
from tests import review_factories as f

pytestmark = pytest.mark.django_db


def _call(command: str) -> dict[str, Any]:
    return {
        "source": "agent",
        "tool_calls": [{"function_name": "exec", "arguments": {"command": command}}],
    }


def _step(
    number: int, step: dict[str, Any], tokens: int = 10, cost: float = 0.01
) -> dict[str, Any]:
    return {
        "step_id": number,
        "timestamp": f"2026-11-01T10:00:{number:02d}Z",
        "metrics": {"prompt_tokens": tokens, "completion_tokens": 1, "cost_usd": cost},
        **step,
    }


def _trajectory(*steps: dict[str, Any]) -> dict[str, Any]:
    return {"steps": [_step(i, s) for i, s in enumerate(steps, start=1)]}


TASK = {"source": "user", "message": "Fix the parser."}


def test_steps_align_by_tool_call_and_the_first_divergence_is_found() -> None:
    a = _trajectory(
        TASK,
        _call("ls"),
        {
            "source": "agent",
            "tool_calls": [{"function_name": "exec", "arguments": {"b": 1, "a": 2}}],
        },
        _call("pytest -q"),
        {"source": "agent", "message": "Done: all   green."},
    )
    b = _trajectory(
        TASK,
        _call("ls"),
        # The same call with its arguments in another order.
        {
            "source": "agent",
            "tool_calls": [{"function_name": "exec", "arguments": {"a": 2, "b": 1}}],
        },
        _call("cat parser.py"),
        _call("pytest -q"),
        {"source": "agent", "message": "Gave up."},
    )
    aligned = alignment.align(a, b)
    kinds = [row.kind for row in aligned.rows]
    assert kinds == ["same", "same", "same", "only_b", "same", "changed"]
    assert aligned.divergence == 3
    numbers = [(r.a.number if r.a else None, r.b.number if r.b else None) for r in aligned.rows]
    assert numbers == [(1, 1), (2, 2), (3, 3), (None, 4), (4, 5), (5, 6)]
    # Each side's totals up to each step: 11 tokens and a cent a step, a second apart.
    last = aligned.rows[-1]
    assert (last.a.tokens, last.b.tokens) == (55, 66)  # type: ignore[union-attr]
    assert last.a.cost == pytest.approx(0.05)  # type: ignore[union-attr]
    assert (last.a.seconds, last.b.seconds) == (4.0, 5.0)  # type: ignore[union-attr]
    assert last.a.preview == "Done: all green."  # type: ignore[union-attr]
    assert aligned.rows[1].a.tools == "exec"  # type: ignore[union-attr]


def test_identical_runs_do_not_diverge_and_a_missing_trajectory_is_all_one_sided() -> None:
    run = _trajectory(TASK, _call("ls"))
    assert alignment.align(run, run).divergence is None
    lone = alignment.align(run, None)
    assert [row.kind for row in lone.rows] == ["only_a", "only_a"]
    assert lone.divergence == 0


def _pair(steps: int, diverge_at: int) -> tuple[Trial, Trial]:
    """Two trials of one task, `steps` steps each, parting at step `diverge_at`."""
    common = [_call(f"step {i}") for i in range(1, diverge_at)]
    a = _trajectory(*common, *(_call(f"a {i}") for i in range(diverge_at, steps + 1)))
    b = _trajectory(*common, *(_call(f"b {i}") for i in range(diverge_at, steps + 1)))
    return (
        f.make_trial(name="run-a", detail={"trajectory": a}),
        f.make_trial(name="run-b", detail={"trajectory": b}),
    )


def test_two_long_trajectories_are_aligned_once_and_shown_a_page_at_a_time(
    client: Client, django_assert_num_queries: Callable[..., Any]
) -> None:
    a, b = _pair(2000, diverge_at=1501)
    f.login(client, "ann", "analyst")
    url = f"/compare/trials/{a.pk}/{b.pk}/"
    first = client.get(url).content.decode()
    # 2,000 rows in common, then 500 each side changed: rows 1501 to 2000 (page 8 of 10).
    assert '<a href="?page=8#divergence">first divergence at row 1501</a>' in first
    assert "Page 1 of 10" in first
    assert 'id="divergence"' not in first
    assert first.count('class="aligned-row') == 200
    assert "step 201" not in first  # the next page's steps are not rendered
    key = alignment_key(a.pk, alignment._version(a), b.pk, alignment._version(b))
    assert cache.get(f"{key}:head").divergence == 1500

    # 1 the user, 2 both trials, 3 their diffs, 4 scorers, 5 judge verdicts: the roles and
    # the alignment are kept; no trajectory is read.
    with django_assert_num_queries(5) as queries:
        page = client.get(url + "?page=8").content.decode()
    assert not any("trajectory" in q["sql"] for q in queries.captured_queries)
    marker = page.index('id="divergence"')
    assert page.index("step 1500") < marker < page.index("a 1501") < page.index("b 1501")
    assert "Page 8 of 10" in page
    # Past the last page: the last page.
    assert "Page 10 of 10" in client.get(url + "?page=99").content.decode()
    assert client.get(url + "?page=x").status_code == 200


def test_a_trial_stored_again_is_aligned_again() -> None:
    a, b = _pair(5, diverge_at=3)
    page = alignment.alignment_for(a, b, 2, size=4)
    assert (page.head.divergence, page.number, len(page.rows)) == (2, 2, 1)
    Trial.objects.filter(pk=b.pk).update(content_digest="changed")
    b.refresh_from_db()
    key = alignment_key(a.pk, alignment._version(a), b.pk, alignment._version(b))
    assert cache.get(f"{key}:head") is None
    alignment.alignment_for(a, b, 1, size=4)
    assert cache.get(f"{key}:head") is not None
    assert len(cache.get(f"{key}:4:1")) == 4


def test_one_sided_steps_are_shown_as_such_and_escaped(client: Client) -> None:
    a = f.make_trial(name="run-a", detail={"trajectory": _trajectory(TASK, _call(f.HOSTILE))})
    b = f.make_trial(name="run-b", detail={"trajectory": _trajectory(TASK)})
    f.login(client, "ann", "analyst")
    html = client.get(f"/compare/trials/{a.pk}/{b.pk}/").content.decode()
    assert "only in A" in html
    assert "<script>window.__pwned" not in html
    assert f'href="/trials/{a.pk}/#step-2"' in html


# --- reaching it -------------------------------------------------------------------------------
def test_the_trial_page_leads_to_the_other_trials_of_its_task(
    client: Client, django_assert_num_queries: Callable[..., Any]
) -> None:
    trial = f.make_trial(name="mine", task="voltage-drop")
    sibling = f.make_trial(name="sibling", task="voltage-drop", agent="other-agent")
    f.make_trial(name="stranger", task="another-task")
    f.login(client, "rita", "reviewer")
    page = client.get(f"/trials/{trial.pk}/").content.decode()
    assert f'href="/trials/{trial.pk}/others/"' in page
    # 1 the user, 2 the trial and its task, 3 the task's other trials with their jobs (the
    # roles are kept from the page before).
    with django_assert_num_queries(3):
        html = client.get(f"/trials/{trial.pk}/others/").content.decode()
    assert f'href="/compare/trials/{trial.pk}/{sibling.pk}/"' in html
    assert "other-agent" in html
    assert "stranger" not in html
    assert f'href="/compare/trials/{trial.pk}/{trial.pk}/"' not in html  # not itself


@pytest.mark.parametrize("path", ["/trials/{pk}/others/"])
def test_other_trials_needs_login_a_role_and_get(client: Client, path: str) -> None:
    trial = f.make_trial()
    url = path.format(pk=trial.pk)
    assert client.get(url).status_code == 302
    f.login(client, "nobody")
    assert client.get(url).status_code == 403
    client.logout()
    f.login(client, "ann", "analyst")
    assert client.post(url).status_code == 405
    assert client.get("/trials/999999/others/").status_code == 404


def test_a_page_whose_rendering_is_kept_reads_none_of_its_rows(
    client: Client, django_assert_num_queries: Callable[..., Any]
) -> None:
    a, b = _pair(300, diverge_at=101)
    f.login(client, "ann", "analyst")
    url = f"/compare/trials/{a.pk}/{b.pk}/"
    first = client.get(url).content.decode()
    key = alignment_key(a.pk, alignment._version(a), b.pk, alignment._version(b))
    # The rows of the shown page gone from the cache: the kept rendering does without them.
    cache.delete(f"{key}:200:1")
    with django_assert_num_queries(5) as queries:
        again = client.get(url).content.decode()
    assert not any("trajectory" in q["sql"] for q in queries.captured_queries)
    assert cache.get(f"{key}:200:1") is None
    assert again.count('class="aligned-row') == first.count('class="aligned-row') == 200
    # Another page's rendering is not kept: its rows are read, or computed again if gone.
    cache.delete(f"{key}:200:2")
    second = client.get(url + "?page=2").content.decode()
    assert second.count('class="aligned-row') == 100  # rows 201 to 300 of 300
    assert cache.get(f"{key}:200:2") is not None
