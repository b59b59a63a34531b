-- The dashboard's people: accounts, the projects each belongs to, and
-- signed-in sessions.
--
-- Passwords are stored as bcrypt hashes. A session is known by the SHA-256
-- of its random token: the token itself lives only in the browser's cookie,
-- so a copy of the database signs no one in.

-- +goose Up
CREATE TABLE users (
    id            TEXT PRIMARY KEY,
    -- Stored in lower case, so one address is one account.
    email         TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    created_at    INTEGER NOT NULL
) STRICT;

CREATE TABLE project_members (
    project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (project_id, user_id)
) STRICT;
CREATE INDEX project_members_user_idx ON project_members (user_id);

CREATE TABLE sessions (
    id           TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    token_hash   TEXT NOT NULL UNIQUE,
    -- Forms of the session carry this token (CSRF protection).
    csrf_token   TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL
) STRICT;
CREATE INDEX sessions_user_idx ON sessions (user_id);
CREATE INDEX sessions_expires_idx ON sessions (expires_at);

-- +goose Down
DROP TABLE sessions;
DROP TABLE project_members;
DROP TABLE users;
