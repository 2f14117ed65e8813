-- Conversations (§8.1). Everything here is the person's words and lives only in this
-- encrypted file.

CREATE TABLE chat_sessions (
    id         TEXT PRIMARY KEY,
    agent      TEXT NOT NULL,
    -- `provider/model` the session is pinned to; none lets each turn choose
    model      TEXT,
    title      TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT;

-- One turn: from the person's message until the model stops, is stopped, or fails.
CREATE TABLE turns (
    id            TEXT PRIMARY KEY,
    session_id    TEXT NOT NULL REFERENCES chat_sessions (id) ON DELETE CASCADE,
    state         TEXT NOT NULL CHECK (state IN ('running', 'parked', 'done', 'stopped', 'error')),
    error_code    TEXT,
    error_message TEXT,
    started_at    TEXT NOT NULL,
    ended_at      TEXT
) STRICT;
CREATE INDEX turns_by_state ON turns (state) WHERE state IN ('running', 'parked');

-- The history, append-only: rows are added, never changed. An assistant row that asked
-- for tools carries them in `tool_calls`; each call's result is one `tool` row.
CREATE TABLE messages (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id   TEXT    NOT NULL REFERENCES chat_sessions (id) ON DELETE CASCADE,
    turn_id      TEXT    NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
    role         TEXT    NOT NULL CHECK (role IN ('user', 'assistant', 'tool')),
    text         TEXT    NOT NULL,
    -- user: sent; assistant: tool_calls, done, stopped, error; tool: ok, error, cancelled
    status       TEXT    NOT NULL,
    tool_calls   TEXT    CHECK (tool_calls IS NULL OR json_valid(tool_calls)),
    tool_call_id TEXT,
    tool_name    TEXT,
    model        TEXT,
    error_code   TEXT,
    error_message TEXT,
    created_at   TEXT    NOT NULL,
    CHECK (role <> 'tool' OR (tool_call_id IS NOT NULL AND tool_name IS NOT NULL))
) STRICT;
CREATE INDEX messages_by_session ON messages (session_id, id);
-- Every tool call gets exactly one recorded result.
CREATE UNIQUE INDEX one_result_per_call ON messages (tool_call_id) WHERE role = 'tool';
CREATE TRIGGER messages_are_append_only BEFORE UPDATE ON messages
BEGIN
    SELECT RAISE(ABORT, 'history is append-only');
END;

-- Each request made to a model (§8.1): what it cost and how it ended.
CREATE TABLE model_requests (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    turn_id       TEXT    NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
    provider      TEXT    NOT NULL,
    model         TEXT    NOT NULL,
    tokens_in     INTEGER,
    tokens_out    INTEGER,
    ttft_ms       INTEGER,
    latency_ms    INTEGER NOT NULL,
    attempts      INTEGER NOT NULL,
    outcome       TEXT    NOT NULL CHECK (outcome IN ('ok', 'stopped', 'error')),
    error_code    TEXT,
    created_at    TEXT    NOT NULL
) STRICT;
