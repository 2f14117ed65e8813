-- The assistant's working notes for one conversation (the `scratchpad` tool, §12).
CREATE TABLE scratchpads (
    session_id TEXT PRIMARY KEY REFERENCES chat_sessions (id) ON DELETE CASCADE,
    text       TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT;
