//! fio's arithmetic in option values, in its two forms.
//!
//! * **Parenthesised expressions** (`size=(2*1g)`, `runtime=(1m+30s)`):
//!   fio's own grammar (`exp/expression-parser.y`, built with
//!   `CONFIG_ARITHMETIC`): `+ - * / % ^`, unary minus, parentheses, numbers
//!   (decimal, `0x` hex, floats) and unit suffixes. fio's precedence is
//!   unusual and kept: a suffix binds tighter than `+`/`-` but looser than
//!   `*`/`/` (`8/2k` is `(8/2)k`), `^` tighter than `*`, `%` tightest. Its
//!   suffixes are not `kb_base`'s: `k`=1024, `kib`=1000, `m` is MiB or, in a
//!   time, minutes; times are in microseconds (`s`, `ms`, `us`, `h`, `d`).
//!   A value without any suffix is in the option's implied unit (seconds
//!   for `runtime`, bytes for sizes). Everything after `#`, `:` or `,` is
//!   ignored, as fio's lexer does.
//! * **Keyword math** (`size=8*$mb_memory`, `numjobs=$ncpus/2`): when one of
//!   fio's reserved keywords was substituted, fio hands the value to `bc`:
//!   integer arithmetic, division truncating, no suffixes. [`bc`] does the
//!   same without a subprocess.
//!
//! A bare `2*1g` is neither: fio reads its leading number (2) and ignores
//! the rest; ssdready refuses it and says to add parentheses
//! ([`unparenthesised`]).

/// Why an expression in an option value could not be evaluated. The text
/// is the reason the user reads after the option's name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ArithError {
    #[error("'{0}' is not a unit (allowed in expressions: k, m, g, t, p, kib, mib, gib, s, ms, us, m, h, d)")]
    NotAUnit(String),
    #[error("'{0}' is not a number")]
    NotANumber(String),
    #[error("'{0}' cannot appear in an expression")]
    BadChar(char),
    #[error("a '(' is not closed")]
    Unclosed,
    /// What came where it did not belong: a number, a unit, an operator.
    #[error("unexpected {0}")]
    Unexpected(String),
    #[error("unexpected {0} after the expression")]
    Trailing(String),
    #[error("the expression ends too early")]
    EndsEarly,
    #[error("division by zero")]
    DivisionByZero,
    #[error("'%' on fractional numbers")]
    FractionalModulo,
    #[error("the result is too large")]
    TooLarge,
    #[error("'{expr}' is {value}, not a size (allowed: ≥ 0)")]
    NegativeSize { expr: String, value: i128 },
    #[error("'{0}' is not a time (allowed: 0 up to 100 years)")]
    NotATime(String),
    #[error("'{0}': bc's arithmetic takes no units")]
    BcUnits(String),
    #[error("'{0}' is not bc arithmetic")]
    NotBc(String),
}

impl From<ArithError> for String {
    fn from(e: ArithError) -> String {
        e.to_string()
    }
}

/// A value of fio's expression grammar: the integer and floating results
/// are carried side by side, as fio does (`has_float` once a float or a
/// float-valued suffix took part).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Val {
    int: i128,
    float: f64,
    has_float: bool,
}

impl Val {
    fn int(i: i128) -> Val {
        Val {
            int: i,
            float: i as f64,
            has_float: false,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Tok {
    Num(Val),
    Suffix(Val),
    Op(char),
}

/// fio's unit suffixes inside expressions (longest match first).
fn suffix(word: &str, time: bool) -> Option<Val> {
    let f = |i: i128, float: f64, has_float: bool| Val {
        int: i,
        float,
        has_float,
    };
    let k = 1024i128;
    Some(match word.to_ascii_lowercase().as_str() {
        "k" | "kb" => f(k, 1024.0, false),
        "mb" => f(k * k, (k * k) as f64, false),
        "ms" => f(1000, 1000.0, true),
        "us" => f(1, 1.0, true),
        "g" | "gb" => f(k * k * k, (k * k * k) as f64, false),
        "t" | "tb" => f(k.pow(4), k.pow(4) as f64, false),
        "p" | "pb" => f(k.pow(5), k.pow(5) as f64, false),
        "kib" => f(1000, 1000.0, false),
        "mib" => f(1_000_000, 1e6, false),
        "gib" => f(1_000_000_000, 1e9, false),
        "pib" => f(1_000_000_000_000, 1e12, false),
        "s" => f(1_000_000, 1e6, false),
        "m" if time => f(60_000_000, 6e7, false),
        "m" => f(k * k, (k * k) as f64, false),
        "d" => f(86_400_000_000, 8.64e10, false),
        "h" => f(3_600_000_000, 3.6e9, false),
        _ => return None,
    })
}

fn lex(s: &str, time: bool) -> Result<Vec<Tok>, ArithError> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i] as char;
        match c {
            ' ' | '\t' => i += 1,
            '#' | ':' | ',' => break,
            '+' | '-' | '*' | '/' | '%' | '^' | '(' | ')' => {
                out.push(Tok::Op(c));
                i += 1;
            }
            '0'..='9' | '.' => {
                let start = i;
                if s[i..].starts_with("0x") || s[i..].starts_with("0X") {
                    i += 2;
                    while i < b.len() && b[i].is_ascii_hexdigit() {
                        i += 1;
                    }
                    let v = i128::from_str_radix(&s[start + 2..i], 16)
                        .map_err(|_| ArithError::NotANumber(s[start..i].to_string()))?;
                    out.push(Tok::Num(Val::int(v)));
                    continue;
                }
                while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
                    i += 1;
                }
                let mut float = s[start..i].contains('.');
                if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
                    let mut j = i + 1;
                    while j < b.len() && (b[j] == b'-' || b[j] == b'+') {
                        j += 1;
                    }
                    if j < b.len() && b[j].is_ascii_digit() {
                        while j < b.len() && b[j].is_ascii_digit() {
                            j += 1;
                        }
                        i = j;
                        float = true;
                    }
                }
                let text = &s[start..i];
                let v = if float {
                    let f: f64 = text
                        .parse()
                        .map_err(|_| ArithError::NotANumber(text.to_string()))?;
                    Val {
                        int: f as i128,
                        float: f,
                        has_float: true,
                    }
                } else {
                    Val::int(
                        text.parse()
                            .map_err(|_| ArithError::NotANumber(text.to_string()))?,
                    )
                };
                out.push(Tok::Num(v));
            }
            c if c.is_ascii_alphabetic() => {
                let start = i;
                while i < b.len() && b[i].is_ascii_alphabetic() {
                    i += 1;
                }
                let word = &s[start..i];
                // fio's lexer takes the longest suffix it knows; a word it
                // does not know is split into suffixes only if each is one.
                let v = suffix(word, time).ok_or_else(|| ArithError::NotAUnit(word.to_string()))?;
                out.push(Tok::Suffix(v));
            }
            _ => return Err(ArithError::BadChar(c)),
        }
    }
    Ok(out)
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
    units: bool,
}

/// Binding powers (fio's `%left`/`%right` order, low to high).
fn infix_bp(op: char) -> Option<(u8, u8)> {
    Some(match op {
        '+' | '-' => (10, 11),
        '*' | '/' => (30, 31),
        '^' => (41, 40),
        '%' => (50, 51),
        _ => return None,
    })
}
const SUFFIX_BP: u8 = 20;
const UNARY_BP: u8 = 60;

fn checked(v: Option<i128>) -> Result<i128, ArithError> {
    v.filter(|x| x.unsigned_abs() <= u64::MAX as u128)
        .ok_or(ArithError::TooLarge)
}

impl Parser {
    fn peek(&self) -> Option<Tok> {
        self.toks.get(self.pos).copied()
    }

    fn primary(&mut self) -> Result<Val, ArithError> {
        match self.peek() {
            Some(Tok::Num(v)) => {
                self.pos += 1;
                Ok(v)
            }
            Some(Tok::Op('(')) => {
                self.pos += 1;
                let v = self.expr(0)?;
                if self.peek() != Some(Tok::Op(')')) {
                    return Err(ArithError::Unclosed);
                }
                self.pos += 1;
                Ok(v)
            }
            Some(Tok::Op('-')) => {
                self.pos += 1;
                let v = self.expr(UNARY_BP)?;
                Ok(Val {
                    int: -v.int,
                    float: -v.float,
                    has_float: v.has_float,
                })
            }
            Some(t) => Err(ArithError::Unexpected(describe(t))),
            None => Err(ArithError::EndsEarly),
        }
    }

    fn expr(&mut self, min_bp: u8) -> Result<Val, ArithError> {
        let mut lhs = self.primary()?;
        loop {
            match self.peek() {
                Some(Tok::Suffix(s)) if SUFFIX_BP > min_bp => {
                    self.pos += 1;
                    self.units = true;
                    lhs = apply_suffix(lhs, s)?;
                }
                Some(Tok::Op(op)) => {
                    let Some((l, r)) = infix_bp(op) else { break };
                    if l <= min_bp {
                        break;
                    }
                    self.pos += 1;
                    let rhs = self.expr(r)?;
                    lhs = binary(op, lhs, rhs)?;
                }
                _ => break,
            }
        }
        Ok(lhs)
    }
}

fn describe(t: Tok) -> String {
    match t {
        Tok::Num(v) => format!("number {}", v.float),
        Tok::Suffix(_) => "unit".into(),
        Tok::Op(c) => format!("'{c}'"),
    }
}

fn apply_suffix(a: Val, s: Val) -> Result<Val, ArithError> {
    let has_float = a.has_float || s.has_float;
    Ok(Val {
        // fio computes `(long long) a * s`, truncating 1.5 to 1 before the
        // unit; the product is what `(1.5*1k)` means.
        int: if has_float {
            (a.float * s.float) as i128
        } else {
            checked(a.int.checked_mul(s.int))?
        },
        float: a.float * s.float,
        has_float,
    })
}

fn binary(op: char, a: Val, b: Val) -> Result<Val, ArithError> {
    let has_float = a.has_float || b.has_float;
    let float = match op {
        '+' => a.float + b.float,
        '-' => a.float - b.float,
        '*' => a.float * b.float,
        '/' | '%' if b.int == 0 && (op == '%' || b.float.abs() < 1e-20) => {
            return Err(ArithError::DivisionByZero)
        }
        '/' => a.float / b.float,
        '%' if has_float => return Err(ArithError::FractionalModulo),
        '%' => (a.int % b.int) as f64,
        _ => a.float.powf(b.float),
    };
    let int = if has_float {
        float as i128
    } else {
        match op {
            '+' => checked(a.int.checked_add(b.int))?,
            '-' => checked(a.int.checked_sub(b.int))?,
            '*' => checked(a.int.checked_mul(b.int))?,
            '/' => a.int / b.int,
            '%' => a.int % b.int,
            _ => match u32::try_from(b.int) {
                Ok(e) => checked(a.int.checked_pow(e))?,
                Err(_) if b.int < 0 => float as i128,
                Err(_) => return Err(ArithError::TooLarge),
            },
        }
    };
    Ok(Val {
        int,
        float,
        has_float,
    })
}

/// Evaluate a parenthesised expression. `implied` multiplies a result
/// given without any unit (e.g. 1e6 µs for an option in seconds). Returns
/// (integer, float) results, as fio's grammar does.
fn evaluate(s: &str, time: bool, implied: f64) -> Result<(i128, f64), ArithError> {
    let mut p = Parser {
        toks: lex(s, time)?,
        pos: 0,
        units: false,
    };
    let v = p.expr(0)?;
    if p.pos != p.toks.len() {
        return Err(ArithError::Trailing(describe(p.toks[p.pos])));
    }
    if p.units {
        Ok((v.int, v.float))
    } else {
        Ok(((v.int as f64 * implied) as i128, v.float * implied))
    }
}

/// A size given as `(expression)`, in bytes; None when `s` is not one.
pub fn size_expr(s: &str) -> Option<Result<u64, ArithError>> {
    let s = s.trim();
    if !s.starts_with('(') {
        return None;
    }
    Some(evaluate(s, false, 1.0).and_then(|(i, _)| {
        u64::try_from(i).map_err(|_| ArithError::NegativeSize {
            expr: s.to_string(),
            value: i,
        })
    }))
}

/// The longest time any option may give: 100 years, so that sums of a few
/// times (ramp + runtime + start delay) and clock readings plus a time stay
/// far inside `u64` nanoseconds.
pub const MAX_TIME_NS: u64 = 100 * 365 * 86_400 * 1_000_000_000;

/// A time given as `(expression)`, in nanoseconds; `default_unit_ns` is
/// the option's unit for a result without a unit (fio: seconds for
/// `runtime`, microseconds for `thinktime`). None when `s` is not one.
pub fn time_expr(s: &str, default_unit_ns: u64) -> Option<Result<u64, ArithError>> {
    let s = s.trim();
    if !s.starts_with('(') {
        return None;
    }
    // fio's grammar counts in microseconds.
    let implied = default_unit_ns as f64 / 1000.0;
    Some(evaluate(s, true, implied).and_then(|(_, us)| {
        let ns = us * 1000.0;
        if !(ns.is_finite() && ns >= 0.0 && ns <= MAX_TIME_NS as f64) {
            return Err(ArithError::NotATime(s.to_string()));
        }
        Ok(ns.round() as u64)
    }))
}

/// A float given as `(expression)` (fio's `str_to_float`).
pub fn float_expr(s: &str) -> Option<Result<f64, ArithError>> {
    let s = s.trim();
    s.starts_with('(')
        .then(|| evaluate(s, false, 1.0).map(|(_, f)| f))
}

/// `bc`'s integer arithmetic, which fio applies to a value after one of
/// its reserved keywords (`$ncpus`, `$mb_memory`, `$pagesize`) was
/// substituted: `+ - * / % ^`, parentheses, unary minus; division
/// truncates. None when the value has no operator (no math to do, as in
/// fio).
pub fn bc(s: &str) -> Option<Result<String, ArithError>> {
    if !s.contains(['+', '-', '*', '/']) || s.contains('\'') {
        return None;
    }
    let toks = match lex(s, false) {
        Ok(t) if t.iter().all(|t| !matches!(t, Tok::Suffix(_))) => t,
        Ok(_) => return Some(Err(ArithError::BcUnits(s.to_string()))),
        Err(e) => return Some(Err(e)),
    };
    let mut p = Parser {
        toks,
        pos: 0,
        units: false,
    };
    let bc_bp = |op: char| match op {
        '+' | '-' => Some((10, 11)),
        '*' | '/' | '%' => Some((30, 31)),
        '^' => Some((41, 40)),
        _ => None,
    };
    fn go(
        p: &mut Parser,
        min: u8,
        bp: &dyn Fn(char) -> Option<(u8, u8)>,
    ) -> Result<i128, ArithError> {
        let mut lhs = match p.peek() {
            Some(Tok::Num(v)) if !v.has_float => {
                p.pos += 1;
                v.int
            }
            Some(Tok::Op('(')) => {
                p.pos += 1;
                let v = go(p, 0, bp)?;
                if p.peek() != Some(Tok::Op(')')) {
                    return Err(ArithError::Unclosed);
                }
                p.pos += 1;
                v
            }
            Some(Tok::Op('-')) => {
                p.pos += 1;
                -go(p, UNARY_BP, bp)?
            }
            Some(t) => return Err(ArithError::Unexpected(describe(t))),
            None => return Err(ArithError::EndsEarly),
        };
        while let Some(Tok::Op(op)) = p.peek() {
            let Some((l, r)) = bp(op) else { break };
            if l <= min {
                break;
            }
            p.pos += 1;
            let rhs = go(p, r, bp)?;
            lhs = match op {
                '+' => checked(lhs.checked_add(rhs))?,
                '-' => checked(lhs.checked_sub(rhs))?,
                '*' => checked(lhs.checked_mul(rhs))?,
                '/' | '%' if rhs == 0 => return Err(ArithError::DivisionByZero),
                '/' => lhs / rhs,
                '%' => lhs % rhs,
                _ => checked(u32::try_from(rhs).ok().and_then(|e| lhs.checked_pow(e)))?,
            };
        }
        Ok(lhs)
    }
    Some(go(&mut p, 0, &bc_bp).and_then(|v| {
        if p.pos != p.toks.len() {
            Err(ArithError::NotBc(s.to_string()))
        } else {
            Ok(v.to_string())
        }
    }))
}

/// A number followed by arithmetic outside parentheses (`2*1g`): fio reads
/// only the leading number, so the value cannot mean what it says.
pub fn unparenthesised(s: &str) -> bool {
    let s = s.trim();
    let body = s.strip_prefix('-').unwrap_or(s);
    body.starts_with(|c: char| c.is_ascii_digit())
        && body
            .char_indices()
            .skip(1)
            .any(|(_, c)| matches!(c, '+' | '*' | '/' | '^' | '(' | ')'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size(s: &str) -> Result<u64, ArithError> {
        size_expr(s).expect("an expression")
    }

    #[test]
    fn parenthesised_sizes_follow_fios_grammar() {
        assert_eq!(size("(2*1g)"), Ok(2 << 30));
        assert_eq!(size("(1g+512m)"), Ok((1 << 30) + (512 << 20)));
        assert_eq!(size("((1+3)*4k)"), Ok(16384));
        assert_eq!(size("(8/2k)"), Ok(4096), "a suffix binds looser than /");
        assert_eq!(size("(1+2k)"), Ok(2049), "a suffix binds tighter than +");
        assert_eq!(size("(2^10)"), Ok(1024));
        assert_eq!(size("(2*3^2)"), Ok(18), "^ before *");
        assert_eq!(size("(10%4)"), Ok(2));
        assert_eq!(size("(0x10)"), Ok(16));
        assert_eq!(size("(1.5*1k)"), Ok(1536));
        assert_eq!(size("(4kib)"), Ok(4000), "fio's lexer: kib is 1000");
        assert_eq!(size("( 1m - 1k )"), Ok((1 << 20) - 1024));
        assert!(size("(1-2)")
            .unwrap_err()
            .to_string()
            .contains("not a size"));
        assert!(size("(1/0)").unwrap_err().to_string().contains("zero"));
        assert!(size("(1+)").is_err());
        assert!(size("((1)").unwrap_err().to_string().contains("not closed"));
        assert!(size("(3q)").unwrap_err().to_string().contains("not a unit"));
        assert!(size("(2^70)")
            .unwrap_err()
            .to_string()
            .contains("too large"));
        assert_eq!(size_expr("4k"), None);
    }

    #[test]
    fn parenthesised_times_count_in_the_options_unit() {
        let s = 1_000_000_000u64;
        assert_eq!(time_expr("(1m+30s)", s), Some(Ok(90 * s)));
        assert_eq!(time_expr("(10*2)", s), Some(Ok(20 * s)), "bare: seconds");
        assert_eq!(time_expr("(10*2)", 1000), Some(Ok(20_000)), "bare: µs");
        assert_eq!(time_expr("(250ms*2)", s), Some(Ok(s / 2)));
        assert_eq!(time_expr("(1h)", s), Some(Ok(3600 * s)));
        assert!(time_expr("(0-1)", s).unwrap().is_err());
    }

    #[test]
    fn keyword_math_is_bc_integer_arithmetic() {
        assert_eq!(bc("8*4096"), Some(Ok("32768".into())));
        assert_eq!(bc("7/2"), Some(Ok("3".into())), "truncating division");
        assert_eq!(bc("2+3*4"), Some(Ok("14".into())));
        assert_eq!(bc("(2+3)*4"), Some(Ok("20".into())));
        assert_eq!(
            bc("2*2^3^2"),
            Some(Ok("1024".into())),
            "^ right associative"
        );
        assert_eq!(bc("2^3"), None, "fio calls bc only for + - * /");
        assert_eq!(bc("4096"), None, "no operator: no math");
        assert!(bc("8*4k").unwrap().is_err());
        assert!(bc("1/0").unwrap().is_err());
    }

    #[test]
    fn bare_arithmetic_is_recognised() {
        assert!(unparenthesised("2*1g"));
        assert!(unparenthesised("1g+1m"));
        assert!(!unparenthesised("4k"));
        assert!(!unparenthesised("4k-8k"), "a range, not arithmetic");
        assert!(!unparenthesised("(2*1g)"));
    }
}
