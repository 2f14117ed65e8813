-- Whether a model reads pictures: a picture attached to a message goes to it as the
-- picture itself (OpenAI image parts, Anthropic image blocks, Ollama images); a model that
-- does not is given the picture's text, or the person is told it cannot see it.
ALTER TABLE models ADD COLUMN images INTEGER NOT NULL DEFAULT 0 CHECK (images IN (0, 1));
