-- Memories in the person's private pool (§10): what the assistant keeps about them and
-- the people and home around them, each confirmed by the person (the `remember` card)
-- or written by them. Every memory says about whom, who wrote it and until when; an
-- expired one is deleted by the sweep, not hidden. Shared ones live in the shared
-- database (system migration 0010), under the same shape.
CREATE TABLE memories (
    id             TEXT    PRIMARY KEY CHECK (id GLOB 'mem_*'),
    text           TEXT    NOT NULL CHECK (length(text) BETWEEN 1 AND 300),
    -- whom it is about: the owner, another member (by id), or how this instance runs
    subject_kind   TEXT    NOT NULL CHECK (subject_kind IN ('self', 'member', 'instance')),
    subject_id     TEXT    CHECK ((subject_kind = 'member') = (subject_id IS NOT NULL)),
    -- who wrote it: a model (the agent's id) or a person (their user id); a model's
    -- memory also names the conversation it came from
    author_kind    TEXT    NOT NULL CHECK (author_kind IN ('model', 'person')),
    author_id      TEXT    NOT NULL,
    source_session TEXT,
    -- its source conversation held outside content (§8.4): recalling it marks the reader
    outside        INTEGER NOT NULL DEFAULT 0 CHECK (outside IN (0, 1)),
    -- written by or about someone whose role is local_only: never sent to a remote model
    local_only     INTEGER NOT NULL DEFAULT 0 CHECK (local_only IN (0, 1)),
    pinned         INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
    created_at     TEXT    NOT NULL,
    updated_at     TEXT    NOT NULL,
    -- null only while pinned
    expires_at     TEXT    CHECK (pinned = 1 OR expires_at IS NOT NULL)
) STRICT;
CREATE INDEX memories_by_subject ON memories (subject_kind, subject_id);
CREATE INDEX memories_by_expiry ON memories (expires_at) WHERE expires_at IS NOT NULL;

-- Full-text search over the text, holding only tokens; secure-delete drops an erased
-- memory's tokens at once instead of at the next merge.
CREATE VIRTUAL TABLE memories_search USING fts5 (
    text,
    content = 'memories',
    content_rowid = 'rowid',
    tokenize = 'unicode61 remove_diacritics 2'
);
INSERT INTO memories_search (memories_search, rank) VALUES ('secure-delete', 1);

CREATE TRIGGER memories_search_insert AFTER INSERT ON memories
BEGIN
    INSERT INTO memories_search (rowid, text) VALUES (new.rowid, new.text);
END;

CREATE TRIGGER memories_search_delete AFTER DELETE ON memories
BEGIN
    INSERT INTO memories_search (memories_search, rowid, text) VALUES ('delete', old.rowid, old.text);
END;

CREATE TRIGGER memories_search_update AFTER UPDATE OF text ON memories
BEGIN
    INSERT INTO memories_search (memories_search, rowid, text) VALUES ('delete', old.rowid, old.text);
    INSERT INTO memories_search (rowid, text) VALUES (new.rowid, new.text);
END;

-- What an approval card showed beyond the call's arguments (a `remember` card's lines:
-- about whom, kept until when, who can read it), fixed when the card was made so the
-- person decides on what they saw.
ALTER TABLE cards ADD COLUMN shows TEXT CHECK (shows IS NULL OR json_valid(shows));

-- Erasing a memory also redacts its sentence where it appears in this file (the call that
-- proposed it, its card, recall results, summaries): the one change history allows. A
-- redacted row says so; nothing else of it may change.
ALTER TABLE messages ADD COLUMN redacted INTEGER NOT NULL DEFAULT 0 CHECK (redacted IN (0, 1));
DROP TRIGGER messages_are_append_only;
CREATE TRIGGER messages_are_append_only BEFORE UPDATE ON messages
WHEN new.redacted = 0
  OR new.id IS NOT old.id OR new.session_id IS NOT old.session_id OR new.turn_id IS NOT old.turn_id
  OR new.role IS NOT old.role OR new.status IS NOT old.status OR new.tool_call_id IS NOT old.tool_call_id
  OR new.tool_name IS NOT old.tool_name OR new.model IS NOT old.model OR new.created_at IS NOT old.created_at
BEGIN
    SELECT RAISE(ABORT, 'history is append-only; only a redaction may change it');
END;

CREATE TRIGGER messages_search_redact AFTER UPDATE OF text ON messages
WHEN old.role <> 'tool'
BEGIN
    INSERT INTO messages_search (messages_search, rowid, text) SELECT 'delete', old.id, old.text WHERE old.text <> '';
    INSERT INTO messages_search (rowid, text) SELECT new.id, new.text WHERE new.text <> '';
END;
