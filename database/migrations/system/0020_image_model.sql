-- The model a provider makes pictures with (`/v1/images/generations` of an
-- OpenAI-compatible server), set by an administrator; none for providers that make none.
ALTER TABLE providers ADD COLUMN image_model TEXT CHECK (image_model IS NULL OR length(image_model) BETWEEN 1 AND 200);
