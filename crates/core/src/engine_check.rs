//! The check every engine's facts must pass, wherever they are declared
//! (the families' in [`crate::engines`], the others in their engine files
//! in `ssdready-io`): apart from the facts themselves, since it reads the
//! option tables, which read the facts.

use crate::engines::{all, EngineFacts, FAMILIES};

/// What an engine's facts must be, wherever they are declared: a name no
/// other engine has and not one of fio's engines ssdready refuses, a note
/// on how a synchronous engine's I/Os complete, its own options among the
/// options, and a family listed in [`FAMILIES`]. The tests of every crate
/// that declares engines call it on each of [`all`].
pub fn check(e: &EngineFacts) -> Result<(), String> {
    let named = |n: &str| e.name == n || e.aliases.contains(&n);
    let twice = all()
        .iter()
        .filter(|o| !std::ptr::eq(**o, e))
        .find(|o| named(o.name) || o.aliases.iter().any(|a| named(a)));
    if let Some(o) = twice {
        return Err(format!("{}: a name {} has too", e.name, o.name));
    }
    if crate::option_values::FIO_ENGINES.contains(&e.name) {
        return Err(format!(
            "{}: also among fio's engines ssdready refuses",
            e.name
        ));
    }
    if e.caps.synchronous && e.completes.is_empty() {
        return Err(format!(
            "{}: synchronous, with no note on how it completes",
            e.name
        ));
    }
    if let Some(o) = e
        .options
        .iter()
        .find(|o| !crate::options::all().iter().any(|d| d.name == **o))
    {
        return Err(format!("{}: its option {o} is not an option", e.name));
    }
    if !FAMILIES.iter().any(|f| f.kind == e.kind) {
        return Err(format!("{}: its family has no engine of its own", e.name));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::{Caps, IN_CALL};
    use crate::spec_types::EngineKind;

    #[test]
    fn a_bad_engine_fails_the_check() {
        let dup = EngineFacts {
            name: "vsync",
            ..EngineFacts::own("x", Caps::SYNC, IN_CALL)
        };
        assert!(check(&dup).unwrap_err().contains("psync"));
        let refused = EngineFacts::own("rdma", Caps::SYNC, IN_CALL);
        assert!(check(&refused).unwrap_err().contains("refuses"));
        let mute = EngineFacts::own("quiet", Caps::SYNC, "");
        assert!(check(&mute).is_err());
        let opt = EngineFacts {
            options: &["no_such_option"],
            ..EngineFacts::own("y", Caps::SYNC, IN_CALL)
        };
        assert!(check(&opt).unwrap_err().contains("no_such_option"));
        let emu = EngineFacts {
            kind: EngineKind::Emu,
            ..EngineFacts::own("z", Caps::SYNC, IN_CALL)
        };
        assert!(check(&emu).unwrap_err().contains("family"));
    }
}
