//! Which per-I/O options a loop's instantiation checks ([`Features`]:
//! [`Plain`], none; [`Full`], all), below the loop ([`super`]) and its
//! plain path ([`super::plain`]), which choose between them.

/// Which per-I/O options the loop's instantiation checks.
pub(in crate::worker) trait Features {
    /// All of them; `false`: none (the job uses none).
    const FULL: bool;
}

/// The job uses none of the per-I/O options.
pub(in crate::worker) struct Plain;

/// The job uses some per-I/O options: every one is checked.
pub(in crate::worker) struct Full;

impl Features for Plain {
    const FULL: bool = false;
}

impl Features for Full {
    const FULL: bool = true;
}
