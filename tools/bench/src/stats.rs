use std::time::Duration;

/// Durations in seconds, for medians and percentiles.
#[derive(Default)]
pub struct Samples(Vec<f64>);

impl Samples {
    pub fn push(&mut self, d: Duration) {
        self.0.push(d.as_secs_f64());
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The p-th percentile (nearest rank).
    pub fn p(&self, p: f64) -> f64 {
        let mut v = self.0.clone();
        v.sort_by(|a, b| a.total_cmp(b));
        let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
        v[rank.clamp(1, v.len()) - 1]
    }
}

pub fn ms(secs: f64) -> String {
    format!("{:.2} ms", secs * 1e3)
}
