//! `wright users`: the people who may use `wright serve`.

use anyhow::{Result, bail};
use clap::Subcommand;
use std::io::Write;
use wright_store::{Role, Store};

#[derive(Subcommand)]
pub enum UsersCommand {
    /// Add a user and print their API token (shown this once; only its hash is kept).
    Add {
        name: String,
        /// May see every build and the statistics.
        #[arg(long)]
        admin: bool,
        /// May see the builds, costs and limits of the members of the classes they teach
        /// (`wright classes add NAME --teacher USER`; docs/classes.md).
        #[arg(long, conflicts_with = "admin")]
        teacher: bool,
    },
    /// Everyone who may sign in.
    List,
    /// Remove a user; their tokens and sessions stop working at once (their builds stay).
    Remove { name: String },
    /// A user's monthly spending cap in US dollars (`wright users cap ann 5`, `none` to remove
    /// it), or the default for everyone without one (`--default 2`); alone, the caps in force.
    /// A user at or over their cap gets 429 from every model-backed route until the month ends.
    Cap {
        /// NAME USD|none, or with --default just USD|none.
        #[arg(value_name = "NAME USD|none")]
        args: Vec<String>,
        /// Set the default cap instead of one user's.
        #[arg(long)]
        default: bool,
    },
    /// Print a one-time link that signs a user in to the browser.
    Login {
        name: String,
        /// The server's address as the user reaches it.
        #[arg(long, default_value = "http://127.0.0.1:8787", value_name = "URL")]
        url: String,
    },
}

fn valid_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '@'));
    if !ok {
        bail!("user names are 1 to 64 letters, digits, `-`, `_`, `.` or `@`");
    }
    Ok(())
}

pub async fn users(cmd: UsersCommand, store: &dyn Store, out: &mut dyn Write) -> Result<()> {
    match cmd {
        UsersCommand::Add { name, admin, teacher } => {
            valid_name(&name)?;
            let role = match (admin, teacher) {
                (true, _) => Role::Admin,
                (_, true) => Role::Teacher,
                _ => Role::User,
            };
            let user = wright_store::new_user(&name, role);
            let token = wright_server::new_token();
            store.create_user(&user, &wright_server::hash_token(&token)).await?;
            writeln!(out, "{token}")?;
            eprintln!(
                "Added {} ({}). The token above is shown only now; send it as `Authorization: Bearer <token>`.",
                user.name,
                user.role.as_str()
            );
        }
        UsersCommand::List => {
            for u in store.users().await? {
                writeln!(out, "{:<24} {:<7} {}", u.name, u.role.as_str(), u.created_at)?;
            }
        }
        UsersCommand::Remove { name } => {
            if !store.remove_user(&name).await? {
                bail!("there is no user named `{name}`; see `wright users list`");
            }
            writeln!(out, "Removed {name}.")?;
        }
        UsersCommand::Cap { args, default } => crate::spend::cap(store, &args, default, out).await?,
        UsersCommand::Login { name, url } => {
            let Some(user) = store.users().await?.into_iter().find(|u| u.name == name) else {
                bail!("there is no user named `{name}`; see `wright users list`");
            };
            let link = wright_server::login_link(store, &user, url.trim_end_matches('/')).await?;
            writeln!(out, "{link}")?;
        }
    }
    Ok(())
}
