-- Full-text search inside conversations (issue 24): the words of the person's messages and
-- of the replies, never tool rows (a tool's output is not what anyone said, and can be
-- large). External content, as for notes: the text is stored once, in `messages`, and the
-- index, inside this encrypted file, holds only tokens. remove_diacritics 2 lets "cafe"
-- find "café".
CREATE VIRTUAL TABLE messages_search USING fts5 (
    text,
    content = 'messages',
    content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2'
);
-- Remove a deleted conversation's tokens from the index at once instead of leaving them
-- behind until a merge, in the spirit of this file's secure_delete.
INSERT INTO messages_search (messages_search, rank) VALUES ('secure-delete', 1);

-- The conversations written before this index existed.
INSERT INTO messages_search (rowid, text)
    SELECT id, text FROM messages WHERE role <> 'tool' AND text <> '';

-- An external-content index does not see changes to its table: these triggers keep it in
-- step. History is append-only, so rows are only added, or deleted with their conversation
-- (the foreign keys' cascade fires these triggers too). Removing a row's tokens needs its
-- old text, given through the 'delete' command, and only a row that was indexed may be
-- removed, hence the same condition on both.
CREATE TRIGGER messages_search_insert AFTER INSERT ON messages
WHEN new.role <> 'tool' AND new.text <> ''
BEGIN
    INSERT INTO messages_search (rowid, text) VALUES (new.id, new.text);
END;

CREATE TRIGGER messages_search_delete AFTER DELETE ON messages
WHEN old.role <> 'tool' AND old.text <> ''
BEGIN
    INSERT INTO messages_search (messages_search, rowid, text) VALUES ('delete', old.id, old.text);
END;
