-- A person's private space. This whole file is SQLCipher ciphertext (§4).

-- Whose space this is; checked at every unlock, so a file moved onto another account is refused.
CREATE TABLE space (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    user_id    TEXT    NOT NULL,
    created_at TEXT    NOT NULL
) STRICT;

-- Secret halves of the person's key pairs (X25519 for sealing key copies, §6.2).
CREATE TABLE space_keys (
    name       TEXT PRIMARY KEY,
    secret     BLOB NOT NULL,
    public     BLOB NOT NULL,
    created_at TEXT NOT NULL
) STRICT;

-- The person's own settings: whatever the UI keeps for them, private like the rest.
CREATE TABLE settings (
    key        TEXT PRIMARY KEY,
    value      TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT;
