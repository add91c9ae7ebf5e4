//! TLS certificates for the tests, made in-process with rcgen (quick: EC P-256 keys); only
//! the encrypted client keys are made by the `openssl` command line, as a user makes them.

use crate::watchdog::Watchdog;
use crate::Error;
use rcgen::{
    date_time_ymd, BasicConstraints, CertificateParams, CertifiedIssuer, DistinguishedName, DnType,
    ExtendedKeyUsagePurpose, IsCa, KeyPair, KeyUsagePurpose,
};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A CA that signs the leaf certificates.
type Ca = CertifiedIssuer<'static, KeyPair>;

/// The names a certificate for this machine is valid for.
const LOCAL: &[&str] = &["127.0.0.1", "localhost"];

/// Certificates for the TLS tests, written as PEM files to a temporary directory (removed on
/// drop). EC P-256 keys (PKCS#8).
///
/// - `ca` signs `server` (127.0.0.1 and localhost), `client` (client authentication),
///   `expired` (127.0.0.1 and localhost, valid in January 2020 only) and `wrongname` (only
///   `other.example`);
/// - `other-ca` is an unrelated CA, and signs `other-client`.
///
/// Each name has `NAME.crt` and `NAME.key`. The others are valid from an hour ago for 825
/// days.
///
/// Clones share the directory: it is removed when the last is dropped, or when this process
/// ends however it ends (a watchdog holds it).
#[derive(Clone, Debug)]
pub struct Certs {
    /// The directory holding the files; tests may add their own (it is removed on drop).
    pub dir: PathBuf,
    _owner: Arc<Owner>,
}

/// Removes the directory when the last [`Certs`] sharing it is dropped.
#[derive(Debug)]
struct Owner {
    dir: PathBuf,
    _watchdog: Watchdog,
}

impl Drop for Owner {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Certs {
    /// Make every certificate in a new directory of the system's temporary directory;
    /// panics when it cannot.
    pub fn generate() -> Certs {
        Certs::try_generate().unwrap_or_else(|e| panic!("certificates: {e}"))
    }

    /// Make every certificate in a new directory of the system's temporary directory.
    pub fn try_generate() -> Result<Certs, Error> {
        // Several per process (tests run in parallel): the pid and a counter name each.
        static N: AtomicU32 = AtomicU32::new(0);
        let n = N.fetch_add(1, Ordering::SeqCst);
        let dir = std::env::temp_dir().join(format!("respload-certs-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)?;
        let owner = Owner {
            _watchdog: Watchdog::dir(&dir)?,
            dir: dir.clone(),
        };
        let certs = Certs {
            dir,
            _owner: Arc::new(owner),
        };
        certs
            .write_all()
            .map_err(|e| Error::Io(std::io::Error::other(e.to_string())))?;
        Ok(certs)
    }

    fn write_all(&self) -> Result<(), Box<dyn std::error::Error>> {
        let ca = self.ca("ca", "respload test CA")?;
        let other_ca = self.ca("other-ca", "an unrelated CA")?;
        self.leaf("server", &ca, params("127.0.0.1", LOCAL)?)?;
        self.leaf("client", &ca, client_params("respload client")?)?;
        let mut expired = params("127.0.0.1", LOCAL)?;
        expired.not_before = date_time_ymd(2020, 1, 1);
        expired.not_after = date_time_ymd(2020, 2, 1);
        self.leaf("expired", &ca, expired)?;
        let wrong = params("other.example", &["other.example"])?;
        self.leaf("wrongname", &ca, wrong)?;
        self.leaf("other-client", &other_ca, client_params("stranger")?)?;
        Ok(())
    }

    /// The path of `file` (e.g. `ca.crt`) as a string.
    pub fn path(&self, file: &str) -> String {
        self.dir.join(file).display().to_string()
    }

    /// The `client` key encrypted with `password` by the `openssl` command line, as a user
    /// would encrypt it, written as `name`: PKCS#8 with PBES2 and AES-256-CBC, or with
    /// `legacy` OpenSSL's older encrypted PEM (`Proc-Type: 4,ENCRYPTED`). Its path.
    pub fn encrypted_client_key(&self, name: &str, password: &str, legacy: bool) -> String {
        let out = self.path(name);
        let how: &[&str] = match legacy {
            false => &["pkcs8", "-topk8", "-v2", "aes-256-cbc"],
            true => &["pkey", "-traditional", "-aes256"],
        };
        let status = std::process::Command::new("openssl")
            .args(how)
            .args(["-in", &self.path("client.key"), "-out", &out])
            .args(["-passout", &format!("pass:{password}")])
            .status()
            .expect("the openssl command line (apt-get install openssl)");
        assert!(status.success(), "openssl {how:?} failed");
        out
    }

    /// A self-signed CA, written as `NAME.crt` and `NAME.key`.
    fn ca(&self, name: &str, cn: &str) -> Result<Ca, Box<dyn std::error::Error>> {
        let mut p = params(cn, &[])?;
        p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        p.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let ca = CertifiedIssuer::self_signed(p, KeyPair::generate()?)?;
        self.write(name, &ca.pem(), ca.key())?;
        Ok(ca)
    }

    /// A certificate signed by `ca`, written as `NAME.crt` and `NAME.key`.
    fn leaf(
        &self,
        name: &str,
        ca: &Ca,
        mut p: CertificateParams,
    ) -> Result<(), Box<dyn std::error::Error>> {
        // Names the CA's key, so that a verifier finds the issuer by key as well as by name.
        p.use_authority_key_identifier_extension = true;
        let key = KeyPair::generate()?;
        let cert = p.signed_by(&key, ca)?;
        Ok(self.write(name, &cert.pem(), &key)?)
    }

    fn write(&self, name: &str, cert_pem: &str, key: &KeyPair) -> std::io::Result<()> {
        std::fs::write(self.dir.join(format!("{name}.crt")), cert_pem)?;
        std::fs::write(self.dir.join(format!("{name}.key")), key.serialize_pem())
    }
}

/// The parameters of a certificate for `cn`, valid for the names (or IP addresses) `sans`,
/// from an hour ago (a clock a little behind still accepts it) for 825 days.
fn params(cn: &str, sans: &[&str]) -> Result<CertificateParams, rcgen::Error> {
    let sans: Vec<String> = sans.iter().map(|s| s.to_string()).collect();
    let mut p = CertificateParams::new(sans)?;
    p.distinguished_name = DistinguishedName::new();
    p.distinguished_name.push(DnType::CommonName, cn);
    let now = date_time_ymd(1970, 1, 1) + SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    p.not_before = now - Duration::from_secs(3600);
    p.not_after = now + Duration::from_secs(825 * 86_400);
    Ok(p)
}

/// The parameters of a client certificate (extended key usage `clientAuth`) for `cn`.
fn client_params(cn: &str) -> Result<CertificateParams, rcgen::Error> {
    let mut p = params(cn, &[])?;
    p.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    Ok(p)
}
