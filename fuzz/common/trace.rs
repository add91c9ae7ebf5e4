//! What every trace reader's fuzz target checks: any bytes read as records or malformed
//! lines, never a panic, and every record read written as a respload trace line that reads
//! back as itself.

use respload::trace::{jsonl, Format, Record, TraceReader};
use std::io::Write;
use std::sync::{Arc, Mutex};

#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Read `data` as a trace of `format`, checking the round trip of every record.
pub fn check(data: &[u8], format: Format) {
    let mut reader =
        TraceReader::from_reader(Box::new(std::io::Cursor::new(data.to_vec())), format);
    let out = Shared::default();
    let mut writer = jsonl::Writer::new(Box::new(out.clone()));
    let (mut rec, mut back) = (Record::default(), Record::default());
    while reader
        .next_record(&mut rec)
        .expect("a slice reads without I/O errors")
    {
        writer.write(&rec).expect("a record read writes");
        writer.flush().unwrap();
        let line = std::mem::take(&mut *out.0.lock().unwrap());
        jsonl::parse_line(&line, &mut back).expect("a written line reads back");
        assert_eq!(back, rec);
    }
    assert!(reader.malformed() <= reader.lines());
    assert!(reader.malformed_lines().len() <= 100);
}
