from django.db import migrations

CATEGORIES = [
    ("health", "Health", "Illnesses, conditions, medication, allergies, mental health, disabilities."),
    ("sexual_life", "Sexual life", "Sexual orientation, sexual activity and intimate relationships."),
    ("religion", "Religion and beliefs", "Religious or philosophical beliefs and practices."),
    ("politics", "Politics", "Political opinions, party membership, votes, trade-union membership."),
    ("finances", "Finances", "Income, debts, bank accounts, salaries, spending, financial difficulties."),
    ("precise_location", "Precise location", "Home address, exact places and where you are at a given time."),
    (
        "government_ids",
        "Government IDs",
        "Passport, social security, national ID, driving licence and tax numbers.",
    ),
    (
        "credentials",
        "Credentials",
        "Passwords, PINs, security answers and access codes (secrets are removed anyway).",
    ),
    (
        "relationships",
        "Relationships",
        "Partners, family conflicts, friendships and other people's private lives.",
    ),
    ("minors", "Children", "Information about children: names, schools, health, whereabouts."),
]


def seed(apps, schema_editor):
    ConsentCategory = apps.get_model("memory", "ConsentCategory")
    for slug, name, description in CATEGORIES:
        ConsentCategory.objects.update_or_create(
            slug=slug, defaults={"name": name, "description": description, "default_policy": "ask"}
        )


def unseed(apps, schema_editor):
    apps.get_model("memory", "ConsentCategory").objects.filter(slug__in=[c[0] for c in CATEGORIES]).delete()


class Migration(migrations.Migration):
    dependencies = [("memory", "0004_consent")]

    operations = [migrations.RunPython(seed, unseed)]
