"""`manage.py restore PATH`: replace the database with a checked backup (memoryweb/backup.py)."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.db import connection, connections

from memoryweb.backup import BackupError, pg_check, pg_env, pg_restore, sqlite_check, sqlite_restore
from memoryweb.management.commands.backup import MAIN_TABLES, report_lines


class Command(BaseCommand):
    help = (
        "Replace the database with a backup made by `manage.py backup`, after checking it "
        "(SQLite: PRAGMA integrity_check; PostgreSQL: pg_restore --list). Refused while the "
        "database is in use unless --force."
    )
    requires_system_checks: list[str] = []  # they would open a connection, which counts as "in use"

    def add_arguments(self, parser):
        parser.add_argument("path", help="the backup file")
        parser.add_argument(
            "--force", action="store_true", help="restore even while other processes have the database open"
        )
        parser.add_argument(
            "--noinput", "--no-input", action="store_false", dest="interactive", help="do not ask to confirm"
        )

    def handle(self, path, force, interactive, **options):
        backup = Path(path).expanduser().resolve()
        vendor = connection.vendor
        if vendor not in ("sqlite", "postgresql"):
            raise CommandError(f"restoring a {vendor} database is not supported")
        target = connection.settings_dict["NAME"]
        try:
            checked = (
                sqlite_check(backup, list(MAIN_TABLES))
                if vendor == "sqlite"
                else pg_check(backup, pg_env(connection.settings_dict))
            )
            for line in report_lines("backup checked", checked):
                self.stdout.write(line)
            if interactive:
                answer = input(f"This replaces everything in the database {target}. Type 'yes' to go on: ")
                if answer.strip().lower() != "yes":
                    raise CommandError("restore cancelled; nothing was changed")
            connections.close_all()  # our own connection must not count as another user
            if vendor == "sqlite":
                report = sqlite_restore(backup, Path(target), list(MAIN_TABLES), force=force)
            else:
                report = pg_restore(connection, backup, list(MAIN_TABLES), force=force)
        except BackupError as exc:
            raise CommandError(str(exc)) from exc
        report.path = Path(target)
        for line in report_lines("database restored", report):
            self.stdout.write(line)
