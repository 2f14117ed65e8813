-- A conversation's latest turn, and a turn's rows, are looked up on every turn; without
-- these, both scans grow with everything the person has ever said.
CREATE INDEX turns_by_session ON turns (session_id, started_at);
CREATE INDEX messages_by_turn ON messages (turn_id, role);
