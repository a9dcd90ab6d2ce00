//! The trials' one loop: a change left made stops the rest, a stop or
//! an empty budget lists them untested.

use super::*;

/// Items are numbers; the bench records what it tried and fails to
/// put back the change of `stuck`.
struct Numbers {
    stuck: Option<u32>,
    stop_after: Option<usize>,
    pairs: usize,
    tried: Vec<u32>,
}

impl Bench for Numbers {
    type Item = u32;
    fn stopped(&self) -> bool {
        self.stop_after.is_some_and(|n| self.tried.len() >= n)
    }
    fn pairs(&self, _: &Self::Item) -> usize {
        self.pairs
    }
    fn untested(&self, item: &u32, reason: Reason, why: String) -> Untested {
        Untested {
            lever: item.to_string(),
            what: item.to_string(),
            reason,
            why,
            estimate: None,
            command: None,
        }
    }
    fn try_one(&mut self, item: &u32, _: usize, _: &[Trial]) -> (Trial, bool) {
        self.tried.push(*item);
        let stuck = self.stuck == Some(*item);
        let trial = Trial {
            lever: item.to_string(),
            error: stuck.then(|| format!("{item}: could not be put back")),
            ..Default::default()
        };
        (trial, stuck)
    }
}

fn run(bench: &mut Numbers) -> (Vec<Trial>, Vec<Untested>, Option<String>) {
    let (mut tried, mut untested) = (Vec::new(), Vec::new());
    let fatal = each(bench, &[1, 2, 3, 4], &mut tried, &mut untested);
    (tried, untested, fatal)
}

#[test]
fn after_a_change_that_could_not_be_put_back_no_other_change_is_made() {
    let mut b = Numbers {
        stuck: Some(2),
        stop_after: None,
        pairs: 3,
        tried: Vec::new(),
    };
    let (tried, untested, fatal) = run(&mut b);
    assert_eq!(b.tried, [1, 2]);
    assert_eq!(tried.len(), 2);
    assert_eq!(fatal.as_deref(), Some("2: could not be put back"));
    let why: Vec<&str> = untested.iter().map(|u| u.why.as_str()).collect();
    assert_eq!(why, ["the trials stopped: 2: could not be put back"; 2]);
    assert!(untested.iter().all(|u| u.reason == Reason::Unavailable));
}

#[test]
fn a_stop_or_a_budget_with_no_pairs_left_lists_the_rest_untested() {
    let mut stopped = Numbers {
        stuck: None,
        stop_after: Some(1),
        pairs: 3,
        tried: Vec::new(),
    };
    let (tried, untested, fatal) = run(&mut stopped);
    assert_eq!((tried.len(), untested.len(), fatal), (1, 3, None));
    assert!(untested.iter().all(|u| u.reason == Reason::Stopped));
    let mut no_time = Numbers {
        stop_after: None,
        pairs: 0,
        ..stopped
    };
    no_time.tried.clear();
    let (tried, untested, _) = run(&mut no_time);
    assert_eq!((tried.len(), untested.len()), (0, 4));
    assert!(untested.iter().all(|u| u.reason == Reason::NoTime));
}
