"""The staff upload page: a .jsonl bundle or a zipped Harbor job folder, bounded in size, the
zip read with the importer's safety rules, ingested by the task worker, never in the request."""

from __future__ import annotations

import io
import stat
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client, override_settings

from rewards.ingest.archive import unpack_zip
from rewards.ingest.files import ArtifactError
from rewards.models import IngestUpload, Job, Trial
from rewards.uploads import ingest_upload
from tests import review_factories as f
from tests.harbor_desk import JOB, lay_out_desk
from tests.task_worker import run_queued_tasks

pytestmark = pytest.mark.django_db


def _zip(files: dict[str, bytes], links: dict[str, str] | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, target)
    return buffer.getvalue()


def _zip_folder(folder: Path) -> bytes:
    files = {
        str(path.relative_to(folder.parent)): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }
    return _zip(files)


def _post(client: Client, name: str, data: bytes) -> Any:
    return client.post("/uploads/", {"file": SimpleUploadedFile(name, data)})


def _jsonl(*names: str, reward: float = 0.9) -> bytes:
    return "".join(f.bundle(name=n, reward=reward).model_dump_json() + "\n" for n in names).encode()


# --- unpacking a zip ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("files", "links", "reason"),
    [
        ({"job/../../evil.txt": b"x"}, {}, "outside its folder"),
        ({"../evil.txt": b"x"}, {}, "outside its folder"),
        ({"/etc/cron.d/evil": b"x"}, {}, "absolute path"),
        ({"C:/evil.txt": b"x"}, {}, "absolute path"),
        ({"job/ok.txt": b"x"}, {"job/link": "/etc/passwd"}, "symlink"),
        ({"job/a.txt": b"x", "job/./a.txt": b"y"}, {}, "the same file twice"),
    ],
)
def test_an_unsafe_zip_is_refused_whole(
    tmp_path: Path, files: dict[str, bytes], links: dict[str, str], reason: str
) -> None:
    target = tmp_path / "out"
    target.mkdir()
    with pytest.raises(ArtifactError, match=reason):
        unpack_zip(io.BytesIO(_zip(files, links)), str(target), 1 << 20)
    assert not (tmp_path / "evil.txt").exists()
    assert not any(p.is_symlink() for p in target.rglob("*"))


def test_a_zip_bomb_is_refused_by_its_unpacked_size_before_anything_is_written(
    tmp_path: Path,
) -> None:
    bomb = _zip({f"job/zeros-{i}.txt": b"\0" * (1 << 20) for i in range(4)})
    assert len(bomb) < 40_000  # small on the wire
    target = tmp_path / "out"
    target.mkdir()
    with pytest.raises(ArtifactError, match="unpacks to more than the 3145728-byte limit"):
        unpack_zip(io.BytesIO(bomb), str(target), 3 << 20)
    assert list(target.iterdir()) == []


def test_a_safe_zip_unpacks_inside_its_folder(tmp_path: Path) -> None:
    target = tmp_path / "out"
    target.mkdir()
    unpack_zip(io.BytesIO(_zip({"job/t/result.json": b"{}", "job/n.txt": b"hi"})), str(target), 100)
    assert (target / "job/t/result.json").read_bytes() == b"{}"
    assert (target / "job/n.txt").read_bytes() == b"hi"


# --- the page: who, CSRF, size, kind ----------------------------------------------------------
def test_only_staff_reach_the_upload_page(client: Client) -> None:
    assert client.get("/uploads/")["Location"].startswith("/accounts/login/")
    admin = f.make_user("admin", staff=True)
    theirs = IngestUpload.objects.create(
        name="b.jsonl", kind=IngestUpload.Kind.BUNDLE, size=1, uploaded_by=admin
    )
    f.login(client, "rita", "reviewer", "analyst", "expert")
    assert client.get("/uploads/").status_code == 403
    assert client.get(f"/uploads/{theirs.pk}/").status_code == 403
    assert client.get(f"/uploads/{theirs.pk}/", headers={"HX-Request": "true"}).status_code == 403
    assert _post(client, "b.jsonl", _jsonl("t-1")).status_code == 403
    assert IngestUpload.objects.count() == 1
    client.force_login(admin)
    assert client.get("/uploads/").status_code == 200
    assert client.put("/uploads/").status_code == 405


def test_an_upload_without_its_csrf_token_is_refused() -> None:
    client = Client(enforce_csrf_checks=True)
    f.login(client, "admin", staff=True)
    assert _post(client, "b.jsonl", _jsonl("t-1")).status_code == 403
    assert IngestUpload.objects.count() == 0


@override_settings(TRIALDESK_UPLOAD_MAX_BYTES=1000)
def test_a_file_above_the_limit_is_refused_with_the_limit_named(client: Client) -> None:
    f.login(client, "admin", staff=True)
    response = _post(client, "b.jsonl", _jsonl("t-1", "t-2"))
    html = response.content.decode()
    assert response.status_code in (400, 413)
    assert "uploads are limited to 1000" in html
    assert "TRIALDESK_UPLOAD_MAX_BYTES" in html
    # A body far above the limit is refused from its length, before it is read.
    response = _post(client, "big.jsonl", b"x" * 200_000)
    assert response.status_code == 413
    assert "uploads are limited to 1000" in response.content.decode()
    assert IngestUpload.objects.count() == 0


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("notes.txt", b"hello", "Upload a .jsonl bundle or a .zip"),
        ("job.zip", b"not a zip at all", "This file is not a zip archive."),
    ],
)
def test_a_file_of_another_kind_is_refused(
    client: Client, name: str, data: bytes, message: str
) -> None:
    f.login(client, "admin", staff=True)
    response = _post(client, name, data)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert IngestUpload.objects.count() == 0


def test_the_upload_is_ingested_by_a_worker_never_in_the_request(client: Client) -> None:
    f.login(client, "admin", staff=True)
    response = _post(client, "b.jsonl", _jsonl("t-1"))
    upload = IngestUpload.objects.get()
    assert response["Location"] == f"/uploads/{upload.pk}/"
    assert upload.state == IngestUpload.State.QUEUED
    assert upload.task_id
    assert Trial.objects.count() == 0
    page = client.get(f"/uploads/{upload.pk}/").content.decode()
    assert "a task worker ingests it next" in page
    assert 'hx-trigger="every 3s"' in page  # the status asks again until it is done


def test_the_welcome_page_and_the_navigation_link_staff_to_the_upload_page(
    client: Client,
) -> None:
    f.login(client, "rita", "reviewer")
    page = client.get("/").content.decode()
    assert "Welcome to Trialdesk" in page
    assert 'href="/uploads/"' not in page
    f.login(client, "admin", staff=True)
    page = client.get("/").content.decode()
    assert '<a class="button" href="/uploads/">' in page
    assert '<a href="/uploads/">Upload</a>' in page  # the navigation's link


def test_the_upload_page_runs_a_fixed_number_of_queries(
    client: Client, django_assert_num_queries: Callable[..., Any]
) -> None:
    admin = f.login(client, "admin", staff=True)
    for i in range(3):
        IngestUpload.objects.create(
            name=f"b{i}.jsonl",
            kind=IngestUpload.Kind.BUNDLE,
            size=10,
            uploaded_by=admin,
            state=IngestUpload.State.DONE,
            counts={"ingested": 2, "invalid": 1},
            job_names=["nightly-42", "nightly-43"],
        )
    Job.objects.create(name="nightly-42")
    # 1 the user, 2 the latest uploads with who uploaded them.
    with django_assert_num_queries(2):
        assert client.get("/uploads/").status_code == 200
    # 1 the user, 2 the upload with its uploader, 3 its jobs.
    upload = IngestUpload.objects.first()
    assert upload is not None
    with django_assert_num_queries(3):
        html = client.get(f"/uploads/{upload.pk}/", headers={"HX-Request": "true"}).content
    assert b"nightly-42" in html
    assert b"<html" not in html


# --- through the real worker ------------------------------------------------------------------
@pytest.mark.django_db(transaction=True)
def test_a_zipped_harbor_job_folder_is_ingested_by_the_worker(
    client: Client, tmp_path: Path
) -> None:
    f.login(client, "admin", staff=True)
    lay_out_desk(tmp_path)
    response = _post(client, "desk.zip", _zip_folder(tmp_path / JOB))
    upload = IngestUpload.objects.get()
    assert response["Location"] == f"/uploads/{upload.pk}/"

    run_queued_tasks()

    upload.refresh_from_db()
    assert upload.state == IngestUpload.State.DONE, upload.problem
    assert upload.stored == Trial.objects.count() == 6
    assert upload.data == b""  # dropped once ingested
    job = Job.objects.get(name=JOB)
    page = client.get(f"/uploads/{upload.pk}/").content.decode()
    assert "<dt>Stored</dt><dd>6</dd>" in page
    assert f'<a href="/jobs/{job.pk}/">{JOB}</a>' in page
    assert "hx-trigger" not in page  # done: no more polling
    assert "/tmp" not in page  # the summary names the upload, not the worker's folder


@pytest.mark.django_db(transaction=True)
def test_a_bundle_is_ingested_and_its_rejected_rewards_counted_invalid(client: Client) -> None:
    f.login(client, "admin", staff=True)
    reason = "reward 0.93 rejected: the output does not parse, so only 0.0 is valid"
    bad = f.bundle(name="bad", reward=0.0, output_parseable=False, errors=[reason])
    data = _jsonl("good-1", "good-2") + (bad.model_dump_json() + "\n").encode() + b"{not json\n"
    _post(client, "mixed.jsonl", data)

    run_queued_tasks()

    upload = IngestUpload.objects.get()
    assert upload.state == IngestUpload.State.DONE
    assert upload.counts["ingested"] == 3
    # The rejected reward and the line that is no bundle.
    assert upload.counts["invalid"] == 2
    page = client.get(f"/uploads/{upload.pk}/").content.decode()
    assert "<dt>Invalid</dt><dd>2</dd>" in page
    assert f"stored as invalid: {reason}" in page
    assert "mixed.jsonl line 4" in page


@pytest.mark.django_db(transaction=True)
def test_an_unsafe_zip_fails_with_the_reason_and_stores_nothing(client: Client) -> None:
    f.login(client, "admin", staff=True)
    _post(client, "evil.zip", _zip({"job/../../../evil.txt": b"x"}))

    run_queued_tasks()

    upload = IngestUpload.objects.get()
    assert upload.state == IngestUpload.State.FAILED
    assert "outside its folder" in upload.problem
    assert Trial.objects.count() == 0
    assert "outside its folder" in client.get(f"/uploads/{upload.pk}/").content.decode()


@override_settings(TRIALDESK_UPLOAD_MAX_UNPACKED_BYTES=1 << 20)
def test_a_zip_bomb_upload_fails_in_the_worker_function(client: Client) -> None:
    f.login(client, "admin", staff=True)
    _post(client, "bomb.zip", _zip({f"job/z{i}": b"\0" * (1 << 20) for i in range(3)}))
    upload = IngestUpload.objects.get()
    assert ingest_upload.call(upload.pk) == "failed"
    upload.refresh_from_db()
    assert "unpacks to more than" in upload.problem
    # A second run of the task leaves the finished upload alone.
    assert ingest_upload.call(upload.pk) == ""


def test_an_uploaded_files_name_is_shown_as_text(client: Client) -> None:
    f.login(client, "admin", staff=True)
    _post(client, '<img src=x onerror="alert(1)">.jsonl', _jsonl("t-1"))
    upload = IngestUpload.objects.get()
    for url in ("/uploads/", f"/uploads/{upload.pk}/"):
        html = client.get(url).content.decode()
        assert "<img src=x" not in html
        assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;.jsonl" in html


@pytest.mark.django_db(transaction=True)
def test_an_upload_whose_worker_died_is_queued_again_and_ingested(client: Client) -> None:
    from datetime import timedelta

    from django.utils import timezone

    from rewards import uploads

    f.login(client, "admin", staff=True)
    _post(client, "run.jsonl", _jsonl("good-1", "good-2"))
    upload = IngestUpload.objects.get()
    # A worker took it and died: the row says ingesting, its file still in it.
    IngestUpload.objects.filter(pk=upload.pk).update(
        state=IngestUpload.State.RUNNING, started_at=timezone.now() - timedelta(minutes=5)
    )
    assert uploads.recover() == []  # still within its time: left alone
    IngestUpload.objects.filter(pk=upload.pk).update(
        started_at=timezone.now() - uploads.STALE_AFTER - timedelta(minutes=1)
    )
    assert uploads.recover() == [upload.pk]
    assert uploads.recover() == []  # queued once, not twice

    run_queued_tasks()

    upload.refresh_from_db()
    assert upload.state == IngestUpload.State.DONE
    assert upload.counts["ingested"] == 2
    assert upload.data == b""
