from .celery import app as celery_app
from .supervised import watch_supervisor

# A program `manage.py runall` started ends when runall is gone (a no-op in any other process).
watch_supervisor()

__all__ = ["celery_app"]
