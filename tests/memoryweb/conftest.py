from tests.memoryweb.stack import _migrated_template, migrated_var_dir  # noqa: F401  (fixtures)
