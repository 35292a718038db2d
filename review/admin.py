"""Admin for staff. Annotations are read-only here: no add, change or delete, for anyone."""

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from review.models import Annotation, Claim, ReviewerProfile, SavedView


@admin.register(Annotation)
class AnnotationAdmin(admin.ModelAdmin):
    list_display = ["id", "trial", "reviewer", "judgment", "reviewer_discipline", "created_at"]
    list_filter = ["judgment"]
    list_select_related = ["trial__job", "reviewer"]
    search_fields = ["reviewer__username", "trial__name"]
    raw_id_fields = ["trial", "reviewer"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        # An annotation's reviewer is the logged-in user of the trial page, never chosen.
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(ReviewerProfile)
class ReviewerProfileAdmin(admin.ModelAdmin):
    list_display = ["user", "discipline"]
    search_fields = ["user__username", "discipline"]


@admin.register(SavedView)
class SavedViewAdmin(admin.ModelAdmin):
    list_display = ["name", "owner", "shared", "created_at"]
    list_filter = ["shared"]


@admin.register(Claim)
class ClaimAdmin(admin.ModelAdmin):
    list_display = ["trial", "reviewer", "claimed_at", "expires_at"]
    raw_id_fields = ["trial", "reviewer"]
