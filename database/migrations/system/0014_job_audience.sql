-- Jobs for more than their owner (§11). A shared reminder is everyone's to read: its words
-- are kept here, labelled so wherever it shows. A reminder one member sets for another is
-- the other's (`owner_id`) once made; `set_by` names who set it, and its words wait here
-- sealed to the recipient's public key (`sealed_text`) until their next login moves them
-- into their own encrypted file — so not even whoever set it can read them back here.
ALTER TABLE jobs ADD COLUMN shared INTEGER NOT NULL DEFAULT 0
    CHECK (shared IN (0, 1) AND (shared = 0 OR (kind = 'reminder' AND readable_while_away = 1)));
ALTER TABLE jobs ADD COLUMN set_by TEXT REFERENCES users (id) ON DELETE SET NULL;
ALTER TABLE jobs ADD COLUMN sealed_text BLOB
    CHECK (sealed_text IS NULL OR (kind = 'reminder' AND readable_while_away = 0 AND text IS NULL));
CREATE INDEX jobs_shared ON jobs (shared) WHERE shared = 1;
