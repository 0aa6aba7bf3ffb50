-- Classes (an admin makes them): their teachers and members, and the builds owners shared with
-- their classmates; as migrations/0015_classes.sql on SQLite.
CREATE TABLE classes (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL
);

CREATE TABLE class_people (
    class_id TEXT NOT NULL REFERENCES classes (id) ON DELETE CASCADE,
    user_id  TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    part     TEXT NOT NULL,
    PRIMARY KEY (class_id, user_id, part)
);
CREATE INDEX class_people_user ON class_people (user_id, part);

CREATE TABLE shared_builds (
    build_id  TEXT PRIMARY KEY,
    shared_at TEXT NOT NULL
);
