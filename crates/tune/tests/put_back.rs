//! `put_back_own`: a process about to exit without unwinding puts back
//! what its journals hold, from the journals on disk (alone in its
//! process: it puts back every open journal of the process).

use ssdready_tune::{put_back_own, Restored, Tuner, Undone};

#[test]
fn an_exit_without_unwinding_puts_back_through_the_journal_on_disk() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let t = tempfile::tempdir().unwrap();
    let q = t.path().join("sys/block/loop0/queue");
    std::fs::create_dir_all(&q).unwrap();
    std::fs::write(q.join("scheduler"), "none [mq-deadline] bfq\n").unwrap();
    let dir = t.path().join("settings");
    let mut tuner = Tuner::with_roots(t.path().join("sys"), &dir, vec!["loop0".into()]).unwrap();
    tuner.set("loop0", "scheduler", "none").unwrap();
    assert_eq!(
        std::fs::read_to_string(q.join("scheduler")).unwrap(),
        "none"
    );
    let done = put_back_own();
    assert!(
        matches!(&done[..], [Undone::Setting(Restored::PutBack { value, .. })] if value == "mq-deadline"),
        "{done:?}"
    );
    assert_eq!(
        std::fs::read_to_string(q.join("scheduler")).unwrap(),
        "mq-deadline"
    );
    assert!(!tuner.journal_path().exists());
    // The Tuner then has nothing left to do, and a second call neither.
    assert!(tuner.restore_all().is_empty());
    assert!(put_back_own().is_empty());
}
