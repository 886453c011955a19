"""The language the addressee's letter is issued in.

* `case_applications.letter_lang`: es or en, as the application gives it (an
  office in Puerto Rico writes to a member in Spanish or in English, as the
  member prefers); NULL in the rows stored before this migration. The
  column is part of a row's hashed content only when it holds a value
  (`chain.ADDED`), so no existing row's hash changes. The table stays
  append-only: its triggers refuse every UPDATE and DELETE, whatever the
  columns, and are not changed.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("case_applications",
                  sa.Column("letter_lang", sa.String(2), nullable=True))


def downgrade() -> None:
    """Back to 0005: the languages are forgotten (the letters already issued
    keep theirs, in their stored PDF and its `letters` row)."""
    # the column alone (SQLite 3.35 and later drop it in place, keeping the
    # table's triggers, which do not name it)
    op.execute("ALTER TABLE case_applications DROP COLUMN letter_lang")
