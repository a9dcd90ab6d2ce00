//! The CPUs' idle states: a PM QoS request on their wake-up latency, held
//! by the study while the I/O runs (as ssdready's job option
//! `cpu_latency_us` holds it for a run). A change of the whole host while
//! it lasts — every idle CPU polls instead of halting — so it is tried
//! only as root and where the user asked for the host's changes. Nothing
//! is left to put back, and nothing is journaled: the kernel drops the
//! request when its file closes, however the process ends.

use super::kind::{Lasting, LeverKind, NotTried};
use super::kind_application::APPLICATION;
use super::lever::{Apply, Consent, Lever};
use crate::lever_context::{Candidate, Context, Point};
use crate::limit::Cause;
use crate::trials::record::Reason;
use ssdready_measured::group_limits::Lift;

/// The job option whose value a candidate gives (µs).
const OPTION: &str = "cpu_latency_us";

/// The CPU idle kind's unit.
pub struct CpuIdle;

/// The CPU idle kind.
pub const CPU_IDLE: CpuIdle = CpuIdle;

impl LeverKind for CpuIdle {
    fn word(&self) -> &'static str {
        "cpu"
    }

    fn of_host(&self) -> bool {
        true
    }

    fn replaced(&self, _l: &Lever, _cx: &Context, _p: &Point) -> String {
        "idle states as the kernel picks them".into()
    }

    fn gate(&self, _cause: Cause, c: &Consent) -> Result<(), NotTried> {
        let no = |r: Reason, why: &str| Err((r, why.to_string()));
        match () {
            _ if !c.device => no(
                Reason::NoDevice,
                "the target has no device of its own: no completion interrupt wakes a CPU",
            ),
            _ if !c.pm_qos => no(
                Reason::Unavailable,
                "this kernel offers no PM QoS request on the CPUs' wake-up latency (no /dev/cpu_dma_latency)",
            ),
            _ if !c.root => no(
                Reason::NotRoot,
                "needs root (/dev/cpu_dma_latency, the kernel's PM QoS request, is root's)",
            ),
            _ if !c.asked => no(
                Reason::NotAsked,
                "a setting of this host (every CPU kept out of idle while the I/O runs): run \
                 with --try-changes to measure it (the kernel drops the request after each run)",
            ),
            _ => Ok(()),
        }
    }

    fn change(&self, _l: &Lever, c: &Candidate, _lift: &Lift) -> Apply {
        let us = c.options.iter().find(|(k, _)| k == OPTION);
        Apply::Awake {
            us: us.and_then(|(_, v)| v.parse().ok()).unwrap_or(0),
        }
    }

    fn permanent(&self, l: &Lever, disks: &[String], c: &Candidate, options: &str) -> String {
        APPLICATION.permanent(l, disks, c, options)
    }

    fn order(&self, attr: Option<&str>) -> u8 {
        APPLICATION.order(attr)
    }

    fn lasting(&self) -> Option<&'static str> {
        Some(SERVICE)
    }

    fn lasting_text(&self, f: &Lasting) -> String {
        let us = (f.members.iter())
            .filter_map(|m| m.value.rsplit('=').next()?.trim().parse::<u32>().ok())
            .min()
            .unwrap_or(0);
        format!(
            "{head}# The CPUs kept out of idle states slower than {us} µs to leave, as measured: a PM QoS\n\
             # request held for as long as this service runs (the kernel drops it when the file closes).\n\
             # Idle CPUs then spin: power, and on a virtual machine the host's CPU. To apply it:\n\
             #   cp {SERVICE} /etc/systemd/system/ && systemctl daemon-reload && systemctl enable --now {SERVICE}\n\
             [Unit]\n\
             Description=CPUs held out of idle states slower than {us} us (PM QoS), as ssdready measured\n\n\
             [Service]\n\
             ExecStart=/bin/sh -c 'exec 3>/dev/cpu_dma_latency && echo {us:x} >&3 && exec sleep infinity'\n\n\
             [Install]\n\
             WantedBy=multi-user.target\n",
            head = f.head
        )
    }
}

/// The file that makes it last: a systemd service that holds the request.
pub const SERVICE: &str = "ssdready-cpu-latency.service";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpus_idle_states_are_a_change_of_the_host_asked_for_as_root_made_by_the_jobs_option() {
        let l = crate::levers::shipped()
            .into_iter()
            .find(|l| l.id == "cpu-idle")
            .unwrap();
        assert_eq!(l.unit.ops().word(), "cpu");
        assert!(CPU_IDLE.of_host() && !CPU_IDLE.on_queue() && !CPU_IDLE.lifts_group());
        let asked = Consent {
            root: true,
            asked: true,
            device: true,
            pm_qos: true,
            ..Default::default()
        };
        assert_eq!(CPU_IDLE.gate(Cause::Completions, &asked), Ok(()));
        let refused = |c: Consent| CPU_IDLE.gate(Cause::Completions, &c).unwrap_err().0;
        let (a, b, c, d) = (asked.clone(), asked.clone(), asked.clone(), asked);
        assert_eq!(refused(Consent { pm_qos: false, ..d }), Reason::Unavailable);
        assert_eq!(refused(Consent { device: false, ..a }), Reason::NoDevice);
        assert_eq!(refused(Consent { root: false, ..b }), Reason::NotRoot);
        assert_eq!(refused(Consent { asked: false, ..c }), Reason::NotAsked);
        let c = Candidate {
            value: "cpu_latency_us=0".into(),
            options: vec![("cpu_latency_us".into(), "0".into())],
        };
        assert_eq!(
            CPU_IDLE.change(&l, &c, &Lift::all()),
            Apply::Awake { us: 0 }
        );
        assert!(levers_permanent(&l, &c).starts_with("tuned's latency-performance profile"));
    }

    fn levers_permanent(l: &Lever, c: &Candidate) -> String {
        crate::levers::permanent(l, &[], c)
    }
}
