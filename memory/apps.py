from django.apps import AppConfig


class MemoryConfig(AppConfig):
    name = "memory"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from memory import checks  # noqa: F401  (registers the system checks once the apps are loaded)
