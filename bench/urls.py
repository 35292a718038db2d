from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.template import engines
from django.urls import include, path

from rewards.models import Trial

BARE = engines["django"].from_string(
    "<table>{% for t in rows %}<tr><td>{{ t.id }}</td><td>{{ t.name }}</td>"
    "<td>{{ t.agent_name }}</td><td>{{ t.model_name }}</td><td>{{ t.reward }}</td>"
    "<td>{{ t.judge_verdict }}</td></tr>{% endfor %}</table>"
)


@login_required
def bare_50(request: HttpRequest) -> HttpResponse:
    """The baseline: 50 rows from one SELECT, rendered by a plain template."""
    rows = Trial.objects.order_by("-id").only(
        "id", "name", "agent_name", "model_name", "reward", "judge_verdict"
    )[:50]
    return HttpResponse(BARE.render({"rows": rows}, request))


urlpatterns = [
    path("bench/bare-50/", bare_50),
    path("", include("config.urls")),
]
