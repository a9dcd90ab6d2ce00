//! Standard output as an error like any other: every command's text goes
//! through [`print()`], which writes it whole and flushes it; a full disk
//! (`> /dev/full`) or a reader that went away (`| true`) ends the command
//! with one line and exit code 1, never a panic and never a silent loss.

use std::io::Write;

/// Write `text` to standard output and flush it; the error is one line.
pub fn write(text: &str) -> Result<(), String> {
    let mut o = std::io::stdout().lock();
    o.write_all(text.as_bytes())
        .and_then(|_| o.flush())
        .map_err(|e| format!("writing to standard output: {e}"))
}

/// [`write()`], or the command's end: its line said, exit code 1.
pub fn print(text: &str) -> crate::Done {
    write(text).map_err(|e| crate::fail(1, &e))
}

/// `println!` whose error ends the command (`?`): one line said, exit
/// code 1, when standard output cannot take the text.
macro_rules! outln {
    ($($t:tt)*) => {
        $crate::stdout::print(&format!("{}\n", format_args!($($t)*)))
    };
}

/// `print!` likewise.
macro_rules! out {
    ($($t:tt)*) => {
        $crate::stdout::print(&format!($($t)*))
    };
}

pub(crate) use {out, outln};
