import os

import pytest
from django.db import connection


@pytest.mark.django_db
def test_the_database_in_use_is_the_one_database_url_names():
    url = os.environ.get("DATABASE_URL", "sqlite:///")
    expected = "postgresql" if url.startswith(("postgres", "pgsql")) else "sqlite"
    assert connection.vendor == expected
    assert connection.introspection.table_names()  # migrated, reachable
