-- A conversation the person keeps at the top of their list, or puts away out of it.
-- Archived ones stay whole and searchable; only the list leaves them out by default.
ALTER TABLE chat_sessions ADD COLUMN pinned   INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1));
ALTER TABLE chat_sessions ADD COLUMN archived INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0, 1));
