//! The target URL reader on any text: a workload or an error, never a panic, and never a
//! password shown: neither the error nor the redacted spec holds the URL's password.
#![no_main]

use libfuzzer_sys::fuzz_target;

/// The password of `url` when it is unmistakable: in the user info as the reader takes it
/// (after `://`, before the query's `?`, up to the last `@`), the text after `user:`, at
/// least 8 letters and digits, found once in the whole URL (so that any occurrence in an
/// output can only be a leak).
fn password(url: &str) -> Option<&str> {
    let rest = &url[url.find("://")? + 3..];
    let rest = rest.split('?').next()?;
    let userinfo = &rest[..rest.rfind('@')?];
    let pw = &userinfo[userinfo.find(':')? + 1..];
    let plain = pw.len() >= 8 && pw.bytes().all(|b| b.is_ascii_alphanumeric());
    (plain && url.matches(pw).count() == 1).then_some(pw)
}

/// What respload shows of a spec whose target is `url`: its redacted spec, or its error.
fn shown(url: &str) -> String {
    let spec = serde_json::json!({ "target": { "url": url } });
    match respload::Workload::from_json_value(spec) {
        Ok(workload) => workload.redacted().to_string(),
        Err(e) => e.to_string(),
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(url) = std::str::from_utf8(data) else {
        return;
    };
    let text = shown(url);
    if let Some(pw) = password(url) {
        // A word the output holds anyway (`protocol`, a key of every spec) is no leak: the
        // same URL with another password of that length must not show it either.
        let other = url.replace(pw, &"Z".repeat(pw.len()));
        if text.contains(pw) && !shown(&other).contains(pw) {
            panic!("the password of {url:?} shows in {text:?}");
        }
    }
});
