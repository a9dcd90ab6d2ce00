//! What a fact is — a number or a word, its unit, the noise seen between
//! repeats of the runs behind it, and those runs ([`Fact`]) — and every
//! name a fact may bear ([`KNOWN`]). The facts themselves are made from the
//! figures in [`crate::facts`].

use serde::{Deserialize, Serialize};
use ssdready_core::units::{fmt_bytes, fmt_count, fmt_ns};

/// A fact's value.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Value {
    Num(f64),
    Text(String),
}

/// One fact.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Fact {
    pub value: Value,
    /// `iops`, `ns`, `pct`, `count`, `bytes_per_s`, `clocks`, `ratio` or
    /// `text`.
    pub unit: String,
    /// Standard deviation between repeats of the runs behind it, percent
    /// of their mean.
    pub noise_pct: Option<f64>,
    /// For a classification: how far its deciding figure was from the
    /// threshold, percent.
    pub margin_pct: Option<f64>,
    /// The figure's own error, in its unit, where it has one (a
    /// subtracted calibration's, say): a rule's condition within it of
    /// its threshold is not firm whatever the repeats say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub err: Option<f64>,
    /// When the repeats behind it gave different answers: how, in words.
    /// A verdict resting on it cannot be of high confidence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disagree: Option<String>,
    pub runs: Vec<String>,
}

impl Fact {
    /// A fact of `value` in `unit` from `runs`, with no noise, margin or
    /// error of its own.
    pub fn of(value: Value, unit: &str, runs: Vec<String>) -> Fact {
        Fact {
            value,
            unit: unit.into(),
            noise_pct: None,
            margin_pct: None,
            err: None,
            disagree: None,
            runs,
        }
    }

    /// The value as printed (`290.4K IOPS`, `45.20 µs`, `97 %`).
    pub fn show(&self) -> String {
        match (&self.value, self.unit.as_str()) {
            (Value::Text(t), _) => t.clone(),
            (Value::Num(v), "iops") => format!("{} IOPS", fmt_count(*v)),
            (Value::Num(v), "ns") => fmt_ns(*v),
            (Value::Num(v), "pct") => format!("{v:.0} %"),
            (Value::Num(v), "bytes_per_s") => format!("{}/s", fmt_bytes(*v)),
            (Value::Num(v), "clocks") => format!("{} clocks", fmt_count(*v)),
            (Value::Num(v), "ratio") => format!("{}×", crate::strategies::fmt_ratio(*v)),
            (Value::Num(v), _) if v.fract() == 0.0 => format!("{v:.0}"),
            (Value::Num(v), _) => format!("{v:.2}"),
        }
    }
    /// The number, if it is one.
    pub fn num(&self) -> Option<f64> {
        match self.value {
            Value::Num(v) => Some(v),
            Value::Text(_) => None,
        }
    }
}

/// The facts whose value is a cause ([`crate::limit::Cause`]): a rule's
/// word for them is checked when the rules are read.
pub const CAUSE_FACTS: &[&str] = &["saturation_limit", "platform_limit"];

/// Every fact name.
pub const KNOWN: &[&str] = &[
    "target",
    "transport_lateness",
    "transport_lateness_pct",
    "transport_reply",
    "transport_cpu",
    "transport_scope",
    "target_kind",
    "cpus",
    "root",
    "noise_pct",
    "background_busy_pct",
    "checks_disagree",
    "noisiest_point",
    "noisiest_spread",
    "noisiest_iops",
    "platform_total_qd1",
    "qd1_unaccounted",
    "qd1_unaccounted_pct",
    "qd1_joined_pct",
    "qd1_paced",
    "qd1_paced_pct",
    "platform_qd1_own",
    "platform_qd1_err",
    "platform_qd1_overcount",
    "platform_qd1_outside_daemon",
    "platform_qd1_outside_daemon_pct",
    "device_limit",
    "device_limit_bound",
    "device_limit_basis",
    "device_unbounded",
    "device_latency",
    "virtual_peak_iops",
    "peak_iops",
    "peak_qd",
    "knee_qd",
    "knee_latency",
    "knee_p99",
    "device_knee_qd",
    "delivered_pct_peak",
    "delivered_pct_knee",
    "delivered_pct_qd1",
    "of_device_peak_pct",
    "qd1_latency",
    "qd1_iops",
    "platform_share_qd1",
    "platform_qd1",
    "device_qd1",
    "platform_share_source",
    "saturated",
    "saturation_limit",
    "saturation_layer",
    "saturation_part",
    "saturation_evidence",
    "saturation_repeats",
    "saturation_ruled_out",
    "saturation_disagree",
    "saturation_also",
    "saturation_also_first",
    "other_work_also",
    "device_queue_also",
    "limit_setting",
    "limit_setting_name",
    "limit_setting_path",
    "cpus_busy_peak",
    "cpus_allowed",
    "process_cpus_peak",
    "device_util_peak",
    "device_in_flight_peak",
    "throttled_pct_peak",
    "highest_measured",
    "held_by_setting",
    "other_work_peak",
    "cpu_wait_peak",
    "throttle_wait_qd1",
    "bw_throttle",
    "bw_throttle_setting",
    "bw_of_throttle_pct",
    "platform_device",
    "platform_peak_iops",
    "platform_peak_qd",
    "platform_knee_qd",
    "platform_limit",
    "platform_part",
    "platform_evidence",
    "unseen_below",
    "thread_busy_peak",
    "system_busy_peak",
    "completion_share_peak",
    "device_share_peak",
    "scaling_threads",
    "scaling_efficiency",
    "scaling_cpu_efficiency",
    "scaling_short_of_cpus",
    "scaling_iops",
    "scaling_depth_iops",
    "scaling_depth_device_iops",
    "scaling_vs_depth",
    "scaling_matches_depth",
    "clocks_qd1",
    "clocks_peak",
    "clocks_qd1_layers",
    "clocks_peak_layers",
    "sched_name",
    "sched_cost_qd1",
    "sched_cost_qd32",
    "sched_cost_most",
    "sched_gain_qd1",
    "sched_gain_qd32",
    "sched_queued_qd1",
    "engine_best_qd1",
    "engine_worst_qd1",
    "engine_gap_qd1",
    "engine_best_peak",
    "engine_worst_peak",
    "engine_gap_peak",
    "cache_hit_pct",
    "buffered_iops",
    "direct_iops",
    "buffered_qd",
    "fs_cost_pct",
    "devices_n",
    "devices_efficiency",
    "devices_together_iops",
    "bs_best_bw",
    "bs_best",
    "bw_limit",
    "bw_delivered_pct",
    "randwrite_iops",
    "write_limit",
    "randwrite_delivered_pct",
    "current_scheduler",
    "strategy_threads",
    "strategy_best",
    "strategy_best_ran",
    "strategy_best_options",
    "strategy_best_iops",
    "strategy_baseline_iops",
    "strategy_iops_ratio",
    "strategy_cpu_ratio",
    "strategy_p99_ratio",
    "strategy_cpu_source",
    "coalesced_iops_ratio",
    "coalesced_cpu_ratio",
    "coalesced_p99_ratio",
    "slo_what",
    "slo_target",
    "slo_sustained_iops",
    "slo_pct_of_peak",
    "slo_peak_iops",
    "slo_device_iops",
];
