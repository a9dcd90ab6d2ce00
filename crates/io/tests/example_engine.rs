//! The example engine of docs/architecture.md ("A new engine: two
//! files"), compiled and run, so that the recipe cannot rot. Everything an
//! engine needs is in this one file: its facts (which a job's parse and
//! checks read), its definition and the engine. In ssdready it would be
//! `crates/io/src/engines/zero.rs`, and `crates/io/src/engines/mod.rs`
//! would list it (`pub mod zero;` and `&zero::DEF` in `ALL`, which
//! `open_engine` consults); a test outside the crate cannot add that line,
//! so the last test opens the engine through its definition.

use ssdready_core::engines::{Caps, EngineFacts};
use ssdready_core::options::{Arity, OptionDef};
use ssdready_core::spec::JobSpec;
use ssdready_core::{Ddir, IoReq};
use ssdready_io::buf::AlignedBuf;
use ssdready_io::engine::{EngineError, EngineSetup, Queued};
use ssdready_io::engines::def::{AnyEngine, EngineDef};
use ssdready_io::sync_engine::SyncEngine;
use ssdready_io::Engine;

// ---- the example, as docs/architecture.md gives it ----

/// What a job's parse, its checks and its result know of the engine: a
/// synchronous engine of the psync family, named in results as `zero`.
/// The linker gathers it into `ssdready_core::engines::ENGINES_IN_FILES`.
#[linkme::distributed_slice(ssdready_core::engines::ENGINES_IN_FILES)]
pub static ZERO: EngineFacts = EngineFacts {
    // Why a run refuses a job of this engine: writes are discarded, so
    // there is nothing to verify.
    refusals: |spec| {
        if spec.verify.on() {
            vec!["ioengine=zero discards writes, so there is nothing to verify".into()]
        } else {
            Vec::new()
        }
    },
    options: &["zero_byte"],
    ..EngineFacts::own(
        "zero",
        Caps::SYNC,
        "each I/O completes inside its queue call",
    )
};

/// Its own option, gathered into `ssdready_core::options::OPTIONS_IN_FILES`:
/// checked here, kept as written for the engine to read.
#[linkme::distributed_slice(ssdready_core::options::OPTIONS_IN_FILES)]
pub static ZERO_BYTE: OptionDef = OptionDef {
    name: "zero_byte",
    aliases: &[],
    arity: Arity::Value,
    allowed: "a whole number 0..=255 (default 0)",
    help: "ioengine=zero: the byte every read returns",
    set: |s, v| {
        let byte: u8 = v.parse().map_err(|_| format!("'{v}' is not a byte"))?;
        s.engine_opts.set_own("zero_byte", &byte.to_string());
        Ok(())
    },
};

/// The definition `engines::ALL` lists: the facts it serves and how to
/// open it. Not one of the loop's own variants, so `AnyEngine::dynamic`.
pub static DEF: EngineDef = EngineDef {
    serves: &[&ZERO],
    open: |setup| Ok(AnyEngine::dynamic(ZeroEngine::new(setup)?)),
};

/// One buffer: a synchronous engine has one I/O in flight, so every slot
/// shares it (the slot contract is kept by construction).
pub struct ZeroEngine {
    buf: AlignedBuf,
    byte: u8,
}

impl ZeroEngine {
    /// Open it for a job (on the worker thread that will use it).
    pub fn new(setup: &EngineSetup<'_>) -> Result<Self, EngineError> {
        let buf = AlignedBuf::for_job(setup.spec.bs.max() as usize, &setup.spec.run.mem, 0)?;
        let own = setup.spec.engine_opts.own("zero_byte");
        let byte = own.and_then(|v| v.parse().ok()).unwrap_or(0);
        Ok(ZeroEngine { buf, byte })
    }
}

/// `SyncEngine` gives `commit`, `getevents` and the completion mode
/// (`sync`) for an engine whose every request completes inside `queue`.
impl SyncEngine for ZeroEngine {
    fn name(&self) -> &'static str {
        "zero"
    }
    fn queue(&mut self, req: IoReq) -> Result<Queued, EngineError> {
        let len = req.len as usize;
        if req.ddir == Ddir::Read {
            self.buf.as_mut_slice()[..len].fill(self.byte);
        }
        // Bytes moved, or -errno.
        Ok(Queued::Done(len as i64))
    }
    fn buffer(&mut self, _slot: u32) -> Option<&mut [u8]> {
        Some(self.buf.as_mut_slice())
    }
}

// ---- what the example gets from those lines alone ----

fn job(text: &str) -> Result<JobSpec, String> {
    ssdready_core::options::job_of(text)
}

/// The engine opened for `text`'s job, through its definition.
fn open(text: &str) -> AnyEngine {
    let spec = job(text).expect("parses");
    let setup = EngineSetup {
        spec: &spec,
        targets: &[],
        seed: 1,
    };
    (DEF.open)(&setup).expect("opens")
}

#[test]
fn a_job_names_the_new_engine_and_gets_its_facts() {
    let s = job("ioengine=zero iodepth=8 bs=4k").expect("parses");
    let e = s.engine();
    assert_eq!(e, &ZERO);
    assert!(e.caps.synchronous && e.caps.own_name);
    assert_eq!(s.engine_name(), "zero");
    assert_eq!(
        s.effective_iodepth(),
        1,
        "a synchronous engine runs at depth 1"
    );
    assert!(ssdready_core::engines::runnable().contains(", zero,"));
    assert_eq!(ssdready_core::engine_check::check(e), Ok(()));
}

#[test]
fn the_new_engines_own_option_is_an_option() {
    assert!(ssdready_core::options::all()
        .iter()
        .any(|o| o.name == "zero_byte"));
    let s = job("ioengine=zero zero_byte=255").expect("parses");
    assert_eq!(s.engine_opts.own("zero_byte"), Some("255"));
    let bad = job("ioengine=zero zero_byte=256").unwrap_err();
    assert!(bad.contains("not a byte"), "{bad}");
    // Without it the job's saved form is as before.
    let plain = serde_json::to_string(&job("ioengine=zero").expect("parses").engine_opts);
    assert!(!plain.expect("serializes").contains("of_files"));
}

#[test]
fn the_new_engines_own_refusal_is_among_the_jobs() {
    let s = job("ioengine=zero rw=write verify=crc32c").expect("parses");
    assert!(
        s.refusals().iter().any(|r| r.contains("nothing to verify")),
        "{:?}",
        s.refusals()
    );
    assert!(job("ioengine=zero rw=read")
        .expect("parses")
        .refusals()
        .is_empty());
}

#[test]
fn the_new_engine_opens_from_its_definition_and_reads_zeros() {
    let read = IoReq {
        slot: 0,
        file: 0,
        ddir: Ddir::Read,
        offset: 0,
        len: 4096,
    };
    for (text, byte) in [
        ("ioengine=zero bs=4k", 0),
        ("ioengine=zero bs=4k zero_byte=7", 7),
    ] {
        let mut eng = open(text);
        eng.buffer(0).expect("a buffer")[..4096].fill(0xa5);
        assert!(matches!(eng.queue(read), Ok(Queued::Done(4096))));
        assert!(eng.buffer(0).expect("a buffer")[..4096]
            .iter()
            .all(|b| *b == byte));
    }
    // Not in `ALL` (only mod.rs can list it): `open_engine` says so.
    assert!(ssdready_io::engines::def_of(&ZERO).is_none());
}

#[test]
fn docs_architecture_md_gives_this_example() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/architecture.md");
    let doc = std::fs::read_to_string(path).expect("docs/architecture.md");
    let here = include_str!("example_engine.rs");
    let body = |text: &str| -> String {
        let start = text
            .find("/// What a job's parse")
            .expect("the facts' comment");
        let last = start + text[start..].find("fn buffer(").expect("the last method");
        let end = last + text[last..].find("\n}\n").expect("the example's end");
        text[start..end].to_string()
    };
    let ours = body(here);
    let theirs = body(&doc[doc.find("#### A new engine").expect("the recipe")..]);
    assert_eq!(
        ours, theirs,
        "docs/architecture.md's example differs from this file's"
    );
}
