-- What this person's scheduled jobs say (§11): the schedule is in the shared database, the
-- words stay here, in their encrypted file, unless they chose to keep a job readable while
-- they are away. A task also keeps here which agent (and, if pinned, which model) runs it,
-- and the conversation its answers are kept in, once it has run.
CREATE TABLE job_texts (
    job_id          TEXT PRIMARY KEY,
    text            TEXT NOT NULL CHECK (length(text) BETWEEN 1 AND 4000),
    agent           TEXT,
    model           TEXT,
    conversation_id TEXT,
    updated_at      TEXT NOT NULL
) STRICT;
