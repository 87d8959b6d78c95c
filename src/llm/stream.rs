//! Turns a stream of token bytes into text safe to show: whole UTF-8 characters
//! only, stop strings cut off, and nothing streamed that a stop string may yet claim.

/// Accumulates generated text and decides what can be streamed.
#[derive(Debug, Default)]
pub struct TextStream {
    stops: Vec<String>,
    pending: Vec<u8>,
    text: String,
    emitted: usize,
    stopped: bool,
}

impl TextStream {
    pub fn new(stops: &[String]) -> Self {
        Self {
            stops: stops.iter().filter(|s| !s.is_empty()).cloned().collect(),
            ..Self::default()
        }
    }

    /// Adds a token's bytes; returns the text that may be streamed now.
    pub fn push_bytes(&mut self, bytes: &[u8]) -> String {
        if self.stopped {
            return String::new();
        }
        self.pending.extend_from_slice(bytes);
        let valid = match std::str::from_utf8(&self.pending) {
            Ok(s) => s.len(),
            Err(e) if e.error_len().is_some() => {
                // Invalid bytes (not merely incomplete): replace them and go on.
                let lossy = String::from_utf8_lossy(&self.pending).into_owned();
                self.pending.clear();
                self.text.push_str(&lossy);
                return self.advance();
            }
            Err(e) => e.valid_up_to(),
        };
        let complete: Vec<u8> = self.pending.drain(..valid).collect();
        self.text
            .push_str(std::str::from_utf8(&complete).unwrap_or_default());
        self.advance()
    }

    /// Adds text; returns the text that may be streamed now.
    pub fn push_str(&mut self, s: &str) -> String {
        self.push_bytes(s.as_bytes())
    }

    fn advance(&mut self) -> String {
        let search_from = self
            .emitted
            .saturating_sub(self.stops.iter().map(String::len).max().unwrap_or(0));
        let search_from = floor_char_boundary(&self.text, search_from);
        let hit = self
            .stops
            .iter()
            .filter_map(|stop| self.text[search_from..].find(stop.as_str()))
            .min()
            .map(|i| i + search_from);
        if let Some(at) = hit {
            self.text.truncate(at);
            self.stopped = true;
            return self.take_up_to(at);
        }
        let hold = self
            .stops
            .iter()
            .map(|stop| partial_suffix(&self.text, stop))
            .max()
            .unwrap_or(0);
        self.take_up_to(self.text.len() - hold)
    }

    fn take_up_to(&mut self, end: usize) -> String {
        if end <= self.emitted {
            return String::new();
        }
        let piece = self.text[self.emitted..end].to_owned();
        self.emitted = end;
        piece
    }

    /// Ends the stream: returns whatever was held back (a partial stop string that never completed).
    pub fn finish(&mut self) -> String {
        if !self.pending.is_empty() {
            let rest = String::from_utf8_lossy(&self.pending).into_owned();
            self.pending.clear();
            if !self.stopped {
                self.text.push_str(&rest);
            }
        }
        if self.stopped {
            return String::new();
        }
        self.take_up_to(self.text.len())
    }

    /// True once a stop string has been seen.
    pub fn stopped(&self) -> bool {
        self.stopped
    }

    /// All text so far, without any stop string.
    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn into_text(self) -> String {
        self.text
    }
}

/// Length of the longest suffix of `text` that is a proper prefix of `stop`.
fn partial_suffix(text: &str, stop: &str) -> usize {
    (1..stop.len())
        .rev()
        .find(|&n| n <= text.len() && stop.is_char_boundary(n) && text.ends_with(&stop[..n]))
        .unwrap_or(0)
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(stops: &[&str], pieces: &[&[u8]]) -> (Vec<String>, String, bool) {
        let stops: Vec<String> = stops.iter().map(|s| (*s).to_owned()).collect();
        let mut stream = TextStream::new(&stops);
        let mut out: Vec<String> = pieces.iter().map(|p| stream.push_bytes(p)).collect();
        out.push(stream.finish());
        let stopped = stream.stopped();
        (out, stream.into_text(), stopped)
    }

    #[test]
    fn split_utf8_characters_are_held_until_whole() {
        let e_acute = "é".as_bytes();
        let (out, text, _) = run(&[], &[b"caf", &e_acute[..1], &e_acute[1..], b"!"]);
        assert_eq!(out, ["caf", "", "é", "!", ""]);
        assert_eq!(text, "café!");
    }

    #[test]
    fn a_stop_string_split_across_tokens_is_never_streamed() {
        let (out, text, stopped) = run(
            &["\nEND"],
            &[b"The door", b" opens.\n", b"EN", b"D and more"],
        );
        assert_eq!(out.concat(), "The door opens.");
        assert_eq!(
            out[1], " opens.",
            "the newline is held back: it may start the stop string"
        );
        assert_eq!(text, "The door opens.");
        assert!(stopped);
    }

    #[test]
    fn a_partial_stop_that_never_completes_is_released() {
        let (out, text, stopped) = run(&["###"], &[b"a #", b"# b"]);
        assert_eq!(out.concat(), "a ## b");
        assert_eq!(text, "a ## b");
        assert!(!stopped);
    }

    #[test]
    fn the_earliest_of_several_stops_wins() {
        let (_, text, _) = run(&["B", "A"], &[b"xxAyyB"]);
        assert_eq!(text, "xx");
    }

    #[test]
    fn invalid_bytes_become_replacement_characters() {
        let (out, _, _) = run(&[], &[b"a\xffb"]);
        assert_eq!(out.concat(), "a\u{fffd}b");
    }
}
