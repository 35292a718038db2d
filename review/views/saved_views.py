"""Saved views: a named explorer filter, the owner's own or shared with everyone."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.db.models import Q, QuerySet
from django.http import HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers

from review.forms import GuidelinesForm, SavedViewForm
from review.http import HttpRequest, wants_fragment, with_query
from review.models import SavedView
from review.roles import browse_required, can_annotate

TEMPLATE = "review/saved_views.html"


def _visible_views(request: HttpRequest) -> QuerySet[SavedView]:
    """The one scope for saved views: the user's own and everyone's shared ones."""
    return SavedView.objects.filter(Q(owner=request.user) | Q(shared=True))


@dataclass(frozen=True)
class ViewRow:
    view: SavedView
    is_own: bool
    params: list[tuple[str, str]]

    @property
    def explorer_url(self) -> str:
        return with_query(reverse("review:explorer"), self.view.query_string)

    @property
    def queue_url(self) -> str:
        """The queue under the view's filter, knowing its view (for the guidelines)."""
        query = QueryDict(self.view.query_string, mutable=True)
        query["view"] = str(self.view.pk)
        return with_query(reverse("review:queue"), query)

    @property
    def guidelines_form(self) -> GuidelinesForm:
        return GuidelinesForm(
            initial={
                "guidelines": self.view.guidelines,
                "category_definitions": GuidelinesForm.lines_of(self.view.category_definitions),
            },
            prefix=f"view-{self.view.pk}",
        )


def _rows(request: HttpRequest) -> tuple[list[ViewRow], list[ViewRow]]:
    """(own views, others' shared views), by name; one query, owners joined."""
    own: list[ViewRow] = []
    shared: list[ViewRow] = []
    for view in _visible_views(request).select_related("owner").order_by("name", "id"):
        query = QueryDict(view.query_string)
        params = [(name, value) for name, values in query.lists() for value in values]
        is_own = view.owner_id == request.user.pk
        (own if is_own else shared).append(ViewRow(view, is_own, params))
    return own, shared


def _list_context(request: HttpRequest, form: SavedViewForm | None = None) -> dict[str, object]:
    own, shared = _rows(request)
    return {
        "own_views": own,
        "shared_views": shared,
        "form": form,
        "can_annotate": can_annotate(request.user),
    }


@require_GET
@login_required
@vary_on_headers("HX-Request")
@browse_required
def saved_view_list(request: HttpRequest) -> HttpResponse:
    """The page of saved views; for htmx, the compact menu the explorer opens."""
    if wants_fragment(request):
        return render(request, f"{TEMPLATE}#view-menu", _list_context(request))
    return render(request, TEMPLATE, _list_context(request))


@require_POST
@login_required
@browse_required
def saved_view_create(request: HttpRequest) -> HttpResponse:
    """Store the explorer's current filter under a name; back to the explorer on success."""
    form = SavedViewForm(request.POST, owner=request.user)
    if form.is_valid():
        data = form.cleaned_data
        try:
            # A savepoint: the same name saved twice at once is refused by the unique
            # constraint, and the page then shows the same message as the form's check.
            with transaction.atomic():
                view = SavedView.objects.create(
                    owner=request.user,
                    name=data["name"],
                    shared=data["shared"],
                    query_string=data["query"],
                )
        except IntegrityError:
            form.add_error("name", f"You already have a view named “{data['name']}”.")
        else:
            messages.success(request, f"Saved the view “{view.name}”.")
            return redirect(with_query(reverse("review:explorer"), view.query_string))
    return render(request, TEMPLATE, _list_context(request, form), status=400)


@require_POST
@login_required
@vary_on_headers("HX-Request")
@browse_required
def saved_view_delete(request: HttpRequest, pk: int) -> HttpResponse:
    """Delete one of the user's own views. Another's shared view: 403; unseen: 404."""
    view = get_object_or_404(_visible_views(request), pk=pk)
    if view.owner_id != request.user.pk:
        raise PermissionDenied
    name = view.name
    view.delete()
    if wants_fragment(request):
        # The list item asked for its own removal (hx-swap="delete").
        return HttpResponse("")
    messages.success(request, f"Deleted the view “{name}”.")
    return redirect("review:saved-views")


@require_POST
@login_required
@browse_required
def saved_view_guidelines(request: HttpRequest, pk: int) -> HttpResponse:
    """Set the guidelines of one of the user's own views (its queue shows them)."""
    view = get_object_or_404(_visible_views(request), pk=pk)
    if view.owner_id != request.user.pk:
        raise PermissionDenied
    form = GuidelinesForm(request.POST, prefix=f"view-{view.pk}")
    if not form.is_valid():
        problems = "; ".join(str(e) for errors in form.errors.values() for e in errors)
        messages.error(request, f"The guidelines of “{view.name}” were not saved: {problems}")
        return redirect("review:saved-views")
    view.guidelines = form.cleaned_data["guidelines"]
    view.category_definitions = form.cleaned_data["category_definitions"]
    view.save(update_fields=["guidelines", "category_definitions"])
    version = view.guideline_version or "none"
    messages.success(request, f"Saved the guidelines of “{view.name}” (version {version}).")
    return redirect("review:saved-views")
