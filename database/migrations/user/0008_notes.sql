-- The person's notes (the note_* tools, §12): kept until they delete them, unlike a
-- conversation's scratchpad. Titles need not be unique; a note is addressed by its id.
CREATE TABLE notes (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    title      TEXT    NOT NULL,
    body       TEXT    NOT NULL,
    created_at TEXT    NOT NULL,
    updated_at TEXT    NOT NULL,
    -- written while outside content (a fetched page) was in the conversation: reading it
    -- brings that content along (§8.4's injection hygiene)
    outside    INTEGER NOT NULL DEFAULT 0 CHECK (outside IN (0, 1))
) STRICT;
-- The list shows the most recently changed notes first.
CREATE INDEX notes_by_update ON notes (updated_at);

-- Full-text search over title and body. External content: the text is stored once, in
-- `notes`, and the index holds only tokens. remove_diacritics 2 lets "cafe" find "café".
CREATE VIRTUAL TABLE notes_search USING fts5 (
    title,
    body,
    content = 'notes',
    content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2'
);
-- Remove a deleted note's tokens from the index at once instead of leaving them behind
-- until a merge, in the spirit of this file's secure_delete.
INSERT INTO notes_search (notes_search, rank) VALUES ('secure-delete', 1);

-- An external-content index does not see changes to its table: these triggers keep it in
-- step. Removing a row's tokens needs its old values, given through the 'delete' command.
CREATE TRIGGER notes_search_insert AFTER INSERT ON notes
BEGIN
    INSERT INTO notes_search (rowid, title, body) VALUES (new.id, new.title, new.body);
END;

CREATE TRIGGER notes_search_delete AFTER DELETE ON notes
BEGIN
    INSERT INTO notes_search (notes_search, rowid, title, body) VALUES ('delete', old.id, old.title, old.body);
END;

CREATE TRIGGER notes_search_update AFTER UPDATE OF title, body ON notes
BEGIN
    INSERT INTO notes_search (notes_search, rowid, title, body) VALUES ('delete', old.id, old.title, old.body);
    INSERT INTO notes_search (rowid, title, body) VALUES (new.id, new.title, new.body);
END;
