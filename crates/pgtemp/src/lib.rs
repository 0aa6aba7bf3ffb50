//! A throwaway PostgreSQL server for wright's tests and benches.
//!
//! [`PgServer::start`] runs Debian's own `initdb` and `pg_ctl` (package `postgresql`) in a
//! temporary folder and listens on a free loopback port; [`PgServer::database`] makes an empty
//! database per test, so tests share one server yet never see each other's rows. The server
//! stops when the [`PgServer`] is dropped, and a small watchdog stops it when the process that
//! started it dies without dropping it (a test binary's statics are never dropped, and a
//! killed test leaves nothing running).
//!
//! PostgreSQL refuses to run as root, so as root the server runs as the `postgres` user the
//! Debian package creates (or `nobody`). It is tuned for tests (no fsync): never keep data in it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

/// Why a test server could not start.
#[derive(Debug, thiserror::Error)]
pub enum PgError {
    #[error(
        "PostgreSQL's server programs were not found (looked for `pg_ctl` in $WRIGHT_PG_BIN, \
         `pg_config --bindir` and /usr/lib/postgresql/*/bin); install Debian's `postgresql` \
         package (`cargo xtask setup` does)"
    )]
    NotInstalled,
    #[error("{what}: {detail}")]
    Failed { what: String, detail: String },
}

fn failed(what: impl Into<String>, detail: impl ToString) -> PgError {
    PgError::Failed { what: what.into(), detail: detail.to_string() }
}

/// A running PostgreSQL server in a temporary folder.
pub struct PgServer {
    bin: PathBuf,
    data: PathBuf,
    port: u16,
    user: Option<String>,
    _dir: tempfile::TempDir,
    next_db: AtomicU32,
}

impl PgServer {
    /// One server for the whole test binary, started on first use.
    pub fn shared() -> Result<&'static PgServer, PgError> {
        static SHARED: OnceLock<Result<PgServer, String>> = OnceLock::new();
        SHARED
            .get_or_init(|| PgServer::start().map_err(|e| e.to_string()))
            .as_ref()
            .map_err(|e| failed("starting the shared test PostgreSQL", e))
    }

    /// Start a new server (a few hundred milliseconds to a couple of seconds).
    pub fn start() -> Result<Self, PgError> {
        let bin = bindir()?;
        let dir = tempfile::Builder::new().prefix("wright-pg-").tempdir().map_err(|e| failed("temp folder", e))?;
        let data = dir.path().join("data");
        let user = if is_root() { Some(server_user()?) } else { None };
        if let Some(u) = &user {
            let out = Command::new("chown").arg(u).arg(dir.path()).output().map_err(|e| failed("chown", e))?;
            if !out.status.success() {
                return Err(failed("chown", String::from_utf8_lossy(&out.stderr)));
            }
        }
        let port = free_port()?;
        run(
            &user,
            Command::new(bin.join("initdb"))
                .args(["-A", "trust", "-U", "wright", "-E", "UTF8", "--locale=C", "--no-sync", "-D"])
                .arg(&data),
            "initdb",
        )?;
        let opts = format!(
            "-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={} -c fsync=off \
             -c synchronous_commit=off -c full_page_writes=off -c max_connections=300 -c shared_buffers=64MB",
            dir.path().display()
        );
        run(
            &user,
            Command::new(bin.join("pg_ctl"))
                .args(["-w", "-t", "60", "-l"])
                .arg(dir.path().join("log"))
                .arg("-D")
                .arg(&data)
                .args(["-o", &opts, "start"]),
            "pg_ctl start",
        )?;
        let server = Self { bin, data, port, user, _dir: dir, next_db: AtomicU32::new(0) };
        server.watchdog();
        Ok(server)
    }

    /// Stops the server, and removes its folder, when this process ends without dropping it
    /// (the shared server of a test binary is never dropped: without this, every run of the
    /// tests left a folder of a few dozen megabytes in the temp folder).
    fn watchdog(&self) {
        let script = format!(
            "while [ -d /proc/{pid} ]; do sleep 0.5; done; {ctl} -D '{data}' stop -m immediate >/dev/null 2>&1; \
             rm -rf '{dir}'",
            pid = std::process::id(),
            ctl = self.bin.join("pg_ctl").display(),
            data = self.data.display(),
            dir = self._dir.path().display(),
        );
        let mut cmd = Command::new("sh");
        cmd.args(["-c", &script]).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
        let cmd = match &self.user {
            Some(u) => {
                let mut c = Command::new("runuser");
                c.args(["-u", u, "--", "sh", "-c", &script])
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null());
                c
            }
            None => cmd,
        };
        let mut cmd = cmd;
        // Its own process group, so a Ctrl-C to the tests does not take it down first.
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
        let _ = cmd.spawn();
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The URL of database `name` on this server.
    pub fn url(&self, name: &str) -> String {
        format!("postgres://wright@127.0.0.1:{}/{name}", self.port)
    }

    /// A new empty database; its URL.
    pub fn database(&self) -> Result<String, PgError> {
        let n = self.next_db.fetch_add(1, Ordering::Relaxed);
        let name = format!("t{}_{n}", std::process::id());
        let out = Command::new(self.bin.join("createdb"))
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", "wright", &name])
            .output()
            .map_err(|e| failed("createdb", e))?;
        if !out.status.success() {
            return Err(failed("createdb", String::from_utf8_lossy(&out.stderr)));
        }
        Ok(self.url(&name))
    }

    /// Stop the server (every connection is cut) and start it again on the same port and
    /// data, as a database restart or fail-over does to its clients.
    pub fn restart(&self) -> Result<(), PgError> {
        run(
            &self.user,
            // `-l`: the server's output goes to its log, not to a pipe this call would wait on.
            Command::new(self.bin.join("pg_ctl"))
                .args(["-w", "-t", "60", "-m", "fast", "-l"])
                .arg(self._dir.path().join("log"))
                .arg("-D")
                .arg(&self.data)
                .arg("restart"),
            "pg_ctl restart",
        )
    }

    /// The server's log so far (for a failing test's message).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self._dir.path().join("log")).unwrap_or_default()
    }

    /// The folder of the server's programs (`psql`, `pgbench`).
    pub fn bindir(&self) -> &Path {
        &self.bin
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        let mut cmd = Command::new(self.bin.join("pg_ctl"));
        cmd.arg("-D").arg(&self.data).args(["stop", "-m", "immediate"]).stdout(Stdio::null()).stderr(Stdio::null());
        let _ = run(&self.user, &mut cmd, "pg_ctl stop");
    }
}

/// Run `cmd` (as `user` when given, through `runuser`); its stderr is the error.
fn run(user: &Option<String>, cmd: &mut Command, what: &str) -> Result<(), PgError> {
    let out = match user {
        Some(u) => {
            let mut r = Command::new("runuser");
            r.args(["-u", u, "--"]).arg(cmd.get_program()).args(cmd.get_args());
            r.output()
        }
        None => cmd.output(),
    }
    .map_err(|e| failed(what, e))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(failed(what, format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))))
    }
}

fn bindir() -> Result<PathBuf, PgError> {
    if let Some(dir) = std::env::var_os("WRIGHT_PG_BIN") {
        let dir = PathBuf::from(dir);
        return if dir.join("pg_ctl").exists() { Ok(dir) } else { Err(PgError::NotInstalled) };
    }
    if let Ok(out) = Command::new("pg_config").arg("--bindir").output()
        && out.status.success()
    {
        let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if dir.join("pg_ctl").exists() && dir.join("initdb").exists() {
            return Ok(dir);
        }
    }
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .map_err(|_| PgError::NotInstalled)?
        .flatten()
        .filter_map(|e| {
            let v = e.file_name().to_string_lossy().parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("pg_ctl").exists().then_some((v, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, b)| b).ok_or(PgError::NotInstalled)
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0").unwrap_or(false)
}

/// Who runs the server when we are root: the package's `postgres` user, else `nobody`.
fn server_user() -> Result<String, PgError> {
    for u in ["postgres", "nobody"] {
        if Command::new("id").arg("-u").arg(u).output().map(|o| o.status.success()).unwrap_or(false) {
            return Ok(u.to_string());
        }
    }
    Err(failed("PostgreSQL cannot run as root", "and neither a `postgres` nor a `nobody` user exists"))
}

fn free_port() -> Result<u16, PgError> {
    let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| failed("finding a free port", e))?;
    l.local_addr().map(|a| a.port()).map_err(|e| failed("finding a free port", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_makes_databases_and_stops() {
        let pg = PgServer::start().unwrap();
        let a = pg.database().unwrap();
        let b = pg.database().unwrap();
        assert_ne!(a, b);
        let out = Command::new(pg.bindir().join("psql")).args([&a, "-tAc", "SELECT 40 + 2"]).output().unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "42", "{}", String::from_utf8_lossy(&out.stderr));
        let port = pg.port();
        drop(pg);
        assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err(), "the server stopped");
    }
}
