//! The result of an application workload: its own counts, its operations'
//! latencies, and the device's I/O in the same window.

use crate::checks::Check;
use crate::device::DeviceIo;
use serde::Serialize;
use ssdready_core::hist::Histogram;

/// Latency percentiles of the workload's operation, ns.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct LatNs {
    pub n: u64,
    pub mean: f64,
    pub min: u64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    #[serde(rename = "p99.9")]
    pub p99_9: u64,
    pub max: u64,
}

impl LatNs {
    pub fn of(h: &Histogram) -> Self {
        LatNs {
            n: h.count(),
            mean: h.mean(),
            min: h.min(),
            p50: h.percentile(50.0),
            p90: h.percentile(90.0),
            p99: h.percentile(99.0),
            p99_9: h.percentile(99.9),
            max: h.max(),
        }
    }
}

/// One run of one workload.
#[derive(Clone, Debug, Default, Serialize)]
pub struct AppResult {
    /// `small-files`, `sqlite`, `fdatasync` or `pgbench`.
    pub name: String,
    /// What one operation is (a transaction, an fdatasync call).
    pub op: String,
    /// The workload's own directory, where its files stay after the run.
    pub directory: String,
    pub jobs: u32,
    pub scale: u32,
    pub seed: u64,
    /// Settings that shape the workload (journal mode, append size, …).
    pub settings: serde_json::Map<String, serde_json::Value>,
    /// Length of the timed phase, s.
    pub elapsed_s: f64,
    /// Operations completed in the timed phase.
    pub ops: u64,
    pub ops_per_s: f64,
    /// Latency of one operation (a transaction, a commit, a sync), ns.
    pub lat_ns: LatNs,
    /// The counts the workload made (files created, rows inserted, …).
    pub counts: serde_json::Map<String, serde_json::Value>,
    /// Bytes the application wrote (write/append calls) in the timed phase.
    pub app_write_bytes: u64,
    /// Bytes the application read in the timed phase.
    pub app_read_bytes: u64,
    /// The device's I/O in the timed phase (None: see `device_note`).
    pub device: Option<DeviceIo>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_note: Option<String>,
    /// Stopped by a signal: the figures cover what ran.
    pub interrupted: bool,
    /// The figures set against independent sources ([`crate::checks`]).
    pub checks: Vec<Check>,
    /// What a reader should know about these figures.
    pub notes: Vec<String>,
}

impl AppResult {
    /// Fill the figures common to every workload.
    pub(crate) fn finish(
        &mut self,
        elapsed_ns: u64,
        ops: u64,
        lat: &Histogram,
        device: Result<DeviceIo, crate::device::DeviceError>,
    ) {
        self.elapsed_s = elapsed_ns as f64 / 1e9;
        self.ops = ops;
        self.ops_per_s = if elapsed_ns > 0 {
            ops as f64 * 1e9 / elapsed_ns as f64
        } else {
            0.0
        };
        self.lat_ns = LatNs::of(lat);
        match device {
            Ok(d) => self.device = Some(d),
            Err(why) => self.device_note = Some(why.to_string()),
        }
    }

    pub(crate) fn count(&mut self, key: &str, v: impl Into<serde_json::Value>) {
        self.counts.insert(key.into(), v.into());
    }

    pub(crate) fn check(&mut self, c: Check) {
        self.checks.push(c);
    }

    pub(crate) fn setting(&mut self, key: &str, v: impl Into<serde_json::Value>) {
        self.settings.insert(key.into(), v.into());
    }

    /// The result as JSON, with the top-level figures each workload
    /// promises (`transactions` for sqlite and pgbench, `ops` for all).
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(self).expect("results serialise");
        if let (Some(o), Some(t)) = (v.as_object_mut(), self.counts.get("transactions")) {
            o.insert("transactions".into(), t.clone());
        }
        v
    }

    /// A few lines for a person.
    pub fn to_text(&self) -> String {
        let mut s = format!(
            "{} ({} jobs, scale {}): {:.0} {}s/s over {:.2} s ({} {}s)\n",
            self.name,
            self.jobs,
            self.scale,
            self.ops_per_s,
            self.op,
            self.elapsed_s,
            self.ops,
            self.op
        );
        let l = &self.lat_ns;
        s += &format!(
            "  {} latency: mean {} p50 {} p99 {} p99.9 {} max {}\n",
            self.op,
            us(l.mean as u64),
            us(l.p50),
            us(l.p99),
            us(l.p99_9),
            us(l.max)
        );
        let counts: Vec<String> = self
            .counts
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        s += &format!("  counts: {}\n", counts.join(" "));
        s += &format!(
            "  application: {} bytes written, {} bytes read\n",
            self.app_write_bytes, self.app_read_bytes
        );
        match (&self.device, &self.device_note) {
            (Some(d), _) => {
                let p = &d.per_op;
                s += &format!(
                    "  device {}: {} reads, {} writes, {} flushes; per {}: {:.2} reads, {:.2} writes ({:.0} bytes), {} flushes\n",
                    d.name,
                    d.reads,
                    d.writes,
                    d.flushes.map_or("?".into(), |f| f.to_string()),
                    self.op,
                    p.reads,
                    p.writes,
                    p.write_bytes,
                    p.flushes.map_or("?".into(), |f| format!("{f:.2}"))
                );
                if let Some(wa) = d.write_amplification {
                    s += &format!(
                        "  write amplification (device bytes / application bytes): {wa:.2}\n"
                    );
                }
            }
            (None, Some(n)) => s += &format!("  device: no figures: {n}\n"),
            (None, None) => {}
        }
        for c in &self.checks {
            s += &format!("  {}\n", c.line());
        }
        for n in &self.notes {
            s += &format!("  note: {n}\n");
        }
        if self.interrupted {
            s += "  interrupted: the figures cover what ran\n";
        }
        s
    }
}

fn us(ns: u64) -> String {
    if ns >= 10_000_000 {
        format!("{:.1} ms", ns as f64 / 1e6)
    } else {
        format!("{:.1} µs", ns as f64 / 1e3)
    }
}
