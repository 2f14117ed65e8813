-- Compaction (§8.6): older turns summarised so later requests fit the model's context.
-- The history itself stays whole; a summary stands in for the rows up to `upto`.
CREATE TABLE summaries (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT    NOT NULL REFERENCES chat_sessions (id) ON DELETE CASCADE,
    upto       INTEGER NOT NULL,
    text       TEXT    NOT NULL,
    created_at TEXT    NOT NULL
) STRICT;
CREATE INDEX summaries_by_session ON summaries (session_id, id);

ALTER TABLE model_requests ADD COLUMN summary_id INTEGER REFERENCES summaries (id);
ALTER TABLE model_requests ADD COLUMN purpose TEXT NOT NULL DEFAULT 'turn' CHECK (purpose IN ('turn', 'compaction'));
