//! Request generation: pick a command (or a chain) by weight, draw its key and value, encode
//! it straight into the connection's write buffer. Nothing here allocates per request.

use super::feed::Cursor;
use super::keys::{parallel_slice, KeySampler, Sequence};
use super::rng::Rng;
use super::values::ValueSource;
use crate::plan::{CompiledCommand, Phase, PickedSteps};
use crate::resp::encode::{
    decimal_len, write_array_header, write_bulk, write_bulk_header, write_bulk_prefixed_u64,
};
use crate::resp::slot::slot_tag;
use crate::spec::{Arg, Part, Pick};
use std::rc::Rc;
use std::sync::Arc;

/// One pick of the mix, with its own key sampler.
struct Entry {
    steps: Box<[u16]>,
    sampler: KeySampler,
    /// A chain with `pick = "sequential"`: the step this connection sends next, and how far
    /// it moves on each time (the phase's connection count, modulo the chain's length).
    turn: usize,
    stride: usize,
    /// A template following `{cursor}`: its steps are the walk's first request and the
    /// next ones.
    follows_cursor: bool,
}

impl Entry {
    /// The step of a `pick` chain that this pick sends.
    #[inline]
    fn choose(&mut self, picked: &PickedSteps, rng: &mut Rng) -> usize {
        let n = picked.steps.len();
        match picked.order {
            Pick::Random => rng.below(n as u64) as usize,
            Pick::Sequential => {
                let step = self.turn;
                self.turn = (self.turn + self.stride) % n;
                step
            }
        }
    }
}

/// A chain under way: which entry, which step comes next, and its key.
#[derive(Clone, Copy)]
struct ChainAt {
    entry: usize,
    step: usize,
    key: u64,
}

/// One connection's request generator.
pub struct Generator {
    commands: Rc<[CompiledCommand]>,
    templates: Box<[Template]>,
    entries: Box<[Entry]>,
    /// Each entry's steps when it is a chain with `pick` (apart from `entries`, which the
    /// encoder borrows mutably while it reads a step).
    picks: Box<[Option<Arc<PickedSteps>>]>,
    cumulative: Box<[u64]>,
    total_weight: u64,
    keys: KeyFormat,
    values: ValueSource,
    sequence: Rc<Sequence>,
    rng: Rng,
    chain: Option<ChainAt>,
    /// The key number of the request last written when it was a step of a chain (its
    /// keyless steps, MULTI and EXEC, go to the node of that key in cluster mode).
    chain_key: Option<u64>,
    cap: Option<u64>,
    scratch: Vec<u8>,
    /// `{draw1}` ... `{draw9}` of the request being written; bit `i` of `drawn` is set once
    /// `draws[i]` is drawn (kept here so that a request only clears the bits).
    draws: [u64; 9],
    drawn: u16,
    /// `{node_tag}`: the slots of this connection's primary, one drawn per request (per
    /// chain); `tag` is the one drawn.
    node_slots: Option<Rc<[u16]>>,
    tag: u16,
    /// A replay: the connection's recorded requests, sent as they are (the pacer drops
    /// each from the queue once sent).
    replay: Option<Cursor>,
    /// `{cursor}`: the cursor to send next (empty: a walk starts at 0), the requests that
    /// followed one in this walk, and the most that may (0: no limit).
    cursor: Vec<u8>,
    walked: u32,
    max_walk: u32,
}

/// A command's encoding prepared once: its array header and leading literal arguments
/// (the command name), and the index of its first argument written per request.
struct Template {
    head: Box<[u8]>,
    rest: usize,
    /// Ends with `values.expiry`: the array header depends on the TTL drawn, so it is not
    /// part of `head`.
    expiry: bool,
}

impl Template {
    fn new(cmd: &CompiledCommand) -> Self {
        let mut head = Vec::new();
        let expiry = matches!(cmd.args.last(), Some(Arg::Expiry(..)));
        if !expiry {
            write_array_header(&mut head, cmd.args.len());
        }
        let mut rest = 0;
        for arg in &cmd.args {
            let Arg::Lit(bytes) = arg else { break };
            write_bulk(&mut head, bytes);
            rest += 1;
        }
        Template {
            head: head.into(),
            rest,
            expiry,
        }
    }
}

/// How key numbers are written.
struct KeyFormat {
    prefix: Box<[u8]>,
    pad: usize,
    lo: u64,
    span: u64,
    /// When every key number of the range fits in `pad` digits, every key has the same
    /// length: its bulk header and prefix, encoded once; the digits are written in place.
    fixed: Option<Box<[u8]>>,
}

/// Zero padding for key numbers (`keys.pad` is at most 20).
const ZEROS: [u8; 20] = [b'0'; 20];
/// "00", "01", ... "99".
const DIGIT_PAIRS: [u8; 200] = {
    let mut t = [0; 200];
    let mut i = 0;
    while i < 100 {
        t[2 * i] = b'0' + (i / 10) as u8;
        t[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    t
};

impl KeyFormat {
    fn new(prefix: &[u8], pad: usize, lo: u64, span: u64) -> Self {
        let hi = lo.saturating_add(span.saturating_sub(1));
        let fixed = (pad > 0 && decimal_len(hi) <= pad).then(|| {
            let mut head = Vec::new();
            write_bulk_header(&mut head, prefix.len() + pad);
            head.extend_from_slice(prefix);
            head.into()
        });
        KeyFormat {
            prefix: prefix.into(),
            pad,
            lo,
            span,
            fixed,
        }
    }

    /// Append key number `n` (with the prefix) as a bulk string.
    #[inline]
    fn write(&self, buf: &mut Vec<u8>, n: u64) {
        let Some(head) = &self.fixed else {
            return write_bulk_prefixed_u64(buf, &self.prefix, n, self.pad);
        };
        buf.reserve(head.len() + self.pad + 2);
        buf.extend_from_slice(head);
        let at = buf.len();
        buf.extend_from_slice(&ZEROS[..self.pad]);
        buf.extend_from_slice(b"\r\n");
        // Every number of the range fits in `pad` digits (checked when `fixed` was made);
        // written from the right, two digits at a time.
        let digits = &mut buf[at..at + self.pad];
        let (mut n, mut i) = (n, self.pad);
        while n >= 10 && i >= 2 {
            let pair = (n % 100) as usize * 2;
            n /= 100;
            i -= 2;
            digits[i..i + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
        }
        if n > 0 && i > 0 {
            digits[i - 1] = b'0' + n as u8;
        }
    }
}

/// The cursor of a SCAN-like reply: the first element of its array, a bulk or simple
/// string (`*2\r\n$2\r\n17\r\n*...`).
fn cursor_of(reply: &[u8]) -> Option<&[u8]> {
    let line = |at: usize| -> Option<(&[u8], usize)> {
        let end = at + reply.get(at..)?.windows(2).position(|w| w == b"\r\n")?;
        Some((&reply[at..end], end + 2))
    };
    let (head, at) = line(0)?;
    if head.first() != Some(&b'*') {
        return None;
    }
    let (first, at) = line(at)?;
    match first.first()? {
        b'+' => Some(&first[1..]),
        b'$' => {
            let n: usize = std::str::from_utf8(&first[1..]).ok()?.parse().ok()?;
            reply.get(at..at + n)
        }
        _ => None,
    }
}

impl Generator {
    /// A generator for `phase` with its own random stream, for connection `index` of `total`
    /// in the phase (which decides its slice of the range with the parallel distribution).
    pub fn new(
        phase: &Phase,
        commands: Rc<[CompiledCommand]>,
        values: ValueSource,
        sequence: Rc<Sequence>,
        rng: Rng,
        (index, total): (u64, u64),
    ) -> Self {
        let keys = &phase.spec.keys;
        let span = keys.count();
        let mut acc = 0;
        let cumulative = phase
            .mix
            .iter()
            .map(|e| {
                acc += e.weight as u64;
                acc
            })
            .collect();
        let entries = phase
            .mix
            .iter()
            .map(|e| {
                // Connection `index` starts at its own step and moves on by the connection
                // count: together the connections walk the chain in order.
                let n = e.pick.as_ref().map_or(1, |p| p.steps.len().max(1)) as u64;
                Entry {
                    steps: e.steps.iter().map(|&i| i as u16).collect(),
                    sampler: KeySampler::new(&e.distribution, keys.range[0], span, index, total),
                    turn: (index % n) as usize,
                    stride: (total % n) as usize,
                    follows_cursor: e.cursor.is_some(),
                }
            })
            .collect();
        Generator {
            templates: commands.iter().map(Template::new).collect(),
            commands,
            entries,
            picks: phase.mix.iter().map(|e| e.pick.clone()).collect(),
            cumulative,
            total_weight: acc,
            keys: KeyFormat::new(
                keys.prefix.as_bytes(),
                keys.pad as usize,
                keys.range[0],
                span,
            ),
            values,
            sequence,
            rng,
            chain: None,
            chain_key: None,
            cap: connection_cap(phase, index, total),
            scratch: Vec::new(),
            draws: [0; 9],
            drawn: 0,
            node_slots: None,
            tag: 0,
            replay: None,
            cursor: Vec::new(),
            walked: 0,
            max_walk: phase.mix.iter().find_map(|e| e.cursor).unwrap_or(0),
        }
    }

    /// Cluster mode: the slot of the key of the chain whose step was last written (`None`
    /// when the last request was not a step of a chain), so that its keyless steps (MULTI,
    /// EXEC) go where its keyed ones do. Only asked for a request without a key.
    pub fn chain_slot(&mut self) -> Option<u16> {
        let key = self.chain_key?;
        self.scratch.clear();
        self.keys.write(&mut self.scratch, self.keys.lo + key);
        // A bulk string: `$LEN\r\nKEY\r\n`.
        let start = self.scratch.iter().position(|&b| b == b'\n')? + 1;
        let end = self.scratch.len().checked_sub(2)?;
        Some(crate::resp::slot::key_slot(self.scratch.get(start..end)?))
    }

    /// A reply of a `{cursor}` command: follow the cursor it returned, or start a new walk
    /// at 0 when it is 0, the walk is long enough, or the reply is an error (memtier's
    /// `--scan-incremental-iteration`).
    pub fn follow_cursor(&mut self, reply: &[u8], error: bool) {
        let next = (!error).then(|| cursor_of(reply)).flatten();
        match next {
            Some(c) if c != b"0" && (self.max_walk == 0 || self.walked < self.max_walk) => {
                self.cursor.clear();
                self.cursor.extend_from_slice(c);
            }
            _ => {
                self.cursor.clear();
                self.walked = 0;
            }
        }
    }

    /// Send the requests of a replay's connection instead of generating any.
    pub fn replay(&mut self, cursor: Cursor) {
        self.replay = Some(cursor);
    }

    /// Write `{node_tag}` as a hash tag of one of `slots` (those of the connection's primary),
    /// drawn per request.
    pub fn tag_keys_for(&mut self, slots: Rc<[u16]>) {
        self.node_slots = (!slots.is_empty()).then_some(slots);
    }

    /// Whether this connection has sent all it may (parallel keys with `all_keys`).
    #[inline]
    pub fn exhausted(&self) -> bool {
        self.cap == Some(0) || self.replay.as_ref().is_some_and(Cursor::exhausted)
    }

    #[inline]
    fn pick(&mut self) -> usize {
        if self.cumulative.len() == 1 {
            return 0;
        }
        let r = self.rng.below(self.total_weight);
        self.cumulative.iter().position(|&c| r < c).unwrap_or(0)
    }

    /// Encode the next request into `buf`; returns its command index. `budget_left` is how
    /// many more requests this thread may send (bounds sequential key chunks).
    #[inline]
    pub fn next(&mut self, buf: &mut Vec<u8>, budget_left: u64) -> usize {
        if let Some(cursor) = &self.replay {
            return cursor.write(buf) as usize;
        }
        if let Some(c) = self.cap.as_mut() {
            *c = c.saturating_sub(1);
        }
        let at = match self.chain {
            Some(at) => at,
            None => {
                if let Some(slots) = &self.node_slots {
                    self.tag = slots[self.rng.below(slots.len() as u64) as usize];
                }
                let entry = self.pick();
                let key = self.entries[entry].sampler.draw(
                    &mut self.rng,
                    self.keys.span,
                    &self.sequence,
                    budget_left,
                );
                let step = match &self.picks[entry] {
                    Some(p) => self.entries[entry].choose(p, &mut self.rng),
                    None if self.entries[entry].follows_cursor && !self.cursor.is_empty() => {
                        self.walked = self.walked.saturating_add(1);
                        1
                    }
                    None => 0,
                };
                ChainAt { entry, step, key }
            }
        };
        let picked = self.picks[at.entry].as_deref().map(|p| &p.steps[at.step]);
        let steps = &self.entries[at.entry].steps;
        let index = match picked {
            Some((command, _)) => *command,
            None => steps[at.step] as usize,
        };
        // A picked step is the whole pick; a chain's steps follow one another.
        let chained = picked.is_none() && !self.entries[at.entry].follows_cursor;
        let steps = &self.entries[at.entry].steps;
        self.chain_key = (chained && steps.len() > 1).then_some(at.key);
        self.chain = (chained && at.step + 1 < steps.len()).then_some(ChainAt {
            step: at.step + 1,
            ..at
        });
        let Generator {
            commands,
            templates,
            entries,
            keys,
            values,
            sequence,
            rng,
            scratch,
            tag,
            cursor,
            draws,
            drawn,
            ..
        } = self;
        let mut ttl = 0;
        // `{draw1}` ... `{draw9}`: drawn at their first occurrence in this request.
        *drawn = 0;
        let (args, rest): (&[Arg], usize) = match picked {
            // A picked step's arguments are its own (its command only names it in the
            // report): encoded whole, without a prepared head.
            Some((_, args)) => {
                write_array_header(buf, args.len());
                (args, 0)
            }
            None => {
                let cmd = &commands[index];
                let template = &templates[index];
                // A TTL of 0 drops `EX n` from the SET, so it is drawn before the header is
                // written.
                if let (true, Some(Arg::Expiry(lo, hi))) = (template.expiry, cmd.args.last()) {
                    ttl = rng.between(*lo as i64, *hi as i64) as u64;
                    let n = cmd.args.len();
                    write_array_header(buf, if ttl == 0 { n - 1 } else { n + 1 });
                }
                buf.extend_from_slice(&template.head);
                (&cmd.args, template.rest)
            }
        };
        for arg in &args[rest..] {
            match arg {
                Arg::Lit(bytes) => write_bulk(buf, bytes),
                Arg::Key => keys.write(buf, keys.lo + at.key),
                Arg::KeyNum(prefix) => {
                    write_bulk_prefixed_u64(buf, prefix, keys.lo + at.key, keys.pad)
                }
                Arg::FreshKey => {
                    let k = entries[at.entry]
                        .sampler
                        .draw(rng, keys.span, sequence, budget_left);
                    keys.write(buf, keys.lo + k);
                }
                Arg::Value => values.write(buf, rng, at.key),
                Arg::Cursor => write_bulk(buf, cursor),
                Arg::Rand(lo, hi, pad) => {
                    write_bulk_prefixed_i64(buf, rng.between(*lo, *hi), *pad as usize)
                }
                Arg::Parts(parts) => {
                    scratch.clear();
                    for part in parts.iter() {
                        match part {
                            Part::Lit(b) => scratch.extend_from_slice(b),
                            Part::Key => {
                                scratch.extend_from_slice(&keys.prefix);
                                push_padded(scratch, keys.lo + at.key, keys.pad);
                            }
                            Part::KeyNum => push_padded(scratch, keys.lo + at.key, keys.pad),
                            Part::Value => values.write_raw(scratch, rng, at.key),
                            Part::Rand(lo, hi, pad) => {
                                let n = rng.between(*lo, *hi);
                                if n < 0 {
                                    scratch.push(b'-');
                                }
                                push_padded(scratch, n.unsigned_abs(), *pad as usize);
                            }
                            Part::NodeTag => scratch.extend_from_slice(slot_tag(*tag)),
                            Part::Draw(var) => {
                                // `{drawN}` counts on its own counter of a sequence.
                                let mut draw = |counter: usize| {
                                    entries[at.entry].sampler.draw_of(
                                        counter,
                                        rng,
                                        keys.span,
                                        sequence,
                                        budget_left,
                                    )
                                };
                                let k = match var {
                                    None => draw(super::keys::DRAW_COUNTER),
                                    Some(n) => {
                                        let i = (*n as usize - 1) % draws.len();
                                        if *drawn & (1 << i) == 0 {
                                            draws[i] = draw(i + 1);
                                            *drawn |= 1 << i;
                                        }
                                        draws[i]
                                    }
                                };
                                push_padded(scratch, keys.lo + k, keys.pad);
                            }
                        }
                    }
                    write_bulk(buf, scratch);
                }
                Arg::Expiry(..) if ttl == 0 => {}
                Arg::Expiry(..) => {
                    write_bulk(buf, b"EX");
                    write_bulk_prefixed_i64(buf, ttl as i64, 0);
                }
            }
        }
        index
    }
}

/// The most requests connection `index` of `total` may send: its slice of the range, when
/// the phase asks for all keys and every command walks the keys in parallel slices.
fn connection_cap(phase: &Phase, index: u64, total: u64) -> Option<u64> {
    phase
        .parallel_all_keys()
        .then(|| parallel_slice(index, total, phase.spec.keys.count()).1)
}

/// Append `n` in decimal, left-padded with zeros to `pad` digits.
#[inline]
fn push_padded(out: &mut Vec<u8>, n: u64, pad: usize) {
    let mut digits = itoa::Buffer::new();
    let digits = digits.format(n).as_bytes();
    out.resize(out.len() + pad.saturating_sub(digits.len()), b'0');
    out.extend_from_slice(digits);
}

/// Append `n` as a bulk string, its digits zero-padded to `pad`.
#[inline]
fn write_bulk_prefixed_i64(buf: &mut Vec<u8>, n: i64, pad: usize) {
    let sign: &[u8] = if n < 0 { b"-" } else { b"" };
    write_bulk_prefixed_u64(buf, sign, n.unsigned_abs(), pad);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::values::value_pool;
    use crate::plan::Workload;
    use std::sync::Arc;

    #[test]
    fn a_cursor_walk_follows_replies_until_zero_or_its_limit() {
        assert_eq!(cursor_of(b"*2\r\n$2\r\n17\r\n*0\r\n"), Some(&b"17"[..]));
        assert_eq!(cursor_of(b"*2\r\n+5\r\n*0\r\n"), Some(&b"5"[..]));
        assert_eq!(cursor_of(b"-ERR x\r\n"), None);
        assert_eq!(cursor_of(b"*2\r\n$9\r\n17\r\n"), None);
        let toml = "load = { pipeline = 1 }\n\
                    commands = [{ template = 'SCAN {cursor}', max_iterations = 2 }]";
        let mut g = generator(toml, 1);
        let sent = |g: &mut Generator| {
            let mut buf = Vec::new();
            let cmd = g.next(&mut buf, u64::MAX);
            (cmd, String::from_utf8(buf).unwrap())
        };
        let reply = |c: &str| format!("*2\r\n${}\r\n{c}\r\n*0\r\n", c.len());
        assert_eq!(sent(&mut g), (0, "*2\r\n$4\r\nSCAN\r\n$1\r\n0\r\n".into()));
        g.follow_cursor(reply("42").as_bytes(), false);
        assert_eq!(sent(&mut g), (1, "*2\r\n$4\r\nSCAN\r\n$2\r\n42\r\n".into()));
        g.follow_cursor(reply("7").as_bytes(), false);
        assert_eq!(sent(&mut g).0, 1);
        // Two requests followed a cursor: the walk starts again at 0.
        g.follow_cursor(reply("9").as_bytes(), false);
        assert_eq!(sent(&mut g).0, 0);
        g.follow_cursor(reply("9").as_bytes(), false);
        assert_eq!(sent(&mut g).0, 1);
        // An error, or cursor 0, ends the walk.
        g.follow_cursor(b"-ERR no\r\n", true);
        assert_eq!(sent(&mut g).0, 0);
        g.follow_cursor(reply("0").as_bytes(), false);
        assert_eq!(sent(&mut g).0, 0);
    }

    fn generator(toml: &str, seed: u64) -> Generator {
        generator_at(toml, seed, (0, 1))
    }

    /// The generator of connection `index` of `total`.
    fn generator_at(toml: &str, seed: u64, (index, total): (u64, u64)) -> Generator {
        let w = Workload::from_toml_str(toml).unwrap();
        let p = &w.phases[0];
        let mut rng = Rng::new(seed);
        let pool = value_pool(&p.spec.values, &mut rng);
        let seq = Rc::new(Sequence::new(Arc::default()));
        Generator::new(
            p,
            p.commands.clone().into(),
            ValueSource::new(&p.spec.values, pool, p.spec.keys.count()),
            seq,
            Rng::for_stream(seed, 0, 0),
            (index, total),
        )
    }

    /// The arguments of every command in a RESP byte stream.
    fn commands(buf: &[u8]) -> Vec<Vec<Vec<u8>>> {
        let mut out = Vec::new();
        let mut i = 0;
        let line = |i: &mut usize| {
            let end = *i + buf[*i..].windows(2).position(|w| w == b"\r\n").unwrap();
            let text = std::str::from_utf8(&buf[*i + 1..end]).unwrap().to_string();
            *i = end + 2;
            text
        };
        while i < buf.len() {
            let n: usize = line(&mut i).parse().unwrap();
            let mut args = Vec::new();
            for _ in 0..n {
                let len: usize = line(&mut i).parse().unwrap();
                args.push(buf[i..i + len].to_vec());
                i += len + 2;
            }
            out.push(args);
        }
        out
    }

    #[test]
    fn encodes_sequential_keys_with_padding() {
        let mut g = generator(
            "[keys]\nprefix='k:'\npad=4\nrange=[5,6]\ndistribution='sequential'\n[[commands]]\nname='get'",
            1,
        );
        let mut buf = Vec::new();
        for _ in 0..3 {
            assert_eq!(g.next(&mut buf, 100), 0);
        }
        let text = String::from_utf8(buf).unwrap();
        assert_eq!(
            text,
            "*2\r\n$3\r\nGET\r\n$6\r\nk:0005\r\n*2\r\n$3\r\nGET\r\n$6\r\nk:0006\r\n*2\r\n$3\r\nGET\r\n$6\r\nk:0005\r\n"
        );
    }

    #[test]
    fn fixed_width_keys_encode_as_the_general_path() {
        for (pad, lo, span) in [
            (12, 0, 100_000),
            (3, 7, 1),
            (5, 99_990, 10),
            (2, 0, 1000),
            (1, 0, 10),
            (7, 0, 10_000_000),
            (20, u64::MAX - 5000, 5000),
        ] {
            let f = KeyFormat::new(b"key:", pad, lo, span);
            assert_eq!(f.fixed.is_some(), pad != 2, "pad {pad}");
            let first = lo..lo + span.min(3000);
            let last = (lo + span).saturating_sub(3000).max(lo)..lo + span;
            for n in first.chain(last).chain([lo + span / 2]) {
                let (mut fast, mut general) = (Vec::new(), Vec::new());
                f.write(&mut fast, n);
                write_bulk_prefixed_u64(&mut general, b"key:", n, pad);
                assert_eq!(fast, general, "pad {pad} n {n}");
            }
        }
    }

    #[test]
    fn same_seed_same_stream_and_weights_hold() {
        let spec =
            "[values]\nsize=[10,20]\n[[commands]]\nname='set'\nweight=3\n[[commands]]\nname='get'";
        let (mut a, mut b) = (generator(spec, 9), generator(spec, 9));
        let (mut x, mut y) = (Vec::new(), Vec::new());
        let mut sets = 0;
        for _ in 0..4000 {
            sets += (a.next(&mut x, 1) == 0) as u32;
            b.next(&mut y, 1);
        }
        assert_eq!(x, y);
        assert!((2800..3200).contains(&sets), "{sets}");
        let mut other = Vec::new();
        let mut c = generator(spec, 10);
        for _ in 0..4000 {
            c.next(&mut other, 1);
        }
        assert_ne!(x, other);
    }

    #[test]
    fn chains_run_in_order_on_one_key() {
        let spec = r#"
            keys = { range = [1, 1000000] }
            [[commands]]
            chain = ["HSET {key} f {value}", "HGETALL {key}", ["DEL", "{key}"]]
            [[commands]]
            name = "get"
            distribution = "sequential"
        "#;
        let mut g = generator(spec, 5);
        let mut buf = Vec::new();
        let mut labels = Vec::new();
        for _ in 0..3000 {
            labels.push(g.next(&mut buf, 10_000));
        }
        let cmds = commands(&buf);
        let mut i = 0;
        let mut chains = 0;
        let mut gets = Vec::new();
        // Stop before a chain the budget may have cut short.
        while i + 2 < cmds.len() {
            if cmds[i][0] == b"HSET" {
                // The chain's three steps follow each other, all on the first step's key.
                assert_eq!(cmds[i + 1][0], b"HGETALL");
                assert_eq!(cmds[i + 2][0], b"DEL");
                assert_eq!(cmds[i][1], cmds[i + 1][1]);
                assert_eq!(cmds[i][1], cmds[i + 2][1]);
                assert_eq!(labels[i..i + 3], [0, 1, 2]);
                chains += 1;
                i += 3;
            } else {
                assert_eq!(labels[i], 3);
                gets.push(String::from_utf8(cmds[i][1].clone()).unwrap());
                i += 1;
            }
        }
        assert!(chains > 200 && gets.len() > 200, "{chains} {}", gets.len());
        // The GET entry has its own (sequential) pattern.
        assert_eq!(gets[..3], ["key:1", "key:2", "key:3"]);
    }

    #[test]
    fn picked_chains_send_one_step_per_pick() {
        let chain = r#"
            values = { size = 3, data = "fixed" }
            [[commands]]
            chain = ["RPUSH l a", "RPUSH l b", "SET k {value}", ["RPUSH", "l", "c"]]
            label = "cap"
            pick = "PICK"
        "#;
        let w = Workload::from_toml_str(&chain.replace("PICK", "sequential")).unwrap();
        let labels: Vec<_> = w.phases[0].commands.iter().map(|c| &c.label).collect();
        assert_eq!(labels, ["CAP:RPUSH", "CAP:SET"]);
        let sent = |g: &mut Generator, n: usize| {
            let mut buf = Vec::new();
            let index: Vec<usize> = (0..n).map(|_| g.next(&mut buf, 100)).collect();
            let last: Vec<String> = commands(&buf)
                .iter()
                .map(|c| String::from_utf8_lossy(c.last().unwrap()).into_owned())
                .collect();
            (index, last)
        };
        // One connection: the steps in order, cycling, each under its command's label.
        let spec = chain.replace("PICK", "sequential");
        let (index, last) = sent(&mut generator(&spec, 1), 6);
        assert_eq!(last, ["a", "b", "xxx", "c", "a", "b"]);
        assert_eq!(index, [0, 0, 1, 0, 0, 0]);
        // Connection 1 of 3 takes steps 1, 4, 7, 10 (modulo the 4 steps: b, a, c, SET): the
        // connections together walk the chain in order.
        let (_, last) = sent(&mut generator_at(&spec, 1, (1, 3)), 4);
        assert_eq!(last, ["b", "a", "c", "xxx"]);
        // Random: one step per pick, each step about a quarter of them.
        let (index, last) = sent(&mut generator(&chain.replace("PICK", "random"), 3), 4000);
        let sets = last.iter().filter(|l| *l == "xxx").count();
        assert_eq!(index.iter().filter(|&&i| i == 1).count(), sets);
        for step in ["a", "b", "c", "xxx"] {
            let n = last.iter().filter(|l| *l == step).count();
            assert!((850..1150).contains(&n), "{step}: {n}");
        }
    }

    #[test]
    fn placeholders_inside_arguments_expiry_and_padding() {
        let spec = r#"
            keys = { prefix = "k", range = [7, 7], pad = 3 }
            values = { size = 4, data = "fixed", expiry = [5, 9] }
            [[commands]]
            name = "set"
            [[commands]]
            template = ["HSET", "user:{key}:x", "n{keynum}-{value}", "key:{rand:0..99:12}"]
        "#;
        let mut g = generator(spec, 1);
        let mut buf = Vec::new();
        for _ in 0..200 {
            g.next(&mut buf, 1);
        }
        let cmds = commands(&buf);
        let set = cmds.iter().find(|c| c[0] == b"SET").unwrap();
        assert_eq!(
            set[1..4],
            [b"k007".to_vec(), b"xxxx".to_vec(), b"EX".to_vec()]
        );
        let ttls: Vec<i64> = cmds
            .iter()
            .filter(|c| c[0] == b"SET")
            .map(|c| std::str::from_utf8(&c[4]).unwrap().parse().unwrap())
            .collect();
        assert!(ttls.iter().all(|t| (5..=9).contains(t)) && ttls.contains(&5) && ttls.contains(&9));
        let hset = cmds.iter().find(|c| c[0] == b"HSET").unwrap();
        assert_eq!(hset[1], b"user:k007:x");
        assert_eq!(hset[2], b"n007-xxxx");
        assert!(hset[3].starts_with(b"key:000000000") && hset[3].len() == 16);
    }

    #[test]
    fn expiry_from_zero_sends_some_sets_without_ex() {
        let spec = "values = { size = 2, expiry = [0, 2] }\ncommands = [{ name = 'set' }]";
        let mut g = generator(spec, 1);
        let mut buf = Vec::new();
        for _ in 0..300 {
            g.next(&mut buf, 1);
        }
        let cmds = commands(&buf);
        assert_eq!(cmds.len(), 300);
        let plain = cmds.iter().filter(|c| c.len() == 3).count();
        let with_ex: Vec<&Vec<Vec<u8>>> = cmds.iter().filter(|c| c.len() == 5).collect();
        assert_eq!(plain + with_ex.len(), 300);
        // A third of the draws are 0.
        assert!((60..=140).contains(&plain), "{plain}");
        assert!(with_ex
            .iter()
            .all(|c| c[3] == b"EX" && (c[4] == b"1" || c[4] == b"2")));
    }

    #[test]
    fn parallel_all_keys_stops_a_connection_after_its_slice() {
        let spec = "keys = { range = [0, 9], distribution = 'parallel' }\nload = { requests = 'all_keys' }\ncommands = [{ name = 'set' }]";
        let mut g = generator(spec, 1);
        let mut buf = Vec::new();
        let mut n = 0;
        while !g.exhausted() {
            g.next(&mut buf, 100);
            n += 1;
        }
        assert_eq!(n, 10);
        let keys: Vec<_> = commands(&buf).into_iter().map(|c| c[1].clone()).collect();
        assert_eq!(keys.first().unwrap(), b"key:0");
        assert_eq!(keys.last().unwrap(), b"key:9");
    }
}
