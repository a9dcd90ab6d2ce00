//! The region a job, or one of its clones, covers on the device, below
//! the simulation ([`super`]) and its event loop, which both need it.

use ssdready_core::spec::JobSpec;
use ssdready_workload::plan::Region;

/// The region a job covers on the device.
pub fn region(spec: &JobSpec, capacity: u64) -> Result<Region, String> {
    clone_region(spec, 0, capacity)
}

/// The region clone `clone` of `spec` covers (`offset_increment` moves
/// each clone further).
pub fn clone_region(spec: &JobSpec, clone: u32, capacity: u64) -> Result<Region, String> {
    let (offset, len) =
        ssdready_workload::fileset::region_on(spec, clone, capacity).map_err(|e| e.to_string())?;
    Ok(Region {
        file: 0,
        offset,
        len,
    })
}
