-- The instance itself: exactly one row, made when the shared database is created.
-- setup_completed_at stays NULL until the first administrator exists (§1).
CREATE TABLE instance (
    id                 INTEGER PRIMARY KEY CHECK (id = 1),
    instance_id        TEXT    NOT NULL,
    created_at         TEXT    NOT NULL,
    setup_completed_at TEXT
) STRICT;

INSERT INTO instance (id, instance_id, created_at)
VALUES (1, lower(hex(randomblob(16))), strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
