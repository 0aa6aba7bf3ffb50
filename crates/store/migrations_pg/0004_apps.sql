-- The SQLite store's 0010, on PostgreSQL.
-- Published apps: a build that ends PUBLISHED gets an address (`/apps/<slug>`). The slug is
-- unique across the store (the unique index is the guard two publishes at once race on); an
-- unpublished app keeps its row and its slug, so an old link never shows someone else's app.
CREATE TABLE apps (
    slug           TEXT PRIMARY KEY,
    build_id       TEXT NOT NULL UNIQUE,
    -- The build's owner; NULL for builds made with `wright run`.
    owner          TEXT,
    title          TEXT NOT NULL,
    description    TEXT NOT NULL,
    prompt         TEXT NOT NULL,
    template       TEXT NOT NULL,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL,
    unpublished_at TEXT
);
CREATE INDEX apps_owner ON apps (owner, created_at);
