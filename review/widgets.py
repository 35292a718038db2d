"""A form renderer that writes the plain widgets in Python: the filter sidebar's hot path.

Django renders every `<input>` and `<select>` (and each `<option>`, and each field's empty
error list) through a template of its own; the explorer's sidebar has a dozen fields, which
cost more than its query. This renderer produces the same markup as Django's templates for
inputs, selects and error lists, building it with `format_html` (every value escaped); any
other template goes to Django's own renderer.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from django import forms
from django.forms.renderers import DjangoTemplates
from django.forms.utils import flatatt
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

_INPUTS = frozenset(
    f"django/forms/widgets/{name}.html"
    for name in (
        "input",
        "text",
        "number",
        "hidden",
        "search",
        "email",
        "url",
        "password",
        "tel",
        "date",
    )
)
_SELECT = "django/forms/widgets/select.html"
_ERRORS = frozenset(("django/forms/errors/list/default.html", "django/forms/errors/list/ul.html"))


def _attrs(attrs: dict[str, Any]) -> SafeString:
    # Django's attrs.html: False leaves the attribute out, True writes it bare.
    return flatatt({name: value for name, value in attrs.items() if value is not False})


def render_input(widget: dict[str, Any]) -> SafeString:
    value = widget["value"]
    return format_html(
        '<input type="{}" name="{}"{}{}>',
        widget["type"],
        widget["name"],
        format_html(' value="{}"', value) if value is not None else "",
        _attrs(widget["attrs"]),
    )


def _options(options: list[dict[str, Any]]) -> SafeString:
    return format_html_join(
        "",
        '\n  <option value="{}"{}>{}</option>',
        ((option["value"], _attrs(option["attrs"]), option["label"]) for option in options),
    )


def render_select(widget: dict[str, Any]) -> SafeString:
    groups = []
    for group_name, options, _ in widget["optgroups"]:
        if group_name:
            groups.append(
                format_html(
                    '\n  <optgroup label="{}">{}\n  </optgroup>', group_name, _options(options)
                )
            )
        else:
            groups.append(_options(options))
    return format_html(
        '<select name="{}"{}>{}\n</select>',
        widget["name"],
        _attrs(widget["attrs"]),
        SafeString("".join(groups)),  # each part was built by format_html
    )


def render_errors(context: dict[str, Any]) -> SafeString:
    """Django's errors/list/ul.html: nothing at all for a field without errors."""
    errors = context["errors"]
    if not errors:
        return SafeString("")
    field_id = getattr(errors, "field_id", None)
    return format_html(
        '<ul class="{}"{}>{}</ul>',
        context["error_class"],
        format_html(' id="{}_error"', field_id) if field_id else "",
        format_html_join("", "<li>{}</li>", ((error,) for error in errors)),
    )


class FastWidgetRenderer(DjangoTemplates):
    def render(
        self, template_name: str, context: dict[str, Any], request: HttpRequest | None = None
    ) -> str:
        if template_name in _INPUTS:
            return render_input(context["widget"])
        if template_name == _SELECT:
            return render_select(context["widget"])
        if template_name in _ERRORS:
            return render_errors(context)
        return super().render(template_name, context, request)


class FastSelect(forms.Select):
    """A single-choice <select> written in one pass, option groups included.

    Django builds a dict per option (and, without the renderer above, renders a template per
    option); the explorer's selects hold a few fixed choices, so each option's markup is
    built once and reused. Same markup as Django's: the first option equal to the value is
    selected, and no value selects the empty choice.
    """

    def render(
        self, name: str, value: Any, attrs: dict[str, Any] | None = None, renderer: Any = None
    ) -> SafeString:
        selected = "" if value is None else str(value)
        found = False
        parts: list[str] = []
        for option_value, label in self.choices:
            if isinstance(label, list | tuple):
                inner = []
                for inner_value, inner_label in label:
                    mark = not found and str(inner_value) == selected
                    found = found or mark
                    inner.append(_option(str(inner_value), str(inner_label), mark))
                parts.append(_optgroup(str(option_value), SafeString("".join(inner))))
                continue
            mark = not found and str(option_value) == selected
            found = found or mark
            parts.append(_option(str(option_value), str(label), mark))
        final_attrs = self.build_attrs(self.attrs, {**(attrs or {}), "name": name})
        return format_html(
            "<select{}>{}\n</select>", _attrs(final_attrs), SafeString("".join(parts))
        )


@lru_cache(maxsize=512)
def _option(value: str, label: str, selected: bool) -> SafeString:
    mark = SafeString(" selected") if selected else ""
    return format_html('\n  <option value="{}"{}>{}</option>', value, mark, label)


def _optgroup(label: str, options: SafeString) -> SafeString:
    return format_html('\n  <optgroup label="{}">{}\n  </optgroup>', label, options)
