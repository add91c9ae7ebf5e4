//! TLS over TCP with the record layer done here: rustls drives the handshake (its unbuffered
//! API, over our own buffers), then hands over the traffic keys (its kernel API, made for kTLS)
//! and this stream does the records. TLS 1.3 records are read straight into the caller's buffer
//! when it has room for one, and decrypted there with ring, each plaintext written just before
//! its ciphertext (no copy at all); otherwise, and for TLS 1.2, records are decrypted in place in
//! the stream's own read buffer (rustls's `MessageDecrypter`) and copied once to the caller.
//! rustls's buffered stream copied every reply three times (read-ahead into its deframer buffer,
//! out into a buffer allocated per record, out again to the caller). TLS 1.3 writes are
//! encrypted with ring in place in the stream's write buffer, which keeps its capacity (rustls's
//! `MessageEncrypter`, used for TLS 1.2, allocates every record: with no pipeline, a request).
//! Post-handshake messages (TLS 1.3 session tickets and key updates) go back to rustls.
//! Not rustls's unbuffered `ReadTraffic` for the data: in rustls 0.23 it still decrypts into a
//! buffer allocated per record and hands that out (`next_record` pops it), so it saves only the
//! read-ahead copy.

use rustls::client::{ClientConnectionData, UnbufferedClientConnection};
use rustls::crypto::cipher::{
    AeadKey, InboundOpaqueMessage, Iv, MessageDecrypter, MessageEncrypter, OutboundChunks,
    OutboundPlainMessage,
};
use rustls::kernel::KernelConnection;
use rustls::pki_types::ServerName;
use rustls::unbuffered::{ConnectionState, EncodeError, UnbufferedStatus};
use rustls::{
    AlertDescription, ClientConfig, ConnectionTrafficSecrets, ContentType, HandshakeType,
    ProtocolVersion, SupportedCipherSuite,
};
use std::fmt;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;

/// A record header: type, version, length.
const HEADER: usize = 5;
/// Largest record body accepted (TLS 1.2 allows 16 KiB of data plus 2 KiB of expansion).
const MAX_BODY: usize = 16 * 1024 + 2048;
/// Largest plaintext in one record.
const MAX_FRAGMENT: usize = 16 * 1024;
/// The AEAD tag of every TLS 1.3 cipher suite (AES-GCM, ChaCha20-Poly1305).
const MAX_TAG: usize = 16;
/// First read buffer: one record of any size. It grows to [`MAX_READ`] on the first read that
/// fills it, so idle connections stay small.
const FIRST_READ: usize = HEADER + MAX_BODY;
/// Largest read: a pipeline of 50 1 KiB replies in one `recv`.
const MAX_READ: usize = 64 * 1024;
/// Most plaintext encrypted per write call; the rest is left to the caller's next call.
const MAX_WRITE: usize = 64 * 1024;

/// Large copies are made in pieces of this size: glibc (2.36) copies more than 2112 bytes
/// with `rep movsb` on CPUs with FSRM, markedly slower than its vector loop where measured
/// (docs/performance.md, "Where the CPU goes").
const COPY_PIECE: usize = 2048;

/// Append `src` to `out` (which has room), in pieces of [`COPY_PIECE`].
fn put_in_pieces(out: &mut ReadBuf<'_>, src: &[u8]) {
    for piece in src.chunks(COPY_PIECE) {
        out.put_slice(piece);
    }
}

/// An I/O error carrying the rustls error, as `super::tls::tls_error` expects.
fn tls_err(e: rustls::Error) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

fn general(msg: &str) -> io::Error {
    tls_err(rustls::Error::General(msg.to_string()))
}

/// The key and IV of one direction's secrets.
fn key_iv(secrets: ConnectionTrafficSecrets) -> io::Result<(AeadKey, Iv)> {
    match secrets {
        ConnectionTrafficSecrets::Aes128Gcm { key, iv }
        | ConnectionTrafficSecrets::Aes256Gcm { key, iv }
        | ConnectionTrafficSecrets::Chacha20Poly1305 { key, iv } => Ok((key, iv)),
        _ => Err(general("unsupported cipher suite")),
    }
}

/// The record protection for one direction, from the secrets rustls hands over.
fn decrypter(
    suite: SupportedCipherSuite,
    secrets: ConnectionTrafficSecrets,
) -> io::Result<Box<dyn MessageDecrypter>> {
    let (key, iv) = key_iv(secrets)?;
    Ok(match suite {
        SupportedCipherSuite::Tls13(s) => s.aead_alg.decrypter(key, iv),
        SupportedCipherSuite::Tls12(s) => {
            // AES-GCM: the secrets hold the 4-byte salt then 8 bytes of explicit nonce; the
            // decrypter takes the salt only. ChaCha20: the whole 12-byte IV.
            let salt = s.aead_alg.key_block_shape().fixed_iv_len;
            s.aead_alg.decrypter(key, &iv.as_ref()[..salt])
        }
    })
}

/// The same for the other direction: records we write.
fn encrypter(
    suite: SupportedCipherSuite,
    secrets: ConnectionTrafficSecrets,
) -> io::Result<Box<dyn MessageEncrypter>> {
    let (key, iv) = key_iv(secrets)?;
    Ok(match suite {
        SupportedCipherSuite::Tls13(s) => s.aead_alg.encrypter(key, iv),
        SupportedCipherSuite::Tls12(s) => {
            let salt = s.aead_alg.key_block_shape().fixed_iv_len;
            let (fixed, explicit) = iv.as_ref().split_at(salt);
            s.aead_alg.encrypter(key, fixed, explicit)
        }
    })
}

/// A TLS 1.3 key for ring, and its IV: records opened in the caller's buffer (receive) or
/// sealed in place in the write buffer (send).
struct Key13 {
    key: ring::aead::LessSafeKey,
    iv: [u8; 12],
}

impl Key13 {
    /// `None` for TLS 1.2 (rustls's decrypter and encrypter do those records).
    fn new(suite: SupportedCipherSuite, secrets: &ConnectionTrafficSecrets) -> Option<Key13> {
        if !matches!(suite, SupportedCipherSuite::Tls13(_)) {
            return None;
        }
        let (alg, key, iv) = match secrets {
            ConnectionTrafficSecrets::Aes128Gcm { key, iv } => (&ring::aead::AES_128_GCM, key, iv),
            ConnectionTrafficSecrets::Aes256Gcm { key, iv } => (&ring::aead::AES_256_GCM, key, iv),
            ConnectionTrafficSecrets::Chacha20Poly1305 { key, iv } => {
                (&ring::aead::CHACHA20_POLY1305, key, iv)
            }
            _ => return None,
        };
        let key = ring::aead::UnboundKey::new(alg, key.as_ref()).ok()?;
        Some(Key13 {
            key: ring::aead::LessSafeKey::new(key),
            iv: iv.as_ref().try_into().ok()?,
        })
    }

    /// The nonce of record `seq`: the IV with the sequence number XORed into its end.
    fn nonce(&self, seq: u64) -> ring::aead::Nonce {
        let mut nonce = self.iv;
        for (n, s) in nonce[4..].iter_mut().zip(seq.to_be_bytes()) {
            *n ^= s;
        }
        ring::aead::Nonce::assume_unique_for_key(nonce)
    }

    /// Append `data` as record `seq` of inner type `typ` to `out`, sealed where it lies: no
    /// allocation once `out` has grown (rustls's encrypter allocates every record).
    fn seal(&self, out: &mut Vec<u8>, typ: ContentType, data: &[u8], seq: u64) -> io::Result<()> {
        let len = data.len() + 1 + self.key.algorithm().tag_len();
        let [hi, lo] = u16::try_from(len)
            .map_err(|_| general("a TLS record too large to send"))?
            .to_be_bytes();
        // TLS 1.3 records all say application data and TLS 1.2 outside; the header is the AAD.
        let header = [u8::from(ContentType::ApplicationData), 3, 3, hi, lo];
        // `encrypt` reserved room for the whole write.
        out.extend_from_slice(&header);
        let body_at = out.len();
        for piece in data.chunks(COPY_PIECE) {
            out.extend_from_slice(piece);
        }
        out.push(u8::from(typ));
        let sealed = self.key.seal_in_place_separate_tag(
            self.nonce(seq),
            ring::aead::Aad::from(header),
            &mut out[body_at..],
        );
        let Ok(tag) = sealed else {
            // Never send the plaintext just put there.
            out.truncate(body_at - HEADER);
            return Err(general("TLS record encryption failed"));
        };
        out.extend_from_slice(tag.as_ref());
        Ok(())
    }
}

/// A TLS connection over TCP: records decrypted in place in `rbuf`, encrypted into `wbuf`.
pub struct TlsStream {
    tcp: TcpStream,
    /// Hands back post-handshake messages (session tickets, key updates) to rustls.
    kernel: KernelConnection<ClientConnectionData>,
    suite: SupportedCipherSuite,
    dec: Box<dyn MessageDecrypter>,
    /// TLS 1.3: the same receive key for ring, to decrypt straight into the caller's buffer.
    open13: Option<Key13>,
    enc: Box<dyn MessageEncrypter>,
    /// TLS 1.3: the same send key for ring, to encrypt in place in `wbuf`.
    seal13: Option<Key13>,
    rx_seq: u64,
    tx_seq: u64,
    /// Records encrypted under one key before it is replaced (TLS 1.3) or the connection fails
    /// (TLS 1.2): the cipher suite's confidentiality limit.
    tx_limit: u64,
    /// Ciphertext read from the socket: records from `rstart` to `rend`; decrypted plaintext
    /// not yet handed out from `pstart` to `pend` (inside an earlier record).
    rbuf: Vec<u8>,
    rstart: usize,
    rend: usize,
    pstart: usize,
    pend: usize,
    /// A post-handshake message split across records.
    hs_partial: Vec<u8>,
    /// Ciphertext not yet sent, from `wstart`.
    wbuf: Vec<u8>,
    wstart: usize,
    /// The server sent close_notify.
    peer_closed: bool,
    /// We sent close_notify.
    closing: bool,
    /// A bad record or an alert met after data was handed out, reported by the next read.
    failed: Option<io::Error>,
}

impl fmt::Debug for TlsStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsStream")
            .field("tcp", &self.tcp)
            .field("suite", &self.suite.suite())
            .field("rx_seq", &self.rx_seq)
            .field("tx_seq", &self.tx_seq)
            .finish_non_exhaustive()
    }
}

impl TlsStream {
    /// Run the TLS handshake over `tcp` (no timeout here: the caller has one). rustls errors
    /// come back inside the I/O error, for `super::tls::tls_error`.
    pub async fn connect(
        mut tcp: TcpStream,
        config: Arc<ClientConfig>,
        name: ServerName<'static>,
    ) -> io::Result<TlsStream> {
        let mut conn = UnbufferedClientConnection::new(config, name).map_err(tls_err)?;
        let mut inb = vec![0u8; FIRST_READ];
        let mut ilen = 0;
        let mut out = Vec::new();
        let mut olen = 0;
        loop {
            let UnbufferedStatus { discard, state } = conn.process_tls_records(&mut inb[..ilen]);
            let mut need_read = false;
            match state.map_err(tls_err)? {
                ConnectionState::EncodeTlsData(mut enc) => loop {
                    match enc.encode(&mut out[olen..]) {
                        Ok(n) => {
                            olen += n;
                            break;
                        }
                        Err(EncodeError::InsufficientSize(s)) => {
                            out.resize(olen + s.required_size, 0);
                        }
                        Err(EncodeError::AlreadyEncoded) => {
                            return Err(general("TLS handshake record encoded twice"))
                        }
                    }
                },
                ConnectionState::TransmitTlsData(t) => {
                    tcp.write_all(&out[..olen]).await?;
                    olen = 0;
                    t.done();
                }
                ConnectionState::BlockedHandshake => need_read = true,
                ConnectionState::WriteTraffic(_) => {
                    inb.copy_within(discard..ilen, 0);
                    ilen -= discard;
                    break;
                }
                ConnectionState::PeerClosed | ConnectionState::Closed => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the server closed TLS during the handshake",
                    ))
                }
                _ => return Err(general("unexpected data during the TLS handshake")),
            }
            if discard > 0 {
                inb.copy_within(discard..ilen, 0);
                ilen -= discard;
            }
            if need_read {
                if ilen == inb.len() {
                    // A handshake message larger than the buffer (a long certificate chain).
                    inb.resize(inb.len() * 2, 0);
                }
                let n = tokio::io::AsyncReadExt::read(&mut tcp, &mut inb[ilen..]).await?;
                if n == 0 {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the server closed the connection",
                    ));
                }
                ilen += n;
            }
        }
        let (secrets, kernel) = conn.dangerous_into_kernel_connection().map_err(tls_err)?;
        let suite = kernel.negotiated_cipher_suite();
        let (rx_seq, rx) = secrets.rx;
        let (tx_seq, tx) = secrets.tx;
        // Records the server sent after its last handshake message stay, to be decrypted here.
        if inb.len() > FIRST_READ.max(ilen) {
            inb.truncate(FIRST_READ.max(ilen));
            inb.shrink_to_fit();
        }
        Ok(TlsStream {
            tcp,
            kernel,
            suite,
            open13: Key13::new(suite, &rx),
            seal13: Key13::new(suite, &tx),
            dec: decrypter(suite, rx)?,
            enc: encrypter(suite, tx)?,
            rx_seq,
            tx_seq,
            tx_limit: match suite {
                SupportedCipherSuite::Tls13(s) => &s.common,
                SupportedCipherSuite::Tls12(s) => &s.common,
            }
            .confidentiality_limit
            .saturating_sub(16),
            rbuf: inb,
            rstart: 0,
            rend: ilen,
            pstart: 0,
            pend: 0,
            hs_partial: Vec::new(),
            wbuf: Vec::new(),
            wstart: 0,
            peer_closed: false,
            closing: false,
            failed: None,
        })
    }

    fn is_tls13(&self) -> bool {
        matches!(self.suite, SupportedCipherSuite::Tls13(_))
    }

    /// Send the ciphertext not yet sent; `Ready(Ok)` once there is none.
    pub fn poll_flush_tx(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.wstart < self.wbuf.len() {
            let n = ready!(Pin::new(&mut self.tcp).poll_write(cx, &self.wbuf[self.wstart..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.wstart += n;
        }
        self.wbuf.clear();
        self.wstart = 0;
        Poll::Ready(Ok(()))
    }

    /// Encrypt `data` as records of type `typ` onto the unsent ciphertext.
    fn encrypt(&mut self, typ: ContentType, data: &[u8]) -> io::Result<()> {
        if self.seal13.is_some() {
            // Room for all the records at once: grown record by record, the buffer (which
            // keeps its capacity) could double to twice the largest write.
            let records = data.len().div_ceil(MAX_FRAGMENT).max(1);
            self.wbuf
                .reserve_exact(data.len() + records * (HEADER + 1 + MAX_TAG));
        }
        for chunk in data.chunks(MAX_FRAGMENT) {
            if self.tx_seq >= self.tx_limit {
                self.renew_tx_key(false)?;
            }
            if let Some(seal) = &self.seal13 {
                seal.seal(&mut self.wbuf, typ, chunk, self.tx_seq)?;
                self.tx_seq += 1;
                continue;
            }
            let msg = OutboundPlainMessage {
                typ,
                version: ProtocolVersion::TLSv1_2,
                payload: OutboundChunks::Single(chunk),
            };
            let record = self.enc.encrypt(msg, self.tx_seq).map_err(tls_err)?;
            self.tx_seq += 1;
            let record = record.encode();
            if self.wbuf.is_empty() {
                // rustls allocated the record anyway: keep it rather than copy it.
                self.wbuf = record;
                self.wstart = 0;
            } else {
                self.wbuf.extend_from_slice(&record);
            }
        }
        Ok(())
    }

    /// Send a TLS 1.3 key update (asking the server for one too when `request`), then encrypt
    /// under the next key. TLS 1.2 has no key update: the connection ends instead.
    fn renew_tx_key(&mut self, request: bool) -> io::Result<()> {
        if !self.is_tls13() {
            return Err(general(
                "the TLS 1.2 cipher suite's record limit was reached",
            ));
        }
        let msg = [HandshakeType::KeyUpdate.into(), 0, 0, 1, u8::from(request)];
        // Under the current key, bypassing the limit check (there is headroom below the limit).
        let record = self
            .enc
            .encrypt(
                OutboundPlainMessage {
                    typ: ContentType::Handshake,
                    version: ProtocolVersion::TLSv1_2,
                    payload: OutboundChunks::Single(&msg),
                },
                self.tx_seq,
            )
            .map_err(tls_err)?;
        self.wbuf.extend_from_slice(&record.encode());
        let (seq, secrets) = self.kernel.update_tx_secret().map_err(tls_err)?;
        let seal13 = Key13::new(self.suite, &secrets);
        self.enc = encrypter(self.suite, secrets)?;
        self.seal13 = seal13;
        self.tx_seq = seq;
        Ok(())
    }

    /// Decrypt the next complete record in the read buffer: `Ok(false)` when there is none.
    /// Application data is left in `pstart..pend`.
    fn next_record(&mut self) -> io::Result<bool> {
        let avail = &self.rbuf[self.rstart..self.rend];
        if avail.len() < HEADER {
            return Ok(false);
        }
        let typ = ContentType::from(avail[0]);
        let version = ProtocolVersion::from(u16::from_be_bytes([avail[1], avail[2]]));
        let len = usize::from(u16::from_be_bytes([avail[3], avail[4]]));
        if len > MAX_BODY {
            return Err(tls_err(rustls::Error::PeerSentOversizedRecord));
        }
        if avail.len() < HEADER + len {
            return Ok(false);
        }
        if self.is_tls13() && typ != ContentType::ApplicationData {
            return Err(tls_err(rustls::Error::InappropriateMessage {
                expect_types: vec![ContentType::ApplicationData],
                got_type: typ,
            }));
        }
        let body_at = self.rstart + HEADER;
        self.rstart = body_at + len;
        let base = self.rbuf.as_ptr() as usize;
        let body = &mut self.rbuf[body_at..body_at + len];
        let seq = self.rx_seq;
        self.rx_seq += 1;
        let plain = self
            .dec
            .decrypt(InboundOpaqueMessage::new(typ, version, body), seq)
            .map_err(tls_err)?;
        match plain.typ {
            ContentType::ApplicationData => {
                // The plaintext lies inside the record's body in `rbuf`.
                self.pstart = plain.payload.as_ptr() as usize - base;
                self.pend = self.pstart + plain.payload.len();
            }
            ContentType::Alert => {
                let desc = match plain.payload {
                    [_level, desc] => AlertDescription::from(*desc),
                    _ => return Err(general("a malformed TLS alert")),
                };
                if desc == AlertDescription::CloseNotify {
                    self.peer_closed = true;
                } else {
                    return Err(tls_err(rustls::Error::AlertReceived(desc)));
                }
            }
            ContentType::Handshake => {
                // Rare (a few session tickets after connecting): a copy is fine.
                let payload = plain.payload.to_vec();
                self.post_handshake(&payload)?;
            }
            other => {
                return Err(tls_err(rustls::Error::InappropriateMessage {
                    expect_types: vec![ContentType::ApplicationData],
                    got_type: other,
                }))
            }
        }
        Ok(true)
    }

    /// TLS 1.3: decrypt the complete records in `buf[..end]` in place, the plaintext of each
    /// moved to the front as it is decrypted. Returns the plaintext's length, where the
    /// records not yet decrypted (a partial one) begin, and the error that stopped it.
    fn open_records(&mut self, buf: &mut [u8], end: usize) -> (usize, usize, Option<io::Error>) {
        let (mut plain, mut at) = (0, 0);
        while end - at >= HEADER && !self.peer_closed {
            let Some(open) = &self.open13 else { break };
            let header: [u8; HEADER] =
                [buf[at], buf[at + 1], buf[at + 2], buf[at + 3], buf[at + 4]];
            let len = usize::from(u16::from_be_bytes([header[3], header[4]]));
            let typ = ContentType::from(header[0]);
            if typ != ContentType::ApplicationData {
                let e = rustls::Error::InappropriateMessage {
                    expect_types: vec![ContentType::ApplicationData],
                    got_type: typ,
                };
                return (plain, at, Some(tls_err(e)));
            }
            if len > MAX_BODY {
                return (
                    plain,
                    at,
                    Some(tls_err(rustls::Error::PeerSentOversizedRecord)),
                );
            }
            if end - at < HEADER + len {
                break;
            }
            let nonce = open.nonce(self.rx_seq);
            let body_at = at + HEADER;
            at = body_at + len;
            self.rx_seq += 1;
            let opened = open.key.open_within(
                nonce,
                ring::aead::Aad::from(header),
                &mut buf[plain..at],
                body_at - plain..,
            );
            let Ok(record) = opened else {
                return (plain, at, Some(tls_err(rustls::Error::DecryptError)));
            };
            // TLSInnerPlaintext: the data, its real content type, then zero padding.
            let Some(type_at) = record.iter().rposition(|&b| b != 0) else {
                return (
                    plain,
                    at,
                    Some(general("a TLS record without a content type")),
                );
            };
            if type_at > MAX_FRAGMENT {
                return (
                    plain,
                    at,
                    Some(tls_err(rustls::Error::PeerSentOversizedRecord)),
                );
            }
            let result = match ContentType::from(record[type_at]) {
                ContentType::ApplicationData => {
                    plain += type_at;
                    Ok(())
                }
                ContentType::Alert => match record[..type_at] {
                    [_, desc] if AlertDescription::from(desc) == AlertDescription::CloseNotify => {
                        self.peer_closed = true;
                        Ok(())
                    }
                    [_, desc] => Err(tls_err(rustls::Error::AlertReceived(
                        AlertDescription::from(desc),
                    ))),
                    _ => Err(general("a malformed TLS alert")),
                },
                ContentType::Handshake => {
                    let message = record[..type_at].to_vec();
                    self.post_handshake(&message)
                }
                other => Err(tls_err(rustls::Error::InappropriateMessage {
                    expect_types: vec![ContentType::ApplicationData],
                    got_type: other,
                })),
            };
            if let Err(e) = result {
                return (plain, at, Some(e));
            }
        }
        (plain, at, None)
    }

    /// Handshake messages after the handshake: TLS 1.3 session tickets (OpenSSL sends two)
    /// and key updates; a TLS 1.2 hello request (renegotiation) is ignored.
    fn post_handshake(&mut self, payload: &[u8]) -> io::Result<()> {
        self.hs_partial.extend_from_slice(payload);
        let mut at = 0;
        while let [typ, a, b, c, ..] = self.hs_partial[at..] {
            let len = u32::from_be_bytes([0, a, b, c]) as usize;
            let body_at = at + 4;
            if self.hs_partial.len() < body_at + len {
                if len > 64 * 1024 {
                    return Err(general("an oversized post-handshake message"));
                }
                break;
            }
            let body = self.hs_partial[body_at..body_at + len].to_vec();
            at = body_at + len;
            match HandshakeType::from(typ) {
                HandshakeType::NewSessionTicket if self.is_tls13() => self
                    .kernel
                    .handle_new_session_ticket(&body)
                    .map_err(tls_err)?,
                HandshakeType::KeyUpdate if self.is_tls13() => {
                    let request = match body[..] {
                        [0] => false,
                        [1] => true,
                        _ => return Err(general("a malformed TLS key update")),
                    };
                    let (seq, secrets) = self.kernel.update_rx_secret().map_err(tls_err)?;
                    self.open13 = Key13::new(self.suite, &secrets);
                    self.dec = decrypter(self.suite, secrets)?;
                    self.rx_seq = seq;
                    if request {
                        self.renew_tx_key(false)?;
                    }
                }
                HandshakeType::HelloRequest if !self.is_tls13() => {}
                other => {
                    return Err(tls_err(rustls::Error::General(format!(
                        "unexpected TLS handshake message after the handshake: {other:?}"
                    ))))
                }
            }
        }
        self.hs_partial.drain(..at);
        Ok(())
    }

    /// Poll a read of plaintext into `out`; nothing read means the server closed TLS cleanly.
    pub fn poll_read(
        &mut self,
        cx: &mut Context<'_>,
        out: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        // A write may have left records unsent (the socket was full): send them before
        // waiting for the replies they ask for.
        if let Poll::Ready(Err(e)) = self.poll_flush_tx(cx) {
            return Poll::Ready(Err(e));
        }
        if let Some(e) = self.failed.take() {
            return Poll::Ready(Err(e));
        }
        let filled_before = out.filled().len();
        loop {
            if self.pstart < self.pend {
                let n = out.remaining().min(self.pend - self.pstart);
                put_in_pieces(out, &self.rbuf[self.pstart..self.pstart + n]);
                self.pstart += n;
                if out.remaining() == 0 {
                    return Poll::Ready(Ok(()));
                }
                // Go on with the records already read: the caller should see every reply
                // one recv brought (and refill its pipeline once), not one record's worth.
                continue;
            }
            if self.peer_closed {
                return Poll::Ready(Ok(()));
            }
            if out.filled().len() > filled_before {
                match self.next_record() {
                    Ok(true) => continue,
                    Ok(false) => return Poll::Ready(Ok(())),
                    // After some data: the data now, the error on the next call.
                    Err(e) => {
                        self.failed = Some(e);
                        return Poll::Ready(Ok(()));
                    }
                }
            }
            if self.next_record()? {
                // A key update asked for ours: it is queued.
                if !self.wbuf.is_empty() {
                    if let Poll::Ready(Err(e)) = self.poll_flush_tx(cx) {
                        return Poll::Ready(Err(e));
                    }
                }
                continue;
            }
            let leftover = self.rend - self.rstart;
            if self.open13.is_some() && out.remaining() >= FIRST_READ + leftover {
                // TLS 1.3 with room for a whole record: read into the caller's buffer and
                // decrypt there, each record's plaintext written over the ciphertext just
                // before it (ring's `open_within`): no copy of the data at all.
                let dst = out.initialize_unfilled();
                dst[..leftover].copy_from_slice(&self.rbuf[self.rstart..self.rend]);
                let mut rb = ReadBuf::new(&mut dst[leftover..]);
                ready!(Pin::new(&mut self.tcp).poll_read(cx, &mut rb))?;
                let n = rb.filled().len();
                if n == 0 {
                    return Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the server closed the connection without a TLS close_notify",
                    )));
                }
                let end = leftover + n;
                let (plain, at, err) = self.open_records(dst, end);
                // The partial record at the end (at most one, so it fits) waits in our
                // buffer. After an error or close_notify nothing more is read: whatever
                // follows (it may be more than fits) is dropped.
                let keep = if err.is_none() && !self.peer_closed {
                    end - at
                } else {
                    0
                };
                // Without an error `open_records` stops only at a partial record (TLS 1.3
                // keys stay TLS 1.3 keys, so `open13` does not go away mid-way).
                debug_assert!(keep < FIRST_READ, "{keep} bytes left over");
                self.rbuf[..keep].copy_from_slice(&dst[at..at + keep]);
                (self.rstart, self.rend) = (0, keep);
                out.advance(plain);
                match err {
                    Some(e) if plain == 0 => return Poll::Ready(Err(e)),
                    Some(e) => {
                        self.failed = Some(e);
                        return Poll::Ready(Ok(()));
                    }
                    None if plain > 0 || self.peer_closed => return Poll::Ready(Ok(())),
                    // Only part of a record, or a session ticket: read on.
                    None => {
                        if !self.wbuf.is_empty() {
                            if let Poll::Ready(Err(e)) = self.poll_flush_tx(cx) {
                                return Poll::Ready(Err(e));
                            }
                        }
                        continue;
                    }
                }
            }
            // Keep the partial record (at most one) at the front, read after it.
            if self.rstart > 0 {
                for at in (self.rstart..self.rend).step_by(COPY_PIECE) {
                    let to = (at + COPY_PIECE).min(self.rend);
                    self.rbuf.copy_within(at..to, at - self.rstart);
                }
                self.rend -= self.rstart;
                self.rstart = 0;
            }
            let mut rb = ReadBuf::new(&mut self.rbuf[self.rend..]);
            ready!(Pin::new(&mut self.tcp).poll_read(cx, &mut rb))?;
            let n = rb.filled().len();
            if n == 0 {
                return Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the server closed the connection without a TLS close_notify",
                )));
            }
            self.rend += n;
            if self.rend == self.rbuf.len() && self.rbuf.len() < MAX_READ {
                self.rbuf.resize(MAX_READ, 0);
            }
        }
    }

    /// Poll a write: encrypts up to 64 KiB of `buf` and tries to send it. Records the socket
    /// does not take now are kept and sent first by the next write, flush or read.
    pub fn poll_write(&mut self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        ready!(self.poll_flush_tx(cx))?;
        if buf.is_empty() {
            return Poll::Ready(Ok(0));
        }
        let n = buf.len().min(MAX_WRITE);
        self.encrypt(ContentType::ApplicationData, &buf[..n])?;
        if let Poll::Ready(Err(e)) = self.poll_flush_tx(cx) {
            return Poll::Ready(Err(e));
        }
        Poll::Ready(Ok(n))
    }

    /// Send close_notify, then end the TCP stream's sending side.
    pub fn poll_shutdown(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if !self.closing {
            ready!(self.poll_flush_tx(cx))?;
            self.closing = true;
            let alert = [1, AlertDescription::CloseNotify.into()];
            self.encrypt(ContentType::Alert, &alert)?;
        }
        ready!(self.poll_flush_tx(cx))?;
        Pin::new(&mut self.tcp).poll_shutdown(cx)
    }
}
