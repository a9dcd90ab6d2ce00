use super::*;

fn scratch() -> (tempdir::Dir, Policy) {
    let d = tempdir::Dir::new();
    let p = Policy {
        dirs: vec![d.0.canonicalize().unwrap()],
        devices: Vec::new(),
        exec: false,
        users: Users::Only(vec![0]),
    };
    (d, p)
}

/// A private directory removed on drop (no dependency for one test).
mod tempdir {
    pub struct Dir(pub std::path::PathBuf);
    impl Dir {
        pub fn new() -> Dir {
            static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
            let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let p =
                std::env::temp_dir().join(format!("ssdready-policy-{}-{n}", std::process::id()));
            std::fs::create_dir_all(&p).unwrap();
            Dir(p)
        }
    }
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

#[test]
fn only_job_options_travel_from_the_network() {
    let (_d, p) = scratch();
    let ok = ["--name=x", "--rw=randread", "--bs=4k", "-iodepth=4"];
    let kept = p.job_args(&ok.map(String::from)).unwrap();
    assert_eq!(
        kept,
        ["--name=x", "--rw=randread", "--bs=4k", "--iodepth=4"]
    );
    for bad in ["--allow-destructive", "--report=/etc", "--save", "--db=/x"] {
        let e = p.job_args(&[bad.to_string()]).unwrap_err().to_string();
        assert!(e.contains("not a job option"), "{bad}: {e}");
    }
    let e = p
        .job_args(&["/etc/shadow".to_string()])
        .unwrap_err()
        .to_string();
    assert!(e.contains("job file path"), "{e}");
}

#[test]
fn the_switches_fios_client_forwards_are_ignored_as_fios_server_ignores_them() {
    let (_d, p) = scratch();
    let sent = [
        "--output=/etc/out.json",
        "--output-format=json",
        "--eta=never",
        "--status-interval=1",
        "--inflate-log=/etc/shadow",
        "--minimal",
        "--section=r",
        "--readonly",
        "--name=x",
    ];
    let kept = p.job_args(&sent.map(String::from)).unwrap();
    assert_eq!(kept, ["--section=r", "--readonly", "--name=x"]);
}

#[test]
fn a_client_that_is_not_root_cannot_raise_its_jobs_priority() {
    for (k, v) in [
        ("nice", "-20"),
        ("prioclass", "1"),
        ("cmdprio_class", "2,1"),
        ("cmdprio_bssplit", "4k/50/1/0:64k/50,4k/100"),
    ] {
        let e = Policy::check_priority(k, Some(v)).unwrap_err().to_string();
        assert!(e.contains("raises the job's priority"), "{k}={v}: {e}");
    }
    for (k, v) in [
        ("nice", "5"),
        ("prioclass", "3"),
        ("cmdprio_class", "2,3"),
        ("cmdprio_bssplit", "4k/50/2/0"),
        ("bs", "4k"),
    ] {
        Policy::check_priority(k, Some(v)).unwrap_or_else(|e| panic!("{k}={v}: {e}"));
    }
}

#[test]
fn commands_are_refused_unless_the_operator_allows_them() {
    let (d, mut p) = scratch();
    let e = p
        .check_option("exec_prerun", Some("id -u > /tmp/x"), &d.0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("--allow-exec"), "{e}");
    assert!(p.check_option("exec_postrun", Some("true"), &d.0).is_err());
    p.exec = true;
    p.check_option("exec_prerun", Some("true"), &d.0).unwrap();
    let e = p
        .check_option("allow_mounted_write", Some("1"), &d.0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("operator"), "{e}");
    p.check_option("allow_mounted_write", Some("0"), &d.0)
        .unwrap();
    // Given bare, the flag is set: refused exactly as =1.
    let e = p
        .check_option("allow_mounted_write", None, &d.0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("operator"), "{e}");
}

#[test]
fn paths_outside_the_allowed_places_are_refused_without_their_contents() {
    let (d, p) = scratch();
    for (opt, v) in [
        ("read_iolog", "/etc/shadow"),
        ("write_iolog", "/etc/NAME"),
        ("directory", "/etc"),
        ("directory", "ok:/etc"),
        ("buffer_pattern", "'/etc/shadow'"),
        ("verify_pattern", "0xff'/etc/passwd'"),
        ("mem", "mmap:/etc/x"),
        ("write_bw_log", "../../etc/x"),
        ("replay_redirect", "/dev/sda"),
    ] {
        let e = p.check_option(opt, Some(v), &d.0).unwrap_err().to_string();
        assert!(e.contains("outside the places"), "{opt}={v}: {e}");
        assert!(!e.contains("root:"), "{e}");
    }
    for (opt, v) in [
        ("read_iolog", "trace.log"),
        ("directory", "sub/dir"),
        ("buffer_pattern", "\"text\"0xff"),
        ("write_lat_log", "lat"),
        ("mem", "malloc"),
    ] {
        p.check_option(opt, Some(v), &d.0)
            .unwrap_or_else(|e| panic!("{opt}={v}: {e}"));
    }
    let e = p
        .check_include(Path::new("/etc/shadow"))
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("include: '/etc/shadow' is outside"), "{e}");
}

#[test]
fn a_symbolic_link_out_of_an_allowed_place_is_followed_and_refused() {
    let (d, p) = scratch();
    let link = d.0.join("shadow");
    std::os::unix::fs::symlink("/etc/shadow", &link).unwrap();
    assert!(p.check_path(&link, "x").is_err());
    // A dangling link could be pointed anywhere later.
    let dangling = d.0.join("later");
    std::os::unix::fs::symlink("/nonexistent/ssdready", &dangling).unwrap();
    assert!(p.check_path(&dangling, "x").is_err());
    // A file still to be made, in a directory still to be made.
    p.check_path(&d.0.join("new/dir/file"), "x").unwrap();
    assert!(p.check_path(&d.0.join("new/../../x"), "x").is_err());
}

#[test]
fn allowed_devices_are_exact() {
    let (_d, mut p) = scratch();
    p.devices = vec![PathBuf::from("/dev/null")];
    p.check_path(Path::new("/dev/null"), "x").unwrap();
    assert!(p.check_path(Path::new("/dev/zero"), "x").is_err());
}

#[test]
fn users_by_name_or_number() {
    let passwd = "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534::/:/bin/false\n";
    assert_eq!(uid_of("nobody", passwd), Some(65534));
    assert_eq!(uid_of("1000", passwd), Some(1000));
    assert_eq!(uid_of("ghost", passwd), None);
    assert_eq!(user_name(0, passwd), "root");
    assert_eq!(user_name(42, passwd), "42");
}

#[test]
fn pattern_files_are_the_single_quoted_pieces() {
    assert_eq!(pattern_files("0xff'a'\"b'c\"'d'"), vec!["a", "d"]);
    assert!(pattern_files("0xdeadbeef").is_empty());
}

const TCP: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F6D 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0000000000000000 100 0 0 10 0
   1: 0100007F:9C40 0100007F:1F6D 01 00000000:00000000 00:00000000 00000000 65534        0 2 1 0000000000000000 20 4 30 10 -1
   2: 0100007F:9C41 0100007F:1F6D 05 00000000:00000000 00:00000000 00000000     0        0 0 1 0000000000000000 20 4 30 10 -1
   3: 0100007F:1F6D 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0        0 3 1 0000000000000000 20 4 30 10 -1
";

#[test]
fn a_local_client_is_known_by_its_sockets_owner() {
    let server: SocketAddr = "127.0.0.1:8045".parse().unwrap();
    let never = |_: IpAddr| false;
    let tables = [TCP.to_string()];
    let c: SocketAddr = "127.0.0.1:40000".parse().unwrap();
    assert_eq!(identify(server, c, &tables, &never), Peer::Local(65534));
    // The same client seen through an IPv6 listener.
    let (s6, c6): (SocketAddr, SocketAddr) = (
        "[::ffff:127.0.0.1]:8045".parse().unwrap(),
        "[::ffff:127.0.0.1]:40000".parse().unwrap(),
    );
    assert_eq!(identify(s6, c6, &tables, &never), Peer::Local(65534));
    // A socket that is closing shows uid 0: not to be believed.
    let closing: SocketAddr = "127.0.0.1:40001".parse().unwrap();
    assert_eq!(identify(server, closing, &tables, &never), Peer::Unknown);
    // Not in the table: a loopback or local address cannot be identified;
    // another host is remote.
    let gone: SocketAddr = "127.0.0.1:40002".parse().unwrap();
    assert_eq!(identify(server, gone, &tables, &never), Peer::Unknown);
    let far: SocketAddr = "192.0.2.7:40000".parse().unwrap();
    assert_eq!(identify(server, far, &tables, &never), Peer::Remote);
    assert_eq!(identify(server, far, &tables, &|_| true), Peer::Unknown);
}

#[test]
fn ipv6_addresses_parse_as_the_kernel_prints_them() {
    // ::1 port 8765, as /proc/net/tcp6 prints it on a little-endian host.
    let a = parse_addr("00000000000000000000000001000000:223D").unwrap();
    if cfg!(target_endian = "little") {
        assert_eq!(a, "[::1]:8765".parse::<SocketAddr>().unwrap());
    }
}
