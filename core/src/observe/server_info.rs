//! Facts about the server, read once before the run: version, mode, persistence settings.

use crate::net::{Client, Value};
use crate::report::ServerFacts;
use std::collections::BTreeMap;
use std::time::Duration;

/// Settings that change what a benchmark measures, read with CONFIG GET when allowed.
const CONFIG_KEYS: &[&str] = &[
    "save",
    "appendonly",
    "appendfsync",
    "maxmemory",
    "maxmemory-policy",
    "io-threads",
];

/// Parse `INFO` text into its `field:value` pairs.
pub fn parse_info(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

/// Read the facts over an open control connection. Replies a managed server refuses
/// (CONFIG is often disabled) leave their fields empty rather than failing the run.
pub async fn read_facts(
    client: &mut Client,
    address: String,
    timeout: Duration,
) -> crate::Result<ServerFacts> {
    let mut facts = ServerFacts {
        address,
        ..ServerFacts::default()
    };
    let info = client.call(&[b"INFO", b"server"], timeout).await?;
    if let Some(text) = info.as_text() {
        let info = parse_info(&text);
        let get = |k: &str| info.get(k).cloned().unwrap_or_default();
        facts.version = get("redis_version");
        facts.mode = get("redis_mode");
        facts.os = get("os");
    }
    for key in CONFIG_KEYS {
        if let Value::List(items) = client
            .call(&[b"CONFIG", b"GET", key.as_bytes()], timeout)
            .await?
        {
            for pair in items.chunks(2) {
                if let [k, v] = pair {
                    if let (Some(k), Some(v)) = (k.as_text(), v.as_text()) {
                        facts.config.insert(k, v);
                    }
                }
            }
        }
    }
    Ok(facts)
}
