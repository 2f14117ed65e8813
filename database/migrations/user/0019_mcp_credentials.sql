-- This person's own bearer token for an MCP server reached over HTTP (§12.1), used for
-- their calls instead of the administrator's shared one. It lives here, in their own
-- encrypted file, so no one else's session can read or use it.
CREATE TABLE mcp_credentials (
    server_id  TEXT PRIMARY KEY,
    token      TEXT NOT NULL CHECK (length(token) BETWEEN 1 AND 8192),
    updated_at TEXT NOT NULL
) STRICT;
