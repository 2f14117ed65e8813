-- Model providers an administrator connected (§9). The API key is sealed under the
-- instance key (§4) and never returned by any route. Who added and who last changed
-- each provider is kept for the privacy page (§3).
CREATE TABLE providers (
    id          TEXT    PRIMARY KEY,
    name        TEXT    NOT NULL UNIQUE COLLATE NOCASE
                        CHECK (length(name) BETWEEN 1 AND 40 AND name NOT GLOB '*[^A-Za-z0-9._-]*'),
    kind        TEXT    NOT NULL CHECK (kind IN ('openai', 'anthropic', 'ollama', 'local')),
    base_url    TEXT    NOT NULL,
    api_key     BLOB,
    -- a LAN address the administrator vouches for counts as local (§16)
    trusted_lan INTEGER NOT NULL DEFAULT 0 CHECK (trusted_lan IN (0, 1)),
    created_by  TEXT    NOT NULL,
    created_at  TEXT    NOT NULL,
    updated_by  TEXT    NOT NULL,
    updated_at  TEXT    NOT NULL
) STRICT;

-- The models each provider offers, with what a turn needs to pick one.
CREATE TABLE models (
    provider_id    TEXT    NOT NULL REFERENCES providers (id) ON DELETE CASCADE,
    model_id       TEXT    NOT NULL CHECK (length(model_id) BETWEEN 1 AND 200),
    context_window INTEGER NOT NULL CHECK (context_window > 0),
    strength       TEXT    NOT NULL CHECK (strength IN ('fast', 'balanced', 'strong')),
    tools          INTEGER NOT NULL DEFAULT 1 CHECK (tools IN (0, 1)),
    PRIMARY KEY (provider_id, model_id)
) STRICT;
