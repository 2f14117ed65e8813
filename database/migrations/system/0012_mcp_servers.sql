-- MCP servers an administrator configured (§12). A stdio server is a command with its
-- arguments and the environment the administrator declared (sealed under the instance key,
-- §4: it may hold a server's own token); an HTTP server is an address with an optional
-- bearer token, sealed likewise. `approved_spec` is the digest of the launch spec as it
-- was approved: a server whose spec differs offers nothing until approved again.
CREATE TABLE mcp_servers (
    id            TEXT    PRIMARY KEY,
    name          TEXT    NOT NULL UNIQUE
                          CHECK (length(name) BETWEEN 1 AND 32 AND name NOT GLOB '*[^a-z0-9-]*'
                                 AND name NOT GLOB '-*' AND name NOT GLOB '*-'),
    transport     TEXT    NOT NULL CHECK (transport IN ('stdio', 'http')),
    command       TEXT,
    args          TEXT    NOT NULL DEFAULT '[]' CHECK (json_type(args) = 'array'),
    env           BLOB,
    url           TEXT,
    token         BLOB,
    -- a LAN address the administrator vouches for counts as local (§16)
    trusted_lan   INTEGER NOT NULL DEFAULT 0 CHECK (trusted_lan IN (0, 1)),
    -- one instance for everyone instead of one per person
    shared        INTEGER NOT NULL DEFAULT 0 CHECK (shared IN (0, 1)),
    -- the folders a server that asks for roots is told of, as the administrator listed them
    roots         TEXT    NOT NULL DEFAULT '[]' CHECK (json_type(roots) = 'array'),
    timeout_ms    INTEGER NOT NULL DEFAULT 60000 CHECK (timeout_ms BETWEEN 1000 AND 3600000),
    protocol      TEXT    NOT NULL DEFAULT '2025-11-25' CHECK (protocol IN ('2025-11-25', '2026-07-28')),
    enabled       INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
    approved_spec TEXT,
    approved_by   TEXT,
    approved_at   TEXT,
    created_by    TEXT    NOT NULL,
    created_at    TEXT    NOT NULL,
    updated_by    TEXT    NOT NULL,
    updated_at    TEXT    NOT NULL,
    CHECK ((transport = 'stdio' AND command IS NOT NULL AND url IS NULL)
        OR (transport = 'http' AND url IS NOT NULL AND command IS NULL))
) STRICT;

-- Each tool a server listed, with its pin: a SHA-256 over the canonical JSON of the fields
-- the model and the gate read. `pin` is what the server last showed, `approved_pin` what an
-- administrator approved; a tool is offered only while the two agree. The definitions are
-- kept so an administrator sees old and new side by side.
CREATE TABLE mcp_tools (
    server_id           TEXT NOT NULL REFERENCES mcp_servers (id) ON DELETE CASCADE,
    name                TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 128),
    pin                 TEXT NOT NULL,
    definition          TEXT NOT NULL CHECK (json_valid(definition)),
    approved_pin        TEXT,
    approved_definition TEXT CHECK (approved_definition IS NULL OR json_valid(approved_definition)),
    seen_at             TEXT NOT NULL,
    approved_at         TEXT,
    -- the server no longer lists it
    gone                INTEGER NOT NULL DEFAULT 0 CHECK (gone IN (0, 1)),
    PRIMARY KEY (server_id, name)
) STRICT;
