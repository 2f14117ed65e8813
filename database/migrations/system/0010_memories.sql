-- The shared memory pool (§10): readable by every member and the administrator, and
-- labelled so wherever it is shown. The same shape as a private file's `memories`, plus
-- whose turn or hand put it here (`owner`), who may edit it beside an administrator.
CREATE TABLE shared_memories (
    id             TEXT    PRIMARY KEY CHECK (id GLOB 'mem_*'),
    text           TEXT    NOT NULL CHECK (length(text) BETWEEN 1 AND 300),
    subject_kind   TEXT    NOT NULL CHECK (subject_kind IN ('self', 'member', 'instance')),
    -- a shared memory "about self" is stored as about its owner: 'member' with their id
    subject_id     TEXT    CHECK ((subject_kind = 'member') = (subject_id IS NOT NULL)),
    author_kind    TEXT    NOT NULL CHECK (author_kind IN ('model', 'person')),
    author_id      TEXT    NOT NULL,
    owner          TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    source_session TEXT,
    outside        INTEGER NOT NULL DEFAULT 0 CHECK (outside IN (0, 1)),
    local_only     INTEGER NOT NULL DEFAULT 0 CHECK (local_only IN (0, 1)),
    pinned         INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
    created_at     TEXT    NOT NULL,
    updated_at     TEXT    NOT NULL,
    expires_at     TEXT    CHECK (pinned = 1 OR expires_at IS NOT NULL),
    CHECK (subject_kind <> 'self')
) STRICT;
CREATE INDEX shared_memories_by_subject ON shared_memories (subject_kind, subject_id);
CREATE INDEX shared_memories_by_expiry ON shared_memories (expires_at) WHERE expires_at IS NOT NULL;

CREATE VIRTUAL TABLE shared_memories_search USING fts5 (
    text,
    content = 'shared_memories',
    content_rowid = 'rowid',
    tokenize = 'unicode61 remove_diacritics 2'
);
INSERT INTO shared_memories_search (shared_memories_search, rank) VALUES ('secure-delete', 1);

CREATE TRIGGER shared_memories_search_insert AFTER INSERT ON shared_memories
BEGIN
    INSERT INTO shared_memories_search (rowid, text) VALUES (new.rowid, new.text);
END;

CREATE TRIGGER shared_memories_search_delete AFTER DELETE ON shared_memories
BEGIN
    INSERT INTO shared_memories_search (shared_memories_search, rowid, text) VALUES ('delete', old.rowid, old.text);
END;

CREATE TRIGGER shared_memories_search_update AFTER UPDATE OF text ON shared_memories
BEGIN
    INSERT INTO shared_memories_search (shared_memories_search, rowid, text) VALUES ('delete', old.rowid, old.text);
    INSERT INTO shared_memories_search (rowid, text) VALUES (new.rowid, new.text);
END;

-- Erasures waiting for a locked person's file, as ids only, never text: `what` is a memory
-- id (redact where that memory's sentence appears in their file: the call that wrote it,
-- its card, recall results) or a subject, `member:<user id>` or `instance` (erase every
-- memory about it there, when an administrator removes a person). Applied at their next
-- unlock, then removed.
CREATE TABLE memory_erasures (
    user_id   TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    what      TEXT NOT NULL CHECK (what GLOB 'mem_*' OR what GLOB 'member:*' OR what = 'instance'),
    queued_at TEXT NOT NULL,
    PRIMARY KEY (user_id, what)
) STRICT;
