//! A figure: a chart (or why there is none: never an empty box) under its
//! title and a note, with its data as a table under a `<details>` toggle.

use super::svg::esc;
use std::fmt::Write as _;

/// A data table.
#[derive(Clone, Debug, Default)]
pub struct Table {
    pub head: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(head: &[&str]) -> Table {
        Table {
            head: head.iter().map(|s| s.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// The table as HTML (cells escaped; numbers right-aligned by CSS).
    pub fn html(&self) -> String {
        let mut s = String::from("<div class=\"tw\"><table class=\"data\"><thead><tr>");
        for h in &self.head {
            let _ = write!(s, "<th>{}</th>", esc(h));
        }
        s.push_str("</tr></thead><tbody>");
        for r in &self.rows {
            s.push_str("<tr>");
            for c in r {
                let _ = write!(s, "<td>{}</td>", esc(c));
            }
            s.push_str("</tr>");
        }
        s.push_str("</tbody></table></div>");
        s
    }
}

/// What a figure shows: a chart, or why there is none.
#[derive(Clone, Debug)]
pub enum Body {
    Chart(String),
    /// Not measured, and why (never an empty box).
    Missing(String),
}

/// A chart with its title, a note on what it shows and its data.
#[derive(Clone, Debug)]
pub struct Figure {
    /// The anchor verdicts link to.
    pub id: String,
    pub title: String,
    pub note: String,
    pub body: Body,
    pub table: Option<Table>,
}

impl Figure {
    pub fn html(&self) -> String {
        let mut s = format!(
            "<figure class=\"fig\" id=\"{}\"><h3>{}</h3>",
            esc(&self.id),
            esc(&self.title)
        );
        if !self.note.is_empty() {
            let _ = write!(s, "<p class=\"note\">{}</p>", esc(&self.note));
        }
        match &self.body {
            Body::Chart(svg) => s.push_str(svg),
            Body::Missing(why) => {
                let _ = write!(
                    s,
                    "<div class=\"missing\"><b>Not measured.</b> {}</div>",
                    esc(why)
                );
            }
        }
        if let Some(t) = self.table.as_ref().filter(|t| !t.rows.is_empty()) {
            let _ = write!(
                s,
                "<details><summary>Data ({} rows)</summary>{}</details>",
                t.rows.len(),
                t.html()
            );
        }
        s.push_str("</figure>");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_figure_says_why_and_tables_escape() {
        let mut t = Table::new(&["a<b"]);
        t.row(vec!["x&y".into()]);
        let f = Figure {
            id: "d".into(),
            title: "T".into(),
            note: String::new(),
            body: Body::Missing("needs root".into()),
            table: Some(t),
        };
        let h = f.html();
        assert!(h.contains("Not measured.</b> needs root"));
        assert!(h.contains("<th>a&lt;b</th>") && h.contains("<td>x&amp;y</td>"));
        assert!(!h.contains("<svg"));
    }
}
