-- The shared pool of documents (§12, docs/architecture.md §12.2): readable by every member
-- and the administrator, and labelled so wherever it is shown; a person puts a document
-- here only by choosing to (uploading it as shared, or sharing one), never by a silent
-- move. The same shape as a person's own `documents` tables, in the shared database.
CREATE TABLE shared_documents (
    id            TEXT    PRIMARY KEY,
    name          TEXT    NOT NULL,
    kind          TEXT    NOT NULL,
    size          INTEGER NOT NULL,
    -- a shared document is readable by everyone already, so its hash tells nothing new
    sha256        TEXT    NOT NULL UNIQUE,
    pages         INTEGER,
    status        TEXT    NOT NULL CHECK (status IN ('reading', 'ready', 'no_text', 'failed')),
    status_detail TEXT,
    created_at    TEXT    NOT NULL,
    -- who shared it, and whether their role keeps their words on this machine: then it is
    -- never sent to a remote provider, whoever asks
    uploaded_by   TEXT,
    local_only    INTEGER NOT NULL DEFAULT 0 CHECK (local_only IN (0, 1))
) STRICT;
CREATE INDEX shared_documents_by_creation ON shared_documents (created_at);

CREATE TABLE shared_document_chunks (
    document TEXT    NOT NULL REFERENCES shared_documents (id) ON DELETE CASCADE,
    seq      INTEGER NOT NULL,
    bytes    BLOB    NOT NULL,
    PRIMARY KEY (document, seq)
) STRICT, WITHOUT ROWID;

CREATE TABLE shared_document_pages (
    id       INTEGER PRIMARY KEY,
    document TEXT    NOT NULL REFERENCES shared_documents (id) ON DELETE CASCADE,
    page     INTEGER NOT NULL,
    text     TEXT    NOT NULL,
    UNIQUE (document, page)
) STRICT;

-- External content, as for notes: the text is stored once; the index holds tokens, and
-- removes a deleted page's at once (secure-delete).
CREATE VIRTUAL TABLE shared_document_pages_search USING fts5 (
    text,
    content = 'shared_document_pages',
    content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2'
);
INSERT INTO shared_document_pages_search (shared_document_pages_search, rank) VALUES ('secure-delete', 1);
CREATE TRIGGER shared_document_pages_search_insert AFTER INSERT ON shared_document_pages
BEGIN
    INSERT INTO shared_document_pages_search (rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER shared_document_pages_search_delete AFTER DELETE ON shared_document_pages
BEGIN
    INSERT INTO shared_document_pages_search (shared_document_pages_search, rowid, text) VALUES ('delete', old.id, old.text);
END;

-- Passages of a page, each with the embedding model's unit vector (little-endian f32s)
-- and the checksum of the model file that made it, as memories keep theirs.
CREATE TABLE shared_document_passages (
    id           INTEGER PRIMARY KEY,
    document     TEXT    NOT NULL REFERENCES shared_documents (id) ON DELETE CASCADE,
    page         INTEGER NOT NULL,
    text         TEXT    NOT NULL,
    vector       BLOB,
    vector_model TEXT CHECK ((vector IS NULL) = (vector_model IS NULL))
) STRICT;
CREATE INDEX shared_document_passages_by_document ON shared_document_passages (document, page);
CREATE INDEX shared_document_passages_by_vector_model ON shared_document_passages (vector_model);
