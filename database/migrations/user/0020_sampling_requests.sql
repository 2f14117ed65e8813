-- A tool server may ask for a model's answer during a call (MCP sampling, §12.1). Once the
-- person allows it, that request is a model request like any other, on record and counted:
-- `purpose` gains `sampling`. SQLite cannot change a CHECK in place, so the table is made
-- again with its rows, as 0015 did.
CREATE TABLE model_requests_new (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    turn_id         TEXT    NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
    provider        TEXT    NOT NULL,
    model           TEXT    NOT NULL,
    tokens_in       INTEGER,
    tokens_out      INTEGER,
    ttft_ms         INTEGER,
    latency_ms      INTEGER NOT NULL,
    attempts        INTEGER NOT NULL,
    outcome         TEXT    NOT NULL CHECK (outcome IN ('ok', 'stopped', 'error')),
    error_code      TEXT,
    created_at      TEXT    NOT NULL,
    session_id      TEXT,
    kind            TEXT,
    render_version  INTEGER,
    prompt_version  TEXT REFERENCES request_prompts (version),
    toolset_version TEXT REFERENCES request_toolsets (version),
    history_upto    INTEGER,
    summary_id      INTEGER REFERENCES summaries (id),
    purpose         TEXT    NOT NULL DEFAULT 'turn' CHECK (purpose IN ('turn', 'compaction', 'title', 'sampling')),
    frame_id        TEXT
) STRICT;
INSERT INTO model_requests_new
    (id, turn_id, provider, model, tokens_in, tokens_out, ttft_ms, latency_ms, attempts, outcome, error_code,
     created_at, session_id, kind, render_version, prompt_version, toolset_version, history_upto, summary_id,
     purpose, frame_id)
SELECT id, turn_id, provider, model, tokens_in, tokens_out, ttft_ms, latency_ms, attempts, outcome, error_code,
       created_at, session_id, kind, render_version, prompt_version, toolset_version, history_upto, summary_id,
       purpose, frame_id
FROM model_requests;
DROP TABLE model_requests;
ALTER TABLE model_requests_new RENAME TO model_requests;
