//! The RESP framer on any byte stream, split anywhere: it never panics, and the replies and
//! errors it finds do not depend on where the stream was split (the first input byte picks
//! the split points). Its bounds hold: a reply is never longer than the bytes given.
#![no_main]

use libfuzzer_sys::fuzz_target;
use respload::resp::{Framer, Reply};

/// The replies framed from `stream` fed in chunks ending at `cuts`: each reply's length and
/// class (error kinds as their text), then the error that stopped it, if any.
fn frame(stream: &[u8], cuts: &[usize]) -> (Vec<(usize, String)>, Option<&'static str>) {
    let mut framer = Framer::new();
    let mut buf: Vec<u8> = Vec::new();
    let mut out = Vec::new();
    let mut fed = 0;
    for &cut in cuts.iter().chain(std::iter::once(&stream.len())) {
        if cut <= fed {
            continue;
        }
        buf.extend_from_slice(&stream[fed..cut]);
        fed = cut;
        loop {
            match framer.next(&buf) {
                Ok(Some((n, reply))) => {
                    assert!(n > 0 && n <= buf.len(), "consumed {n} of {}", buf.len());
                    let class = match &reply {
                        Reply::Error { kind } => {
                            assert!(kind.end <= n, "error kind {kind:?} past the reply ({n})");
                            format!("Error({:?})", &buf[kind.clone()])
                        }
                        other => format!("{other:?}"),
                    };
                    out.push((n, class));
                    buf.drain(..n);
                }
                Ok(None) => break,
                Err(e) => return (out, Some(e.message)),
            }
        }
    }
    (out, None)
}

fuzz_target!(|data: &[u8]| {
    let Some((&seed, stream)) = data.split_first() else {
        return;
    };
    let whole = frame(stream, &[]);
    // Split every `step` bytes, and byte by byte.
    let step = usize::from(seed % 16) + 1;
    let cuts: Vec<usize> = (step..stream.len()).step_by(step).collect();
    assert_eq!(frame(stream, &cuts), whole, "split every {step} bytes");
    if stream.len() <= 4096 {
        let bytes: Vec<usize> = (1..stream.len()).collect();
        assert_eq!(frame(stream, &bytes), whole, "split byte by byte");
    }
});
