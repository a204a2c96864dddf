"""`manage.py backup [PATH]`: a consistent copy of the database while it runs (memoryweb/backup.py)."""

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import connection
from django.utils import timezone

from memory.models import (
    ApiKey,
    App,
    AuditEvent,
    Conversation,
    Lesson,
    Message,
    Note,
    Procedure,
    ProfileFact,
    Subject,
)
from memoryweb.backup import BackupError, Report, pg_backup, sqlite_backup

# the tables whose rows a backup and a restore count, with the name printed for each
MAIN_TABLES = {
    model._meta.db_table: str(model._meta.verbose_name_plural)
    for model in (
        App,
        ApiKey,
        Subject,
        Conversation,
        Message,
        ProfileFact,
        Note,
        Lesson,
        Procedure,
        AuditEvent,
    )
}


def report_lines(verb: str, report: Report) -> list[str]:
    lines = [f"{verb}: {report.path} ({report.size / 1_048_576:.1f} MB, {report.size} bytes)"]
    width = max(len(label) for label in MAIN_TABLES.values())
    for table, label in MAIN_TABLES.items():
        if table in report.counts:
            lines.append(f"  {label:<{width}}  {report.counts[table]}")
    return lines


class Command(BaseCommand):
    help = (
        "Back up the database while it runs: SQLite through the online backup API, PostgreSQL with "
        "pg_dump (custom format). Prints the file, its size and the row counts of the main tables."
    )
    requires_system_checks: list[str] = []  # they would open a connection of their own

    def add_arguments(self, parser):
        parser.add_argument(
            "path", nargs="?", help="the backup file to write (default: $MEMORYWEB_VAR_DIR/backups/…)"
        )

    def handle(self, path, **options):
        vendor = connection.vendor
        if vendor not in ("sqlite", "postgresql"):
            raise CommandError(f"backups of a {vendor} database are not supported")
        if path:
            output = Path(path).expanduser().resolve()
        else:
            stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
            suffix = "sqlite3" if vendor == "sqlite" else "dump"
            output = settings.VAR_DIR / "backups" / f"memoryweb-{stamp}.{suffix}"
        try:
            if vendor == "sqlite":
                report = sqlite_backup(Path(connection.settings_dict["NAME"]), output, list(MAIN_TABLES))
            else:
                report = pg_backup(connection, output, list(MAIN_TABLES))
        except BackupError as exc:
            raise CommandError(str(exc)) from exc
        for line in report_lines("backup written", report):
            self.stdout.write(line)
