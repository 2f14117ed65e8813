-- Each version of each agent definition Skald has run (§3, §8.7): its content hash, and
-- who changed it, for the privacy page. Only names, hashes and people; never a prompt.
CREATE TABLE agent_versions (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    agent_id   TEXT    NOT NULL,
    hash       TEXT    NOT NULL,
    -- `bundled` (shipped with Skald), `app` (saved through Skald by `changed_by`) or
    -- `disk` (the files were edited outside Skald: nobody can say by whom)
    source     TEXT    NOT NULL CHECK (source IN ('bundled', 'app', 'disk')),
    changed_by TEXT    REFERENCES users (id) ON DELETE SET NULL,
    seen_at    TEXT    NOT NULL
) STRICT;
CREATE INDEX agent_versions_latest ON agent_versions (agent_id, id);

-- What changed while a person was away, shown at their next login (§3): a change made by
-- someone else to something that shapes what happens to their words.
CREATE TABLE notices (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id    TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    kind       TEXT    NOT NULL,
    body       TEXT    NOT NULL CHECK (json_valid(body)),
    created_at TEXT    NOT NULL,
    seen_at    TEXT
) STRICT;
CREATE INDEX notices_unseen ON notices (user_id, id) WHERE seen_at IS NULL;
