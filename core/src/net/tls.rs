//! TLS failures in words a user can act on: what went wrong and which setting changes it.

use crate::plan::TlsConnect;
use crate::Error;
use rustls::{AlertDescription, CertificateError};
use std::io;

/// The rustls error inside an I/O error, if there is one.
fn rustls_error(e: &io::Error) -> Option<&rustls::Error> {
    e.get_ref()?.downcast_ref::<rustls::Error>()
}

/// An [`Error::Tls`] for `e`, a failure of a TLS connection to `addr`: always during the TLS
/// handshake (`handshake`), otherwise only when TLS itself failed (an alert, a bad record);
/// plain I/O failures after the handshake are left to the caller (`None`).
pub(crate) fn tls_error(
    addr: &str,
    tls: &TlsConnect,
    e: &io::Error,
    handshake: bool,
) -> Option<Error> {
    let message = match rustls_error(e) {
        Some(err) => describe(tls, err),
        None if handshake => format!(
            "the connection ended during the TLS handshake ({e}): is this the server's TLS port? \
             A plain-text port (redis://, no TLS) does not answer a TLS hello"
        ),
        None => return None,
    };
    Some(Error::Tls {
        address: addr.to_string(),
        reason: message,
    })
}

/// What a rustls error means for the user.
fn describe(tls: &TlsConnect, err: &rustls::Error) -> String {
    const CA_HINT: &str = "pass the server's CA with tls.ca_file or tls.ca_dir (--cacert / \
                           --cacertdir), or skip verification with tls.insecure = true \
                           (--insecure)";
    const CERT_HINT: &str = "pass a client certificate the server trusts with tls.cert and \
                             tls.key (--cert / --key)";
    match err {
        rustls::Error::InvalidCertificate(cert) => {
            let what = match cert {
                CertificateError::UnknownIssuer => format!(
                    "unknown issuer: the server's certificate is not signed by a trusted CA \
                     — {CA_HINT}"
                ),
                CertificateError::NotValidForName => format!(
                    "the server's certificate is not valid for the name `{}` — connect by a \
                     name on the certificate, or set tls.sni (--sni) to one",
                    name(tls)
                ),
                CertificateError::NotValidForNameContext {
                    expected,
                    presented,
                } => format!(
                    "the server's certificate is not valid for the name `{}` (it names {}) — \
                     connect by one of those names, or set tls.sni (--sni) to one",
                    expected.to_str(),
                    presented_names(presented)
                ),
                CertificateError::Expired => "the server's certificate has expired — renew it \
                                               on the server, or skip verification with \
                                               tls.insecure = true (--insecure)"
                    .to_string(),
                CertificateError::ExpiredContext { not_after, .. } => format!(
                    "the server's certificate has expired (not valid after {}) — renew it on the \
                     server, or skip verification with tls.insecure = true (--insecure)",
                    utc(not_after.as_secs())
                ),
                CertificateError::NotValidYet => {
                    "the server's certificate is not valid yet — check the clocks".to_string()
                }
                CertificateError::NotValidYetContext { not_before, .. } => format!(
                    "the server's certificate is not valid yet (not before {}) — check the clocks",
                    utc(not_before.as_secs())
                ),
                CertificateError::BadSignature => {
                    format!("the server's certificate has a bad signature — {CA_HINT}")
                }
                other => format!("the server's certificate was refused: {other:?}"),
            };
            format!("certificate verification failed: {what}")
        }
        rustls::Error::AlertReceived(alert) => match alert {
            AlertDescription::CertificateRequired => {
                format!("the server requires a client certificate — {CERT_HINT}")
            }
            AlertDescription::HandshakeFailure if !tls.client_cert => format!(
                "the server refused the handshake (handshake_failure): it may require a client \
                 certificate — {CERT_HINT} — or a TLS version outside tls.versions"
            ),
            AlertDescription::UnknownCA
            | AlertDescription::BadCertificate
            | AlertDescription::CertificateUnknown
            | AlertDescription::UnsupportedCertificate
            | AlertDescription::CertificateExpired
            | AlertDescription::CertificateRevoked
            | AlertDescription::AccessDenied
                if tls.client_cert =>
            {
                format!(
                    "the server refused the client certificate ({}): it must be valid and issued \
                     by a CA the server trusts (its tls-ca-cert-file)",
                    alert_name(alert)
                )
            }
            AlertDescription::ProtocolVersion => {
                "no TLS version in common: the server accepts none of tls.versions".to_string()
            }
            other => format!(
                "the server ended the handshake with the alert {}",
                alert_name(other)
            ),
        },
        rustls::Error::InvalidMessage(_)
        | rustls::Error::InappropriateMessage { .. }
        | rustls::Error::InappropriateHandshakeMessage { .. } => format!(
            "the server did not answer in TLS ({err}): is this a plain-text port? Use redis:// \
             without TLS, or the server's TLS port"
        ),
        rustls::Error::PeerIncompatible(_) => {
            format!("no TLS parameters in common with the server: {err}")
        }
        other => other.to_string(),
    }
}

/// The name the certificate was checked against.
fn name(tls: &TlsConnect) -> String {
    tls.server_name.to_str().into_owned()
}

/// The names a certificate presents, as rustls lists them (`DnsName("a.example")`,
/// `IpAddress(10.0.0.1)`), made plain: `a.example, 10.0.0.1`.
fn presented_names(presented: &[String]) -> String {
    let names: Vec<&str> = presented
        .iter()
        .map(|p| {
            p.strip_prefix("DnsName(\"")
                .and_then(|r| r.strip_suffix("\")"))
                .or_else(|| {
                    p.strip_prefix("IpAddress(")
                        .and_then(|r| r.strip_suffix(')'))
                })
                .unwrap_or(p)
        })
        .collect();
    if names.is_empty() {
        "no name".to_string()
    } else {
        names.join(", ")
    }
}

/// An alert as TLS names it, e.g. `unknown_ca`.
fn alert_name(alert: &AlertDescription) -> String {
    let debug = format!("{alert:?}");
    let mut out = String::with_capacity(debug.len() + 4);
    for (i, ch) in debug.chars().enumerate() {
        if ch.is_ascii_uppercase() {
            // UnknownCA -> unknown_ca: no underscore inside a run of capitals.
            let prev_upper = i > 0 && debug.as_bytes()[i - 1].is_ascii_uppercase();
            if i > 0 && !prev_upper {
                out.push('_');
            }
            out.push(ch.to_ascii_lowercase());
        } else {
            out.push(ch);
        }
    }
    out
}

/// Seconds since the Unix epoch as `YYYY-MM-DD HH:MM:SS UTC`.
fn utc(secs: u64) -> String {
    let (y, m, d) = crate::spec::civil_from_days((secs / 86_400) as i64);
    let rem = secs % 86_400;
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_alert_names_read_well() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(951_782_400 + 3_661), "2000-02-29 01:01:01 UTC");
        assert_eq!(utc(1_735_689_599), "2024-12-31 23:59:59 UTC");
        assert_eq!(alert_name(&AlertDescription::UnknownCA), "unknown_ca");
        let presented = [
            "DnsName(\"a.example\")".to_string(),
            "IpAddress(10.0.0.1)".into(),
        ];
        assert_eq!(presented_names(&presented), "a.example, 10.0.0.1");
        assert_eq!(
            alert_name(&AlertDescription::CertificateRequired),
            "certificate_required"
        );
    }
}
