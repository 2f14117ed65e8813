-- How much each person used the models, per calendar day, for the administrator's usage
-- view and the roles' daily caps. Counts and tokens only: never a word of content.
CREATE TABLE usage_daily (
    user_id    TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    day        TEXT    NOT NULL CHECK (day GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'),
    requests   INTEGER NOT NULL DEFAULT 0 CHECK (requests >= 0),
    tokens_in  INTEGER NOT NULL DEFAULT 0 CHECK (tokens_in >= 0),
    tokens_out INTEGER NOT NULL DEFAULT 0 CHECK (tokens_out >= 0),
    PRIMARY KEY (user_id, day)
) STRICT;
