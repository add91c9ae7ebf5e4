//! The target URL reader on any text: a workload or an error, never a panic, and never a
//! password shown: neither the error nor the redacted spec holds the URL's password.
#![no_main]

use libfuzzer_sys::fuzz_target;

/// The password of `url` when it is unmistakable: the text between `user:` and `@` after
/// `://`, at least 8 letters and digits, found once in the whole URL (so that any later
/// occurrence in an output can only be a leak).
fn password(url: &str) -> Option<&str> {
    let rest = &url[url.find("://")? + 3..];
    let userinfo = &rest[..rest.find('@')?];
    let pw = &userinfo[userinfo.find(':')? + 1..];
    let plain = pw.len() >= 8 && pw.bytes().all(|b| b.is_ascii_alphanumeric());
    (plain && url.matches(pw).count() == 1).then_some(pw)
}

fuzz_target!(|data: &[u8]| {
    let Ok(url) = std::str::from_utf8(data) else {
        return;
    };
    let spec = serde_json::json!({ "target": { "url": url } });
    let shown = match respload::Workload::from_json_value(spec) {
        Ok(workload) => workload.redacted().to_string(),
        Err(e) => e.to_string(),
    };
    if let Some(pw) = password(url) {
        assert!(!shown.contains(pw), "the password of {url:?} shows in {shown:?}");
    }
});
