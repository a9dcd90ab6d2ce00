//! The native JSON rendering: the result model serialised as is, pretty
//! printed, with `schema` and `schema_version` first.

use ssdready_core::result::RunResult;

/// The result as pretty-printed JSON text (ends with a newline).
pub fn render(r: &RunResult) -> String {
    let mut s = serde_json::to_string_pretty(r).expect("the result model always serialises");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssdready_core::result::{SCHEMA, SCHEMA_VERSION};

    #[test]
    fn json_round_trips_and_is_versioned() {
        let r = RunResult {
            schema: SCHEMA.into(),
            schema_version: SCHEMA_VERSION,
            ..RunResult::default()
        };
        let text = render(&r);
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["schema"], SCHEMA);
        assert_eq!(v["schema_version"], SCHEMA_VERSION);
        let back: RunResult = serde_json::from_str(&text).unwrap();
        assert_eq!(back.schema_version, SCHEMA_VERSION);
    }
}
