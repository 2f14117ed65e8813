-- Every time a supervisor opened this space and every item they read (§6.2): kept here,
-- in the supervised person's own file, where only they (and that supervisor, through
-- the same edge) can read it, and shown to them.
CREATE TABLE access_log (
    id              INTEGER PRIMARY KEY,
    supervisor_id   TEXT    NOT NULL,
    supervisor_name TEXT    NOT NULL,
    at              TEXT    NOT NULL,
    action          TEXT    NOT NULL CHECK (action IN ('opened', 'read', 'allowed', 'denied')),
    what            TEXT    NOT NULL CHECK (what IN ('conversations', 'conversation', 'notes', 'note', 'memories', 'cards', 'card')),
    item            TEXT
) STRICT;

CREATE INDEX access_log_by_time ON access_log (at);

-- Who decided a card, when it was not the person themselves: their supervisor, by name,
-- for a role whose cards go to the supervisor (§6.2).
ALTER TABLE cards ADD COLUMN decided_by TEXT;
