//! The one writer's refusals, with a real loop device when root and
//! `/dev/null` (a character device: also never a file's stand-in) always.

use super::*;
use std::process::Command;

/// A loop device over a file in a temporary directory; detached on drop.
struct Loop {
    dev: String,
    backing: PathBuf,
}

impl Loop {
    fn new(dir: &Path) -> Option<Loop> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped the loop-device case: needs root");
            return None;
        }
        let backing = dir.join("backing.img");
        std::fs::write(&backing, vec![0xA5u8; 1 << 20]).ok()?;
        let out = Command::new("losetup")
            .args(["-f", "--show"])
            .arg(&backing)
            .output()
            .ok()?;
        if !out.status.success() {
            eprintln!("skipped the loop-device case: losetup failed");
            return None;
        }
        let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
        Some(Loop { dev, backing })
    }

    /// The device's first bytes are still the pattern it was made with.
    fn untouched(&self) -> bool {
        let _ = Command::new("blockdev")
            .args(["--flushbufs", &self.dev])
            .status();
        let dev = std::fs::read(&self.dev).unwrap_or_default();
        let file = std::fs::read(&self.backing).unwrap();
        dev.iter().take(8192).all(|&b| b == 0xA5) && file.iter().all(|&b| b == 0xA5)
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
    }
}

#[test]
fn replace_through_a_link_to_a_block_device_writes_nothing() {
    let d = tempfile::tempdir().unwrap();
    let Some(lo) = Loop::new(d.path()) else {
        return;
    };
    let link = d.path().join("study.json");
    std::os::unix::fs::symlink(&lo.dev, &link).unwrap();
    let e = replace(&link, b"results").unwrap_err();
    assert!(e.to_string().contains("block device"), "{e}");
    assert!(create_regular(&link).is_err());
    assert!(create_new(&link, b"x").is_err());
    assert!(lo.untouched());
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
}

#[test]
fn a_temporary_name_planted_as_a_link_is_never_written_through() {
    let d = tempfile::tempdir().unwrap();
    let victim = d.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let page = d.path().join("ssdready.1");
    let pid = std::process::id();
    // The names a writer would try first, each a link to the victim.
    for n in 0..3 {
        let tmp = d.path().join(format!(".ssdready.1.ssdready-{pid}-{n}.tmp"));
        std::os::unix::fs::symlink(&victim, &tmp).unwrap();
    }
    replace(&page, b"page").unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert_eq!(std::fs::read_to_string(&page).unwrap(), "page");
}

#[test]
fn a_command_output_through_a_link_or_onto_a_device_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("job.prerun.txt");
    std::os::unix::fs::symlink("/dev/null", &out).unwrap();
    let e = create_regular(&out).unwrap_err().to_string();
    assert!(e.contains("character device"), "{e}");
    let file = d.path().join("real");
    std::fs::write(&file, "keep").unwrap();
    let link = d.path().join("job.postrun.txt");
    std::os::unix::fs::symlink(&file, &link).unwrap();
    let e = create_regular(&link).unwrap_err().to_string();
    assert!(e.contains("symbolic link"), "{e}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep");
    let e = create_regular(Path::new("/dev/null"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("character device"), "{e}");
    let e = create_regular(d.path()).unwrap_err().to_string();
    assert!(e.contains("directory"), "{e}");
}

#[test]
fn a_regular_file_is_emptied_and_written_from_its_start() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("job.prerun.txt");
    std::fs::write(&p, "a longer old text").unwrap();
    let mut f = create_regular(&p).unwrap();
    f.write_all(b"new").unwrap();
    drop(f);
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
}

#[test]
fn replace_keeps_a_link_to_a_file_and_the_file_mode() {
    let d = tempfile::tempdir().unwrap();
    let real = d.path().join("real.json");
    std::fs::write(&real, "old").unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
    let link = d.path().join("link.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    replace(&link, b"new").unwrap();
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
    let mode = std::fs::metadata(&real).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o640);
    let left: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn create_new_never_replaces_anything() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("h.json");
    create_new(&p, b"one").unwrap();
    let e = create_new(&p, b"two").unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists);
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "one");
}

#[test]
fn a_pid_file_swapped_for_a_link_is_refused_and_the_link_kept() {
    let d = tempfile::tempdir().unwrap();
    let secret = d.path().join("secret");
    std::fs::write(&secret, "root's\n").unwrap();
    let pid = d.path().join("server.pid");
    replace_entry(&pid, b"1\n").unwrap();
    assert_eq!(std::fs::read_to_string(&pid).unwrap(), "1\n");
    // A link planted between the start and the write.
    std::fs::remove_file(&pid).unwrap();
    std::os::unix::fs::symlink(&secret, &pid).unwrap();
    let e = replace_entry(&pid, b"2\n").unwrap_err().to_string();
    assert!(e.contains("symbolic link"), "{e}");
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "root's\n");
    assert!(std::fs::symlink_metadata(&pid)
        .unwrap()
        .file_type()
        .is_symlink());
    let leftovers = std::fs::read_dir(d.path()).unwrap().count();
    assert_eq!(leftovers, 2, "no temporary file is left");
}

#[test]
fn only_a_regular_file_is_ever_removed() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("made.0.0");
    std::fs::write(&file, b"x").unwrap();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink("/dev/null", &link).unwrap();
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    for kept in [
        Path::new("/dev/null"),
        &link,
        &sub,
        &dir.path().join("none"),
    ] {
        assert!(!remove_regular(kept), "{}", kept.display());
    }
    assert!(link.symlink_metadata().is_ok() && sub.is_dir());
    assert!(Path::new("/dev/null").exists());
    assert!(remove_regular(&file) && !file.exists());
}
