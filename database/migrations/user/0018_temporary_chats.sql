-- A temporary chat (§10): it neither reads nor writes memories, is left out of the list,
-- and is deleted when the person leaves it, locks, or (for one a crash left) next unlocks.
ALTER TABLE chat_sessions ADD COLUMN temporary INTEGER NOT NULL DEFAULT 0 CHECK (temporary IN (0, 1));
