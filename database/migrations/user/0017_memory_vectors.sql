-- Recall by meaning (§10): each memory's sentence as the embedding model sees it, a unit
-- vector of little-endian f32s, beside the model's file checksum that made it. A vector
-- made by another model (or none yet) is made again at the next upkeep; a changed text
-- drops its vector at once, so a stale one is never compared.
ALTER TABLE memories ADD COLUMN vector BLOB;
ALTER TABLE memories ADD COLUMN vector_model TEXT CHECK ((vector IS NULL) = (vector_model IS NULL));

CREATE TRIGGER memories_vector_stale AFTER UPDATE OF text ON memories
WHEN new.text IS NOT old.text AND new.vector IS NOT NULL AND new.vector IS old.vector
BEGIN
    UPDATE memories SET vector = NULL, vector_model = NULL WHERE rowid = new.rowid;
END;

-- Finding the memories still to embed reads this index, not every row's vector.
CREATE INDEX memories_by_vector_model ON memories (vector_model);

-- Counts every change to the vectors, so a search's copy of them in memory knows when it
-- is stale without reading them again.
CREATE TABLE memories_vectors_version (n INTEGER NOT NULL) STRICT;
INSERT INTO memories_vectors_version (n) VALUES (0);
CREATE TRIGGER memories_vectors_deleted AFTER DELETE ON memories WHEN old.vector IS NOT NULL
BEGIN
    UPDATE memories_vectors_version SET n = n + 1;
END;
CREATE TRIGGER memories_vectors_changed AFTER UPDATE OF vector, vector_model ON memories
BEGIN
    UPDATE memories_vectors_version SET n = n + 1;
END;
