"""``database_url`` and ``[archive]``: where the archive lives, and its pool.

None (the default) keeps today's SQLite file in the data dir; a
``postgresql+psycopg://`` URL shares one database among a team
(``backend.archive.postgres``). The password may stay out of the file:
``SYLK_DATABASE_PASSWORD`` fills it in (see :func:`with_password`).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ArchiveSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # Connections in the PostgreSQL pool (half of them writer lanes); SQLite ignores it.
    pool_size: int = Field(default=5, ge=1, le=100)


def with_password(url: str, password: str | None) -> str:
    """``url`` with ``password`` set (when given and the URL names a server)."""
    if not password:
        return url
    from sqlalchemy.engine import make_url  # only when a password is given
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(url)
    except ArgumentError:
        return url  # the archive reports the bad URL, typed
    if parsed.get_backend_name() == "sqlite":
        return url
    return parsed.set(password=password).render_as_string(hide_password=False)


def url_password(url: str | None) -> str | None:
    """The password inside ``url`` (for the redactor), if any."""
    if not url or "@" not in url:
        return None
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        password = make_url(url).password
    except ArgumentError:
        return None
    return str(password) if password else None
