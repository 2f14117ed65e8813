-- Backups written of this data directory (docs/architecture.md §5.2): by the command line,
-- an administrator's button, or the schedule. A row is made when a backup starts, so one
-- cut short by a crash is found at the next start (and its partial file removed).
CREATE TABLE backups (
    id          TEXT    PRIMARY KEY,
    kind        TEXT    NOT NULL CHECK (kind IN ('command_line', 'manual', 'scheduled')),
    state       TEXT    NOT NULL CHECK (state IN ('running', 'done', 'failed')),
    path        TEXT    NOT NULL,
    started_by  TEXT,
    started_at  TEXT    NOT NULL,
    finished_at TEXT,
    bytes       INTEGER,
    people      INTEGER,
    error       TEXT
) STRICT;

CREATE INDEX backups_by_start ON backups (started_at);

-- The optional schedule: every day at `at_time` in `zone`, to `folder`, keeping the newest
-- `keep` archives Skald made there. The passphrase is sealed under the instance key (§4),
-- as provider keys are, so it runs unattended; a restored copy cannot open it and the
-- schedule is dropped at restore.
CREATE TABLE backup_schedule (
    id             INTEGER PRIMARY KEY CHECK (id = 1),
    folder         TEXT    NOT NULL,
    at_time        TEXT    NOT NULL CHECK (at_time GLOB '[0-2][0-9]:[0-5][0-9]'),
    zone           TEXT    NOT NULL,
    keep           INTEGER NOT NULL CHECK (keep BETWEEN 1 AND 100),
    include_models INTEGER NOT NULL DEFAULT 0 CHECK (include_models IN (0, 1)),
    passphrase     BLOB    NOT NULL,
    next_run       TEXT    NOT NULL,
    updated_by     TEXT    NOT NULL,
    updated_at     TEXT    NOT NULL
) STRICT;
