//! A job whose targets are resolved ([`PreparedJob`]) and one clone's
//! view of them ([`CloneTargets`]), below the preparation that makes it
//! ([`crate::prepare`]) and what reads it (the zones' setup, the logs'
//! bound, the NVMe coalescing of a strategy).

use crate::zbd_table::ZbdShared;
use ssdready_core::resolved::ResolvedJob;
use ssdready_core::spec::JobSpec;
use ssdready_emu::engine::SharedDevice;
use ssdready_io::target::Target;
use ssdready_workload::plan::Region;
use std::sync::Arc;

/// One clone's view: its targets, and its regions (indexing them).
#[derive(Clone)]
pub(crate) struct CloneTargets {
    pub targets: Arc<Vec<Target>>,
    pub regions: Vec<Region>,
}

/// A job whose targets are resolved.
pub(crate) struct PreparedJob {
    pub spec: Arc<JobSpec>,
    /// The job resolved for its workers (their flow and loop), once.
    pub resolved: Arc<ResolvedJob>,
    /// Every distinct target of the job (layout, devices, reports).
    pub targets: Arc<Vec<Target>>,
    /// For each of `targets`, the span its clones cover together.
    pub regions: Vec<Region>,
    /// What each clone (worker) uses.
    pub clones: Vec<CloneTargets>,
    /// The emulated device, when the job runs on one.
    pub emu: Option<Arc<SharedDevice>>,
    /// zonemode=zbd: the target's zones ([`crate::zbd::setup`]).
    pub zbd: Option<Arc<ZbdShared>>,
}

impl PreparedJob {
    /// The targets and regions of clone `w`.
    pub fn clone_view(&self, w: u32) -> CloneTargets {
        self.clones[w as usize % self.clones.len().max(1)].clone()
    }
}
