-- What this person last saw and accepted about where their words may go and what may act
-- for them (§3): the providers, role attributes, shared rules and agents in force then.
-- Each turn compares the shared database with it. It lives here, in their encrypted file,
-- because an administrator can neither read nor forge it.
CREATE TABLE accepted (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    record     TEXT    NOT NULL CHECK (json_valid(record)),
    updated_at TEXT    NOT NULL
) STRICT;
