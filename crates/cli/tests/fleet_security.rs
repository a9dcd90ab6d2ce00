//! What a client of `ssdready server` can reach, tried with fio's own
//! client on loopback: as the second account of this machine, allowed in
//! by the operator (`--allow-user`, `--allow-dir`), against a root server
//! (its job runs with that account's rights); and, as this test's own
//! user, names swapped between the check and the open, planted at the
//! run's hook (the job's process is confined to the allowed places).
//! Skipped, saying why, without fio; the second account's cases also
//! without root or that account.

use crate::common;
use common::net::have_fio;
use common::server::{give, second_user, Fixture, SECRET};
use std::path::Path;

fn skip_without_fio() -> bool {
    if !have_fio() {
        eprintln!("skipped: fio is not installed (apt-get install fio)");
        return true;
    }
    false
}

fn the_second_user() -> Option<(&'static str, u32)> {
    let u = second_user();
    if u.is_none() {
        eprintln!("skipped: needs root and a second account (cloudsdk) to try as");
    }
    u
}

/// Each job must fail, say why in words of `needles`, and leave `outside`
/// as it was.
fn all_refused(f: &Fixture, jobs: &[(&str, String)], needles: &[&str]) {
    for (what, job) in jobs {
        let (text, _) = f.fio(job);
        assert!(
            needles.iter().any(|n| text.contains(n)),
            "{what}: no clear reason: {text}"
        );
        f.assert_untouched(what, &text);
    }
}

#[test]
fn a_client_cannot_read_roots_file_through_an_include() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(user) = the_second_user() else {
        return;
    };
    if skip_without_fio() {
        return;
    }
    let f = Fixture::new(Some(user), false, &[]);
    let (a, secret) = (&f.allowed, f.outside.join("secret"));
    let s = secret.display();
    // An allowed file that includes the secret, and a link to it.
    std::fs::write(a.join("outer.fio"), format!("include {s}\n")).unwrap();
    give(&a.join("outer.fio"), f.uid());
    std::os::unix::fs::symlink(&secret, a.join("link.fio")).unwrap();
    // From the client's directory on the server up to the secret.
    let up = format!(
        "../../../{}",
        secret.strip_prefix(f.base.path()).unwrap().display()
    );
    let job = |inc: String| format!("[x]\n{inc}\nioengine=null\nsize=1m\n");
    let jobs = [
        ("an absolute path", job(format!("include {s}"))),
        ("a form feed", job(format!("include\x0c{s}"))),
        ("a vertical tab", job(format!("include\x0b{s}"))),
        ("a no-break space", job(format!("include\u{a0}{s}"))),
        (
            "a comment after",
            job(format!("include {s} ; {}", a.display())),
        ),
        ("a relative path", job(format!("include {up}"))),
        (
            "a relative path and a comment",
            job(format!("include {up}#x")),
        ),
        (
            "a nested include",
            job(format!("include {}/outer.fio", a.display())),
        ),
        ("a link", job(format!("include {}/link.fio", a.display()))),
    ];
    all_refused(&f, &jobs, &["outside the places", "Permission denied"]);
}

#[test]
fn a_client_cannot_write_read_or_delete_roots_files_through_job_options() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(user) = the_second_user() else {
        return;
    };
    if skip_without_fio() {
        return;
    }
    let f = Fixture::new(Some(user), false, &[]);
    let (a, o) = (&f.allowed, &f.outside);
    let (victim, secret) = (o.join("victim"), o.join("secret"));
    std::os::unix::fs::symlink(&victim, a.join("to-victim")).unwrap();
    std::os::unix::fs::symlink(o, a.join("to-outside")).unwrap();
    // A root process whose working directory is root's.
    let mut cwd = std::process::Command::new("sleep")
        .arg("120")
        .current_dir(o)
        .spawn()
        .unwrap();
    let w = "rw=write\nbs=4k\nsize=64k\n";
    let (v, sec, al) = (victim.display(), secret.display(), a.display());
    let jobs = [
        ("a target", format!("[x]\n{w}filename={v}\n")),
        ("a linked target", format!("[x]\n{w}filename={al}/to-victim\n")),
        ("write_iolog", format!("[x]\n{w}filename={al}/data\nwrite_iolog={al}/to-victim\n")),
        ("read_iolog", format!("[x]\nfilename={al}/data\nread_iolog={sec}\n")),
        ("a pattern file", format!("[x]\n{w}filename={al}/data\nbuffer_pattern='{sec}'\n")),
        (
            "unlink through a linked directory",
            format!("[x]\nrw=read\nbs=4k\nsize=4k\ndirectory={al}/to-outside\nfilename=victim\nunlink=1\n"),
        ),
        (
            "a /proc/PID/cwd path",
            format!("[x]\n{w}filename=/proc/{}/cwd/victim\n", cwd.id()),
        ),
        ("mmap'd memory", format!("[x]\n{w}filename={al}/data\nmem=mmap:{v}\n")),
    ];
    all_refused(
        &f,
        &jobs,
        &["outside the places", "Permission denied", "not permitted"],
    );
    let _ = cwd.kill();
    let _ = cwd.wait();
    // A root file (0600) inside the allowed place passes the check by name:
    // the kernel refuses the user.
    use std::os::unix::fs::PermissionsExt;
    let own = a.join("roots");
    std::fs::write(&own, format!("{SECRET}\n")).unwrap();
    std::fs::set_permissions(&own, std::fs::Permissions::from_mode(0o600)).unwrap();
    let r = own.display();
    for job in [
        format!("[x]\ninclude {r}\nioengine=null\nsize=1m\n"),
        format!("[x]\n{w}filename={r}\n"),
        format!("[x]\nfilename={al}/data\nread_iolog={r}\n"),
    ] {
        let (text, _) = f.fio(&job);
        assert!(text.contains("Permission denied"), "{job}: {text}");
        assert!(!text.contains(SECRET), "{text}");
        assert_eq!(
            std::fs::read_to_string(&own).unwrap(),
            format!("{SECRET}\n")
        );
    }
}

#[test]
fn a_root_servers_job_for_another_user_runs_as_that_user() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    use std::os::unix::fs::MetadataExt;
    let Some(user) = the_second_user() else {
        return;
    };
    if skip_without_fio() {
        return;
    }
    let f = Fixture::new(Some(user), false, &[]);
    let job = format!(
        "[a]\nrw=write\nbs=4k\nsize=64k\nfilename={}/mine\n[b]\nrw=write\nbs=4k\nsize=64k\nfilename=relative\n",
        f.allowed.display()
    );
    let (text, ok) = f.fio(&job);
    assert!(ok, "{text}");
    let mine = std::fs::metadata(f.allowed.join("mine")).unwrap();
    assert_eq!(mine.uid(), user.1, "the job's file is not the user's");
    // A relative name lands in the user's own directory on the server.
    let rel = f.base.path().join(format!("srv/users/{}/relative", user.1));
    assert_eq!(std::fs::metadata(&rel).unwrap().uid(), user.1);
    // Raising the job's priority is root's.
    for opt in ["nice=-20", "prioclass=1\nprio=0"] {
        let (text, _) = f.fio(&format!("[x]\nioengine=null\nsize=1m\n{opt}\n"));
        assert!(text.contains("raises the job's priority"), "{opt}: {text}");
    }
}

/// The races, for the fixture's user: each name swapped at the hook for a
/// link out of the allowed place (or a process's directory moved out).
fn races(f: &Fixture) {
    let (a, o) = (f.allowed.clone(), f.outside.clone());
    let al = a.display().to_string();
    let victim = o.join("victim");
    let link = |name: &str, to: &Path| {
        let p = a.join(name);
        if p.is_dir() {
            std::fs::rename(&p, a.join(format!("{name}.moved"))).unwrap();
        } else {
            let _ = std::fs::remove_file(&p);
        }
        std::os::unix::fs::symlink(to, &p).unwrap();
    };
    let w = "rw=write\nbs=4k\nsize=64k\n";
    // a_log_path_swapped_for_a_link_mid_run_writes_nothing_outside
    let text = f.fio_swapping(
        &format!("[x]\n{w}filename={al}/data\nwrite_iolog={al}/log\n"),
        || link("log", &victim),
    );
    f.assert_untouched("write_iolog swapped", &text);
    assert!(text.contains("Permission denied"), "{text}");
    // a_directory_swapped_for_a_link_mid_run_deletes_nothing_outside
    std::fs::create_dir_all(a.join("d")).unwrap();
    give(&a.join("d"), f.uid());
    let text = f.fio_swapping(
        &format!("[x]\nrw=read\nbs=4k\nsize=4k\ndirectory={al}/d\nfilename=victim\nunlink=1\n"),
        || link("d", &o),
    );
    f.assert_untouched("directory swapped", &text);
    // a_stonewalled_jobs_target_swapped_before_it_runs_writes_nothing_outside
    let text = f.fio_swapping(
        &format!("[a]\nioengine=null\nsize=1m\n[b]\nstonewall\n{w}filename={al}/t\n"),
        || link("t", &victim),
    );
    f.assert_untouched("second job's target swapped", &text);
    // a_read_iolog_swapped_for_a_link_quotes_nothing_outside
    std::fs::write(a.join("data"), vec![0u8; 64 << 10]).unwrap();
    give(&a.join("data"), f.uid());
    std::fs::write(
        a.join("trace"),
        format!("fio version 2 iolog\n{al}/data add\n{al}/data open\n{al}/data read 0 4096\n{al}/data close\n"),
    )
    .unwrap();
    let text = f.fio_swapping(
        &format!("[x]\nfilename={al}/data\nread_iolog={al}/trace\n"),
        || link("trace", &o.join("secret")),
    );
    f.assert_untouched("read_iolog swapped", &text);
}

#[test]
fn names_swapped_for_links_after_the_check_reach_nothing_outside() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    if skip_without_fio() {
        return;
    }
    // The job runs with this test's own rights: the confinement alone.
    let f = Fixture::new(None, true, &[]);
    races(&f);
    // A process's working directory moved out after the check.
    let moved = f.allowed.join("hook/moved");
    let mut mover = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "cd {a}/hook && while [ ! -e {a}/hook/move ]; do sleep 0.01; done; cd {o} && touch {m} && exec sleep 120",
            a = f.allowed.display(),
            o = f.outside.display(),
            m = moved.display()
        ))
        .spawn()
        .unwrap();
    // In place before the job is checked.
    let cwd = format!("/proc/{}/cwd", mover.id());
    let t0 = std::time::Instant::now();
    while std::fs::read_link(&cwd).ok() != Some(f.allowed.join("hook")) {
        assert!(
            t0.elapsed() < common::net::DEADLINE,
            "the mover never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // The confined job cannot follow another process's /proc/PID/cwd at
    // all (refused at its check); were it checked, the move comes after.
    let (text, _) = f.fio_swapping_or_refused(
        &format!(
            "[x]\nrw=write\nbs=4k\nsize=64k\nfilename=/proc/{}/cwd/victim\n",
            mover.id()
        ),
        || {
            std::fs::write(f.allowed.join("hook/move"), "").unwrap();
            while !moved.exists() {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        },
    );
    let _ = mover.kill();
    let _ = mover.wait();
    f.assert_untouched("a /proc/PID/cwd path moved", &text);
    assert!(!text.contains(SECRET));
}

#[test]
fn names_swapped_for_links_after_the_check_reach_nothing_of_root_for_another_user() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(user) = the_second_user() else {
        return;
    };
    if skip_without_fio() {
        return;
    }
    races(&Fixture::new(Some(user), true, &[]));
}
