-- A local model is a chat model or an embedding model (§10): an embedding model is not
-- offered to roles as a chat model; memory recall uses it.
ALTER TABLE local_models ADD COLUMN kind TEXT NOT NULL DEFAULT 'chat' CHECK (kind IN ('chat', 'embedding'));

-- The shared pool's vectors, as in each person's file (user migration 0017).
ALTER TABLE shared_memories ADD COLUMN vector BLOB;
ALTER TABLE shared_memories ADD COLUMN vector_model TEXT CHECK ((vector IS NULL) = (vector_model IS NULL));

CREATE TRIGGER shared_memories_vector_stale AFTER UPDATE OF text ON shared_memories
WHEN new.text IS NOT old.text AND new.vector IS NOT NULL AND new.vector IS old.vector
BEGIN
    UPDATE shared_memories SET vector = NULL, vector_model = NULL WHERE rowid = new.rowid;
END;

CREATE INDEX shared_memories_by_vector_model ON shared_memories (vector_model);

CREATE TABLE shared_memories_vectors_version (n INTEGER NOT NULL) STRICT;
INSERT INTO shared_memories_vectors_version (n) VALUES (0);
CREATE TRIGGER shared_memories_vectors_deleted AFTER DELETE ON shared_memories WHEN old.vector IS NOT NULL
BEGIN
    UPDATE shared_memories_vectors_version SET n = n + 1;
END;
CREATE TRIGGER shared_memories_vectors_changed AFTER UPDATE OF vector, vector_model ON shared_memories
BEGIN
    UPDATE shared_memories_vectors_version SET n = n + 1;
END;
