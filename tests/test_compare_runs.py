"""Compare runs: paired task outcomes, flips, deltas with intervals, McNemar, side by side.

The fixture (rewards; pass threshold 0.5; judge verdicts in brackets):

    task     run A                     run B
    task1    0.9 [PASS]                0.8 [PASS]     both pass
    task2    0.9 [PASS]                0.1 [FAIL]     regression
    task3    0.1 [UNPARSEABLE]         0.9 [PASS]     improvement (judge: not paired)
    task4    0.1 [FAIL]                0.2 [FAIL]     neither
    task5    0.9                       -              only in A
    task6    -                         0.1            only in B
    task7    0.9 [PASS], 0.1 [FAIL]    0.9 [PASS]     tied in A (1 of 2): not paired
"""

from __future__ import annotations

import pytest
from django.test import Client
from pytest_django import DjangoAssertNumQueries

from review.models import CalibrationRule, add_annotation
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
    # task7 tied in A (1 pass of 2 trials): left out, not counted as A's fail (it used to
    # be, and made it an improvement).
    assert (c.both_pass, c.a_only, c.b_only, c.neither) == (1, 1, 1, 1)
    assert verifier.tied == 1
    # A passes 2 of 4 paired tasks, B 2 of 4: delta = (1 - 1) / 4 = 0.
    assert c.delta == pytest.approx(0.0)
    # Exact McNemar, b = 1, c = 1: P(X <= 1) of Bin(2, 1/2) = 3/4, doubled: p = 1.
    assert verifier.test is not None
    assert verifier.test.method == "exact"
    assert verifier.method == "exact binomial"
    assert verifier.test.p_value == pytest.approx(1.0)
    # Four paired tasks: too few for Δ's interval, and the row says so.
    assert verifier.interval is None
    assert verifier.no_interval == "fewer than 10 paired tasks"
    assert (result.only_a, result.only_b) == (1, 1)


def test_judge_and_human_outcomes_pair_only_decided_tasks(runs: tuple[Job, Job]) -> None:
    result = compare.compare(*runs)
    judge, human = result.results[1], result.results[2]
    # task3 has no decided judge verdict in A; task7 A: 1 PASS of 2 is a tie, not paired.
    c = judge.counts
    assert (c.both_pass, c.a_only, c.b_only, c.neither) == (1, 1, 0, 1)
    assert judge.tied == 1
    h = human.counts
    assert (h.both_pass, h.a_only, h.b_only, h.neither) == (0, 1, 0, 0)


def test_flipped_tasks_are_listed_each_way_with_their_trials(runs: tuple[Job, Job]) -> None:
    result = compare.compare(*runs)
    assert [flip.task for flip in result.regressions] == ["task2"]
    assert [flip.task for flip in result.improvements] == ["task3"]
    task2 = result.regressions[0]
    assert Trial.objects.get(pk=task2.a_trial).job.name == "run-a"
    assert Trial.objects.get(pk=task2.b_trial).job.name == "run-b"


def test_each_flip_list_is_cut_at_its_own_limit_and_keeps_its_trials(
    runs: tuple[Job, Job], monkeypatch: pytest.MonkeyPatch
) -> None:
    # B against A: two regressions (task3, task8) and one improvement (task2); one listed
    # each way, the rest only counted.
    _run("run-a", [("task8", 0.1, "")])
    _run("run-b", [("task8", 0.9, "")])
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
    CalibrationRule.current()  # made on the first read of any calibration (a write)
    # the user, their role groups, job A, job B (form), the tasks confirmed defective
    # (none; read once, then cached), the two runs' tallies summed per task, the flipped
    # tasks' first trials, and the job selects' choices with their agents, models and
    # datasets (two queries, read once, then cached); then the calibration rule with the
    # newest verdict, annotation and adjudication ids, each run's judged trials counted by
    # judge version (two; then kept) and those versions' verdicts of labelled trials.
    with django_assert_num_queries(13):
        response = client.get(f"/compare/?a={a.pk}&b={b.pk}")
    html = response.content.decode()
    assert response.status_code == 200
    assert "Passed in A, failed in B" in html
    assert "task2" in html
    # Each delta with its own number of paired tasks beside it, and the tie rule stated.
    assert "<strong>0.000</strong>" in html
    assert '<span class="paired-tasks">4 tasks</span>' in html
    assert '<span class="paired-tasks">3 tasks</span>' in html  # the judge's
    assert "A tie (exactly half, 1 of 2 say) is neither" in html
    assert "fewer than 10 paired tasks" in html
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
    # the user, their role groups, both trials, their diffs, scorers and judge verdicts,
    # and (the alignment not kept yet) both trajectories.
    with django_assert_num_queries(7):
        response = client.get(url)
    html = response.content.decode()
    assert response.status_code == 200
    # Each section is a row of the two trials' cards; the trajectories are one aligned table.
    for section in ("Scorers", "Judge verdict", "Diff"):
        assert f'aria-label="{section} of trial A"' in html
        assert f'aria-label="{section} of trial B"' in html
    assert 'id="aligned"' in html
    assert "run-a" in html
    assert "run-b" in html
    assert "I will compute it." in html  # the trajectory
    assert "answer.json" in html  # the diff
    # Again: the roles and the alignment are kept, no trajectory is read.
    with django_assert_num_queries(5) as again:
        again_html = client.get(url).content.decode()
    assert again_html.split('id="aligned"')[1] == html.split('id="aligned"')[1]
    assert not any("trajectory" in q["sql"] for q in again.captured_queries)
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


def test_a_tie_is_neither_a_pass_nor_a_fail_and_is_counted_apart() -> None:
    # One trial passes and one fails in A, both pass in B: the task is not an improvement.
    _run("tie-a", [("t", 0.9, "PASS"), ("t", 0.1, "FAIL")])
    _run("tie-b", [("t", 0.9, "PASS"), ("t", 0.8, "PASS")])
    a, b = Job.objects.get(name="tie-a"), Job.objects.get(name="tie-b")
    tasks = compare.per_task(a, b)
    assert tasks[0].a == {"verifier": None, "judge": None, "human": None}
    assert tasks[0].tied_a == {"verifier", "judge"}  # no human review: undecided, not tied
    result = compare.compare(a, b)
    verifier, judge, human = result.results
    assert verifier.counts.n == judge.counts.n == 0
    assert (verifier.tied, judge.tied, human.tied) == (1, 1, 0)
    assert verifier.test is None
    assert verifier.no_interval == "no paired task"
    assert result.improvements == []


def test_mcnemar_is_worded_as_switched(client: Client, runs: tuple[Job, Job]) -> None:
    # The switch is where rewards.agreement.mcnemar makes it: exact below 25 changed tasks.
    from rewards import agreement

    assert agreement.mcnemar(12, 12).method == "exact"
    assert agreement.mcnemar(13, 12).method == "chi2"
    assert compare.METHODS == {"exact": "exact binomial", "chi2": "χ², continuity-corrected"}
    a, b = runs
    f.login(client, "ann", "analyst")
    html = client.get(f"/compare/?a={a.pk}&b={b.pk}").content.decode()
    assert (
        "McNemar's p uses the exact two-sided binomial test when fewer than 25 paired tasks"
        " changed outcome (pass → fail plus fail → pass), and from 25 on the χ² test with"
        " continuity correction (one degree of freedom)."
    ) in html
    assert '<span class="muted">exact binomial</span>' in html
