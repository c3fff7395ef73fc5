"""Store URLs: which store each names, and every password libpq would read from one masked
in every message (``kernelindex_sdk.store.masked_url`` and the errors that show a URL)."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from kernelindex_sdk import ArgumentError
from kernelindex_sdk._cli import main
from kernelindex_sdk.errors import StoreError
from kernelindex_sdk.store import masked_url, open_store, parse_url

SECRET = "hunter2pw"  # noqa: S105 (the tests' own made-up password)

# Secrets class: each form libpq reads a password from, and what messages show instead.
MASKED = [
    # URI userinfo.
    ("postgresql://me:hunter2pw@db/records", "postgresql://me:***@db/records"),
    ("postgres://me:hunter2pw@db:5432/records", "postgres://me:***@db:5432/records"),
    ("POSTGRESQL://me:hunter2pw@db/records", "POSTGRESQL://me:***@db/records"),
    ("postgresql://:hunter2pw@db/records", "postgresql://:***@db/records"),
    # libpq's userinfo ends at the first '@' before a '/': '?' and '#' belong to it.
    ("postgresql://me:hun?ter2pw@db/r", "postgresql://me:***@db/r"),
    ("postgresql://me:hun#ter2pw@db/r", "postgresql://me:***@db/r"),
    (
        "postgresql://me:h?u#n:ter2pw@db/r?sslmode=require",
        "postgresql://me:***@db/r?sslmode=require",
    ),
    # Percent-encoded, and a bare % (libpq's error would echo it).
    ("postgresql://me:hunter%32pw@db/r", "postgresql://me:***@db/r"),
    ("postgresql://me:hunter2pw%@db/r", "postgresql://me:***@db/r"),
    # An unencoded '@' in the password: libpq ends the userinfo at the first, urllib at
    # the last; masked to the last.
    ("postgresql://me:hunter@2pw@db/r", "postgresql://me:***@db/r"),
    # A '/' in the password: libpq reads no userinfo, but it is still the user's password.
    ("postgresql://me:hun/ter2pw@db/r", "postgresql://me:***@db/r"),
    # The query parameter, in any case and encoding of its name.
    ("postgresql://me@db/r?password=hunter2pw", "postgresql://me@db/r?password=***"),
    ("postgresql://me@db/r?PASSWORD=hunter2pw&x=1", "postgresql://me@db/r?PASSWORD=***&x=1"),
    ("postgresql://me@db/r?pass%77ord=hunter2pw", "postgresql://me@db/r?pass%77ord=***"),
    ("postgresql://me@db/r?%70assword=hunter2pw", "postgresql://me@db/r?%70assword=***"),
    ("postgresql://me@db/r?sslpassword=hunter2pw", "postgresql://me@db/r?sslpassword=***"),
    ("postgresql://me@db/r?password=hun#ter2pw", "postgresql://me@db/r?password=***"),
    ("postgresql://me@db/r?password=hunter2pw%zz", "postgresql://me@db/r?password=***"),
    # Both at once, and a dbname that is itself a connection string with a password.
    ("postgresql://me:hunter2pw@db/r?password=hunter2pw", "postgresql://me:***@db/r?password=***"),
    (
        "postgresql://me@db/r?dbname=host%3Dx%20password%3Dhunter2pw",
        "postgresql://me@db/r?dbname=***",
    ),
    # key=value connection strings, quoted or not, blanks around '=', escapes.
    ("host=db password=hunter2pw user=me", "host=db password=*** user=me"),
    ("host=db password = hunter2pw", "host=db password = ***"),
    ("host=db password='hunter2 pw' user=me", "host=db password=*** user=me"),
    ("host=db password='hunter2\\'pw' user=me", "host=db password=*** user=me"),
    ("host=db password=hunter2\\ pw user=me", "host=db password=*** user=me"),
    ("host=db password='hunter2pw", "host=db password=***"),
    ("host=db sslpassword=hunter2pw", "host=db sslpassword=***"),
    # An unquoted password with a blank: libpq's error, but each half is still secret.
    ("host=db password=hunter2 pw", "host=db password=*** ***"),
]


@pytest.mark.parametrize(("url", "shown"), MASKED)
def test_masked_url_masks_every_form_libpq_reads_a_password_from(url: str, shown: str) -> None:
    assert masked_url(url) == shown
    assert parse_url(url).shown == shown
    assert parse_url(url).dialect == "postgresql"


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://me@db/records?sslmode=require",
        "postgresql://db/records?passfile=/home/me/.pgpass",  # a file name, not a secret
        "host=db passfile=/home/me/.pgpass",
        "postgresql://[::1]:5432/records",
        "kernel.db",
        "sqlite:///x.db",
    ],
)
def test_masked_url_leaves_text_without_a_password_as_it_is(url: str) -> None:
    assert masked_url(url) == url


def test_masked_url_takes_a_str_only() -> None:
    with pytest.raises(ArgumentError, match="url: expected a str"):
        masked_url(b"postgresql://me:pw@db/r")  # type: ignore[arg-type]


def test_a_store_urls_repr_never_shows_its_password() -> None:
    """Secrets class: a StoreURL logged with %r or shown in a traceback's locals."""
    url = parse_url("postgresql://me:hunter2pw@db/r?password=hunter2pw")
    assert SECRET not in repr(url)
    assert url.target.count(SECRET) == 2  # the connection itself still has it


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://me:hunter2pw%zz@db/r",  # libpq: invalid percent-encoded token
        "postgresql://me:hunter2pw@[::1/r",  # libpq echoes the whole URL (unclosed bracket)
        "postgresql://me@db/r?password=hunter2pw%zz",
        "postgresql://me:hunter2pw%00@db/r",  # libpq: forbidden value %00
        "host=db password='hunter2pw",  # unterminated quoted string
        "host=db password=hunter2pwx junk",  # missing "=" after the second half
    ],
)
def test_the_drivers_parse_errors_never_echo_the_password(url: str) -> None:
    """Secrets class: libpq's own messages quote what they could not read."""
    pytest.importorskip("psycopg")
    with pytest.raises(StoreError) as caught:
        open_store(url)
    message = str(caught.value)
    assert "hunter2" not in message
    assert "***" in message
    # The driver's error, which holds the raw text, is not chained for a traceback.
    assert caught.value.__cause__ is None
    assert caught.value.__suppress_context__


def test_an_unclosed_ipv6_bracket_is_a_store_error_not_a_value_error() -> None:
    """Arguments class: urllib raised ValueError('Invalid IPv6 URL') for this URL."""
    assert parse_url("postgresql://me:hunter2pw@[::1/r").shown == "postgresql://me:***@[::1/r"


@pytest.mark.parametrize(
    ("url", "dialect"),
    [
        ("host=db dbname=records", "postgresql"),
        ("dbname=records user=me", "postgresql"),
        ("host=db password=hunter2 pw", "postgresql"),  # never a SQLite file named so
        ("run=1.sqlite3", "sqlite"),
        ("my store.sqlite3", "sqlite"),
    ],
)
def test_a_key_value_connection_string_is_postgresql(url: str, dialect: str) -> None:
    assert parse_url(url).dialect == dialect


def test_a_postgresql_url_that_is_not_utf8_is_a_store_error() -> None:
    """Arguments class: bytes that are not UTF-8 (a surrogate-escaped argv) in a URL."""
    with pytest.raises(StoreError, match="expected UTF-8 text"):
        parse_url("postgresql://me:pw@db/r\udcff")


def test_a_sqlite_path_that_is_not_utf8_opens_the_file_it_names(tmp_path: Path) -> None:
    """Arguments class: a POSIX file name may hold any bytes; the store opens it."""
    name = os.fsdecode(b"store-\xff.sqlite3")
    with open_store(str(tmp_path / name)) as store:
        assert store.rows() == []
    assert (tmp_path / name).exists()


def test_a_nul_in_a_store_path_is_a_store_error() -> None:
    with pytest.raises(StoreError, match="holds a NUL"):
        parse_url("x\x00.sqlite3")


def _cli(*argv: str) -> tuple[int, str]:
    err = io.StringIO()
    status = main(list(argv), stdout=io.StringIO(), stderr=err)
    return status, err.getvalue()


@pytest.mark.parametrize("url", [url for url, _ in MASKED])
def test_no_command_shows_the_password_of_a_store_it_cannot_open(url: str) -> None:
    """Secrets class, end to end: the store's error on standard error."""
    pytest.importorskip("psycopg")
    status, err = _cli("history", "--db", url)
    assert status == 2
    assert "hunter2" not in err, err
    assert "ter2pw" not in err, err
    assert "2pw@" not in err, err


@pytest.mark.parametrize(
    "argv",
    [
        ["validate", "postgresql://me:hunter2pw@db/r"],  # a URL where a file was expected
        ["validate", "postgresql://me:hun'ter2pw@db/r"],  # a quote inside the password
        ["validate", "postgresql://me@db/r?password=hunter2pw"],
        ["export", "postgresql://me:hunter2pw@db/r"],  # argparse: unrecognized arguments
        ["validate", "host=db password=hunter2pw"],
        ["history", "--db", "postgresql://me:hunter2pw@db/r", "--points", "x"],
    ],
)
def test_usage_errors_and_file_errors_never_show_a_password(argv: list[str]) -> None:
    """Secrets class: every line a command writes to standard error is masked."""
    status, err = _cli(*argv)
    assert status == 2
    assert "hunter2" not in err, err


def test_a_postgresql_store_opened_with_a_password_shows_none(postgres_url: str) -> None:
    """Secrets class against a real server (trust auth ignores the password): every
    message that names the store."""
    url = postgres_url.replace("postgres@", f"postgres:{SECRET}@") + f"&password={SECRET}"
    status, err = _cli("history", "--db", url)
    assert status == 2  # no store there yet
    assert "no kernelindex store here" in err
    assert SECRET not in err
    assert "postgres:***@" in err
    assert "password=***" in err
    with open_store(url) as store:
        assert SECRET not in store.url.shown
