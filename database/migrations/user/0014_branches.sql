-- Branches (issue 24): regenerating a reply or editing a message never rewrites history.
-- A conversation is a tree of turns: each turn comes after the one it continues
-- (`after_turn`, none for a first turn), another version of a turn comes after the same
-- turn, and the conversation's active path runs from its first turn to `active_turn`. The
-- model reads only the rows of turns on the path; every other version stays whole and
-- readable. What a turn comes after never changes, so a stored request composes again
-- from the path of its own turn whatever is active later.
ALTER TABLE turns ADD COLUMN after_turn TEXT REFERENCES turns (id) ON DELETE CASCADE;
ALTER TABLE chat_sessions ADD COLUMN active_turn TEXT;

-- Before there were branches, each turn continued the one started before it.
UPDATE turns SET after_turn = (
    SELECT p.id FROM turns p
    WHERE p.session_id = turns.session_id
      AND (p.started_at < turns.started_at OR (p.started_at = turns.started_at AND p.rowid < turns.rowid))
    ORDER BY p.started_at DESC, p.rowid DESC
    LIMIT 1
);
UPDATE chat_sessions SET active_turn = (
    SELECT t.id FROM turns t WHERE t.session_id = chat_sessions.id ORDER BY t.started_at DESC, t.rowid DESC LIMIT 1
);

-- A turn's versions are read on every open of a conversation.
CREATE INDEX turns_by_after ON turns (session_id, after_turn);
