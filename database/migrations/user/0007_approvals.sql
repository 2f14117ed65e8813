-- The approval gate's side in the person's file (§8.4, §8.5): the cards waiting on them
-- and their own "always allow this for me" rules. An approval card binds the exact
-- arguments it showed: the call runs with those, and only if their hash still matches. A
-- question card (`clarify`) holds the person's answer.

CREATE TABLE cards (
    id             TEXT PRIMARY KEY,
    kind           TEXT NOT NULL CHECK (kind IN ('approval', 'question')),
    session_id     TEXT NOT NULL REFERENCES chat_sessions (id) ON DELETE CASCADE,
    turn_id        TEXT NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
    -- the tool call the card is about; one card per call
    call_id        TEXT NOT NULL UNIQUE,
    tool           TEXT NOT NULL,
    -- the arguments exactly as the model sent them, and the hash a decision binds
    arguments      TEXT NOT NULL CHECK (json_valid(arguments)),
    arguments_hash TEXT NOT NULL,
    agent          TEXT NOT NULL,
    -- what the assistant said when it asked, and why the gate wants a person
    why            TEXT NOT NULL,
    reason         TEXT NOT NULL,
    state          TEXT NOT NULL CHECK (state IN ('pending', 'allowed', 'denied', 'answered', 'withdrawn')),
    answer         TEXT,
    created_at     TEXT NOT NULL,
    decided_at     TEXT
) STRICT;
CREATE INDEX cards_pending ON cards (state, created_at) WHERE state = 'pending';
CREATE INDEX cards_by_turn ON cards (turn_id);

-- "Always allow this for me": weighed with the shared rules, never before priority 50.
CREATE TABLE personal_rules (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    tool       TEXT    NOT NULL,
    args       TEXT,
    effect     TEXT    NOT NULL CHECK (effect IN ('allow', 'deny', 'require')),
    priority   INTEGER NOT NULL,
    created_at TEXT    NOT NULL
) STRICT;

-- Set once content from outside (a fetched page, an MCP result) entered the conversation:
-- from then on, a person's own "always allow" no longer covers tools with side effects.
ALTER TABLE chat_sessions ADD COLUMN outside_content INTEGER NOT NULL DEFAULT 0;
