//! Server-sent events (the WHATWG `text/event-stream` format) read from a reply's bytes:
//! the one decoder under the OpenAI-compatible and Anthropic streams. It works on bytes,
//! line by line, keeping only the unfinished line between network pieces, so a long reply
//! costs the same per event from its first token to its last. Never interprets the data:
//! each protocol's module does.

use std::pin::Pin;
use std::task::{Context, Poll};

use futures_util::Stream;

/// One dispatched event: its `event:` name (empty for the default, `message`) and its
/// `data:` lines joined by `\n`.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Event {
    pub name: String,
    pub data: String,
}

/// Why a stream of events broke: the transport's own error, or bytes that are not UTF-8.
#[derive(Debug)]
pub enum Broken<E> {
    Transport(E),
    NotUtf8,
}

impl<E: std::fmt::Display> std::fmt::Display for Broken<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Transport(err) => write!(f, "Transport error: {err}"),
            Self::NotUtf8 => f.write_str("UTF8 error: the stream is not valid UTF-8"),
        }
    }
}

/// The byte order mark a stream may open with.
const BOM: &[u8] = "\u{feff}".as_bytes();

/// The incremental parser: bytes in, complete events out.
#[derive(Default)]
struct Decoder {
    /// Bytes received and not yet read as whole lines; `read` is how far they were read.
    buffer: Vec<u8>,
    read: usize,
    /// The event being built.
    name: String,
    data: String,
    /// Whether any `data:` line came (an event without one is not dispatched).
    has_data: bool,
    /// The previous piece ended in `\r`: a `\n` opening the next one belongs to it.
    after_cr: bool,
    /// Past the optional byte order mark at the very start.
    started: bool,
}

impl Decoder {
    fn push(&mut self, bytes: &[u8]) {
        // What was read goes; what is left is at most the start of one line.
        self.buffer.drain(..self.read);
        self.read = 0;
        self.buffer.extend_from_slice(bytes);
    }

    /// The next complete event among the bytes pushed so far.
    fn next_event(&mut self) -> Option<Result<Event, ()>> {
        if !self.started {
            let rest = &self.buffer[self.read..];
            if rest.len() < BOM.len() && BOM.starts_with(rest) {
                return None; // perhaps a byte order mark, still arriving
            }
            self.started = true;
            if rest.starts_with(BOM) {
                self.read += BOM.len();
            }
        }
        loop {
            let rest = &self.buffer[self.read..];
            if self.after_cr && !rest.is_empty() {
                self.after_cr = false;
                if rest[0] == b'\n' {
                    self.read += 1;
                    continue;
                }
            }
            let end = rest.iter().position(|b| *b == b'\n' || *b == b'\r')?;
            let terminator = rest[end];
            let mut consumed = end + 1;
            if terminator == b'\r' {
                match rest.get(end + 1) {
                    Some(b'\n') => consumed += 1,
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
            let (start, stop) = (self.read, self.read + end);
            self.read += consumed;
            if start == stop {
                if let Some(event) = self.dispatch() {
                    return Some(Ok(event));
                }
                continue;
            }
            if self.field(start, stop).is_err() {
                return Some(Err(()));
            }
        }
    }

    /// Reads the line `buffer[start..stop]` into the event being built.
    fn field(&mut self, start: usize, stop: usize) -> Result<(), ()> {
        let line = &self.buffer[start..stop];
        if line[0] == b':' {
            return Ok(()); // a comment: a keep-alive
        }
        let (field, value) = match line.iter().position(|b| *b == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                self.data.push_str(std::str::from_utf8(value).map_err(drop)?);
                self.data.push('\n');
                self.has_data = true;
            }
            b"event" => {
                self.name.clear();
                self.name.push_str(std::str::from_utf8(value).map_err(drop)?);
            }
            // `id` and `retry` mean nothing to a reply read once; other fields are ignored.
            _ => {}
        }
        Ok(())
    }

    /// The event a blank line ends, if it carried data; either way the next starts afresh.
    fn dispatch(&mut self) -> Option<Event> {
        let name = std::mem::take(&mut self.name);
        if !std::mem::take(&mut self.has_data) {
            return None;
        }
        let mut data = std::mem::take(&mut self.data);
        data.pop(); // the `\n` after the last data line
        Some(Event { name, data })
    }
}

/// The events in a stream of bytes, in whatever pieces the network delivers them. An
/// event cut off by the end of the bytes is not dispatched; after an error, nothing more.
pub struct Events<S> {
    bytes: Pin<Box<S>>,
    decoder: Decoder,
    done: bool,
}

/// Reads `bytes` as server-sent events.
pub fn events<S>(bytes: S) -> Events<S> {
    Events { bytes: Box::pin(bytes), decoder: Decoder::default(), done: false }
}

impl<S, B, E> Stream for Events<S>
where
    S: Stream<Item = Result<B, E>>,
    B: AsRef<[u8]>,
{
    type Item = Result<Event, Broken<E>>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if this.done {
                return Poll::Ready(None);
            }
            match this.decoder.next_event() {
                Some(Ok(event)) => return Poll::Ready(Some(Ok(event))),
                Some(Err(())) => {
                    this.done = true;
                    return Poll::Ready(Some(Err(Broken::NotUtf8)));
                }
                None => {}
            }
            match this.bytes.as_mut().poll_next(cx) {
                Poll::Ready(Some(Ok(piece))) => this.decoder.push(piece.as_ref()),
                Poll::Ready(Some(Err(err))) => {
                    this.done = true;
                    return Poll::Ready(Some(Err(Broken::Transport(err))));
                }
                Poll::Ready(None) => {
                    this.done = true;
                    return Poll::Ready(None);
                }
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use futures_util::StreamExt;

    use super::*;

    /// The events of `bytes` delivered `size` bytes at a time.
    fn read(bytes: &[u8], size: usize) -> Vec<Result<Event, String>> {
        let pieces: Vec<Result<Vec<u8>, std::convert::Infallible>> =
            bytes.chunks(size).map(|piece| Ok(piece.to_vec())).collect();
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        runtime.block_on(
            events(futures_util::stream::iter(pieces)).map(|event| event.map_err(|err| err.to_string())).collect(),
        )
    }

    fn event(name: &str, data: &str) -> Result<Event, String> {
        Ok(Event { name: name.into(), data: data.into() })
    }

    #[test]
    fn events_read_alike_whatever_pieces_the_bytes_come_in() {
        let stream = "\u{feff}: keep-alive\r\n\
                      data: {\"a\":1}\n\n\
                      event: content_block_delta\r\ndata:no space\rdata:  two spaces\r\n\r\n\
                      id: 7\nretry: 10\n\n\
                      data\n\n\
                      data: ünïcödé\n\n\
                      data: cut off at the end\n";
        let expected = vec![
            event("", "{\"a\":1}"),
            event("content_block_delta", "no space\n two spaces"),
            event("", ""),
            event("", "ünïcödé"),
        ];
        for size in 1..=stream.len() {
            assert_eq!(read(stream.as_bytes(), size), expected, "in pieces of {size} bytes");
        }
    }

    #[test]
    fn a_name_without_data_is_forgotten_at_the_blank_line() {
        assert_eq!(read(b"event: ping\n\ndata: x\n\n", 3), [event("", "x")]);
    }

    #[test]
    fn bytes_that_are_not_utf8_break_the_stream_and_end_it() {
        let read = read(b"data: ok\n\ndata: \xff\xfe\n\ndata: never\n\n", 4);
        assert_eq!(read.len(), 2, "{read:?}");
        assert_eq!(read[0], event("", "ok"));
        assert!(read[1].as_ref().unwrap_err().contains("UTF8"), "{read:?}");
    }

    #[test]
    fn a_transport_error_ends_the_stream_with_it() {
        let pieces = vec![Ok(b"data: a\n\n".to_vec()), Err("reset by peer"), Ok(b"data: b\n\n".to_vec())];
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let read: Vec<_> = runtime.block_on(events(futures_util::stream::iter(pieces)).collect());
        assert_eq!(read.len(), 2);
        assert_eq!(read[0].as_ref().unwrap(), &Event { name: String::new(), data: "a".into() });
        assert_eq!(read[1].as_ref().unwrap_err().to_string(), "Transport error: reset by peer");
    }
}
