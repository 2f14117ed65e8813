//! An MCP server's messages: the bytes as one message (a stdio line, a JSON body), and as
//! the server-sent events of the streamable HTTP transport, decoded by the SDK's SSE
//! parser in whatever pieces they arrive; each event's data is then one message.
#![no_main]

use std::pin::pin;
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use futures_util::Stream;
use sse_stream::SseStream;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        skald::fuzzing::mcp_message(text);
    }
    let whole = events(vec![data.to_vec()]);
    let bytewise = events(data.iter().map(|b| vec![*b]).collect());
    // Cuts never change an event nor invent one. Where the body breaks (a bad byte, an
    // invalid line) the SDK's decoder (sse-stream) fails the whole piece holding it, so an
    // event before the break in that piece may be given or not depending on the cuts; the
    // SDK stops reading at the error either way, and the call fails.
    let (whole_read, bytewise_read) = (until_broken(whole.clone()), until_broken(bytewise));
    if whole_read.iter().all(Result::is_ok) && bytewise_read.iter().all(Result::is_ok) {
        assert_eq!(whole_read, bytewise_read, "the events differ when the bytes arrive one at a time");
    } else {
        let given = |events: &[Result<String, String>]| -> Vec<String> {
            events.iter().filter_map(|event| event.as_ref().ok().cloned()).collect()
        };
        let (a, b) = (given(&whole_read), given(&bytewise_read));
        let shorter = a.len().min(b.len());
        assert_eq!(a[..shorter], b[..shorter], "the events differ when the bytes arrive one at a time");
    }
    for data in whole.into_iter().flatten() {
        skald::fuzzing::mcp_message(&data);
    }
});

/// The events up to and including the first error: the SDK stops reading there, and how
/// many more errors the decoder reports after a broken line depends on the cuts.
fn until_broken(mut events: Vec<Result<String, String>>) -> Vec<Result<String, String>> {
    if let Some(at) = events.iter().position(Result::is_err) {
        events.truncate(at + 1);
    }
    events
}

/// The data of each event (or the error's words), the body arriving in `pieces`.
fn events(pieces: Vec<Vec<u8>>) -> Vec<Result<String, String>> {
    let body = futures_util::stream::iter(pieces.into_iter().map(|p| Ok::<_, std::io::Error>(Bytes::from(p))));
    let mut stream = pin!(SseStream::from_bytes_stream(body));
    let mut context = Context::from_waker(Waker::noop());
    let mut out = Vec::new();
    loop {
        match stream.as_mut().poll_next(&mut context) {
            Poll::Ready(Some(Ok(sse))) => {
                if let Some(data) = sse.data {
                    out.push(Ok(data));
                }
            }
            Poll::Ready(Some(Err(err))) => out.push(Err(err.to_string())),
            Poll::Ready(None) => return out,
            Poll::Pending => panic!("a body whose bytes are all at hand waited"),
        }
    }
}
