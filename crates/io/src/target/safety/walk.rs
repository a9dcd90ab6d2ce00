//! Who uses a device: a walk over a [`Snapshot`], up through everything
//! built on the device and down through everything it is built on.
//!
//! Up (users of the device's data): mounts by device number or source
//! (mountinfo), swap (swaps), `holders/` and other devices' `slaves/` (dm,
//! md, bcache), loop devices whose backing file is the device (loop), loop
//! devices and swap files whose backing file lives on the device's file
//! system, and the users of its partitions — each stacked device walked up
//! in turn, so a loop device over a loop device over the target is found
//! with its mount. A device stacked on the target is a user even when
//! nothing is mounted on it.
//!
//! Down (other users of the same storage): a partition's whole disk (its
//! direct users, not its other partitions), a loop device's backing device
//! or file (other loop devices over it, its mounts), a dm/md device's
//! slaves.

use super::snapshot::{Block, Devno, FileId, Snapshot};
use std::collections::{BTreeMap, HashSet};
use std::fmt;

/// One step of a finding: "is mounted at /mnt (mountinfo)".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Link {
    /// What is so, as a verb phrase.
    pub text: String,
    /// Which check found it.
    pub check: String,
}

/// A chain from the target to a user of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The device or file the chain starts at (`/dev/loop3`).
    pub subject: String,
    /// The steps, each naming the check that found it.
    pub links: Vec<Link>,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.subject)?;
        for (i, l) in self.links.iter().enumerate() {
            let sep = if i == 0 { " " } else { ", which " };
            write!(f, "{sep}{} ({})", l.text, l.check)?;
        }
        Ok(())
    }
}

fn link(text: impl Into<String>, check: &str) -> Link {
    Link {
        text: text.into(),
        check: check.into(),
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Node {
    Dev(String),
    File(FileId),
}

/// The walk's state: what was visited and what was found.
struct Walker<'a> {
    snap: &'a Snapshot,
    seen: HashSet<Node>,
    found: Vec<Finding>,
    subject: String,
}

/// `/dev/NAME`, with what sysfs says the device is.
fn shown(b: &Block) -> String {
    match &b.label {
        Some(l) => format!("/dev/{} ({l})", b.name),
        None => format!("/dev/{}", b.name),
    }
}

/// [`shown`] by name, also for a holder missing from the snapshot.
fn shown_name(snap: &Snapshot, name: &str) -> String {
    snap.blocks
        .get(name)
        .map(shown)
        .unwrap_or_else(|| format!("/dev/{name}"))
}

/// Everything found using the block device `name` (and, for a partition,
/// its disk; for a loop or dm device, what it is built on).
pub fn users_of_device(snap: &Snapshot, name: &str) -> Vec<Finding> {
    let mut w = Walker {
        snap,
        seen: HashSet::from([Node::Dev(name.to_string())]),
        found: Vec::new(),
        subject: format!("/dev/{name}"),
    };
    w.up_dev(name, &[], true);
    w.down_dev(name, &[]);
    w.found
}

/// Everything found using the regular file `id` (shown as `path`): loop
/// devices over it and swap in it.
pub fn users_of_file(snap: &Snapshot, id: FileId, path: &str) -> Vec<Finding> {
    let mut w = Walker {
        snap,
        seen: HashSet::from([Node::File(id)]),
        found: Vec::new(),
        subject: path.to_string(),
    };
    w.up_file(id, &[]);
    w.found
}

impl Walker<'_> {
    fn leaf(&mut self, chain: &[Link], last: Link) {
        let mut links = chain.to_vec();
        links.push(last);
        self.found.push(Finding {
            subject: self.subject.clone(),
            links,
        });
    }

    /// Mark a node visited; false when it already was.
    fn visit(&mut self, n: Node) -> bool {
        self.seen.insert(n)
    }

    /// A device built on the current one: a user by itself, and whatever
    /// uses it in turn.
    fn stacked(&mut self, user: &str, chain: &[Link], step: Link) {
        if !self.visit(Node::Dev(user.to_string())) {
            return;
        }
        let mut c = chain.to_vec();
        c.push(step);
        let before = self.found.len();
        self.up_dev(user, &c, true);
        if self.found.len() == before {
            self.found.push(Finding {
                subject: self.subject.clone(),
                links: c,
            });
        }
    }

    fn up_dev(&mut self, name: &str, chain: &[Link], with_partitions: bool) {
        let snap = self.snap;
        let Some(b) = snap.blocks.get(name) else {
            return;
        };
        let fs_devs = self.mounts_and_swap(b, chain);
        for (user, checks) in stacked_on(snap, b) {
            let text = if checks == ["loop"] {
                format!("is the backing file of {}", shown_name(snap, &user))
            } else {
                format!("is held by {}", shown_name(snap, &user))
            };
            self.stacked(&user, chain, link(text, &checks.join(", ")));
        }
        for l in snap.blocks.values() {
            if let Some((path, FileId::File { dev, .. })) = &l.backing {
                if fs_devs.contains(dev) {
                    let text = format!("holds {path}, the backing file of {}", shown(l));
                    self.stacked(&l.name, chain, link(text, "loop"));
                }
            }
        }
        for s in &snap.swaps {
            if matches!(s.id, FileId::File { dev, .. } if fs_devs.contains(&dev)) {
                let text = format!("holds {}, which is in use as swap", s.path);
                self.leaf(chain, link(text, "swaps"));
            }
        }
        if with_partitions {
            for p in &b.partitions {
                if self.visit(Node::Dev(p.clone())) {
                    let mut c = chain.to_vec();
                    c.push(link(format!("has partition /dev/{p}"), "partitions"));
                    self.up_dev(p, &c, false);
                }
            }
        }
    }

    /// Report the mounts of `b` and swap on it; return the device numbers
    /// of its file systems (its own and those mountinfo reports for it).
    fn mounts_and_swap(&mut self, b: &Block, chain: &[Link]) -> Vec<Devno> {
        let snap = self.snap;
        let mounts: Vec<_> = snap
            .mounts
            .iter()
            .filter(|m| m.devno == b.devno || m.source_id == FileId::Block(b.devno))
            .collect();
        if !mounts.is_empty() {
            let at: Vec<String> = mounts
                .iter()
                .map(|m| match m.root.as_str() {
                    "/" => m.mount_point.clone(),
                    r => format!("{} (bind of {r})", m.mount_point),
                })
                .collect();
            self.leaf(
                chain,
                link(format!("is mounted at {}", at.join(", ")), "mountinfo"),
            );
        }
        let by_name = format!("/dev/{}", b.name);
        if snap.swaps.iter().any(|s| {
            s.id == FileId::Block(b.devno)
                || (s.id == FileId::Unknown && s.kind == "partition" && s.path == by_name)
        }) {
            self.leaf(chain, link("is in use as swap", "swaps"));
        }
        let mut devs = vec![b.devno];
        devs.extend(mounts.iter().map(|m| m.devno));
        devs
    }

    fn up_file(&mut self, id: FileId, chain: &[Link]) {
        let snap = self.snap;
        for l in snap.blocks.values() {
            if matches!(&l.backing, Some((_, b)) if *b == id) {
                let text = format!("is the backing file of {}", shown(l));
                self.stacked(&l.name, chain, link(text, "loop"));
            }
        }
        if snap.swaps.iter().any(|s| s.id == id) {
            self.leaf(chain, link("is in use as swap", "swaps"));
        }
    }

    fn down_dev(&mut self, name: &str, chain: &[Link]) {
        let snap = self.snap;
        let Some(b) = snap.blocks.get(name) else {
            return;
        };
        let mut below: Vec<(String, Link)> = Vec::new();
        if let Some(disk) = &b.parent {
            let text = format!("is a partition of /dev/{disk}");
            below.push((disk.clone(), link(text, "partitions")));
        }
        match &b.backing {
            Some((_, FileId::Block(d))) => {
                if let Some(x) = snap.by_devno(*d) {
                    below.push((
                        x.name.clone(),
                        link(format!("is backed by {}", shown(x)), "loop"),
                    ));
                }
            }
            Some((path, id @ FileId::File { .. })) if self.visit(Node::File(*id)) => {
                let mut c = chain.to_vec();
                c.push(link(format!("is backed by {path}"), "loop"));
                self.up_file(*id, &c);
            }
            _ => {}
        }
        for s in &b.slaves {
            if let Some(x) = snap.blocks.get(s) {
                below.push((
                    s.clone(),
                    link(format!("is built on {}", shown(x)), "slaves"),
                ));
            }
        }
        for (x, step) in below {
            if !self.visit(Node::Dev(x.clone())) {
                continue;
            }
            let mut c = chain.to_vec();
            c.push(step);
            // A disk's other partitions do not share the partition's blocks.
            self.up_dev(&x, &c, b.parent.as_deref() != Some(x.as_str()));
            self.down_dev(&x, &c);
        }
    }
}

/// Devices built directly on `b`, each with the checks that found it.
fn stacked_on(snap: &Snapshot, b: &Block) -> BTreeMap<String, Vec<&'static str>> {
    let mut m: BTreeMap<String, Vec<&'static str>> = BTreeMap::new();
    for h in &b.holders {
        m.entry(h.clone()).or_default().push("holders");
    }
    for o in snap.blocks.values() {
        if o.slaves.contains(&b.name) {
            m.entry(o.name.clone()).or_default().push("slaves");
        }
        if matches!(&o.backing, Some((_, FileId::Block(d))) if *d == b.devno) {
            m.entry(o.name.clone()).or_default().push("loop");
        }
    }
    m
}
