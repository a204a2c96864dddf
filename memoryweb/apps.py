from django.apps import AppConfig


class MemorywebConfig(AppConfig):
    name = "memoryweb"
    verbose_name = "memoryweb runtime"
