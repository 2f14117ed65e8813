-- Administrator actions that affect a person (§3): who, what, when. The person reads the
-- entries about them. No foreign keys: an entry outlives the accounts it names.
CREATE TABLE audit (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    at           TEXT    NOT NULL,
    actor_id     TEXT,
    actor_name   TEXT    NOT NULL,
    subject_id   TEXT,
    subject_name TEXT,
    action       TEXT    NOT NULL,
    detail       TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(detail))
) STRICT;
CREATE INDEX audit_by_subject ON audit (subject_id, id);

-- Where the instance key lives (§4), recorded so a vanished keyring fails closed instead
-- of a new key being made over existing secrets; and a value sealed under that key, so
-- the wrong key is recognised.
ALTER TABLE instance ADD COLUMN secret_backend TEXT CHECK (secret_backend IN ('keyring', 'file'));
ALTER TABLE instance ADD COLUMN secret_check BLOB;
