"""observedAt: the published timestamp form and the normalization every model applies.

The wire holds UTC to the millisecond (``2026-05-27T17:14:29.123Z``). A model's datetime
holds exactly that: finer digits are truncated (never rounded, so an instant never moves
into the next second, day or year) and the zone becomes UTC. So
``load_record(dumps(b)) == b`` holds for a record built from ``datetime.now(timezone.utc)``.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Final

from ..errors import TimestampError

__all__ = ["format_observed_at", "parse_observed_at", "utc_milliseconds"]

_FORMAT: Final = "%Y-%m-%dT%H:%M:%S.%fZ"
_EXAMPLE: Final = "2026-05-27T17:14:29.000Z"


def utc_milliseconds(moment: datetime) -> datetime:
    """Return ``moment`` in UTC with its microseconds truncated to whole milliseconds.

    Args:
        moment: A timezone-aware datetime.

    Returns:
        An aware datetime whose tzinfo is ``timezone.utc``.

    Raises:
        TimestampError: for a naive datetime (its instant is unknown) or a value that
            is not a datetime.
    """
    if not isinstance(moment, datetime):
        raise TimestampError(value=repr(moment), reason="expected a timezone-aware datetime")
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise TimestampError(
            value=repr(moment), reason="expected a timezone-aware datetime, not a naive one"
        )
    try:
        utc = moment.astimezone(timezone.utc)
    except OverflowError as err:
        # datetime.min with a positive offset, for example, has no UTC form.
        raise TimestampError(
            value=repr(moment), reason="expected an instant within years 1 to 9999"
        ) from err
    return utc.replace(microsecond=utc.microsecond - utc.microsecond % 1000)


def parse_observed_at(text: str) -> datetime:
    """Parse the published timestamp form (``2026-05-27T17:14:29.000Z``) into aware UTC.

    Raises:
        TimestampError: for any other form, or a date that does not exist.
    """
    if not isinstance(text, str):
        raise TimestampError(value=repr(text), reason=f"expected a str like {_EXAMPLE!r}")
    if len(text) != len(_EXAMPLE) or text[19] != "." or not text.isascii():
        raise TimestampError(value=repr(text), reason=f"expected a UTC timestamp like {_EXAMPLE!r}")
    try:
        return datetime.strptime(text, _FORMAT).replace(tzinfo=timezone.utc)
    except ValueError as err:
        raise TimestampError(
            value=repr(text), reason=f"expected a valid UTC timestamp like {_EXAMPLE!r}"
        ) from err


def format_observed_at(moment: datetime) -> str:
    """Write an aware datetime in the published form: UTC, milliseconds (truncated), ``Z``.

    Raises:
        TimestampError: for a naive datetime, whose instant is unknown.
    """
    utc = utc_milliseconds(moment)
    return f"{utc.year:04d}" + utc.strftime("-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"
