from django.core.management.base import BaseCommand, CommandError

from consolidation.services import consolidation_run, subjects_with_candidates, votes_decay
from memory.config import get_config
from memory.leases import lease_owner_id
from memory.models import App, Subject
from memory.services.audit import Actor
from memoryweb.errors import FeatureDisabled


class Command(BaseCommand):
    help = (
        "Run a consolidation tick now: distil clusters of linked notes into lessons and procedures "
        "(every subject with candidates, one app's, or one subject's), each under its lease."
    )

    def add_arguments(self, parser):
        parser.add_argument("--app", metavar="NAME", help="only this app's subjects")
        parser.add_argument("--subject", metavar="EXT", help="only this subject (external id; needs --app)")
        parser.add_argument(
            "--decay", action="store_true", help="also decay every vote score once (voting.signalDecay)"
        )

    def handle(self, *args, app=None, subject=None, decay=False, **options):
        if subject and not app:
            raise CommandError("--subject needs --app: external ids are unique per app")
        subjects = subjects_with_candidates()
        if app:
            found = App.objects.filter(name=app).first()
            if found is None:
                raise CommandError(f"no app named {app!r}")
            subjects = Subject.objects.filter(app=found).select_related("app").order_by("pk")
            if subject:
                subjects = subjects.filter(external_id=subject)
                if not subjects.exists():
                    raise CommandError(f"no subject {subject!r} in app {app!r}")
        actor = Actor.system("manage.py consolidate")
        owner = lease_owner_id()
        for each in subjects:
            try:
                run = consolidation_run(subject=each, config=get_config(each.app), actor=actor, owner=owner)
            except FeatureDisabled as exc:
                self.stdout.write(f"skipped {each}: {exc.message}")
                continue
            if run is None:
                self.stdout.write(f"skipped {each}: another consolidation holds its lease")
                continue
            s = run.stats
            self.stdout.write(
                f"{run.status} {each}: {s.get('clusters', 0)} clusters → {s.get('lessons', 0)} lessons, "
                f"{s.get('procedures', 0)} procedures, {s.get('notes_archived', 0)} notes archived, "
                f"{s.get('declined', 0)} declined (job run {run.pk}, {s.get('total_ms', 0)} ms)"
            )
        if decay:
            run = votes_decay(actor=actor, force=True, owner=owner)
            if run is None:
                self.stdout.write("decay skipped: another decay holds its lease")
            else:
                self.stdout.write(f"decayed vote scores (job run {run.pk}): {run.stats}")
