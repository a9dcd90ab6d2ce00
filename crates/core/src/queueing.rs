//! Queueing theory for open-loop checks: the mean wait in queue (before
//! service) of Poisson arrivals to `c` identical servers, FCFS, for
//! constant service (M/D/1, M/D/c) and exponential service (M/M/1, M/M/c).
//! The emulator in virtual time, where service times are exact, is held
//! against these (`crates/emu/tests/queueing.rs`), and the study's load
//! curve can say how far a device is from an ideal queue.
//!
//! * M/D/1: Pollaczek–Khinchine, Wq = ρ / (2μ(1−ρ)).
//! * M/M/1: Wq = ρ / (μ(1−ρ)); M/M/c: Erlang C, Wq = C(c, a) / (cμ − λ).
//! * M/D/c has no closed form. With service time D, the number in the
//!   system at times D apart forms a Markov chain: those in service at t
//!   have left by t + D, the first `c` waiting have entered service, so
//!   Q(t+D) = max(Q(t) − c, 0) + A, A Poisson of mean λD (Crommelin,
//!   "Delay probability formulae when the holding times are constant",
//!   1932). Its stationary distribution, by iteration, is the time-average
//!   one (the chain holds from any instant), so L = E\[Q\], and by Little's
//!   law Wq = L/λ − D.
//!
//! Times are in units of the mean service time; ρ = λ / (cμ) in (0, 1).

/// Which service-time distribution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Service {
    /// Constant (M/D/c).
    Fixed,
    /// Exponential (M/M/c).
    Exp,
}

/// Mean wait in queue, in service times, of Poisson arrivals at load `rho`
/// (per server) to `c` servers; None for ρ outside (0, 1) or c = 0.
pub fn mean_wait(service: Service, c: u32, rho: f64) -> Option<f64> {
    if c == 0 || !(rho > 0.0 && rho < 1.0) {
        return None;
    }
    match (service, c) {
        (Service::Fixed, 1) => Some(rho / (2.0 * (1.0 - rho))),
        (Service::Fixed, c) => Some(mdc_wait(c, rho)),
        (Service::Exp, c) => {
            let a = rho * f64::from(c);
            Some(erlang_c(c, a) / (f64::from(c) * (1.0 - rho)))
        }
    }
}

/// Erlang C: the probability that an arrival waits, `c` servers, offered
/// load `a` = λ/μ (< c).
pub fn erlang_c(c: u32, a: f64) -> f64 {
    // Erlang B by its stable recursion, then C from B.
    let mut b = 1.0;
    for k in 1..=c {
        b = a * b / (f64::from(k) + a * b);
    }
    let rho = a / f64::from(c);
    b / (1.0 - rho * (1.0 - b))
}

/// M/D/c mean wait in service times (module docs: the chain at times D
/// apart, iterated to its stationary distribution).
fn mdc_wait(c: u32, rho: f64) -> f64 {
    let c = c as usize;
    let a = rho * c as f64;
    // Poisson(a) probabilities until their tail is negligible.
    let mut pois = vec![(-a).exp()];
    while pois.len() < 8 || (pois.len() as f64) < a + 12.0 * a.sqrt() + 12.0 {
        let k = pois.len() as f64;
        let next = pois[pois.len() - 1] * a / k;
        pois.push(next);
    }
    // Room for the queue: its tail decays geometrically, slowly near ρ = 1.
    let n = c + 200 + (60.0 / (1.0 - rho).powi(2)).min(20_000.0) as usize;
    let mut p = vec![0.0; n];
    p[0] = 1.0;
    let mut next = vec![0.0; n];
    let mut mean = 0.0;
    for it in 0..200_000 {
        next.iter_mut().for_each(|x| *x = 0.0);
        for (q, &pq) in p.iter().enumerate() {
            if pq < 1e-300 {
                continue;
            }
            let base = q.saturating_sub(c);
            for (k, &pk) in pois.iter().enumerate() {
                let j = (base + k).min(n - 1);
                next[j] += pq * pk;
            }
        }
        let total: f64 = next.iter().sum();
        next.iter_mut().for_each(|x| *x /= total);
        std::mem::swap(&mut p, &mut next);
        let m: f64 = p.iter().enumerate().map(|(i, x)| i as f64 * x).sum();
        if it > 10 && (m - mean).abs() < 1e-12 * m.max(1e-9) {
            mean = m;
            break;
        }
        mean = m;
    }
    (mean / a - 1.0).max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_md_c_chain_agrees_with_pollaczek_khinchine_at_one_server() {
        for rho in [0.1, 0.3, 0.5, 0.7, 0.9] {
            let pk = mean_wait(Service::Fixed, 1, rho).unwrap();
            let chain = mdc_wait(1, rho);
            assert!(
                (chain - pk).abs() <= 1e-6 * pk.max(1e-3),
                "ρ={rho}: {chain} vs {pk}"
            );
        }
    }

    #[test]
    fn erlang_c_at_one_server_is_m_m_1() {
        for rho in [0.2, 0.5, 0.8] {
            let w = mean_wait(Service::Exp, 1, rho).unwrap();
            assert!((w - rho / (1.0 - rho)).abs() < 1e-12);
        }
    }

    #[test]
    fn constant_service_waits_less_than_exponential_but_more_than_half() {
        // M/D/c waits lie between half of M/M/c's and M/M/c's (the
        // Cosmetatos approximation is close to half at high load).
        for c in [2, 4, 8] {
            for rho in [0.3, 0.6, 0.9] {
                let d = mean_wait(Service::Fixed, c, rho).unwrap();
                let m = mean_wait(Service::Exp, c, rho).unwrap();
                assert!(d < m && d > 0.45 * m, "c={c} ρ={rho}: {d} vs {m}");
            }
        }
    }

    #[test]
    fn m_d_c_is_close_to_cosmetatos_approximation() {
        // Cosmetatos, "Approximate explicit formulae for the average
        // queueing time in the processes (M/D/r) and (D/M/r)", INFOR 1975:
        // Wq(M/D/c) ≈ ½ (1 + (1−ρ)(c−1)(√(4+5c) − 2) / (16ρc)) Wq(M/M/c),
        // an independent estimate, good to a few percent at these loads.
        for c in [2u32, 4, 8] {
            for rho in [0.5, 0.7, 0.9] {
                let cf = f64::from(c);
                let k = 1.0
                    + (1.0 - rho) * (cf - 1.0) * ((4.0 + 5.0 * cf).sqrt() - 2.0)
                        / (16.0 * rho * cf);
                let approx = 0.5 * k * mean_wait(Service::Exp, c, rho).unwrap();
                let w = mean_wait(Service::Fixed, c, rho).unwrap();
                assert!(
                    (w / approx - 1.0).abs() < 0.05,
                    "c={c} ρ={rho}: {w} vs {approx}"
                );
            }
        }
        assert!(mean_wait(Service::Fixed, 2, 1.0).is_none());
        assert!(mean_wait(Service::Fixed, 0, 0.5).is_none());
    }
}
