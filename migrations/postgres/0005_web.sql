-- The dashboard's people: accounts, the projects each belongs to, and
-- signed-in sessions.
--
-- Passwords are stored as bcrypt hashes. A session is known by the SHA-256
-- of its random token: the token itself lives only in the browser's cookie,
-- so a copy of the database signs no one in.

-- +goose Up
CREATE TABLE users (
    id            text PRIMARY KEY,
    -- Stored in lower case, so one address is one account.
    email         text NOT NULL UNIQUE,
    password_hash text NOT NULL,
    created_at    timestamptz NOT NULL
);

CREATE TABLE project_members (
    project_id text NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    user_id    text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (project_id, user_id)
);
CREATE INDEX project_members_user_idx ON project_members (user_id);

CREATE TABLE sessions (
    id           text PRIMARY KEY,
    user_id      text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    token_hash   text NOT NULL UNIQUE,
    -- Forms of the session carry this token (CSRF protection).
    csrf_token   text NOT NULL,
    created_at   timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL
);
CREATE INDEX sessions_user_idx ON sessions (user_id);
CREATE INDEX sessions_expires_idx ON sessions (expires_at);

-- +goose Down
DROP TABLE sessions;
DROP TABLE project_members;
DROP TABLE users;
