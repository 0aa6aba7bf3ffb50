-- Classes (an admin makes them): their teachers and members, and the builds owners shared with
-- their classmates. Who may see whose build is decided from these rows on every request, so a
-- member removed from a class stops seeing its shared builds at once.
CREATE TABLE classes (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL
);

-- One row per person and part: `teacher` or `member`.
CREATE TABLE class_people (
    class_id TEXT NOT NULL REFERENCES classes (id) ON DELETE CASCADE,
    user_id  TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    part     TEXT NOT NULL,
    PRIMARY KEY (class_id, user_id, part)
) WITHOUT ROWID;
CREATE INDEX class_people_user ON class_people (user_id, part);

-- A build its owner shared with their classmates (read-only; a classmate may copy it).
CREATE TABLE shared_builds (
    build_id  TEXT PRIMARY KEY,
    shared_at TEXT NOT NULL
) WITHOUT ROWID;
