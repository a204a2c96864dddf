import pytest

from tests.memoryweb.stack import _migrated_template, migrated_var_dir  # noqa: F401  (fixtures)


@pytest.hookimpl(tryfirst=True)  # before pytest-django's, which runs transactional tests last
def pytest_collection_modifyitems(config, items):
    # test_client's http clients talk to pytest-django's live server, which answers from threads
    # of its own. On SQLite (in memory) they share the test's connection and see its writes; on
    # PostgreSQL they have connections of their own, so those tests commit (and are flushed).
    for item in items:
        params = getattr(item, "callspec", None) and item.callspec.params
        if item.path.name == "test_client.py" and params and str(params.get("kind", "")).startswith("http"):
            item.add_marker(pytest.mark.django_db(transaction=True, serialized_rollback=True))
