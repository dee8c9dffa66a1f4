//! When a stream's bytes and output arrived: one clock read per [`super::Stream::run`] call
//! (the time the read's bytes reached the stream), none per event, and one at
//! [`super::Stream::finish`]. A read whose frames carried output (text, reasoning or a tool
//! call's piece: [`super::Dialect::is_output`], every template hit) marks the first and the
//! last output; `output_chunks` counts those frames.

use std::time::Instant;

/// The times of one stream.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// When the stream was made.
    pub created: Instant,
    /// When the first read with bytes came.
    pub first_byte: Option<Instant>,
    /// When the first read whose frames carried output came.
    pub first_output: Option<Instant>,
    /// When the last read whose frames carried output came.
    pub last_output: Option<Instant>,
    /// When the input ended ([`super::Stream::finish`]).
    pub finished: Option<Instant>,
    /// Frames that carried output.
    pub output_chunks: u64,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            created: Instant::now(),
            first_byte: None,
            first_output: None,
            last_output: None,
            finished: None,
            output_chunks: 0,
        }
    }
}

impl Timing {
    /// A read at `now` of `bytes` bytes, after which the stream has counted `outputs`
    /// output frames in all.
    pub fn read(&mut self, now: Instant, bytes: usize, outputs: u64) {
        if bytes > 0 && self.first_byte.is_none() {
            self.first_byte = Some(now);
        }
        if outputs > self.output_chunks {
            self.first_output.get_or_insert(now);
            self.last_output = Some(now);
            self.output_chunks = outputs;
        }
    }

    /// The end of the input.
    pub fn finish(&mut self, now: Instant, outputs: u64) {
        self.read(now, 0, outputs);
        self.finished.get_or_insert(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn first_and_last_output_and_the_count() {
        let mut t = Timing::default();
        let t0 = t.created;
        t.read(t0 + Duration::from_millis(5), 10, 0); // bytes, no output yet (a start event)
        t.read(t0 + Duration::from_millis(9), 0, 0);
        t.read(t0 + Duration::from_millis(20), 30, 2);
        t.read(t0 + Duration::from_millis(40), 30, 5);
        t.finish(t0 + Duration::from_millis(41), 5);
        assert_eq!(t.first_byte, Some(t0 + Duration::from_millis(5)));
        assert_eq!(t.first_output, Some(t0 + Duration::from_millis(20)));
        assert_eq!(t.last_output, Some(t0 + Duration::from_millis(40)));
        assert_eq!(
            (t.output_chunks, t.finished),
            (5, Some(t0 + Duration::from_millis(41)))
        );
    }
}
