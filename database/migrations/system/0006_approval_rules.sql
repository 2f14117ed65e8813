-- The approval gate's shared rules (§8.4): which tool calls run, are refused, or wait for
-- the person. Seeded from database/presets/approval_rules.json; administrators edit them.
-- A person's own "always allow" rules live in their encrypted file, not here.
CREATE TABLE approval_rules (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    tool       TEXT    NOT NULL CHECK (length(tool) BETWEEN 1 AND 100),
    args       TEXT    CHECK (args IS NULL OR length(args) BETWEEN 1 AND 1000),
    role_id    TEXT    REFERENCES roles (id) ON DELETE CASCADE,
    effect     TEXT    NOT NULL CHECK (effect IN ('allow', 'deny', 'require')),
    priority   INTEGER NOT NULL CHECK (priority BETWEEN 0 AND 1000000),
    created_by TEXT    NOT NULL,
    created_at TEXT    NOT NULL
) STRICT;

-- Whether the presets were seeded: once, ever. Rules an administrator deleted, all of
-- them included, do not come back at the next start.
ALTER TABLE instance ADD COLUMN approval_rules_seeded INTEGER NOT NULL DEFAULT 0 CHECK (approval_rules_seeded IN (0, 1));
