//! Reading keys back and comparing their values (memtier_benchmark's `--data-verify`): one
//! connection, GETs pipelined in batches. Not the load path: it runs after the run.

use crate::net::{Client, Value};
use crate::plan::ConnectOptions;
use crate::Result;
use std::time::Duration;

/// GETs sent in one write.
const BATCH: usize = 256;
/// How long one batch's replies may take.
const BATCH_TIMEOUT: Duration = Duration::from_secs(30);

/// A key whose value is not the expected one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mismatch {
    /// The key.
    pub key: Vec<u8>,
    /// What the server holds instead: `missing`, `N bytes of other data`, the error reply.
    pub found: String,
}

/// What a pass over the keys found: how many hold the expected value, and the others.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Verified {
    /// Keys holding the expected value.
    pub matched: u64,
    /// Keys that do not, in the order given.
    pub mismatched: Vec<Mismatch>,
}

/// GET each key of `items` (key, expected value) on one connection to `connect`'s server
/// and compare. A connection that fails is an error; error replies are mismatches.
pub(crate) fn verify(connect: &ConnectOptions, items: &[(Vec<u8>, Vec<u8>)]) -> Result<Verified> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| crate::Error::Internal(format!("a runtime for the verification: {e}")))?;
    rt.block_on(async {
        let mut client = Client::connect(connect).await?;
        let mut out = Verified::default();
        for batch in items.chunks(BATCH) {
            let cmds: Vec<Vec<&[u8]>> = batch
                .iter()
                .map(|(key, _)| vec![b"GET".as_slice(), key.as_slice()])
                .collect();
            let replies = client.pipeline(&cmds, BATCH_TIMEOUT).await?;
            for ((key, expected), reply) in batch.iter().zip(replies) {
                let found = match reply {
                    Value::Bulk(v) if v == *expected => {
                        out.matched += 1;
                        continue;
                    }
                    Value::Bulk(v) => format!("{} bytes of other data", v.len()),
                    Value::Nil => "missing".to_string(),
                    Value::Error(e) => e,
                    Value::Text(t) => format!("the reply `{t}`"),
                    Value::List(_) => "an array".to_string(),
                };
                out.mismatched.push(Mismatch {
                    key: key.clone(),
                    found,
                });
            }
        }
        Ok(out)
    })
}
