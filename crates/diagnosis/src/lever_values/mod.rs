//! The forms of a lever's `values` (`data/levers.table`), one file each
//! behind one interface ([`Form`]): `offered`, `raise`, `hw-max`, `set`,
//! `scale` for a queue file; `options`, `engines`, `threads`, `direct`
//! for the job's own choices; `outside` and `lift` for the study's
//! control groups. Each form reads its own text from the table, proposes
//! its candidates, says which is the value already in place and what it
//! replaces; here, the form is found by its word ([`parse`]) and held as
//! one handle ([`Values`]).

pub mod direct;
pub mod engines;
mod form;
pub mod hw_max;
pub mod lift;
pub mod offered;
pub mod options;
pub mod outside;
pub mod raise;
pub mod scale;
pub mod set;
pub mod threads;

pub use form::{Form, Gain, Now, NOTHING_TO_TRY, THE_JOB};
use std::sync::Arc;

/// One form read from the table: how the table writes it (its first
/// word names it), and how the rest of its line is read (None: not this
/// form's shape).
type Entry = (
    &'static str,
    fn(&str) -> Option<Result<Arc<dyn Form>, String>>,
);

/// Every form, in the order the table's error names them.
const FORMS: [Entry; 11] = [
    (offered::SYNTAX, offered::parse),
    (raise::SYNTAX, raise::parse),
    (hw_max::SYNTAX, hw_max::parse),
    (set::SYNTAX, set::parse),
    (scale::SYNTAX, scale::parse),
    (options::SYNTAX, options::parse),
    (engines::SYNTAX, engines::parse),
    (threads::SYNTAX, threads::parse),
    (direct::SYNTAX, direct::parse),
    (outside::SYNTAX, outside::parse),
    (lift::SYNTAX, lift::parse),
];

/// A lever's form of values, as the table gave it.
#[derive(Clone, Debug)]
pub struct Values(Arc<dyn Form>);

impl PartialEq for Values {
    fn eq(&self, other: &Values) -> bool {
        self.0.text() == other.0.text()
    }
}

impl std::ops::Deref for Values {
    type Target = dyn Form;

    fn deref(&self) -> &(dyn Form + 'static) {
        &*self.0
    }
}

/// The form of a `values` line's text, or why it is none.
pub fn parse(text: &str) -> Result<Values, String> {
    let (word, rest) = text.split_once(' ').unwrap_or((text, ""));
    let found = FORMS
        .iter()
        .find(|f| f.0.split(' ').next() == Some(word))
        .and_then(|f| (f.1)(rest.trim()));
    match found {
        Some(form) => form.map(Values),
        None => Err(format!("allowed: {}", FORMS.map(|f| f.0).join(", "))),
    }
}

#[cfg(test)]
mod tests;
