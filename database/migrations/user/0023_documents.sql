-- A person's documents (§12, docs/architecture.md §12.2), whole inside their encrypted
-- file: the original bytes in chunks (so a download streams and no row is huge), the text
-- read from each page, a full-text index of the pages, and passages of the text with the
-- embedding model's vectors for search by meaning. Nothing of a document lives elsewhere.
CREATE TABLE documents (
    id            TEXT    PRIMARY KEY,
    name          TEXT    NOT NULL,
    kind          TEXT    NOT NULL,
    size          INTEGER NOT NULL,
    -- duplicates are found by this inside the owner's own file only: a hash in the shared
    -- database would let anyone confirm what someone holds
    sha256        TEXT    NOT NULL UNIQUE,
    pages         INTEGER,
    status        TEXT    NOT NULL CHECK (status IN ('reading', 'ready', 'no_text', 'failed')),
    status_detail TEXT,
    created_at    TEXT    NOT NULL,
    -- who uploaded it and whether their words stay on this machine: always the owner and
    -- their role's tier here; the shared pool's table has the same shape
    uploaded_by   TEXT,
    local_only    INTEGER NOT NULL DEFAULT 0 CHECK (local_only IN (0, 1))
) STRICT;
CREATE INDEX documents_by_creation ON documents (created_at);

CREATE TABLE document_chunks (
    document TEXT    NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    seq      INTEGER NOT NULL,
    bytes    BLOB    NOT NULL,
    PRIMARY KEY (document, seq)
) STRICT, WITHOUT ROWID;

CREATE TABLE document_pages (
    id       INTEGER PRIMARY KEY,
    document TEXT    NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    page     INTEGER NOT NULL,
    text     TEXT    NOT NULL,
    UNIQUE (document, page)
) STRICT;

-- External content, as for notes: the text is stored once; the index holds tokens, and
-- removes a deleted page's at once (secure-delete).
CREATE VIRTUAL TABLE document_pages_search USING fts5 (
    text,
    content = 'document_pages',
    content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2'
);
INSERT INTO document_pages_search (document_pages_search, rank) VALUES ('secure-delete', 1);
CREATE TRIGGER document_pages_search_insert AFTER INSERT ON document_pages
BEGIN
    INSERT INTO document_pages_search (rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER document_pages_search_delete AFTER DELETE ON document_pages
BEGIN
    INSERT INTO document_pages_search (document_pages_search, rowid, text) VALUES ('delete', old.id, old.text);
END;

-- Passages of a page, each with the embedding model's unit vector (little-endian f32s)
-- and the checksum of the model file that made it, as memories keep theirs.
CREATE TABLE document_passages (
    id           INTEGER PRIMARY KEY,
    document     TEXT    NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    page         INTEGER NOT NULL,
    text         TEXT    NOT NULL,
    vector       BLOB,
    vector_model TEXT CHECK ((vector IS NULL) = (vector_model IS NULL))
) STRICT;
CREATE INDEX document_passages_by_document ON document_passages (document, page);
CREATE INDEX document_passages_by_vector_model ON document_passages (vector_model);
