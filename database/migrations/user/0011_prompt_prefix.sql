-- A random line at the top of every system prompt sent for this person (issue 22 #13):
-- providers cache prompt prefixes per account, so people sharing one API key must share no
-- prefix, or one could time whether another's words are cached. Made once, never changed,
-- so every stored request composes again byte for byte.
ALTER TABLE space ADD COLUMN prompt_prefix TEXT;
