//! TLS settings of a target (`[target.tls]`). They are resolved into a rustls client
//! configuration, built once per phase and shared by every connection, in `plan`.
//!
//! Trust: `ca_file` and/or `ca_dir` replace the default trust store; without either, the
//! server's certificate is verified against Mozilla's root certificates compiled into respload
//! (the `webpki-roots` crate), which covers managed services with publicly issued certificates.
//! A server with a private CA needs `ca_file` or `ca_dir`; `insecure` skips verification.

use serde::{Deserialize, Serialize};

/// The TLS versions `versions` accepts.
pub const TLS_VERSIONS: [&str; 2] = ["1.2", "1.3"];

/// TLS towards the target (`[target.tls]` in a spec; a `rediss://` URL turns it on).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Tls {
    /// Connect with TLS (default false; a `rediss://` URL turns it on whatever this says).
    #[serde(default)]
    pub enabled: bool,
    /// PEM file of the CA certificate(s) to trust instead of the built-in roots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_file: Option<String>,
    /// Directory whose PEM files hold CA certificates to trust (with `ca_file`, both count).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_dir: Option<String>,
    /// PEM file of the client certificate (chain) for mutual TLS; needs `key`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cert: Option<String>,
    /// PEM file of the client certificate's private key (PKCS#8, PKCS#1 or SEC1, or an
    /// encrypted PKCS#8 key with `key_password`); needs `cert`. Redacted in reports: neither
    /// it nor an error names the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Passphrase of `key` when it is encrypted (PKCS#8 `ENCRYPTED PRIVATE KEY`, PBES2, as
    /// `openssl pkcs8 -topk8 -v2 aes-256-cbc` writes it). Redacted in every output; keep it
    /// out of the spec file with `"${KEY_PASSWORD}"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_password: Option<String>,
    /// Server name to send (SNI) and to verify the certificate against (default: the host;
    /// an IP address host is verified against the certificate's IP addresses).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sni: Option<String>,
    /// TLS versions to offer: any of `"1.2"`, `"1.3"` (default both).
    #[serde(default = "default_versions")]
    pub versions: Vec<String>,
    /// Skip verification of the server's certificate (explicit opt-in; shown in the report).
    #[serde(default)]
    pub insecure: bool,
    /// TLS 1.2 cipher suites to offer, in order of preference (default: every one respload
    /// has), by OpenSSL name (`ECDHE-RSA-AES128-GCM-SHA256`) or IANA name
    /// (`TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256`); redis-benchmark's `--tls-ciphers`. TLS 1.3
    /// suites are `ciphersuites`. Only ECDHE with AES-GCM or ChaCha20-Poly1305 exists in
    /// respload (rustls with ring): other names are errors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ciphers: Option<Vec<String>>,
    /// TLS 1.3 cipher suites to offer, in order of preference (default: all three,
    /// `TLS_AES_256_GCM_SHA384`, `TLS_AES_128_GCM_SHA256`, `TLS_CHACHA20_POLY1305_SHA256`);
    /// redis-benchmark's `--tls-ciphersuites`. The CCM suites are not in respload: errors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ciphersuites: Option<Vec<String>>,
}

fn default_versions() -> Vec<String> {
    TLS_VERSIONS.iter().map(|v| v.to_string()).collect()
}

impl Default for Tls {
    fn default() -> Self {
        Tls {
            enabled: false,
            ca_file: None,
            ca_dir: None,
            cert: None,
            key: None,
            key_password: None,
            sni: None,
            versions: default_versions(),
            insecure: false,
            ciphers: None,
            ciphersuites: None,
        }
    }
}

impl Tls {
    /// Whether every field has its default (TLS off, nothing set): then specs leave it out.
    pub fn is_default(&self) -> bool {
        *self == Tls::default()
    }
}
