//! Cipher suites chosen by name (`target.tls.ciphers` for TLS 1.2, `ciphersuites` for TLS
//! 1.3): OpenSSL's names, as redis-benchmark's `--tls-ciphers` / `--tls-ciphersuites` take
//! them, or IANA's, mapped onto the suites of rustls' ring provider.

use rustls::{CipherSuite, SupportedCipherSuite};

/// Each suite respload has: its IANA name (rustls' too), its OpenSSL name, and whether it
/// is a TLS 1.3 suite.
const SUITES: &[(CipherSuite, &str, &str, bool)] = &[
    (
        CipherSuite::TLS13_AES_256_GCM_SHA384,
        "TLS_AES_256_GCM_SHA384",
        "TLS_AES_256_GCM_SHA384",
        true,
    ),
    (
        CipherSuite::TLS13_AES_128_GCM_SHA256,
        "TLS_AES_128_GCM_SHA256",
        "TLS_AES_128_GCM_SHA256",
        true,
    ),
    (
        CipherSuite::TLS13_CHACHA20_POLY1305_SHA256,
        "TLS_CHACHA20_POLY1305_SHA256",
        "TLS_CHACHA20_POLY1305_SHA256",
        true,
    ),
    (
        CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
        "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
        "ECDHE-ECDSA-AES256-GCM-SHA384",
        false,
    ),
    (
        CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
        "ECDHE-ECDSA-AES128-GCM-SHA256",
        false,
    ),
    (
        CipherSuite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
        "ECDHE-ECDSA-CHACHA20-POLY1305",
        false,
    ),
    (
        CipherSuite::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
        "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
        "ECDHE-RSA-AES256-GCM-SHA384",
        false,
    ),
    (
        CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
        "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
        "ECDHE-RSA-AES128-GCM-SHA256",
        false,
    ),
    (
        CipherSuite::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
        "ECDHE-RSA-CHACHA20-POLY1305",
        false,
    ),
];

/// The suites to offer: `available` (the provider's, its order the default) with the TLS
/// 1.2 ones replaced by `tls12` and the TLS 1.3 ones by `tls13` when given, in the order
/// given. An unknown or missing name, a suite of the other version, or an empty list is an
/// error at `at12` / `at13` naming the suite and listing those allowed.
pub(super) fn choose(
    available: &[SupportedCipherSuite],
    tls12: Option<&[String]>,
    tls13: Option<&[String]>,
    at12: &str,
    at13: &str,
) -> crate::Result<Vec<SupportedCipherSuite>> {
    let pick = |names: Option<&[String]>, v13: bool, at: &str| -> crate::Result<Vec<_>> {
        let Some(names) = names else {
            return Ok(available
                .iter()
                .filter(|s| is_tls13(s) == v13)
                .copied()
                .collect());
        };
        let allowed = || {
            SUITES
                .iter()
                .filter(|s| s.3 == v13)
                .map(|s| if v13 { s.1 } else { s.2 })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let names: Vec<&str> = names
            .iter()
            .flat_map(|n| n.split(':'))
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .collect();
        if names.is_empty() {
            return Err(crate::Error::spec(
                at,
                format!(
                    "is empty: name at least one suite, allowed are {}",
                    allowed()
                ),
            ));
        }
        let mut out: Vec<SupportedCipherSuite> = Vec::new();
        for name in names {
            let Some(&(id, iana, _, is13)) = SUITES
                .iter()
                .find(|s| s.1.eq_ignore_ascii_case(name) || s.2.eq_ignore_ascii_case(name))
            else {
                return Err(crate::Error::spec(
                    at,
                    format!(
                        "`{name}` is not a cipher suite respload has (rustls with ring: ECDHE \
                         key exchange with AES-GCM or ChaCha20-Poly1305 only; OpenSSL \
                         keywords such as HIGH or DEFAULT are not read): allowed are {}",
                        allowed()
                    ),
                ));
            };
            if is13 != v13 {
                let (this, other) = match is13 {
                    true => ("TLS 1.3", "ciphersuites (--tls-ciphersuites)"),
                    false => ("TLS 1.2", "ciphers (--tls-ciphers)"),
                };
                return Err(crate::Error::spec(
                    at,
                    format!(
                        "`{name}` is a {this} suite: give it in {other}; allowed here are {}",
                        allowed()
                    ),
                ));
            }
            let Some(suite) = available.iter().find(|s| s.suite() == id) else {
                return Err(crate::Error::spec(
                    at,
                    format!("`{name}` ({iana}) is not offered by this build's TLS provider"),
                ));
            };
            if !out.iter().any(|s| s.suite() == id) {
                out.push(*suite);
            }
        }
        Ok(out)
    };
    let mut suites = pick(tls13, true, at13)?;
    suites.extend(pick(tls12, false, at12)?);
    Ok(suites)
}

/// Check a list of suite names for one TLS version (`tls13`), as [`choose`] would; the
/// error is at `at` (a front end's option, e.g. `--tls-ciphers`).
pub(crate) fn check_names(names: &[String], tls13: bool, at: &str) -> crate::Result<()> {
    let all = rustls::crypto::ring::default_provider().cipher_suites;
    match tls13 {
        true => choose(&all, None, Some(names), at, at).map(drop),
        false => choose(&all, Some(names), None, at, at).map(drop),
    }
}

fn is_tls13(suite: &SupportedCipherSuite) -> bool {
    matches!(suite, SupportedCipherSuite::Tls13(_))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn provider() -> Vec<SupportedCipherSuite> {
        rustls::crypto::ring::default_provider().cipher_suites
    }

    #[test]
    fn openssl_and_iana_names_choose_suites_in_order() {
        let all = provider();
        let tls12 = names(&["ECDHE-RSA-AES256-GCM-SHA384:TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"]);
        let tls13 = names(&["TLS_CHACHA20_POLY1305_SHA256"]);
        let got = choose(&all, Some(&tls12), Some(&tls13), "c", "cs").unwrap();
        let ids: Vec<CipherSuite> = got.iter().map(|s| s.suite()).collect();
        assert_eq!(
            ids,
            [
                CipherSuite::TLS13_CHACHA20_POLY1305_SHA256,
                CipherSuite::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
                CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
            ]
        );
        // Unset lists keep every suite of their version.
        let got = choose(&all, None, None, "c", "cs").unwrap();
        assert_eq!(got.len(), all.len());
        // Every suite of the table is in the provider.
        for s in SUITES {
            assert!(all.iter().any(|a| a.suite() == s.0), "{}", s.1);
        }
    }

    #[test]
    fn unknown_and_misplaced_suites_are_errors() {
        let all = provider();
        let e = choose(
            &all,
            Some(&names(&["AES128-SHA"])),
            None,
            "tls.ciphers",
            "x",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("tls.ciphers")
                && e.contains("`AES128-SHA`")
                && e.contains("ECDHE-RSA-AES128-GCM-SHA256"),
            "{e}"
        );
        let e = choose(
            &all,
            None,
            Some(&names(&["TLS_AES_128_CCM_SHA256"])),
            "x",
            "tls.ciphersuites",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("tls.ciphersuites") && e.contains("TLS_AES_128_GCM_SHA256"),
            "{e}"
        );
        let e = choose(
            &all,
            None,
            Some(&names(&["ECDHE-RSA-AES128-GCM-SHA256"])),
            "x",
            "y",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("is a TLS 1.2 suite"), "{e}");
        let e = choose(&all, Some(&names(&[":"])), None, "x", "y")
            .unwrap_err()
            .to_string();
        assert!(e.contains("is empty"), "{e}");
    }
}
