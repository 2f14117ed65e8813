-- Sub-agent frames (§8.3): a callee runs its own turn inside the caller's, and its rows
-- sit in the same history, marked with their frame. The frame's last answer becomes the
-- result of the `call_agent` call that opened it.

CREATE TABLE frames (
    id         TEXT    PRIMARY KEY,
    turn_id    TEXT    NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
    session_id TEXT    NOT NULL REFERENCES chat_sessions (id) ON DELETE CASCADE,
    -- the call that opened the frame; one frame per call
    call_id    TEXT    NOT NULL UNIQUE,
    -- the frame whose call opened it; none when the conversation itself called
    outer_id   TEXT    REFERENCES frames (id) ON DELETE CASCADE,
    agent      TEXT    NOT NULL,
    -- 2 for a callee of the top frame, up to the depth limit
    depth      INTEGER NOT NULL,
    state      TEXT    NOT NULL CHECK (state IN ('running', 'parked', 'done', 'stopped', 'error')),
    started_at TEXT    NOT NULL,
    ended_at   TEXT
) STRICT;
CREATE INDEX frames_by_turn ON frames (turn_id);

-- Rows of an inner frame; none for the conversation itself.
ALTER TABLE messages ADD COLUMN frame_id TEXT REFERENCES frames (id) ON DELETE CASCADE;

-- A model request made inside a frame; such a request is composed from the frame's rows,
-- not the conversation's, and is not rebuilt by the conversation's recomposition.
ALTER TABLE model_requests ADD COLUMN frame_id TEXT;
