//! What a server listens on: a TCP address, or a Unix socket (fio's
//! `sock:PATH`), and who each connection comes from as far as the kernel
//! says (`SO_PEERCRED` on a Unix socket).
//!
//! A Unix socket's file is made with no permission for anyone, then opened
//! to its mode, so there is no moment when others could connect. When the
//! server ends it removes that file through the directory it was made in,
//! held open since: a directory renamed or swapped for a symbolic link in
//! the meantime does not redirect the removal, and a file that is no longer
//! the socket made (another file put at the name) is left alone.

use crate::wire::Conn;
use crate::Error;
use std::ffi::OsString;
use std::net::{SocketAddr, TcpListener};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixListener;
use std::path::Path;

/// A connection, boxed.
pub type Stream = Box<dyn Conn>;

/// The socket file of a Unix listener: the directory it was made in (held
/// open), its name there, and its identity (device, inode).
pub struct SocketFile {
    dir: OwnedFd,
    name: OsString,
    id: (u64, u64),
}

impl SocketFile {
    /// Remove the socket file, through its directory as it was at bind
    /// time, only when the name still holds the socket made then.
    pub fn remove(&self) {
        use nix::sys::stat::fstatat;
        use nix::unistd::{unlinkat, UnlinkatFlags};
        let st = match fstatat(
            &self.dir,
            self.name.as_os_str(),
            nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
        ) {
            Ok(st) => st,
            Err(_) => return,
        };
        if (st.st_dev, st.st_ino) == self.id {
            let _ = unlinkat(&self.dir, self.name.as_os_str(), UnlinkatFlags::NoRemoveDir);
        }
    }
}

/// Who connected, as far as the connection tells.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Client {
    /// Over TCP: the server's address, and the client's.
    Tcp { local: SocketAddr, peer: SocketAddr },
    /// Over the server's Unix socket: the client process's user and group,
    /// from the kernel (`SO_PEERCRED`), when they could be read.
    Unix { uid: Option<u32>, gid: Option<u32> },
}

impl std::fmt::Display for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Client::Tcp { peer, .. } => write!(f, "{peer}"),
            Client::Unix { uid: Some(u), .. } => write!(f, "uid {u} on the socket"),
            Client::Unix { uid: None, .. } => write!(f, "a process on the socket"),
        }
    }
}

/// What a server listens on.
pub enum Listener {
    Tcp(TcpListener),
    /// A Unix socket, and its file (removed when the server ends).
    Unix(UnixListener, SocketFile),
}

impl Listener {
    /// Listen on `addr` (a port in use is an error, said in one line).
    pub fn tcp(addr: SocketAddr) -> Result<Listener, Error> {
        let listener = TcpListener::bind(addr)
            .map_err(|e| Error::Io(format!("cannot listen on {addr}: {e}")))?;
        listener
            .set_nonblocking(true)
            .map_err(|e| Error::Io(e.to_string()))?;
        Ok(Listener::Tcp(listener))
    }

    /// Listen on a Unix socket at `path`, made with file mode `mode`. A
    /// socket file left by a server that is gone is replaced; one in use,
    /// or any other file, is an error, said in one line.
    pub fn unix(path: &Path, mode: u32) -> Result<Listener, Error> {
        use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
        let shown = path.display();
        let io = |e: std::io::Error| Error::Io(format!("{shown}: {e}"));
        let name = path
            .file_name()
            .ok_or_else(|| Error::Io(format!("{shown}: names no file (allowed: DIR/NAME)")))?;
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let dir: OwnedFd = nix::fcntl::open(
            parent,
            nix::fcntl::OFlag::O_DIRECTORY
                | nix::fcntl::OFlag::O_CLOEXEC
                | nix::fcntl::OFlag::O_PATH,
            nix::sys::stat::Mode::empty(),
        )
        .map_err(|e| Error::Io(format!("{}: {e}", parent.display())))?;
        // From here on, the directory is the one held open.
        let at = Path::new("/proc/self/fd")
            .join(std::os::fd::AsRawFd::as_raw_fd(&dir).to_string())
            .join(name);
        if let Ok(md) = std::fs::symlink_metadata(&at) {
            if !md.file_type().is_socket() {
                return Err(Error::Io(format!(
                    "{shown} exists and is not a socket (allowed: a new path, or a server's old socket)"
                )));
            }
            if std::os::unix::net::UnixStream::connect(&at).is_ok() {
                return Err(Error::Io(format!(
                    "{shown}: a server already listens there"
                )));
            }
            std::fs::remove_file(&at).map_err(io)?;
        }
        let old = nix::sys::stat::umask(nix::sys::stat::Mode::from_bits_truncate(0o777));
        let bound = UnixListener::bind(&at);
        nix::sys::stat::umask(old);
        let listener = bound.map_err(|e| Error::Io(format!("cannot listen on {shown}: {e}")))?;
        let md = std::fs::symlink_metadata(&at).map_err(io)?;
        std::fs::set_permissions(&at, std::fs::Permissions::from_mode(mode)).map_err(io)?;
        listener
            .set_nonblocking(true)
            .map_err(|e| Error::Io(e.to_string()))?;
        let file = SocketFile {
            dir,
            name: name.to_os_string(),
            id: (md.dev(), md.ino()),
        };
        Ok(Listener::Unix(listener, file))
    }

    /// The next connection (blocking reads), and who it is.
    pub fn accept(&self) -> std::io::Result<(Stream, Client)> {
        match self {
            Listener::Tcp(l) => {
                let (s, peer) = l.accept()?;
                s.set_nonblocking(false)?;
                let _ = s.set_nodelay(true);
                let local = s.local_addr()?;
                Ok((Box::new(s), Client::Tcp { local, peer }))
            }
            Listener::Unix(l, _) => {
                let (s, _) = l.accept()?;
                s.set_nonblocking(false)?;
                let cred =
                    nix::sys::socket::getsockopt(&s, nix::sys::socket::sockopt::PeerCredentials)
                        .ok();
                let client = Client::Unix {
                    uid: cred.map(|c| c.uid()),
                    gid: cred.map(|c| c.gid()),
                };
                Ok((Box::new(s), client))
            }
        }
    }

    /// The TCP address listened on (none for a Unix socket).
    pub fn local_addr(&self) -> Option<SocketAddr> {
        match self {
            Listener::Tcp(l) => l.local_addr().ok(),
            Listener::Unix(..) => None,
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        if let Listener::Unix(_, f) = self {
            f.remove();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_socket_is_removed_through_its_own_directory_not_a_link_put_in_its_place() {
        let base = std::env::temp_dir().join(format!("ssdready-listen-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let (real, other) = (base.join("real"), base.join("other"));
        std::fs::create_dir_all(&real).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        let l = Listener::unix(&real.join("s.sock"), 0o600).unwrap();
        // The directory is moved away and a link to another one, holding a
        // file of the same name, put in its place.
        std::fs::rename(&real, base.join("moved")).unwrap();
        std::os::unix::fs::symlink(&other, &real).unwrap();
        std::fs::write(other.join("s.sock"), "not the server's").unwrap();
        drop(l);
        assert!(other.join("s.sock").exists(), "removed through the link");
        assert!(!base.join("moved/s.sock").exists(), "its own socket stays");
        // A socket whose name was taken by another file is left alone.
        let l = Listener::unix(&other.join("t.sock"), 0o600).unwrap();
        std::fs::remove_file(other.join("t.sock")).unwrap();
        std::fs::write(other.join("t.sock"), "someone else's").unwrap();
        drop(l);
        assert!(other.join("t.sock").exists());
        std::fs::remove_dir_all(&base).unwrap();
    }
}
