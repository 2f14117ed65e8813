-- Pictures a message carries to a model that reads them: the documents (in this file or
-- the shared pool) and their media types, as JSON `[{"document", "media_type"}]`; the
-- bytes stay with the document and are read when a request is composed.
ALTER TABLE messages ADD COLUMN images TEXT CHECK (images IS NULL OR json_valid(images));
-- Whether the model a request went to read pictures: a stored request is composed again
-- with the pictures as they were sent, or as the words that stood in for them.
ALTER TABLE model_requests ADD COLUMN images INTEGER NOT NULL DEFAULT 0 CHECK (images IN (0, 1));
