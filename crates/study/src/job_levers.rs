//! The host a study of a job file tries its changes on (`study --job FILE
//! --try-changes`): the job's device and its stack's members, its queue
//! as read and what may be changed ([`setting`]). What is tried there is
//! planned purely ([`ssdready_diagnosis::trials::job_plan`]).

use ssdready_core::options::Section;
use ssdready_diagnosis::levers::Consent;
use ssdready_measured::limits::Inventory;

pub use ssdready_diagnosis::trials::job_plan::{plan, point, Planned, Setting};

/// The setting of the job's levers on this host: the devices under its
/// first target and the first one's queue as read, the limits read of
/// the study's groups, and what `hands` and the user allow. `command`
/// is the one that would try what is not asked.
pub fn setting(
    sections: &[Section],
    limits: Option<Inventory>,
    asked: bool,
    hands: &dyn crate::trials::Hands,
    command: String,
) -> Setting {
    let disks = disks(sections);
    let first = disks.first();
    Setting {
        queue: first
            .map(|d| crate::trials::queue_files(d))
            .unwrap_or_default(),
        queue_depth: first.and_then(|d| crate::trials::device_depth(d)),
        limits,
        consent: Consent {
            root: ssdready_io::kdev::is_root(),
            asked,
            made_by_study: false,
            device: first.is_some(),
            queue_unavailable: hands.queue_unavailable(),
            escape_unavailable: hands.escape_unavailable(),
            pm_qos: std::path::Path::new(ssdready_run::awake::PM_QOS).exists(),
        },
        disks,
        command,
    }
}

/// The devices under the job's first target (its `filename`, the device
/// its file is on): the whole disk, and the whole disks under it for md
/// and device-mapper.
pub fn disks(sections: &[Section]) -> Vec<String> {
    let j = sections.iter().position(|s| !s.global).unwrap_or(0);
    let Some(file) = crate::job::spec(sections, j).filename.into_iter().next() else {
        return Vec::new();
    };
    // An emulated drive, or an engine's own target, has no device here:
    // the file system of the working directory is not the job's.
    if ["emu", "external"]
        .iter()
        .any(|p| file.starts_with(&format!("{p}:")) || file == *p)
    {
        return Vec::new();
    }
    let Ok(p) = std::path::absolute(&file) else {
        return Vec::new();
    };
    let Some(on) = p.ancestors().find(|a| a.exists()) else {
        return Vec::new();
    };
    let whole = |maj: u32, min: u32| {
        ssdready_io::target::sysfs::DevNode::from_major_minor(maj, min).map(|d| d.disk)
    };
    let Some(disk) = ssdready_probe::limits_dev::device_of_path(on)
        .ok()
        .flatten()
        .and_then(|(a, b)| whole(a, b))
    else {
        return Vec::new();
    };
    let mut out = vec![disk.clone()];
    if disk.starts_with("md") || disk.starts_with("dm-") {
        let slaves = std::fs::read_dir(format!("/sys/block/{disk}/slaves"));
        for e in slaves.into_iter().flatten().flatten() {
            let dev = std::fs::read_to_string(e.path().join("dev")).unwrap_or_default();
            let Some((a, b)) = dev.trim().split_once(':') else {
                continue;
            };
            if let (Ok(a), Ok(b)) = (a.parse(), b.parse()) {
                if let Some(d) = whole(a, b).filter(|d| !out.contains(d)) {
                    out.push(d);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_emulated_drive_has_no_device_of_the_host() {
        // Not the file system of the working directory that `emu` would name.
        let opt =
            ssdready_core::options::RawOption::cli("filename", Some("emu:nvm-lowlat,size=64m"));
        let emu = vec![ssdready_core::options::Section {
            name: "db".into(),
            global: false,
            options: vec![opt],
        }];
        assert!(super::disks(&emu).is_empty());
    }
}
