from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from memoryweb.models import Counter


def counter_add(name: str, by: int = 1) -> None:
    """Add `by` to the named counter (created at 0 on first use). Not idempotent by design."""
    if by == 0:
        return
    now = timezone.now()
    if Counter.objects.filter(name=name).update(value=F("value") + by, updated_at=now):
        return
    try:
        with transaction.atomic():
            Counter.objects.create(name=name, value=by, updated_at=now)
    except IntegrityError:  # created concurrently
        Counter.objects.filter(name=name).update(value=F("value") + by, updated_at=now)


def counter_values(prefix: str = "") -> dict[str, int]:
    return dict(Counter.objects.filter(name__startswith=prefix).values_list("name", "value"))
