-- Supervision edges (docs/architecture.md §6.2): a supervisor may open a supervised
-- person's space, read-only, through a copy of that person's data key sealed to the
-- supervisor's public key (`sealed_key`, `crypto::seal_to`, bound to both ids, the purpose
-- and `key_version`). A request is `pending` and holds no key; it becomes `active` only
-- when the supervised person's key is open to seal it: at their enrolment, when the
-- administrator made the account with the edge (`at_enrolment`), or when they accept it in
-- their own session. Removing an edge deletes its row, and with `secure_delete` its key
-- copy's bytes. `opens` and `reads` count the supervisor's accesses; what was read is
-- logged in the supervised person's own file.
CREATE TABLE supervision (
    id              TEXT    PRIMARY KEY,
    supervisor_id   TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    supervised_id   TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    state           TEXT    NOT NULL CHECK (state IN ('pending', 'active')),
    at_enrolment    INTEGER NOT NULL DEFAULT 0 CHECK (at_enrolment IN (0, 1)),
    sealed_key      BLOB,
    key_version     INTEGER NOT NULL DEFAULT 1,
    requested_by    TEXT    NOT NULL,
    requested_at    TEXT    NOT NULL,
    accepted_at     TEXT,
    opens           INTEGER NOT NULL DEFAULT 0,
    reads           INTEGER NOT NULL DEFAULT 0,
    last_opened_at  TEXT,
    UNIQUE (supervisor_id, supervised_id),
    CHECK (supervisor_id <> supervised_id),
    CHECK ((state = 'active') = (sealed_key IS NOT NULL))
) STRICT;

CREATE INDEX supervision_by_supervised ON supervision (supervised_id);

-- Who may supervise and be supervised is a role's to say (§6.1), whether a supervised
-- person may end the edge themselves, and whether the cards their role may not approve go
-- to their supervisor instead of being refused. Existing roles: whoever manages the
-- instance may supervise; a role that may not approve may be supervised, may not end it
-- alone, and has its cards decided by the supervisor.
ALTER TABLE roles ADD COLUMN may_supervise INTEGER NOT NULL DEFAULT 0 CHECK (may_supervise IN (0, 1));
ALTER TABLE roles ADD COLUMN may_be_supervised INTEGER NOT NULL DEFAULT 0 CHECK (may_be_supervised IN (0, 1));
ALTER TABLE roles ADD COLUMN may_end_supervision INTEGER NOT NULL DEFAULT 1 CHECK (may_end_supervision IN (0, 1));
ALTER TABLE roles ADD COLUMN cards_to_supervisor INTEGER NOT NULL DEFAULT 0 CHECK (cards_to_supervisor IN (0, 1));
UPDATE roles SET may_supervise = 1 WHERE manage_instance = 1;
UPDATE roles SET may_be_supervised = 1, may_end_supervision = 0, cards_to_supervisor = 1 WHERE may_approve = 0;
