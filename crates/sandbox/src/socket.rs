//! Addresses for the programs a build starts: Unix socket paths that fit whatever the data
//! folder, and loopback ports that are free.
//!
//! Unix socket paths that fit, whatever the data folder.
//!
//! A Unix socket's path must fit in 107 bytes (`sun_path`), and wright's scratch folders live
//! under the user's data folder (`/home/<name>/.local/share/wright/tmp/<build>-…/…`), which can
//! be any length. Instead of refusing long folders, both ends name the socket through an open
//! descriptor of its folder: `/proc/self/fd/<n>/<name>` is at most ~30 bytes, and the kernel
//! resolves it to the real folder. The process inside the sandbox does the same with a
//! descriptor of its own (see the host scripts), so neither side ever spells the long path.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// An open folder that sockets are made in and reached through.
#[derive(Debug)]
pub struct SocketDir {
    dir: File,
    real: PathBuf,
}

impl SocketDir {
    /// Open `dir` (which must exist) for naming sockets in it.
    pub fn open(dir: &Path) -> std::io::Result<Self> {
        let file = File::open(dir)?;
        if !file.metadata()?.is_dir() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotADirectory,
                format!("{} is not a folder", dir.display()),
            ));
        }
        Ok(Self { dir: file, real: dir.to_path_buf() })
    }

    /// A short path to `name` in this folder, valid in this process while `self` lives.
    pub fn path(&self, name: &str) -> PathBuf {
        PathBuf::from(format!("/proc/self/fd/{}/{name}", self.dir.as_raw_fd()))
    }

    /// The folder as the file system names it (long; for messages and for the sandboxed side).
    pub fn real(&self) -> &Path {
        &self.real
    }
}

/// `N` loopback TCP ports free right now, all different: each is held while the next is
/// found, so one call never hands out the same port twice (two ports found one after the
/// other may be the same one, since the first is released before the second is asked for).
/// The program they are meant for binds them moments later; another process may take one in
/// between, which that program then reports as a port in use.
pub fn loopback_ports<const N: usize>() -> std::io::Result<[u16; N]> {
    let mut held = Vec::with_capacity(N);
    let mut ports = [0u16; N];
    for port in &mut ports {
        let listener = std::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0))?;
        *port = listener.local_addr()?.port();
        held.push(listener);
    }
    Ok(ports)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_socket_in_a_very_long_folder_is_bound_and_reached_through_its_short_name() {
        let top = tempfile::tempdir().unwrap();
        // 200+ bytes, spaces and non-ASCII included: far past what sun_path holds.
        let mut long = top.path().to_path_buf();
        for _ in 0..6 {
            long.push("pasta de dados é longa ✓ 0123456789");
        }
        std::fs::create_dir_all(&long).unwrap();
        assert!(long.join("s.sock").as_os_str().len() > 200);
        let dir = SocketDir::open(&long).unwrap();
        let short = dir.path("s.sock");
        assert!(short.as_os_str().len() < 40, "{}", short.display());
        let listener = std::os::unix::net::UnixListener::bind(&short).unwrap();
        assert!(long.join("s.sock").exists(), "the socket is in the real folder");
        let mut client = std::os::unix::net::UnixStream::connect(dir.path("s.sock")).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        use std::io::{Read, Write};
        client.write_all(b"ping").unwrap();
        let mut buf = [0u8; 4];
        server.read_exact(&mut buf).unwrap();
        assert_eq!(&buf, b"ping");
        assert_eq!(dir.real(), long.as_path());
    }

    #[test]
    fn ports_found_together_are_different_and_free() {
        for _ in 0..50 {
            let [a, b, c] = loopback_ports::<3>().unwrap();
            assert!(a != b && b != c && a != c, "{a} {b} {c}");
            for p in [a, b, c] {
                assert_ne!(p, 0);
                std::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, p)).unwrap();
            }
        }
    }

    #[test]
    fn a_file_is_not_a_socket_folder() {
        let f = tempfile::NamedTempFile::new().unwrap();
        assert!(SocketDir::open(f.path()).is_err());
        assert!(SocketDir::open(Path::new("/no/such/folder/anywhere")).is_err());
    }
}
