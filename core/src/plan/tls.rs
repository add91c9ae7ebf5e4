//! TLS resolved: a spec's `[target.tls]` checked, its files read and the rustls client
//! configuration built ([`TlsConnect`]), once per phase and shared by every connection.

use crate::spec::Tls;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};

/// Resolved TLS settings of a [`ConnectOptions`](super::ConnectOptions): the shared client
/// configuration and the name to verify the server against.
#[derive(Debug, Clone)]
pub struct TlsConnect {
    /// The rustls configuration, built once and shared by every connection of the phase.
    pub config: Arc<ClientConfig>,
    /// The server name sent (SNI, for DNS names) and verified.
    pub server_name: ServerName<'static>,
    /// The server's certificate is not verified.
    pub insecure: bool,
    /// A client certificate is configured (mutual TLS).
    pub client_cert: bool,
}

impl PartialEq for TlsConnect {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.config, &other.config)
            && self.server_name == other.server_name
            && self.insecure == other.insecure
            && self.client_cert == other.client_cert
    }
}

impl Eq for TlsConnect {}

impl Tls {
    /// Check the settings, read the files and build the client configuration.
    ///
    /// `on` is whether TLS is in use (`enabled` or a `rediss://` URL), `host` the target host
    /// (`None` for a Unix socket) and `path` the prefix of error paths (e.g. `phases[1].`).
    /// Returns `None` when TLS is off.
    pub fn resolve(
        &self,
        on: bool,
        host: Option<&str>,
        path: &str,
    ) -> crate::Result<Option<TlsConnect>> {
        let at = |field: &str| {
            if field.is_empty() {
                format!("{path}target.tls")
            } else {
                format!("{path}target.tls.{field}")
            }
        };
        if !on {
            let set = [
                ("ca_file", self.ca_file.is_some()),
                ("ca_dir", self.ca_dir.is_some()),
                ("cert", self.cert.is_some()),
                ("key", self.key.is_some()),
                ("key_password", self.key_password.is_some()),
                ("sni", self.sni.is_some()),
                ("insecure", self.insecure),
                ("versions", self.versions != Tls::default().versions),
                ("ciphers", self.ciphers.is_some()),
                ("ciphersuites", self.ciphersuites.is_some()),
            ];
            if let Some((field, _)) = set.iter().find(|(_, s)| *s) {
                return Err(crate::Error::spec(
                    at(field),
                    "is set but TLS is off: set target.tls.enabled = true (--tls) or use a \
                     rediss:// URL",
                ));
            }
            return Ok(None);
        }
        let Some(host) = host else {
            return Err(crate::Error::spec(
                at("enabled"),
                "TLS runs over TCP only: a Unix socket target cannot use it (give host/port or \
                 a rediss:// URL)",
            ));
        };

        let mut versions: Vec<&'static rustls::SupportedProtocolVersion> = Vec::new();
        if self.versions.is_empty() {
            return Err(crate::Error::spec(
                at("versions"),
                "is empty: allowed are \"1.2\" and \"1.3\" (default both)",
            ));
        }
        for (i, v) in self.versions.iter().enumerate() {
            let version = match v.as_str() {
                "1.2" => &rustls::version::TLS12,
                "1.3" => &rustls::version::TLS13,
                _ => {
                    return Err(crate::Error::spec(
                        format!("{}[{i}]", at("versions")),
                        format!("`{v}` is not a TLS version respload speaks: allowed are \"1.2\" and \"1.3\""),
                    ))
                }
            };
            if !versions.iter().any(|known| std::ptr::eq(*known, version)) {
                versions.push(version);
            }
        }

        let name = self.sni.as_deref().unwrap_or(host);
        let server_name = ServerName::try_from(name.to_string()).map_err(|_| {
            let field = if self.sni.is_some() { "sni" } else { "" };
            let where_ = if field.is_empty() {
                format!("{path}target.host")
            } else {
                at(field)
            };
            crate::Error::spec(
                where_,
                format!(
                    "`{name}` is neither a DNS name nor an IP address, so a certificate cannot \
                     be checked against it: set target.tls.sni to the name on the server's \
                     certificate"
                ),
            )
        })?;

        let mut provider = rustls::crypto::ring::default_provider();
        provider.cipher_suites = super::ciphers::choose(
            &provider.cipher_suites,
            self.ciphers.as_deref(),
            self.ciphersuites.as_deref(),
            &at("ciphers"),
            &at("ciphersuites"),
        )?;
        let provider = Arc::new(provider);
        let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
            .with_protocol_versions(&versions)
            .map_err(|e| crate::Error::spec(at("versions"), e))?;

        // The CA files are read and checked even when `insecure` leaves them unused: a wrong
        // path is an error either way.
        let mut roots = RootCertStore::empty();
        if let Some(file) = &self.ca_file {
            let certs = read_certs(file).map_err(|m| crate::Error::spec(at("ca_file"), m))?;
            for (i, cert) in certs.into_iter().enumerate() {
                roots.add(cert).map_err(|e| {
                    crate::Error::spec(
                        at("ca_file"),
                        format!(
                            "certificate {} in `{file}` is not a usable CA certificate: {e}",
                            i + 1
                        ),
                    )
                })?;
            }
        }
        if let Some(dir) = &self.ca_dir {
            let certs = read_cert_dir(dir).map_err(|m| crate::Error::spec(at("ca_dir"), m))?;
            let (added, _ignored) = roots.add_parsable_certificates(certs);
            if added == 0 {
                return Err(crate::Error::spec(
                    at("ca_dir"),
                    format!("`{dir}` holds no usable CA certificate"),
                ));
            }
        }
        if self.ca_file.is_none() && self.ca_dir.is_none() && !self.insecure {
            roots.roots = webpki_roots::TLS_SERVER_ROOTS.to_vec();
        }
        let builder = if self.insecure {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(NoVerification(
                    provider.signature_verification_algorithms,
                )))
        } else {
            builder.with_root_certificates(roots)
        };

        if self.key_password.is_some() && self.key.is_none() {
            return Err(crate::Error::spec(
                at("key_password"),
                "is set without a key: it is the passphrase of target.tls.key",
            ));
        }
        let mut config =
            match (&self.cert, &self.key) {
                (None, None) => builder.with_no_client_auth(),
                (Some(cert), Some(key)) => {
                    let chain = read_certs(cert).map_err(|m| crate::Error::spec(at("cert"), m))?;
                    let private = read_key(key, self.key_password.as_deref())
                        .map_err(|m| crate::Error::spec(at("key"), m))?;
                    builder.with_client_auth_cert(chain, private).map_err(|e| {
                        crate::Error::spec(
                            at("key"),
                            format!("does not go with the certificate in `{cert}`: {e}"),
                        )
                    })?
                }
                (Some(_), None) => return Err(crate::Error::spec(
                    at("key"),
                    "is missing: a client certificate (tls.cert) needs its private key (tls.key)",
                )),
                (None, Some(_)) => return Err(crate::Error::spec(
                    at("cert"),
                    "is missing: a private key (tls.key) needs its client certificate (tls.cert)",
                )),
            };
        // The stream does the record layer itself once rustls has made the handshake
        // (`net::tls_stream`): rustls must hand over the traffic keys.
        config.enable_secret_extraction = true;
        Ok(Some(TlsConnect {
            config: Arc::new(config),
            server_name,
            insecure: self.insecure,
            client_cert: self.cert.is_some(),
        }))
    }
}

/// The private key of a PEM file, decrypted with `password` when it is an encrypted PKCS#8
/// key. The messages never name the file: its path, like the passphrase, is a secret.
fn read_key(file: &str, password: Option<&str>) -> Result<PrivateKeyDer<'static>, String> {
    let bytes = std::fs::read(file).map_err(|e| format!("cannot read the key file: {e}"))?;
    if let Some(der) = pem_section(&bytes, "ENCRYPTED PRIVATE KEY") {
        let Some(password) = password else {
            return Err(
                "the key is encrypted: give its passphrase as target.tls.key_password \
                        (--key-password)"
                    .into(),
            );
        };
        let info = pkcs8::EncryptedPrivateKeyInfo::try_from(der.as_slice())
            .map_err(|e| format!("the encrypted key cannot be read: {e}"))?;
        let plain = info.decrypt(password).map_err(|_| {
            "target.tls.key_password does not decrypt the key (a wrong passphrase, or a \
             cipher other than PBES2 with AES-CBC)"
                .to_string()
        })?;
        return Ok(PrivateKeyDer::Pkcs8(plain.as_bytes().to_vec().into()));
    }
    if bytes.windows(22).any(|w| w == b"Proc-Type: 4,ENCRYPTED") {
        return Err(
            "the key is encrypted in OpenSSL's legacy PEM format, which respload does \
                    not read: convert it with `openssl pkcs8 -topk8 -v2 aes-256-cbc`"
                .into(),
        );
    }
    if password.is_some() {
        return Err("is not encrypted, but target.tls.key_password is set".into());
    }
    PrivateKeyDer::from_pem_slice(&bytes)
        .map_err(|e| format!("the file holds no PEM private key (PKCS#8, PKCS#1 or SEC1): {e}"))
}

/// The DER bytes of the first PEM section labelled `label`, if there is one.
fn pem_section(bytes: &[u8], label: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    let text = std::str::from_utf8(bytes).ok()?;
    let begin = format!("-----BEGIN {label}-----");
    let start = text.find(&begin)? + begin.len();
    let stop = start + text[start..].find(&format!("-----END {label}-----"))?;
    let body: String = text[start..stop].split_whitespace().collect();
    base64::engine::general_purpose::STANDARD.decode(body).ok()
}

fn read_file(file: &str) -> Result<Vec<u8>, String> {
    std::fs::read(file).map_err(|e| format!("cannot read `{file}`: {e}"))
}

/// Every certificate of a PEM file; at least one.
fn read_certs(file: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let bytes = read_file(file)?;
    let certs = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("`{file}` is not valid PEM: {e}"))?;
    if certs.is_empty() {
        return Err(format!(
            "`{file}` holds no PEM certificate (-----BEGIN CERTIFICATE-----)"
        ));
    }
    Ok(certs)
}

/// The certificates of every PEM file in a directory (files without one are skipped).
fn read_cert_dir(dir: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot read `{dir}`: {e}"))?;
    let mut certs = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| format!("cannot read `{dir}`: {e}"))?;
        let path = entry.path();
        if !path.is_file() {
            continue;
        }
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        certs.extend(CertificateDer::pem_slice_iter(&bytes).map_while(Result::ok));
    }
    if certs.is_empty() {
        return Err(format!(
            "`{dir}` holds no PEM certificate (-----BEGIN CERTIFICATE-----) in any file"
        ));
    }
    Ok(certs)
}

/// The verifier of `insecure`: accepts any server certificate, but still checks the handshake
/// signatures made with it (so the connection is at least encrypted to whoever holds the key).
#[derive(Debug)]
struct NoVerification(WebPkiSupportedAlgorithms);

impl ServerCertVerifier for NoVerification {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tls(v: serde_json::Value) -> Tls {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn settings_are_checked_before_any_file_is_needed() {
        let e = tls(serde_json::json!({"ca_file": "/x.pem"}))
            .resolve(false, Some("h"), "")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("target.tls.ca_file") && e.contains("TLS is off"),
            "{e}"
        );
        let e = tls(serde_json::json!({"enabled": true}))
            .resolve(true, None, "")
            .unwrap_err()
            .to_string();
        assert!(e.contains("Unix socket"), "{e}");
        let e = tls(serde_json::json!({"versions": ["1.1"]}))
            .resolve(true, Some("h"), "phases[0].")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("phases[0].target.tls.versions[0]") && e.contains("`1.1`"),
            "{e}"
        );
        let e = tls(serde_json::json!({"cert": "/c.pem"}))
            .resolve(true, Some("h"), "")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("target.tls.key") && e.contains("is missing"),
            "{e}"
        );
        let e = tls(serde_json::json!({"versions": ["1.3"]}))
            .resolve(false, Some("h"), "")
            .unwrap_err()
            .to_string();
        assert!(e.contains("target.tls.versions"), "{e}");
        let e = tls(serde_json::json!({"ca_file": "/no/such/ca.pem", "insecure": true}))
            .resolve(true, Some("h"), "")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("target.tls.ca_file") && e.contains("/no/such/ca.pem"),
            "{e}"
        );
    }

    #[test]
    fn the_built_in_roots_and_ip_names_resolve() {
        let c = Tls::default()
            .resolve(true, Some("127.0.0.1"), "")
            .unwrap()
            .unwrap();
        assert!(matches!(c.server_name, ServerName::IpAddress(_)));
        assert!(!c.insecure && !c.client_cert);
        let c = tls(serde_json::json!({"sni": "cache.example.org", "insecure": true}))
            .resolve(true, Some("10.0.0.1"), "")
            .unwrap()
            .unwrap();
        assert!(matches!(c.server_name, ServerName::DnsName(_)));
        assert!(c.insecure);
    }
}
