//! Classes, their teachers and members, and builds shared within them (docs/classes.md).
//!
//! An admin makes a class and names its teachers and members. A teacher sees the builds, costs
//! and limits of their classes' members; a member may share a build of theirs with their
//! classmates (read-only, or to copy). Nothing here is cached: who may see whose build is read
//! from these rows on every request, so a member removed from a class stops seeing at once.
//!
//! Both backends run the same statements ([`impl_class_store!`], written with `$N` parameters,
//! which SQLite reads as `?N`), so the rules cannot differ between them.

use crate::{BuildRecord, Result, Role, StoreError, User};
use async_trait::async_trait;

/// A class and its people, each list by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Class {
    pub id: String,
    pub name: String,
    pub created_at: String,
    pub teachers: Vec<User>,
    pub members: Vec<User>,
}

/// What `viewer` is to `owner`: their teacher (in some class), their classmate (members of one
/// class together), or neither.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Relation {
    pub teaches: bool,
    pub classmates: bool,
}

/// A build shared with its owner's classmates: by whom (their name) and since when.
#[derive(Debug, Clone, PartialEq)]
pub struct Shared {
    pub by: String,
    pub at: String,
}

/// A shared build as a classmate lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct SharedBuild {
    pub build: BuildRecord,
    pub shared: Shared,
}

/// What one member's runs cost since a time: the sum over the `builds` rows they own.
#[derive(Debug, Clone, PartialEq)]
pub struct MemberSpend {
    pub user: User,
    pub runs: u64,
    pub cost_usd: f64,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// A person's part in a class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Teacher,
    Member,
}

impl Part {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Teacher => "teacher",
            Self::Member => "member",
        }
    }
}

#[async_trait]
pub trait ClassStore: Send + Sync {
    /// A new class named `name` with these teachers (user ids); refused when the name is taken.
    async fn create_class(&self, name: &str, teachers: &[String]) -> Result<Class>;
    /// Every class, by name.
    async fn classes(&self) -> Result<Vec<Class>>;
    /// The class named `name` ([`StoreError::NotFound`] when there is none).
    async fn class(&self, name: &str) -> Result<Class>;
    /// Add people (user id and part) to class `name` and remove members (user ids), in one
    /// transaction; the class as it is then. Adding someone already there changes nothing.
    async fn change_class(&self, name: &str, add: &[(String, Part)], remove: &[String]) -> Result<Class>;
    /// What `viewer` is to `owner` (both user ids).
    async fn relation(&self, viewer: &str, owner: &str) -> Result<Relation>;
    /// Share build `id` with its owner's classmates, or stop sharing it.
    async fn set_shared(&self, id: &str, shared: bool) -> Result<()>;
    /// Whether build `id` is shared, and by whom.
    async fn shared(&self, id: &str) -> Result<Option<Shared>>;
    /// The builds `user`'s classmates shared (not `user`'s own), newest first; at most `limit`.
    async fn shared_with(&self, user: &str, limit: u32) -> Result<Vec<SharedBuild>>;
    /// What each member of class `class_id` spent since `since` (a stored time): the sum of
    /// their runs' `cost_usd` and tokens, by name. The one query a class's costs come from.
    async fn class_spend(&self, class_id: &str, since: &str) -> Result<Vec<MemberSpend>>;
}

/// The users named in `names`, as ids, in order; an unknown name, or (for `teacher`) someone who
/// is not a teacher or an admin, is refused with what to do instead.
pub fn people_named(users: &[User], names: &[String], teacher: bool) -> Result<Vec<String>> {
    names
        .iter()
        .map(|name| {
            let u = users.iter().find(|u| u.name == *name).ok_or_else(|| {
                StoreError::Invalid(format!("there is no user named `{name}`; see `wright users list`"))
            })?;
            if teacher && !matches!(u.role, Role::Teacher | Role::Admin) {
                return Err(StoreError::Invalid(format!(
                    "`{name}` is not a teacher; add them with `wright users add NAME --teacher`"
                )));
            }
            Ok(u.id.clone())
        })
        .collect()
}

/// A class name: 1 to 64 letters, digits, `-`, `_` or `.`.
pub fn check_class_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(StoreError::Invalid("class names are 1 to 64 letters, digits, `-`, `_` or `.`".into()))
    }
}

/// The statements of [`ClassStore`], for a store type with a `pool` and a function that turns
/// a statement's `$N` parameters into its backend's.
macro_rules! impl_class_store {
    ($store:ty, $sql:path) => {
        #[async_trait::async_trait]
        impl $crate::classes::ClassStore for $store {
            async fn create_class(&self, name: &str, teachers: &[String]) -> $crate::Result<$crate::classes::Class> {
                $crate::classes::check_class_name(name)?;
                let mut tx = self.pool.begin().await?;
                let insert = $sql("INSERT INTO classes (id, name, created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING");
                let done = sqlx::query(&insert)
                    .bind($crate::new_id("c"))
                    .bind(name)
                    .bind($crate::now())
                    .execute(&mut *tx)
                    .await?;
                if done.rows_affected() == 0 {
                    return Err($crate::StoreError::Invalid(format!("a class named `{name}` already exists")));
                }
                let add = $sql(
                    "INSERT INTO class_people (class_id, user_id, part) \
                     SELECT id, $2, $3 FROM classes WHERE name = $1 ON CONFLICT DO NOTHING",
                );
                for t in teachers {
                    sqlx::query(&add).bind(name).bind(t).bind("teacher").execute(&mut *tx).await?;
                }
                tx.commit().await?;
                self.class(name).await
            }

            async fn classes(&self) -> $crate::Result<Vec<$crate::classes::Class>> {
                use sqlx::Row;
                let rows = sqlx::query("SELECT id, name, created_at FROM classes ORDER BY name").fetch_all(&self.pool).await?;
                let people = sqlx::query(
                    "SELECT p.class_id, p.part, u.id, u.name, u.role, u.created_at \
                     FROM class_people p JOIN users u ON u.id = p.user_id ORDER BY u.name",
                )
                .fetch_all(&self.pool)
                .await?;
                let mut out = Vec::with_capacity(rows.len());
                for r in &rows {
                    let mut class = $crate::classes::Class {
                        id: r.try_get("id")?,
                        name: r.try_get("name")?,
                        created_at: r.try_get("created_at")?,
                        teachers: vec![],
                        members: vec![],
                    };
                    for p in &people {
                        if p.try_get::<String, _>("class_id")? != class.id {
                            continue;
                        }
                        let user = $crate::rows::user_row(p)?;
                        if p.try_get::<String, _>("part")? == "teacher" {
                            class.teachers.push(user);
                        } else {
                            class.members.push(user);
                        }
                    }
                    out.push(class);
                }
                Ok(out)
            }

            async fn class(&self, name: &str) -> $crate::Result<$crate::classes::Class> {
                self.classes()
                    .await?
                    .into_iter()
                    .find(|c| c.name == name)
                    .ok_or_else(|| $crate::StoreError::NotFound(format!("class `{name}`")))
            }

            async fn change_class(
                &self,
                name: &str,
                add: &[(String, $crate::classes::Part)],
                remove: &[String],
            ) -> $crate::Result<$crate::classes::Class> {
                let mut tx = self.pool.begin().await?;
                let class: Option<String> = sqlx::query_scalar(&$sql("SELECT id FROM classes WHERE name = $1"))
                    .bind(name)
                    .fetch_optional(&mut *tx)
                    .await?;
                let Some(class) = class else {
                    return Err($crate::StoreError::NotFound(format!("class `{name}`")));
                };
                let insert = $sql(
                    "INSERT INTO class_people (class_id, user_id, part) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                );
                for (user, part) in add {
                    sqlx::query(&insert).bind(&class).bind(user).bind(part.as_str()).execute(&mut *tx).await?;
                }
                let delete = $sql("DELETE FROM class_people WHERE class_id = $1 AND user_id = $2 AND part = 'member'");
                for user in remove {
                    sqlx::query(&delete).bind(&class).bind(user).execute(&mut *tx).await?;
                }
                tx.commit().await?;
                self.class(name).await
            }

            async fn relation(&self, viewer: &str, owner: &str) -> $crate::Result<$crate::classes::Relation> {
                use sqlx::Row;
                let row = sqlx::query(&$sql(
                    "SELECT \
                     (SELECT COUNT(*) FROM class_people t JOIN class_people m ON m.class_id = t.class_id \
                      WHERE t.user_id = $1 AND t.part = 'teacher' AND m.user_id = $2 AND m.part = 'member') AS teaches, \
                     (SELECT COUNT(*) FROM class_people a JOIN class_people b ON b.class_id = a.class_id \
                      WHERE a.user_id = $1 AND a.part = 'member' AND b.user_id = $2 AND b.part = 'member') AS classmates",
                ))
                .bind(viewer)
                .bind(owner)
                .fetch_one(&self.pool)
                .await?;
                Ok($crate::classes::Relation {
                    teaches: row.try_get::<i64, _>("teaches")? > 0,
                    classmates: row.try_get::<i64, _>("classmates")? > 0,
                })
            }

            async fn set_shared(&self, id: &str, shared: bool) -> $crate::Result<()> {
                if shared {
                    sqlx::query(&$sql(
                        "INSERT INTO shared_builds (build_id, shared_at) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                    ))
                    .bind(id)
                    .bind($crate::now())
                    .execute(&self.pool)
                    .await?;
                } else {
                    sqlx::query(&$sql("DELETE FROM shared_builds WHERE build_id = $1")).bind(id).execute(&self.pool).await?;
                }
                Ok(())
            }

            async fn shared(&self, id: &str) -> $crate::Result<Option<$crate::classes::Shared>> {
                use sqlx::Row;
                let row = sqlx::query(&$sql(
                    "SELECT u.name, s.shared_at FROM shared_builds s JOIN builds b ON b.id = s.build_id \
                     JOIN users u ON u.id = b.owner WHERE s.build_id = $1",
                ))
                .bind(id)
                .fetch_optional(&self.pool)
                .await?;
                row.map(|r| Ok($crate::classes::Shared { by: r.try_get("name")?, at: r.try_get("shared_at")? }))
                    .transpose()
            }

            async fn shared_with(&self, user: &str, limit: u32) -> $crate::Result<Vec<$crate::classes::SharedBuild>> {
                use sqlx::Row;
                let rows = sqlx::query(&$sql(
                    "SELECT b.*, u.name AS shared_by, s.shared_at FROM builds b \
                     JOIN shared_builds s ON s.build_id = b.id JOIN users u ON u.id = b.owner \
                     WHERE b.kind <> 'chat' AND b.owner <> $1 AND b.owner IN ( \
                       SELECT m.user_id FROM class_people me \
                       JOIN class_people m ON m.class_id = me.class_id AND m.part = 'member' \
                       WHERE me.user_id = $1 AND me.part = 'member') \
                     ORDER BY b.started_at DESC, b.id DESC LIMIT $2",
                ))
                .bind(user)
                .bind(i64::from(limit))
                .fetch_all(&self.pool)
                .await?;
                rows.iter()
                    .map(|r| {
                        Ok($crate::classes::SharedBuild {
                            build: $crate::rows::build_row(r)?,
                            shared: $crate::classes::Shared { by: r.try_get("shared_by")?, at: r.try_get("shared_at")? },
                        })
                    })
                    .collect()
            }

            async fn class_spend(&self, class_id: &str, since: &str) -> $crate::Result<Vec<$crate::classes::MemberSpend>> {
                use sqlx::Row;
                let rows = sqlx::query(&$sql(
                    "SELECT u.id, u.name, u.role, u.created_at, COUNT(b.id) AS runs, \
                     COALESCE(SUM(b.cost_usd), 0.0) AS cost_usd, \
                     CAST(COALESCE(SUM(b.input_tokens), 0) AS BIGINT) AS input_tokens, \
                     CAST(COALESCE(SUM(b.output_tokens), 0) AS BIGINT) AS output_tokens \
                     FROM class_people p JOIN users u ON u.id = p.user_id \
                     LEFT JOIN builds b ON b.owner = u.id AND b.started_at >= $2 \
                     WHERE p.class_id = $1 AND p.part = 'member' \
                     GROUP BY u.id, u.name, u.role, u.created_at ORDER BY u.name",
                ))
                .bind(class_id)
                .bind(since)
                .fetch_all(&self.pool)
                .await?;
                rows.iter()
                    .map(|r| {
                        Ok($crate::classes::MemberSpend {
                            user: $crate::rows::user_row(r)?,
                            runs: $crate::rows::u(r.try_get::<i64, _>("runs")?),
                            cost_usd: r.try_get("cost_usd")?,
                            input_tokens: $crate::rows::u(r.try_get::<i64, _>("input_tokens")?),
                            output_tokens: $crate::rows::u(r.try_get::<i64, _>("output_tokens")?),
                        })
                    })
                    .collect()
            }
        }
    };
}
pub(crate) use impl_class_store;
