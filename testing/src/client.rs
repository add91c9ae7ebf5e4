//! A small blocking RESP2 client for assertions, over TCP or TLS: what the Python and Node
//! `testing` modules' `call()` / `command()` send through.

use crate::Error;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A reply, as RESP2 gives it.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// A simple string (`+OK`).
    Status(String),
    /// An error reply (`-ERR ...`), its text without the dash.
    Error(String),
    /// An integer.
    Int(i64),
    /// A bulk string.
    Bulk(Vec<u8>),
    /// A null bulk string or array.
    Nil,
    /// An array.
    Array(Vec<Reply>),
}

/// Where and how [`Client::connect`] connects.
#[derive(Clone, Debug)]
pub struct ClientOptions {
    /// The host name or address.
    pub host: String,
    /// The port.
    pub port: u16,
    /// TLS, when the server speaks it.
    pub tls: Option<ClientTls>,
    /// The ACL user (`AUTH user password`); with only a password, `AUTH password`.
    pub user: Option<String>,
    /// The password.
    pub password: Option<String>,
    /// The database to `SELECT` (0: none sent).
    pub db: u32,
    /// Connect, read and write timeout.
    pub timeout: Duration,
}

/// The client's TLS: whom it trusts and the certificate it shows.
#[derive(Clone, Debug, Default)]
pub struct ClientTls {
    /// The CA file (PEM); `None`: Mozilla's roots (webpki-roots).
    pub ca_file: Option<String>,
    /// A client certificate (PEM), with `key`.
    pub cert: Option<String>,
    /// Its private key (PEM).
    pub key: Option<String>,
}

trait Stream: Read + Write + Send {}
impl<T: Read + Write + Send> Stream for T {}

/// One connection, authenticated and on its database once [`Client::connect`] returns.
pub struct Client {
    stream: BufReader<Box<dyn Stream>>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Client")
    }
}

impl Client {
    /// Connect, then `AUTH` and `SELECT` as the options say. An error reply to either is
    /// [`Error::Reply`]; a connection that fails, [`Error::Io`].
    pub fn connect(options: &ClientOptions) -> Result<Client, Error> {
        let addr = (options.host.as_str(), options.port)
            .to_socket_addrs()?
            .next()
            .ok_or_else(|| Error::Invalid(format!("{}: no address", options.host)))?;
        let tcp = TcpStream::connect_timeout(&addr, options.timeout)?;
        tcp.set_read_timeout(Some(options.timeout))?;
        tcp.set_write_timeout(Some(options.timeout))?;
        tcp.set_nodelay(true)?;
        let stream: Box<dyn Stream> = match &options.tls {
            None => Box::new(tcp),
            Some(tls) => {
                let name = ServerName::try_from(options.host.clone())
                    .map_err(|e| Error::Invalid(format!("{}: {e}", options.host)))?;
                let connection = ClientConnection::new(Arc::new(tls.config()?), name)
                    .map_err(|e| Error::Io(std::io::Error::other(e)))?;
                Box::new(StreamOwned::new(connection, tcp))
            }
        };
        let mut client = Client {
            stream: BufReader::new(stream),
        };
        if let Some(password) = &options.password {
            let mut auth = vec!["AUTH".as_bytes()];
            if let Some(user) = &options.user {
                auth.push(user.as_bytes());
            }
            auth.push(password.as_bytes());
            client.checked(&auth)?;
        }
        if options.db != 0 {
            client.checked(&[b"SELECT", options.db.to_string().as_bytes()])?;
        }
        Ok(client)
    }

    fn checked(&mut self, args: &[&[u8]]) -> Result<Reply, Error> {
        match self.call(args)? {
            Reply::Error(e) => Err(Error::Reply(e)),
            reply => Ok(reply),
        }
    }

    /// Send one command and read its reply (an error reply is a [`Reply::Error`]).
    pub fn call(&mut self, args: &[&[u8]]) -> Result<Reply, Error> {
        let mut out = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            out.extend_from_slice(a);
            out.extend_from_slice(b"\r\n");
        }
        let stream = self.stream.get_mut();
        stream.write_all(&out)?;
        stream.flush()?;
        read_reply(&mut self.stream)
    }
}

/// A [`Client`] connected at its first call and again after a call that failed; calls from
/// several threads take turns. What the bindings' `TestClient` holds.
#[derive(Debug)]
pub struct Connection {
    options: ClientOptions,
    client: Mutex<Option<Client>>,
}

impl Connection {
    /// Nothing is connected yet.
    pub fn new(options: ClientOptions) -> Connection {
        Connection {
            options,
            client: Mutex::new(None),
        }
    }

    /// Send one command (connecting first when not connected) and read its reply.
    pub fn call(&self, args: &[&[u8]]) -> Result<Reply, Error> {
        // A call that panicked left no half-read reply worth keeping: start afresh.
        let mut slot = self.client.lock().unwrap_or_else(|p| {
            let mut slot = p.into_inner();
            *slot = None;
            slot
        });
        let client = match slot.as_mut() {
            Some(c) => c,
            None => slot.insert(Client::connect(&self.options)?),
        };
        client.call(args).inspect_err(|_| *slot = None)
    }

    /// Close the connection (the next call connects again).
    pub fn close(&self) {
        if let Ok(mut slot) = self.client.lock() {
            *slot = None;
        }
    }
}

impl ClientTls {
    fn config(&self) -> Result<ClientConfig, Error> {
        let pem = |what: &str, file: &str, e: &dyn std::fmt::Display| {
            Error::Invalid(format!("{what} `{file}`: {e}"))
        };
        let mut roots = RootCertStore::empty();
        match &self.ca_file {
            Some(file) => {
                for cert in CertificateDer::pem_file_iter(file).map_err(|e| pem("CA", file, &e))? {
                    let cert = cert.map_err(|e| pem("CA", file, &e))?;
                    roots.add(cert).map_err(|e| pem("CA", file, &e))?;
                }
            }
            None => roots.roots = webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| Error::Invalid(e.to_string()))?
            .with_root_certificates(roots);
        match (&self.cert, &self.key) {
            (Some(cert), Some(key)) => {
                let chain = CertificateDer::pem_file_iter(cert)
                    .map_err(|e| pem("certificate", cert, &e))?
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| pem("certificate", cert, &e))?;
                let key_der = PrivateKeyDer::from_pem_file(key).map_err(|e| pem("key", key, &e))?;
                builder
                    .with_client_auth_cert(chain, key_der)
                    .map_err(|e| pem("key", key, &e))
            }
            _ => Ok(builder.with_no_client_auth()),
        }
    }
}

/// One reply from `r`.
fn read_reply(r: &mut impl BufRead) -> Result<Reply, Error> {
    let mut line = Vec::new();
    r.read_until(b'\n', &mut line)?;
    if line.is_empty() {
        return Err(Error::Io(std::io::ErrorKind::UnexpectedEof.into()));
    }
    let text = String::from_utf8_lossy(line.strip_suffix(b"\r\n").unwrap_or(&line[..]));
    let (kind, rest) = text.split_at(1);
    let number = || {
        rest.parse::<i64>()
            .map_err(|_| Error::Io(std::io::Error::other(format!("bad reply line {text:?}"))))
    };
    Ok(match kind {
        "+" => Reply::Status(rest.to_string()),
        "-" => Reply::Error(rest.to_string()),
        ":" => Reply::Int(number()?),
        "$" => match number()? {
            n if n < 0 => Reply::Nil,
            n => {
                let mut bulk = vec![0; n as usize + 2];
                r.read_exact(&mut bulk)?;
                bulk.truncate(n as usize);
                Reply::Bulk(bulk)
            }
        },
        "*" => match number()? {
            n if n < 0 => Reply::Nil,
            n => Reply::Array((0..n).map(|_| read_reply(r)).collect::<Result<_, _>>()?),
        },
        _ => {
            return Err(Error::Io(std::io::Error::other(format!(
                "unexpected reply {text:?}"
            ))))
        }
    })
}
