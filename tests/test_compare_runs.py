"""Compare runs: paired task outcomes, flips, deltas with intervals, McNemar, side by side.

The fixture (rewards; pass threshold 0.5; judge verdicts in brackets):

    task     run A                     run B
    task1    0.9 [PASS]                0.8 [PASS]     both pass
    task2    0.9 [PASS]                0.1 [FAIL]     regression
    task3    0.1 [UNPARSEABLE]         0.9 [PASS]     improvement (judge: not paired)
    task4    0.1 [FAIL]                0.2 [FAIL]     neither
    task5    0.9                       -              only in A
    task6    -                         0.1            only in B
    task7    0.9 [PASS], 0.1 [FAIL]    0.9 [PASS]     improvement: 1 of 2 is no majority
"""

from __future__ import annotations

import pytest
from django.test import Client
from pytest_django import DjangoAssertNumQueries

from review.models import add_annotation
from review.science import compare
from rewards.models import Job, Trial
from tests import review_factories as f

pytestmark = pytest.mark.django_db


def _run(job: str, rows: list[tuple[str, float, str]]) -> list[Trial]:
    return f.write(
        *(
            f.bundle(
                job=job, task=task, reward=reward, judges=[f.judge(verdict)] if verdict else []
            )
            for task, reward, verdict in rows
        )
    )


@pytest.fixture
def runs() -> tuple[Job, Job]:
    a = _run(
        "run-a",
        [
            ("task1", 0.9, "PASS"),
            ("task2", 0.9, "PASS"),
            ("task3", 0.1, "UNPARSEABLE"),
            ("task4", 0.1, "FAIL"),
            ("task5", 0.9, ""),
            ("task7", 0.9, "PASS"),
            ("task7", 0.1, "FAIL"),
        ],
    )
    b = _run(
        "run-b",
        [
            ("task1", 0.8, "PASS"),
            ("task2", 0.1, "FAIL"),
            ("task3", 0.9, "PASS"),
            ("task4", 0.2, "FAIL"),
            ("task6", 0.1, ""),
            ("task7", 0.9, "PASS"),
        ],
    )
    rita = f.make_user("rita", "reviewer")
    add_annotation(trial_id=a[0].pk, reviewer=rita, judgment="pass")
    add_annotation(trial_id=b[0].pk, reviewer=rita, judgment="fail")
    return Job.objects.get(name="run-a"), Job.objects.get(name="run-b")


def test_verifier_outcomes_are_paired_per_task(runs: tuple[Job, Job]) -> None:
    result = compare.compare(*runs)
    verifier = result.results[0]
    assert verifier.outcome.key == "verifier"
    c = verifier.counts
    assert (c.both_pass, c.a_only, c.b_only, c.neither) == (1, 1, 2, 1)
    # A passes 2 of 5 paired tasks, B 3 of 5: delta = (2 - 1) / 5 = 0.2.
    assert c.delta == pytest.approx(0.2)
    # Exact McNemar, b = 1, c = 2: P(X <= 1) of Bin(3, 1/2) = 4/8, doubled: p = 1.
    assert verifier.test is not None
    assert verifier.test.method == "exact"
    assert verifier.test.p_value == pytest.approx(1.0)
    assert verifier.interval is not None
    assert verifier.interval.low <= 0.2 <= verifier.interval.high
    assert (result.only_a, result.only_b) == (1, 1)


def test_judge_and_human_outcomes_pair_only_decided_tasks(runs: tuple[Job, Job]) -> None:
    result = compare.compare(*runs)
    judge, human = result.results[1], result.results[2]
    # task3 has no decided judge verdict in A; task7 A: 1 PASS of 2 is no majority.
    c = judge.counts
    assert (c.both_pass, c.a_only, c.b_only, c.neither) == (1, 1, 1, 1)
    h = human.counts
    assert (h.both_pass, h.a_only, h.b_only, h.neither) == (0, 1, 0, 0)


def test_flipped_tasks_are_listed_each_way_with_their_trials(runs: tuple[Job, Job]) -> None:
    result = compare.compare(*runs)
    assert [flip.task for flip in result.regressions] == ["task2"]
    assert [flip.task for flip in result.improvements] == ["task3", "task7"]
    task2 = result.regressions[0]
    assert Trial.objects.get(pk=task2.a_trial).job.name == "run-a"
    assert Trial.objects.get(pk=task2.b_trial).job.name == "run-b"


def test_each_flip_list_is_cut_at_its_own_limit_and_keeps_its_trials(
    runs: tuple[Job, Job], monkeypatch: pytest.MonkeyPatch
) -> None:
    # B against A: two regressions (task3, task7) and one improvement (task2); one listed
    # each way, the rest only counted.
    monkeypatch.setattr(compare, "MAX_FLIPS", 1)
    a, b = runs
    result = compare.compare(b, a)
    assert [flip.task for flip in result.regressions] == ["task3"]
    assert [flip.task for flip in result.improvements] == ["task2"]
    task2 = result.improvements[0]
    assert Trial.objects.get(pk=task2.a_trial).job == b
    assert Trial.objects.get(pk=task2.b_trial).job == a
    assert [count for _, _, count in result.flip_lists] == [2, 1]


def test_compare_page_shows_the_figures_in_a_fixed_number_of_queries(
    client: Client, runs: tuple[Job, Job], django_assert_num_queries: DjangoAssertNumQueries
) -> None:
    a, b = runs
    f.login(client, "ann", "analyst")
    # the user, their role groups, job A, job B (form), the tasks confirmed defective
    # (none; read once, then cached), the two runs' tallies summed per task, the flipped
    # tasks' first trials, and the job selects' choices with their agents, models and
    # datasets (two queries, read once, then cached).
    with django_assert_num_queries(9):
        response = client.get(f"/compare/?a={a.pk}&b={b.pk}")
    html = response.content.decode()
    assert response.status_code == 200
    assert "Passed in A, failed in B" in html
    assert "task2" in html
    assert "0.200" in html
    regression = compare.compare(a, b).regressions[0]
    assert f"/compare/trials/{regression.a_trial}/{regression.b_trial}/" in html


def test_compare_page_without_runs_asks_for_them_and_refuses_the_same_run_twice(
    client: Client, runs: tuple[Job, Job]
) -> None:
    a, _ = runs
    f.login(client, "ann", "analyst")
    response = client.get("/compare/")
    assert response.status_code == 200
    assert "Passed in A" not in response.content.decode()
    same = client.get(f"/compare/?a={a.pk}&b={a.pk}").content.decode()
    assert "Choose two different runs." in same
    missing = client.get(f"/compare/?a={a.pk}&b=999999").content.decode()
    assert "Select a valid choice" in missing


def test_side_by_side_shows_both_trials(
    client: Client, runs: tuple[Job, Job], django_assert_num_queries: DjangoAssertNumQueries
) -> None:
    regression = compare.compare(*runs).regressions[0]
    f.login(client, "ann", "analyst")
    url = f"/compare/trials/{regression.a_trial}/{regression.b_trial}/"
    # the user, their role groups, both trials, their details, scorers and judge
    # verdicts.
    with django_assert_num_queries(6):
        response = client.get(url)
    html = response.content.decode()
    assert response.status_code == 200
    # Each section is a row of the two trials' cards.
    for section in ("Scorers", "Judge verdict", "Trajectory", "Diff"):
        assert f'aria-label="{section} of trial A"' in html
        assert f'aria-label="{section} of trial B"' in html
    assert "run-a" in html
    assert "run-b" in html
    assert "I will compute it." in html  # the trajectory
    assert "answer.json" in html  # the diff
    assert client.get(f"/compare/trials/{regression.a_trial}/999999/").status_code == 404


def test_side_by_side_escapes_hostile_text(client: Client) -> None:
    hostile = f.write(f.hostile_bundle())[0]
    plain = f.make_trial()
    f.login(client, "ann", "analyst")
    html = client.get(f"/compare/trials/{hostile.pk}/{plain.pk}/").content.decode()
    assert "<script>window.__pwned" not in html
    assert "&lt;script&gt;window.__pwned" in html


@pytest.mark.parametrize("url", ["/compare/", "/compare/trials/1/2/"])
def test_compare_pages_need_login_a_role_and_get(client: Client, url: str) -> None:
    assert client.get(url).status_code == 302
    f.login(client, "nobody")
    assert client.get(url).status_code == 403
    client.logout()
    f.login(client, "ann", "analyst")
    assert client.post(url).status_code == 405


def test_the_comparison_reads_new_trials(runs: tuple[Job, Job]) -> None:
    a, b = runs
    before = compare.compare(a, b)
    # Run B's task1 now fails by a majority: a third regression, with its first trials.
    _run("run-b", [("task1", 0.1, "FAIL"), ("task1", 0.2, "FAIL")])
    after = compare.compare(a, b)
    assert after != before
    assert [flip.task for flip in after.regressions] == ["task1", "task2"]
    assert compare.compare(a, b) == after
    # The other way round, the regressions are improvements.
    assert [flip.task for flip in compare.compare(b, a).improvements] == ["task1", "task2"]
