//! A trial's [`Change`] as the invariants' checks see it
//! ([`Made`](crate::invariants::Made)): kept apart from both, so that
//! `trials` calls the checks and the checks name nothing of the trials.

use crate::invariants::Made;
use crate::trials::Change;

impl Made for dyn Change + '_ {
    fn make(&mut self) -> Result<(), String> {
        self.apply()
    }

    fn put_back(&mut self) -> Result<(), String> {
        self.revert()
    }

    /// A queue setting's devices, as it read them before the change.
    fn devices(&self) -> Vec<String> {
        self.before().into_iter().map(|(d, _)| d).collect()
    }
}
