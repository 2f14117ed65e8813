-- Scheduled jobs (§11): reminders and tasks, due once (`at`, a UTC instant) or again and
-- again (`cron`, a 5-field pattern read in `zone`). The scheduler reads only when: what a
-- reminder says lives in its owner's encrypted file (`job_texts`), unless the owner chose
-- to keep it readable while they are away (`readable_while_away`, labelled so wherever it
-- shows, §3) — then it is `text` here, where the administrator can read it too.
CREATE TABLE jobs (
    id                  TEXT    PRIMARY KEY,
    owner_id            TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    kind                TEXT    NOT NULL CHECK (kind IN ('reminder', 'task')),
    at                  TEXT,
    cron                TEXT,
    zone                TEXT    NOT NULL,
    -- what a run due while Skald was closed comes to: reported only, or run once too
    missed              TEXT    NOT NULL DEFAULT 'skip' CHECK (missed IN ('skip', 'run_once')),
    readable_while_away INTEGER NOT NULL DEFAULT 0 CHECK (readable_while_away IN (0, 1)),
    text                TEXT    CHECK (text IS NULL OR readable_while_away = 1),
    paused              INTEGER NOT NULL DEFAULT 0 CHECK (paused IN (0, 1)),
    -- the next occurrence still to run, a UTC instant; none once a one-off is over
    next_run            TEXT,
    created_at          TEXT    NOT NULL,
    updated_at          TEXT    NOT NULL,
    CHECK ((at IS NULL) <> (cron IS NULL))
) STRICT;
CREATE INDEX jobs_due ON jobs (next_run) WHERE next_run IS NOT NULL AND paused = 0;
CREATE INDEX jobs_owner ON jobs (owner_id);

-- Each occurrence of a job, claimed before it runs: the unique (job, occurrence) pair is
-- what makes a run happen once, however many ticks race for it. `missed` rows stand for
-- `missed_count` occurrences while Skald was closed, the last of them `scheduled_for`.
CREATE TABLE job_runs (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id        TEXT    NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    scheduled_for TEXT    NOT NULL,
    status        TEXT    NOT NULL
                  CHECK (status IN ('running', 'done', 'missed', 'waiting_for_unlock', 'parked', 'error')),
    claimed_at    TEXT    NOT NULL,
    finished_at   TEXT,
    -- how late it ran, in milliseconds
    late_ms       INTEGER,
    missed_count  INTEGER,
    -- why it ended in error, in words; never what the job says
    error         TEXT,
    UNIQUE (job_id, scheduled_for)
) STRICT;
