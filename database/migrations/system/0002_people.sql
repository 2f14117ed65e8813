-- Roles are data (§6.1): presets are seeded from database/presets/roles.json at first
-- start; administrators edit them and add more. No code lists them.
CREATE TABLE roles (
    id                    TEXT    PRIMARY KEY CHECK (id GLOB '[a-z0-9]*' AND length(id) BETWEEN 1 AND 40),
    label                 TEXT    NOT NULL,
    description           TEXT    NOT NULL DEFAULT '',
    manage_instance       INTEGER NOT NULL DEFAULT 0 CHECK (manage_instance IN (0, 1)),
    -- permission group
    tools                 TEXT    NOT NULL DEFAULT '["*"]' CHECK (json_valid(tools)),
    may_approve           INTEGER NOT NULL DEFAULT 1 CHECK (may_approve IN (0, 1)),
    -- run context
    may_schedule          INTEGER NOT NULL DEFAULT 1 CHECK (may_schedule IN (0, 1)),
    may_use_subagents     INTEGER NOT NULL DEFAULT 1 CHECK (may_use_subagents IN (0, 1)),
    max_turns             INTEGER NOT NULL DEFAULT 25 CHECK (max_turns BETWEEN 1 AND 1000),
    idle_timeout_minutes  INTEGER NOT NULL DEFAULT 30 CHECK (idle_timeout_minutes BETWEEN 1 AND 1440),
    lock_on_close         INTEGER NOT NULL DEFAULT 1 CHECK (lock_on_close IN (0, 1)),
    -- models
    allowed_models        TEXT    NOT NULL DEFAULT '["*"]' CHECK (json_valid(allowed_models)),
    preferred_strength    TEXT    NOT NULL DEFAULT 'balanced' CHECK (preferred_strength IN ('fast', 'balanced', 'strong')),
    usage_cap_tokens      INTEGER CHECK (usage_cap_tokens IS NULL OR usage_cap_tokens >= 0),
    -- data handling
    privacy_tier          TEXT    NOT NULL DEFAULT 'any' CHECK (privacy_tier IN ('local_only', 'any')),
    memory_retention_days INTEGER NOT NULL DEFAULT 90 CHECK (memory_retention_days BETWEEN 1 AND 36500),
    created_at            TEXT    NOT NULL
) STRICT;

-- The people of this instance. Nothing here opens a private space: the key wraps are
-- sealed under secrets only the person holds, and the enrolment code is kept as a digest.
CREATE TABLE users (
    id                  TEXT    PRIMARY KEY,
    name                TEXT    NOT NULL UNIQUE COLLATE NOCASE,
    role_id             TEXT    NOT NULL REFERENCES roles (id),
    status              TEXT    NOT NULL CHECK (status IN ('pending', 'active', 'deactivated')),
    -- pending: the one-time enrolment code, as a digest, and when it stops working
    enrolment_digest    BLOB,
    enrolment_expires   TEXT,
    -- active: the private file's SQLCipher salt, the X25519 public half, the DEK's version
    file_salt           BLOB    CHECK (file_salt IS NULL OR length(file_salt) = 16),
    public_key          BLOB    CHECK (public_key IS NULL OR length(public_key) = 32),
    key_version         INTEGER NOT NULL DEFAULT 1,
    created_at          TEXT    NOT NULL,
    activated_at        TEXT,
    CHECK (status <> 'active' OR (file_salt IS NOT NULL AND public_key IS NOT NULL)),
    CHECK (status <> 'pending' OR enrolment_digest IS NOT NULL)
) STRICT;

-- Each row wraps one person's DEK under one secret (§4). The blob is self-describing:
-- its header names user, purpose, KDF parameters and salt, and is bound as AES-GCM AAD.
CREATE TABLE key_wraps (
    user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    purpose    TEXT NOT NULL CHECK (purpose IN ('password', 'recovery')),
    wrapped    BLOB NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (user_id, purpose)
) STRICT;

-- The argon2id target this machine was calibrated to; logins below it re-wrap upward.
ALTER TABLE instance ADD COLUMN kdf_m_kib INTEGER;
ALTER TABLE instance ADD COLUMN kdf_t INTEGER;
ALTER TABLE instance ADD COLUMN kdf_p INTEGER;
