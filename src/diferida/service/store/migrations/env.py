"""Alembic environment, configured from code (see diferida.service.store.migrate):
no alembic.ini is read. The connection to migrate is handed over in
`config.attributes["connection"]`."""

from __future__ import annotations

from alembic import context
from sqlalchemy import text

from diferida.service.store.models import Base

# Any constant shared by every process that may migrate the same database.
PG_MIGRATION_LOCK = 0x646966657269


def run_migrations(connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        if connection.dialect.name == "postgresql":
            # several workers may start at once: one migrates, the others wait
            connection.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": PG_MIGRATION_LOCK})
        context.run_migrations()


connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run migrations through diferida.service.store.migrate (or `diferida db`)")
run_migrations(connection)
