from django.core.management.base import BaseCommand

from consolidation.schedule import SCHEDULE, schedule_install


class Command(BaseCommand):
    help = "Install the periodic jobs into django-celery-beat (idempotent; keeps admin edits)."

    def handle(self, **options):
        created = schedule_install()
        for job in SCHEDULE:
            state = "installed" if job.name in created else "present"
            self.stdout.write(f"{state}: {job.name} ({job.task}, every {job.every})")
