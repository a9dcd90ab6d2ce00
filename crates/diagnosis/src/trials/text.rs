//! The "What to change, measured" section in words, for the terminal (the
//! HTML report draws the same rows with a chart of the gains).

use crate::levers::Metric;
use crate::trials::combination::{self, Combination};
use crate::trials::section::Section;
use crate::trials::{fmt_gain, noise_words, Gain, Outcome, Trial};

fn gain_words(g: &Gain) -> String {
    format!("{} {}", g.metric.label(), fmt_gain(g))
}

/// One trial's row: the change, what it moved, the noise verdict, the
/// turns, and how to make it last.
pub fn row(i: usize, t: &Trial) -> String {
    let on = match t.devices.is_empty() {
        true => String::new(),
        false => format!(" on {}", t.devices.join(", ")),
    };
    let mut gains: Vec<&Gain> = t.gains.iter().filter(|g| g.metric == t.measure).collect();
    gains.extend(t.gains.iter().filter(|g| {
        g.metric != t.measure && !(g.metric == Metric::Bandwidth && t.measure == Metric::Iops)
    }));
    let moved = gains
        .iter()
        .map(|g| gain_words(g))
        .collect::<Vec<_>>()
        .join(", ");
    let mut s = format!(
        "  {i}. {}{on}: {} — {}; {} turns at {}\n",
        t.change(),
        if moved.is_empty() {
            "nothing measured".into()
        } else {
            moved
        },
        noise_words(t),
        t.turns.len(),
        t.at
    );
    if let Some(e) = &t.error {
        s.push_str(&format!("     stopped: {e}\n"));
    }
    if let Some(each) = &t.members_differed {
        s.push_str(&format!(
            "     its devices differed before it ({each}): each was set alike for the trial and put back to its own\n"
        ));
    }
    if let Some(what) = &t.moved {
        s.push_str(&format!(
            "     it also moved {what}, as the kernel does wherever the change is made: the gain is the change's with it\n"
        ));
    }
    if let Some(why) = &t.unbound {
        s.push_str(&format!(
            "     its limit could not bind at this point ({why}): the trial says nothing of it\n"
        ));
    }
    if t.outcome == Outcome::Better && !t.permanent.is_empty() {
        for (j, line) in t.permanent.lines().enumerate() {
            let lead = if j == 0 { "to keep it:" } else { "           " };
            s.push_str(&format!("     {lead} {line}\n"));
        }
    }
    s
}

/// The whole section, or nothing when it is absent.
pub fn section(s: &Section) -> String {
    let mut out = String::from(
        "what to change, measured (each change in turns against the baseline, then put back; each gain with the interval it is judged on, twice its turns' spread: beyond the noise where that stays clear of zero):\n",
    );
    if let Some(c) = &s.combination {
        out.push_str(&combination_lines(c));
    }
    for (i, t) in s.trials.iter().enumerate() {
        out.push_str(&row(i + 1, t));
    }
    for c in &s.contradictions {
        out.push_str(&format!("  contradiction: {}\n", c.text));
    }
    // The ones that may buy much first, each with its estimate and the
    // command that would try it.
    let mut untested: Vec<_> = s.untested.iter().collect();
    untested.sort_by_key(|u| !u.large());
    for u in untested {
        out.push_str(&format!("  untested {} ({}): {}\n", u.lever, u.what, u.why));
        if let Some(e) = &u.estimate {
            out.push_str(&format!("     may buy {}\n", e.words()));
        }
        if let Some(c) = u.command.as_ref().filter(|_| u.large()) {
            out.push_str(&format!("     to try it: {c}\n"));
        }
    }
    out.push_str(&format!("  answer: {}\n", s.answer));
    out
}

/// The lines that lead the terminal's "what to change" section: the
/// configuration, its gain, what the sets said and what stayed out.
pub fn combination_lines(c: &Combination) -> String {
    let mut s = format!(
        "  the configuration to deploy: {} at {}\n     {}\n",
        combination::result_words(c),
        c.at,
        c.words
    );
    for set in c.sets.iter().skip(1) {
        let g = set.gain(c.measure);
        s.push_str(&format!(
            "     measured {}: {}\n",
            combination::without(c, set),
            g.map_or("not measured".into(), |g| format!(
                "{} {}",
                g.metric.label(),
                fmt_gain(g)
            ))
        ));
    }
    for l in &c.left_out {
        s.push_str(&format!("     left out {}: {}\n", l.change, l.why));
    }
    let files = crate::trials::files::names(c);
    if !files.is_empty() {
        s.push_str(&format!(
            "     to keep it: {} in the study's directory (each says how to apply it)\n",
            files.join(", ")
        ));
    }
    s
}
