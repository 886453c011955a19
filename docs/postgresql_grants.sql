-- The grants of the PostgreSQL role that runs the service (docs/service.md,
-- "PostgreSQL"): exactly what `diferida serve` and the operator's commands
-- run with the service's credentials (`diferida users`, `diferida audit
-- verify`, `diferida db current`) need, nothing more. The owner of the
-- tables runs the migrations (`diferida db upgrade`), then this file, with
-- psql, naming the schema of the tables and the service's role:
--
--   psql "postgresql://diferida:secret@127.0.0.1:5432/diferida" \
--        -v schema=public -v role=diferida_service -f docs/postgresql_grants.sql
--
-- Run it again after every `diferida db upgrade` (a new table needs its
-- grants; granting again what is granted changes nothing).
-- tests/test_postgres_grants.py runs the whole workflow as a role given
-- exactly these grants.

GRANT USAGE ON SCHEMA :"schema" TO :"role";

-- the schema's revision: `serve` checks it is the newest before starting
GRANT SELECT ON :"schema".alembic_version TO :"role";

-- the record: read and appended to, never changed (`diferida users add`,
-- `passwd` and `profile` append a user, a password hash, a name and title)
GRANT SELECT, INSERT ON :"schema".users TO :"role";
GRANT SELECT, INSERT ON :"schema".user_passwords TO :"role";
GRANT SELECT, INSERT ON :"schema".user_profiles TO :"role";
GRANT SELECT, INSERT ON :"schema".rules_versions TO :"role";
GRANT SELECT, INSERT ON :"schema".cases TO :"role";
GRANT SELECT, INSERT ON :"schema".audit_events TO :"role";
GRANT SELECT, INSERT ON :"schema".case_applications TO :"role";
GRANT SELECT, INSERT ON :"schema".workflow_events TO :"role";
GRANT SELECT, INSERT ON :"schema".letters TO :"role";

-- `diferida users disable`: a user's disabled_at, once (the users_only_disable
-- trigger refuses any other change)
GRANT UPDATE (disabled_at) ON :"schema".users TO :"role";

-- each write moves its chain's head, locked first (SELECT ... FOR UPDATE);
-- the heads themselves are made by the migrations (chain_heads_only_grow
-- refuses anything but growth)
GRANT SELECT, UPDATE (length, last_id, last_hash) ON :"schema".chain_heads TO :"role";

-- where each case stands: a row added with the case, rewritten at each
-- correction, submission, return and approval (its row locked first)
GRANT SELECT, INSERT, UPDATE ON :"schema".case_states TO :"role";

-- workbench sessions signed out: one row per sign-out, deleted once the
-- session's absolute lifetime is past
GRANT SELECT, INSERT, DELETE ON :"schema".signed_out_sessions TO :"role";
