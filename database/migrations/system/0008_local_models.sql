-- Model files in the built-in local provider (§9): one row per GGUF file Skald keeps at
-- models/<id>.gguf in its data directory. The model is offered as local/<id> through the
-- provider of kind `local`, whose models row is written in the same transaction.
CREATE TABLE local_models (
    id             TEXT    PRIMARY KEY
                           CHECK (length(id) BETWEEN 1 AND 64 AND id NOT GLOB '*[^a-z0-9._-]*'),
    name           TEXT    NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    file_size      INTEGER NOT NULL CHECK (file_size > 0),
    sha256         TEXT    NOT NULL UNIQUE CHECK (length(sha256) = 64),
    architecture   TEXT    NOT NULL,
    parameters     INTEGER,
    quantization   TEXT,
    context_length INTEGER NOT NULL CHECK (context_length > 0),
    -- where the file came from: the path it was imported from, or later a download address
    source         TEXT    NOT NULL,
    imported_by    TEXT    NOT NULL,
    imported_at    TEXT    NOT NULL
) STRICT;
