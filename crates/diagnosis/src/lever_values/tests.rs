//! The forms read back from their own text, refuse what none of them is,
//! and are each documented in the table's header.

use super::*;
use crate::lever_context::{Candidate, Context, Point};

/// The `values` lines of the shipped table, their text after the key.
fn shipped_values() -> Vec<&'static str> {
    crate::levers::TABLE
        .lines()
        .filter_map(|l| l.trim().strip_prefix("values "))
        .map(str::trim)
        .collect()
}

#[test]
fn every_form_of_the_shipped_table_reads_back_from_its_own_text() {
    let lines = shipped_values();
    assert!(lines.len() >= 20, "{lines:?}");
    for text in lines {
        let v = parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(v.text(), text);
        assert_eq!(parse(&v.text()), Ok(v.clone()), "{text}");
    }
}

#[test]
fn a_word_no_form_has_is_refused_naming_every_form() {
    let e = parse("sometimes 3").expect_err("no form is called sometimes");
    assert_eq!(
        e,
        "allowed: offered, raise, hw-max, set V, scale F MAX, options K=V…, engines, threads, direct, outside, lift LIMIT"
    );
    // `set` needs its value; the others complain in their own words.
    assert_eq!(parse("set").map(|v| v.text()), Err(e));
    assert!(parse("lift moon").unwrap_err().contains("io-throttle"));
    assert!(parse("scale 1 10").unwrap_err().contains("factor above 1"));
}

#[test]
fn the_table_header_documents_every_form() {
    let header: String = crate::levers::TABLE
        .lines()
        .take_while(|l| l.starts_with('#'))
        .collect::<Vec<_>>()
        .join(" ");
    for (syntax, _) in FORMS {
        let word = syntax.split(' ').next().unwrap_or_default();
        assert!(header.contains(&format!("`{word}")), "{word}");
    }
}

#[test]
fn forms_are_equal_by_what_they_propose() {
    assert_eq!(parse("scale 4 4096"), parse("scale 4 4096"));
    assert_ne!(parse("scale 4 4096"), parse("scale 2 4096"));
    assert_ne!(parse("set 0"), parse("set 2"));
    assert_ne!(parse("lift cpuset"), parse("lift cpu-quota"));
}

#[test]
fn a_raised_number_not_above_the_current_one_is_already_in_place() {
    let (cx, p) = (Context::default(), Point::default());
    let v = parse("scale 4 4096").unwrap();
    let at = |value| Now {
        cx: &cx,
        point: &p,
        value: Some(value),
    };
    assert!(v.in_place(&Candidate::of("128"), &at("128")));
    assert!(v.in_place(&Candidate::of("64"), &at("128")));
    assert!(!v.in_place(&Candidate::of("512"), &at("128")));
    // A set value is in place only as the same text.
    let set = parse("set 2").unwrap();
    assert!(!set.in_place(&Candidate::of("1"), &at("2x")));
    assert!(set.in_place(&Candidate::of("2"), &at("2")));
}
