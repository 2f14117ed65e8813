-- The audit trail as a hash chain (§3): each entry carries the hash of the one before it,
-- so `skald verify` finds a deleted or edited entry without anyone's key. The instance row
-- keeps the chain's head, so deleting the newest entries, or all of them, shows too.
-- Entries written before the chain existed are chained once, at the next start.
ALTER TABLE audit ADD COLUMN prev_hash TEXT;
ALTER TABLE audit ADD COLUMN hash TEXT;
ALTER TABLE instance ADD COLUMN audit_head_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE instance ADD COLUMN audit_head_hash TEXT NOT NULL DEFAULT '';

-- A notice that holds a person's next turn until they decide on it (§3): the change it
-- describes is found again from their own record each time, so deleting the row releases
-- nothing.
ALTER TABLE notices ADD COLUMN holds INTEGER NOT NULL DEFAULT 0 CHECK (holds IN (0, 1));
