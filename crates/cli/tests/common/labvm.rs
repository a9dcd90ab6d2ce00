//! The lab VM from a test: boot Debian's distribution kernel under QEMU's
//! software emulation with the block devices this machine's kernel lacks,
//! run this build's `ssdready` and a shell script inside, and read what it
//! wrote. It runs `bench/lab-vm.sh` (one implementation for people, the
//! bench and the tests; docs/lab-vm.md), in a process group of its own, with
//! its temporary files and its output in a temporary directory of the test:
//! a QEMU still running when the test ends — done, timed out or panicking —
//! is killed with its group, and the directory removed.
//!
//! ```ignore
//! let Some(lab) = Lab::new()
//!     .device("null_blk:memory_backed=1")
//!     .device("null_blk:memory_backed=1")
//!     .device("md:md0,raid0,nullb0,nullb1")
//!     .script("ssdready run --name=r --filename=/dev/md0 --rw=randread --size=8m \
//!              --output-format=json --output=/host/md0.json")
//!     .run()
//! else {
//!     return; // skipped, saying why
//! };
//! let json = lab.json("md0.json");
//! ```
//!
//! Everything measured inside is emulated (`SSDREADY_LAB=emulated-vm` is in
//! the script's environment): check function and counts, never speed.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How the lab script says it cannot run here (a missing tool or kernel).
const SKIP: i32 = 77;

/// A lab VM to boot: its devices, in order, and the script to run inside.
pub struct Lab {
    devices: Vec<String>,
    script: String,
    limit: Duration,
    boot_limit: Duration,
    fio: bool,
}

impl Default for Lab {
    fn default() -> Self {
        Lab {
            devices: Vec::new(),
            script: String::new(),
            limit: Duration::from_secs(300),
            boot_limit: Duration::from_secs(120),
            fio: false,
        }
    }
}

impl Lab {
    pub fn new() -> Self {
        Self::default()
    }

    /// A device, as `bench/lab-vm.sh --device` takes it
    /// (`null_blk:memory_backed=1`, `nvme:poll_queues=2`,
    /// `md:md0,raid5,nullb0,nullb1,nullb2`, `dm-delay:slow,nullb3,10`…).
    pub fn device(mut self, spec: &str) -> Self {
        self.devices.push(spec.to_string());
        self
    }

    /// Shell lines run in the guest (`sh -e`, in `/host`), after the
    /// devices; the lab's helpers (`lab_step NAME`, `lab_md`…) are defined.
    pub fn script(mut self, text: &str) -> Self {
        self.script.push_str(text);
        self.script.push('\n');
        self
    }

    /// The most the whole run may take, boot included.
    pub fn limit(mut self, limit: Duration) -> Self {
        self.limit = limit;
        self
    }

    /// The most the boot may take.
    pub fn boot_limit(mut self, limit: Duration) -> Self {
        self.boot_limit = limit;
        self
    }

    /// Put fio (the host's) in the guest too.
    pub fn with_fio(mut self) -> Self {
        self.fio = true;
        self
    }

    /// Boot, run the script, power off. `None`, having printed
    /// "skipped: …", where the lab cannot run here; panics with the
    /// console's tail when the guest fails.
    pub fn run(self) -> Option<LabRun> {
        let run = self.try_run();
        match run.code {
            0 => Some(run),
            SKIP => {
                eprintln!("skipped: {}", run.stderr.trim());
                None
            }
            code => panic!("the lab VM failed (exit {code}):\n{}", run.stderr),
        }
    }

    /// Boot and run, whatever the outcome: the script's exit code is in
    /// [`LabRun::code`].
    pub fn try_run(self) -> LabRun {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let out = dir.path().join("out");
        std::fs::create_dir(&out).unwrap();
        let script = dir.path().join("script.sh");
        std::fs::write(&script, &self.script).unwrap();
        let mut cmd = Command::new("bash");
        cmd.arg(lab_script())
            .arg("--out")
            .arg(&out)
            .arg("--script")
            .arg(&script)
            .arg("--ssdready")
            .arg(env!("CARGO_BIN_EXE_ssdready"))
            .arg("--cache")
            .arg(Path::new(env!("CARGO_TARGET_TMPDIR")).join("lab-vm"))
            .args(["--limit", &self.limit.as_secs().to_string()])
            .args(["--boot-limit", &self.boot_limit.as_secs().to_string()]);
        for d in &self.devices {
            cmd.arg("--device").arg(d);
        }
        if self.fio {
            cmd.arg("--with-fio");
        }
        // Its work files (the initramfs, the NVMe images) go under ours.
        cmd.env("TMPDIR", dir.path());
        let started = Instant::now();
        let stderr_path = dir.path().join("lab.err");
        let child = Group::spawn(cmd, &stderr_path);
        let code = child.wait(self.limit + self.boot_limit + Duration::from_secs(60));
        let stderr = std::fs::read_to_string(&stderr_path).unwrap_or_default();
        let console = std::fs::read_to_string(out.join("lab-console.log"))
            .unwrap_or_default()
            .replace('\r', "");
        eprintln!(
            "the lab VM ran {:.1} s:\n{stderr}",
            started.elapsed().as_secs_f64()
        );
        // The guest's own kernel crashing before its init was up (under
        // software emulation, an oops while unpacking the initramfs) is
        // this machine's, not what a test asks: said, and skipped.
        let (code, stderr) = match crashed_booting(code, &console) {
            Some(line) => (
                SKIP,
                format!("the guest's kernel crashed while booting under software emulation, before the lab was up: {line}"),
            ),
            None => (code, stderr),
        };
        LabRun {
            code,
            stderr,
            console,
            out,
            dir,
        }
    }
}

/// The guest kernel's first oops or panic line where the run failed
/// before the guest's init said it was up (`@@ lab-ready`); None
/// otherwise (a crash once the lab is up is the test's to see).
pub fn crashed_booting(code: i32, console: &str) -> Option<String> {
    if code == 0 || code == SKIP || console.contains("@@ lab-ready") {
        return None;
    }
    console
        .lines()
        .find(|l| l.contains("Oops:") || l.contains("Kernel panic"))
        .map(|l| l.trim().to_string())
}

/// `bench/lab-vm.sh` of this source tree.
pub fn lab_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/lab-vm.sh")
}

/// The lab script in a process group of its own (QEMU included), killed
/// with its group when dropped before it ended.
struct Group {
    child: Option<Child>,
}

impl Group {
    fn spawn(mut cmd: Command, stderr: &Path) -> Group {
        use std::os::unix::process::CommandExt;
        let err = std::fs::File::create(stderr).unwrap();
        let child = cmd
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(err.try_clone().unwrap())
            .stderr(err)
            .spawn()
            .expect("bash runs bench/lab-vm.sh");
        Group { child: Some(child) }
    }

    /// Its exit code; killed (and a panic) past `limit`.
    fn wait(mut self, limit: Duration) -> i32 {
        let t0 = Instant::now();
        let child = self.child.as_mut().unwrap();
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                self.child = None;
                return status.code().unwrap_or(-1);
            }
            if t0.elapsed() > limit {
                drop(self);
                panic!("the lab VM did not end within {limit:?}; it was killed");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Group {
    /// SIGTERM to the group (the script's trap kills QEMU and removes its
    /// files), then SIGKILL after 5 s.
    fn drop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let group = format!("-{}", child.id());
        let _ = Command::new("kill").args(["-TERM", "--", &group]).status();
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(5) {
            if matches!(child.try_wait(), Ok(Some(_))) {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
        let _ = child.wait();
    }
}

/// What a lab VM left: its output directory (the guest's `/host`), its
/// console, and what the lab script said.
pub struct LabRun {
    /// The lab script's exit code: 0 the script succeeded, 1 the guest
    /// failed, 2 bad input, 77 cannot run here.
    pub code: i32,
    /// The lab script's report (boot and step times; on failure, why and the
    /// console's tail).
    pub stderr: String,
    /// The serial console.
    pub console: String,
    out: PathBuf,
    dir: tempfile::TempDir,
}

impl LabRun {
    /// The guest's `/host`.
    pub fn out(&self) -> &Path {
        &self.out
    }

    /// What the run left besides its output: files in its temporary
    /// directory (the script's work files) and processes whose command line
    /// names that directory (a QEMU).
    pub fn leftovers(&self) -> Vec<String> {
        let mine = ["out", "script.sh", "lab.err"];
        let mut left: Vec<String> = std::fs::read_dir(self.dir.path())
            .unwrap()
            .filter_map(|e| Some(e.ok()?.file_name().to_string_lossy().into_owned()))
            .filter(|n| !mine.contains(&n.as_str()))
            .collect();
        let tag = self.dir.path().to_string_lossy().into_owned();
        for p in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(cmd) = std::fs::read(p.path().join("cmdline")) else {
                continue;
            };
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            if cmd.contains(&tag) {
                left.push(format!(
                    "process {}: {cmd}",
                    p.file_name().to_string_lossy()
                ));
            }
        }
        left
    }

    /// A file the guest wrote in `/host`.
    pub fn file(&self, name: &str) -> String {
        std::fs::read_to_string(self.out.join(name))
            .unwrap_or_else(|e| panic!("{name} from the guest: {e}\n{}", self.console))
    }

    /// The `NAME KERNEL-NAME` lines of the guest's `names` file (what a
    /// lab device spec called each device, and the kernel's name for it).
    pub fn names(&self) -> std::collections::BTreeMap<String, String> {
        self.file("names")
            .lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    /// Each device's `/sys/block/*/stat` fields after less before, by
    /// kernel name, from two `NAME FIELDS…` files the guest wrote.
    pub fn stat_delta(
        &self,
        before: &str,
        after: &str,
    ) -> std::collections::BTreeMap<String, Vec<u64>> {
        let read = |name: &str| -> std::collections::BTreeMap<String, Vec<u64>> {
            self.file(name)
                .lines()
                .filter_map(|l| l.split_once(' '))
                .map(|(d, rest)| (d.to_string(), block_stat(rest)))
                .collect()
        };
        let (b, a) = (read(before), read(after));
        a.into_iter()
            .map(|(d, v)| {
                let w = &b[&d];
                (d, v.iter().zip(w).map(|(x, y)| x - y).collect())
            })
            .collect()
    }

    /// A JSON file the guest wrote in `/host`.
    pub fn json(&self, name: &str) -> serde_json::Value {
        serde_json::from_str(&self.file(name))
            .unwrap_or_else(|e| panic!("{name} from the guest is not JSON: {e}"))
    }

    /// The text after `@@ KEY ` on the console's first such line.
    pub fn marker(&self, key: &str) -> &str {
        let tag = format!("@@ {key} ");
        self.console
            .lines()
            .find_map(|l| l.strip_prefix(tag.as_str()))
            .unwrap_or_else(|| panic!("no '{tag}' on the console:\n{}", self.console))
            .trim()
    }

    /// Each step's name and seconds (guest time), from the `@@ lab-step`
    /// lines to the next step or the script's end; the boot is the first.
    pub fn steps(&self) -> Vec<(String, f64)> {
        let mut marks: Vec<(String, f64)> = Vec::new();
        for l in self.console.lines() {
            let w: Vec<&str> = l.split_whitespace().collect();
            let t = |i: usize| w.get(i).and_then(|s| s.parse::<f64>().ok());
            match w.get(1).copied() {
                Some("lab-ready") => marks.push(("boot".into(), t(2).unwrap_or(0.0))),
                Some("lab-step") => marks.push((w[2].to_string(), t(3).unwrap_or(0.0))),
                Some("lab-exit") => marks.push((String::new(), t(3).unwrap_or(0.0))),
                _ => {}
            }
        }
        let mut steps = Vec::new();
        for (i, (name, t)) in marks.iter().enumerate() {
            let seconds = match (name.as_str(), marks.get(i + 1)) {
                ("", _) => continue,
                ("boot", _) => *t,
                (_, Some((_, next))) => next - t,
                (_, None) => continue,
            };
            steps.push((name.clone(), seconds));
        }
        steps
    }
}

/// One `/sys/block/NAME/stat` line as numbers.
pub fn block_stat(line: &str) -> Vec<u64> {
    line.split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect()
}
