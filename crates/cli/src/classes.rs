//! `wright classes`: the classes an admin makes, their teachers and their members
//! (docs/classes.md). A teacher sees the builds, costs and limits of their classes' members;
//! a member may share a build with their classmates.

use anyhow::Result;
use clap::Subcommand;
use std::io::Write;
use wright_store::classes::people_named;
use wright_store::{Class, Part, Store};

#[derive(Subcommand)]
pub enum ClassesCommand {
    /// Make a class, with its teachers (users added with `wright users add NAME --teacher`).
    Add {
        name: String,
        /// A teacher of the class; repeatable.
        #[arg(long = "teacher", value_name = "USER")]
        teachers: Vec<String>,
    },
    /// Add and remove members (and add teachers), then print the class's members.
    Members {
        class: String,
        /// A user to add; repeatable.
        #[arg(long = "add", value_name = "USER", num_args = 1..)]
        add: Vec<String>,
        /// A member to remove; they stop seeing the class's shared builds at once. Repeatable.
        #[arg(long = "remove", value_name = "USER", num_args = 1..)]
        remove: Vec<String>,
        /// A teacher to add; repeatable.
        #[arg(long = "teacher", value_name = "USER")]
        teachers: Vec<String>,
    },
    /// Every class, with its teachers and how many members it has.
    List,
}

fn print_members(class: &Class, out: &mut dyn Write) -> Result<()> {
    for u in &class.teachers {
        writeln!(out, "{:<24} teacher", u.name)?;
    }
    for u in &class.members {
        writeln!(out, "{:<24} member", u.name)?;
    }
    Ok(())
}

pub async fn classes(cmd: ClassesCommand, store: &dyn Store, out: &mut dyn Write) -> Result<()> {
    match cmd {
        ClassesCommand::Add { name, teachers } => {
            let teachers = people_named(&store.users().await?, &teachers, true)?;
            let class = store.create_class(&name, &teachers).await?;
            writeln!(out, "Added class {}.", class.name)?;
            print_members(&class, out)?;
        }
        ClassesCommand::Members { class, add, remove, teachers } => {
            let users = store.users().await?;
            let mut people: Vec<(String, Part)> =
                people_named(&users, &add, false)?.into_iter().map(|id| (id, Part::Member)).collect();
            people.extend(people_named(&users, &teachers, true)?.into_iter().map(|id| (id, Part::Teacher)));
            let remove = people_named(&users, &remove, false)?;
            let class = store.change_class(&class, &people, &remove).await?;
            print_members(&class, out)?;
        }
        ClassesCommand::List => {
            for c in store.classes().await? {
                let teachers: Vec<&str> = c.teachers.iter().map(|u| u.name.as_str()).collect();
                let n = c.members.len();
                let members = if n == 1 { "member " } else { "members" };
                writeln!(out, "{:<24} {n:>3} {members}  teachers: {}", c.name, teachers.join(", "))?;
            }
        }
    }
    Ok(())
}
